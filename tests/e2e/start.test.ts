/**
 * `npm start` as a process manager, an IDE or a CI step treats it: a SIGTERM or SIGINT to the
 * `npm start` process alone stops the whole stack, and a taken port is refused before
 * anything starts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { probePort } from '../../dev/local/ports.ts';
import { freePort } from '../support/ports.ts';
import { runScript } from '../support/run-script.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every live process below `pid`, read from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the second field after the command in parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we read.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');

async function until(condition: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(100);
  }
  return condition();
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stackEnv() {
  const dataDir = await mkdtemp(join(tmpdir(), 'parcel-auth-start-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const ports = {
    PORT: await freePort(),
    LAMBDA_PORT: await freePort(),
    DYNAMODB_PORT: await freePort(),
    DOCS_PORT: await freePort(),
  };
  const workFolder = `.esbuild/start-${ports.PORT}`;
  cleanups.push(() => rm(join(ROOT, workFolder), { recursive: true, force: true }));
  return {
    dataDir,
    ports,
    env: {
      ...process.env,
      PORT: String(ports.PORT),
      LAMBDA_PORT: String(ports.LAMBDA_PORT),
      DYNAMODB_PORT: String(ports.DYNAMODB_PORT),
      DOCS_PORT: String(ports.DOCS_PORT),
      DATA_DIR: dataDir,
      ESBUILD_WORK_FOLDER: workFolder,
    },
  };
}

/**
 * `npm start` in its own process group, as under a process manager or an IDE: a signal sent
 * to the npm process reaches npm alone.
 */
async function startNpm(env: NodeJS.ProcessEnv) {
  const npm: ChildProcess = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = npm.pid ?? 0;
  let started: number[] = [];
  cleanups.push(() => {
    for (const target of [pid, ...started]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone, as it should be.
      }
    }
  });
  let output = '';
  await new Promise<void>((ready, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/^ready /m.test(output)) ready();
    };
    npm.stdout?.on('data', onData);
    npm.stderr?.on('data', onData);
    npm.once('exit', (code) => fail(new Error(`npm start exited (${code}) before ready:\n${output}`)));
  });
  started = descendants(pid);
  // npm, the script's node, serverless-offline, esbuild (and a shell between npm and node).
  expect(started.length).toBeGreaterThanOrEqual(3);
  return { pid, started, output: () => output };
}

/** Every process `npm start` started has ended, its ports are free, and it said `stopped`. */
async function expectStopped(
  run: Awaited<ReturnType<typeof startNpm>>,
  ports: Record<string, number>,
): Promise<void> {
  const stopped = await until(() => run.started.every((child) => !alive(child)), 10_000);
  expect(run.started.filter(alive), `still running:\n${run.output()}`).toEqual([]);
  expect(stopped).toBe(true);
  for (const port of Object.values(ports)) expect(await probePort(port), `port ${port}`).toBeUndefined();
  expect(run.output()).toMatch(/^stopped$/m);
}

describe('npm start', () => {
  it('stops every process of the stack and frees its ports when only npm start gets SIGTERM', async () => {
    const { ports, env } = await stackEnv();
    const run = await startNpm(env);

    process.kill(run.pid, 'SIGTERM');

    await expectStopped(run, ports);
  }, 90_000);

  it('stops every process of the stack and frees its ports when only npm start gets SIGINT, as from an IDE’s stop button', async () => {
    const { ports, env } = await stackEnv();
    const run = await startNpm(env);
    // Suspended and resumed (Ctrl-Z, fg) is no request to stop. SIGSTOP, as SIGTSTP to a
    // process group without a terminal stops nothing.
    process.kill(-run.pid, 'SIGSTOP');
    await sleep(500);
    process.kill(-run.pid, 'SIGCONT');
    await sleep(2000);
    expect(run.output()).not.toMatch(/^stopped$/m);
    expect((await fetch(`http://127.0.0.1:${ports.PORT}/api/v1/no-such-route`)).status).toBe(403);

    process.kill(run.pid, 'SIGINT');

    await expectStopped(run, ports);
  }, 90_000);

  for (const variable of ['PORT', 'LAMBDA_PORT', 'DYNAMODB_PORT', 'DOCS_PORT'] as const) {
    it(`refuses a taken ${variable} in one line naming it, exit 1, before writing anything`, async () => {
      const { dataDir, ports, env } = await stackEnv();
      await rm(dataDir, { recursive: true });
      const blocker: Server = createServer();
      await new Promise<void>((listening) => blocker.listen(ports[variable], '127.0.0.1', listening));
      cleanups.push(() => new Promise<void>((closed) => blocker.close(() => closed())));

      const run = await runScript('dev/start.ts', [], { env });

      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([
        `npm start: port ${ports[variable]} on 127.0.0.1 is in use (${variable}); stop what uses it or set ${variable} to a free port`,
      ]);
      expect(run.stdout).toBe('');
      expect(existsSync(dataDir)).toBe(false);
    });
  }

  it('refuses two variables set to the same port', async () => {
    const { dataDir, ports, env } = await stackEnv();
    const run = await runScript('dev/start.ts', [], { env: { ...env, LAMBDA_PORT: String(ports.PORT) } });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `npm start: LAMBDA_PORT and PORT are both ${ports.PORT}; set LAMBDA_PORT to another port`,
    );
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
