/** Runs one of the project's scripts (or another program) in a child process, as a user would from a shell. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node <script> <args>` from the project root, with exactly `env` and `stdin` piped in. */
export const runScript = (
  script: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdin?: string },
): Promise<ScriptRun> => runProgram(process.execPath, [resolve(ROOT, script), ...args], options);

/** `command <args>` from the project root, with exactly `env` and `stdin` piped in. */
export function runProgram(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdin?: string },
): Promise<ScriptRun> {
  const child = spawn(command, args, { cwd: ROOT, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(options.stdin ?? '');
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}
