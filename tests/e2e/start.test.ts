/**
 * `npm start` as a process manager, an IDE or a CI step treats it: a SIGTERM or SIGINT to the
 * `npm start` process alone stops the whole stack, and a taken port is refused before
 * anything starts. And as a developer meets it: the demo API client it prints gets a token,
 * start after start the same one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { probePort } from '../../dev/local/ports.ts';
import { DEMO_CUSTOMER, DEMO_USERNAME, demoCredentialsFile } from '../../dev/local/seed.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { SELF_SERVICE_CLIENT_SCOPES, scopeString } from '../../lib/scopes.ts';
import { tableNames } from '../../lib/stage.ts';
import { freePorts } from '../support/ports.ts';
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
  // Four different ports: four asked one at a time may repeat one (the check that refuses two
  // variables of one port then answers instead of the one under test).
  const [PORT = 0, LAMBDA_PORT = 0, DYNAMODB_PORT = 0, DOCS_PORT = 0] = await freePorts(4);
  const ports = { PORT, LAMBDA_PORT, DYNAMODB_PORT, DOCS_PORT };
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

/** The demo API client a start printed: `Demo API client: client id "…", secret "…"`. */
function printedClient(output: string) {
  const match = /^Demo API client: client id "(pcl_[0-9a-f]{20})", secret "(pcs_[\w-]+)"$/m.exec(output);
  if (match?.[1] === undefined || match[2] === undefined)
    throw new Error(`npm start printed no demo API client:\n${output}`);
  return { clientId: match[1], clientSecret: match[2] };
}

/** The client credentials grant at the running stack's token endpoint, the client authenticated by Basic. */
async function clientToken(port: number, client: { clientId: string; clientSecret: string }) {
  const answer = await fetch(`http://127.0.0.1:${port}/api/v1/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** `use` with the API client store of the stack whose DynamoDB is on `dynamodbPort`. */
async function withStackClients<T>(dynamodbPort: number, use: (clients: ClientRepository) => Promise<T>) {
  const client = createDocumentClient({
    region: 'local',
    dynamodbEndpoint: `http://127.0.0.1:${dynamodbPort}`,
  });
  try {
    return await use(createDynamoClientRepository({ client, tableName: tableNames('local').accounts }));
  } finally {
    client.destroy();
  }
}

/** The ids of the demo customer's API clients in the running stack. */
const demoCustomerClients = (dynamodbPort: number) =>
  withStackClients(dynamodbPort, async (clients) =>
    (await clients.listClients(DEMO_CUSTOMER)).map((found) => found.clientId),
  );

/** What the data directory's demo credentials file holds, and its permission bits. */
async function credentialsFile(dataDir: string) {
  const file = demoCredentialsFile(dataDir);
  return { content: JSON.parse(readFileSync(file, 'utf8')), mode: (await stat(file)).mode & 0o777 };
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
    expect((await fetch(`http://127.0.0.1:${ports.PORT}/api/v1/no-such-route`)).status).toBe(404);

    process.kill(run.pid, 'SIGINT');

    await expectStopped(run, ports);
  }, 90_000);

  it('prints a demo API client of the demo customer, with every scope, that gets a token by the client credentials grant', async () => {
    const { dataDir, ports, env } = await stackEnv();
    const run = await startNpm(env);
    const client = printedClient(run.output());

    const token = await clientToken(ports.PORT, client);

    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({
      access_token: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'Bearer',
      scope: scopeString(SELF_SERVICE_CLIENT_SCOPES),
    });
    expect(await demoCustomerClients(ports.DYNAMODB_PORT)).toEqual([client.clientId]);
    const { content, mode } = await credentialsFile(dataDir);
    expect(content).toEqual({ username: DEMO_USERNAME, password: expect.any(String), ...client });
    expect(mode).toBe(0o600);
    expect(run.output()).toContain(`Demo login: username "${DEMO_USERNAME}", password "${content.password}"`);

    process.kill(run.pid, 'SIGTERM');
    await expectStopped(run, ports);
  }, 120_000);

  it('prints the same demo API client on a second start with the same data, and creates no second one', async () => {
    const { ports, env } = await stackEnv();
    const first = await startNpm(env);
    const client = printedClient(first.output());
    process.kill(first.pid, 'SIGTERM');
    await expectStopped(first, ports);

    const second = await startNpm(env);

    expect(printedClient(second.output())).toEqual(client);
    expect(await demoCustomerClients(ports.DYNAMODB_PORT)).toEqual([client.clientId]);
    expect((await clientToken(ports.PORT, client)).status).toBe(200);
    process.kill(second.pid, 'SIGTERM');
    await expectStopped(second, ports);
  }, 180_000);

  it('gives data seeded before the demo API client existed one on its next start, kept in the credentials file beside the login', async () => {
    const { dataDir, ports, env } = await stackEnv();
    const first = await startNpm(env);
    // Such data: the demo user without a client, its file the login alone.
    const { content: seeded } = await credentialsFile(dataDir);
    await withStackClients(ports.DYNAMODB_PORT, (clients) => clients.removeClient(seeded.clientId));
    process.kill(first.pid, 'SIGTERM');
    await expectStopped(first, ports);
    const login = { username: seeded.username, password: seeded.password };
    await writeFile(demoCredentialsFile(dataDir), `${JSON.stringify(login)}\n`, { mode: 0o600 });

    const upgraded = await startNpm(env);
    const client = printedClient(upgraded.output());

    expect(client.clientId).not.toBe(seeded.clientId);
    expect(await demoCustomerClients(ports.DYNAMODB_PORT)).toEqual([client.clientId]);
    expect((await clientToken(ports.PORT, client)).status).toBe(200);
    expect(await credentialsFile(dataDir)).toEqual({ content: { ...login, ...client }, mode: 0o600 });
    expect(upgraded.output()).toContain(
      `Demo login: username "${DEMO_USERNAME}", password "${login.password}"`,
    );
    process.kill(upgraded.pid, 'SIGTERM');
    await expectStopped(upgraded, ports);
  }, 180_000);

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
