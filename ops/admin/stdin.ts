/**
 * Reading a password: the first line of stdin, never an argument (arguments land in shell
 * history and in every process listing). On a terminal it is prompted for without echo.
 */
import type { Readable, Writable } from 'node:stream';
import { failure, usageError } from './errors.ts';

/** More than any password bcrypt can use; stops a runaway pipe from filling memory. */
const MAX_LINE_BYTES = 64 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: true });

function decodeLine(bytes: Buffer): string {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw usageError('the password on stdin is not valid UTF-8');
  }
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/**
 * The first line of a stream without its line ending (`\n` or `\r\n`); nothing else is
 * trimmed. An empty stream gives the empty string. Reading stops at the first newline.
 */
export async function readFirstLine(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array);
    const newline = bytes.indexOf(0x0a);
    chunks.push(newline === -1 ? bytes : bytes.subarray(0, newline));
    size += bytes.length;
    if (newline !== -1) break;
    if (size > MAX_LINE_BYTES) throw usageError('the first line of stdin is too long for a password');
  }
  return decodeLine(Buffer.concat(chunks));
}

interface Terminal extends Readable {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACES = new Set(['\u007f', '\b']);

/** One line typed on a terminal in raw mode, with nothing echoed. */
function readHidden(input: Terminal, prompt: Writable, label: string): Promise<string> {
  prompt.write(label);
  input.setRawMode?.(true);
  input.setEncoding('utf8');
  return new Promise<string>((resolve, reject) => {
    let typed = '';
    const finish = (error: Error | null) => {
      input.off('data', onData);
      input.setRawMode?.(false);
      input.pause();
      prompt.write('\n');
      if (error === null) resolve(typed);
      else reject(error);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === '\r' || char === '\n') return finish(null);
        if (char === CTRL_C) return finish(failure('cancelled'));
        if (char === CTRL_D) {
          if (typed === '') return finish(null);
        } else if (BACKSPACES.has(char)) {
          typed = Array.from(typed).slice(0, -1).join('');
        } else {
          typed += char;
        }
      }
    };
    input.on('data', onData);
    input.resume();
  });
}

/**
 * The password reader of the real CLI: the first line of `input`; on a terminal a prompt on
 * `prompt` (stderr, so stdout stays clean) without echo, typed twice to catch a typo.
 */
export function passwordReader(input: Terminal, prompt: Writable): () => Promise<string> {
  return async () => {
    if (input.isTTY !== true || input.setRawMode === undefined) return readFirstLine(input);
    const first = await readHidden(input, prompt, 'password: ');
    if (first === '') return first;
    const again = await readHidden(input, prompt, 'password (again): ');
    if (again !== first) throw usageError('the two passwords differ');
    return first;
  };
}
