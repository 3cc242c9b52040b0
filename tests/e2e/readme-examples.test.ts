/**
 * The shell examples of the README (the curl walk-through) and of docs/admin.md (the admin
 * CLI), run as written with bash against the local stack, so they cannot drift from the
 * service: every command exits 0, and every HTTP answer has the status the document states on
 * the comment line under its command (`# 201 …`), or a 2xx where it states none (a command
 * that captures a token into a variable).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';

const ROOT = resolve(import.meta.dirname, '../..');

interface Example {
  readonly command: string;
  /** The status the document states for its HTTP answers. */
  readonly expected?: number;
}

/** The `sh` blocks of `file`'s section under `heading` (a `# ` title: the whole document). */
function shellBlocks(file: string, heading: string): string[] {
  const text = `\n${readFileSync(resolve(ROOT, file), 'utf8')}`;
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`${file} has no section ${heading}`);
  const end = text.indexOf('\n## ', start + heading.length + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

/** A block's commands (continuation lines joined), each with the status stated under it. */
function examples(block: string): Example[] {
  const found: { command: string; expected?: number }[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending !== '') {
      pending += `\n${line}`;
      if (!line.endsWith('\\')) {
        found.push({ command: pending });
        pending = '';
      }
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      const status = /^#\s*(\d{3})\b/.exec(trimmed)?.[1];
      const last = found.at(-1);
      if (status !== undefined && last !== undefined && last.expected === undefined)
        last.expected = Number(status);
      continue;
    }
    if (line.endsWith('\\')) pending = line;
    else found.push({ command: line });
  }
  return found;
}

interface Outcome {
  readonly exit: number | undefined;
  readonly statuses: number[];
  readonly output: string;
}

/** Runs the commands in one bash, in order, recording each one's exit code and HTTP statuses. */
async function run(commands: readonly string[], env: NodeJS.ProcessEnv, stdin: string): Promise<Outcome[]> {
  const script = [
    'set -uo pipefail',
    // Every curl also reports its status on stderr, whatever its own options.
    `curl() { command curl -w '%{stderr}@@HTTP %{http_code}\\n' "$@"; }`,
    ...commands.flatMap((command, index) => [
      `printf '\\n@@CMD ${index}\\n' >&2`,
      command,
      `printf '\\n@@EXIT %s\\n' "$?" >&2`,
    ]),
  ].join('\n');
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stdin.end(stdin);
  await new Promise((done) => child.once('close', done));
  return commands.map((_, index) => {
    const start = stderr.indexOf(`@@CMD ${index}\n`);
    const end = stderr.indexOf(`@@CMD ${index + 1}\n`);
    const part = start === -1 ? '' : stderr.slice(start, end === -1 ? undefined : end);
    const exit = /@@EXIT (\d+)/.exec(part)?.[1];
    return {
      exit: exit === undefined ? undefined : Number(exit),
      statuses: [...part.matchAll(/@@HTTP (\d{3})/g)].map((match) => Number(match[1])),
      output: `${part}\n--- stdout of the whole run ---\n${stdout}`,
    };
  });
}

describe('README and docs/admin.md examples, run as written against the local stack', () => {
  let stack: LocalStack;
  let env: NodeJS.ProcessEnv;
  // The examples' TMPDIR (docs/admin.md writes "${TMPDIR:-/tmp}/accounts.jsonl"), removed after.
  let scratch: string | undefined;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'parcel-auth-examples-'));
    stack = await startLocalStack();
    env = {
      ...process.env,
      PORT: String(stack.ports.http),
      DYNAMODB_PORT: String(stack.ports.dynamodb),
      DATA_DIR: stack.dataDir,
      TMPDIR: scratch,
    };
  });
  afterAll(async () => {
    try {
      await stack?.stop();
    } finally {
      if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    }
  });

  const sections = [
    { file: 'README.md', heading: '## Using the API (curl)', stdin: '' },
    // `read -rs NEW_PASSWORD` takes the operator's password from the terminal.
    { file: 'docs/admin.md', heading: '# Admin CLI', stdin: 'an-operator-typed-password\n' },
  ];
  for (const { file, heading, stdin } of sections) {
    it(`${file} ${heading.replace(/^#+ /, '')}: every command succeeds with the status it states`, async () => {
      const found = shellBlocks(file, heading).flatMap(examples);
      expect(found.length).toBeGreaterThan(5);
      const outcomes = await run(
        found.map((example) => example.command),
        env,
        stdin,
      );
      for (const [index, { command, expected }] of found.entries()) {
        const outcome = outcomes[index];
        expect(outcome?.exit, `${command}\n${outcome?.output}`).toBe(0);
        const statuses = outcome?.statuses ?? [];
        if (expected !== undefined) {
          expect(statuses.length, `${command} made no HTTP request`).toBeGreaterThan(0);
          expect(statuses, `${command}\n${outcome?.output}`).toEqual(statuses.map(() => expected));
        } else {
          for (const status of statuses) expect(status, `${command}\n${outcome?.output}`).toBeLessThan(300);
        }
      }
    }, 120_000);
  }

  it('reads the documents the way the runner above relies on: commands joined, statuses attached', () => {
    expect(examples('A=1\ncurl -s x \\\n  -d y\n# 201 body\n#   more\ncurl z # inline\n# 401\n')).toEqual([
      { command: 'A=1' },
      { command: 'curl -s x \\\n  -d y', expected: 201 },
      { command: 'curl z # inline', expected: 401 },
    ]);
  });
});
