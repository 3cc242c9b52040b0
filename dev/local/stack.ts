/**
 * Starts the local stack exactly as `npm start` does (dev/start.ts), on free ports with
 * a fresh data directory, and stops it again. End-to-end tests drive it over HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { freePort } from './ports.ts';

const ROOT = resolve(import.meta.dirname, '../..');

export interface LocalStack {
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly ports: {
    readonly http: number;
    readonly lambda: number;
    readonly dynamodb: number;
    /** The API reference page's. */
    readonly docs: number;
  };
  /** The API reference page, as the start-up banner prints it. */
  readonly referenceUrl: string;
  /** The administrators' console, as the start-up banner prints it. */
  readonly consoleUrl: string;
  readonly demo: { readonly username: string; readonly password: string };
  /** The demo customer's API client, with the scopes an administrator may give a client. */
  readonly demoClient: { readonly clientId: string; readonly clientSecret: string };
  /** Everything the stack printed so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Extra environment for `npm start`, e.g. ACCESS_TOKEN_TTL. */
  readonly env?: Record<string, string>;
  /** Reuse this data directory (and keep it on stop); by default a fresh one is made and removed. */
  readonly dataDir?: string;
}

/**
 * Where a stack's bundles are: built by the stack into a work folder of its own, removed on stop
 * (the default); or, with LOCAL_STACK_BUNDLES naming a work folder buildLocalBundles filled,
 * served from there unbuilt (infra/local-prebuilt.cjs), which saves each stack about 7 s of CPU.
 */
interface Bundles {
  readonly workFolder: string;
  readonly prebuilt: boolean;
  readonly keep: boolean;
}

const bundlesFor = (port: number): Bundles => {
  const shared = process.env.LOCAL_STACK_BUNDLES;
  return shared === undefined
    ? { workFolder: `.esbuild/e2e-${port}`, prebuilt: false, keep: false }
    : { workFolder: shared, prebuilt: true, keep: true };
};

/** Builds every function's bundle into workFolder (relative to the project), as a stack serves them. */
export async function buildLocalBundles(workFolder: string): Promise<void> {
  const stack = await startLocalStack({}, () => ({ workFolder, prebuilt: false, keep: true }));
  await stack.stop();
}

/** How often a start whose free ports were taken before it bound them is tried again. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Starts the stack on free ports. A port found free may be taken by another test's process
 * before the stack binds it (test files run in parallel): such a start is tried again on
 * other ports.
 */
export async function startLocalStack(
  options: StackOptions = {},
  bundles: (port: number) => Bundles = bundlesFor,
): Promise<LocalStack> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(options, bundles);
    } catch (error) {
      const raced = error instanceof Error && error.message.includes('EADDRINUSE');
      if (!raced || attempt >= PORT_RACE_ATTEMPTS) throw error;
    }
  }
}

async function startOnce(options: StackOptions, bundlesOf: (port: number) => Bundles): Promise<LocalStack> {
  const env = options.env ?? {};
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'parcel-auth-e2e-')));
  // Four different ports: the kernel may hand the same free port out twice in a row.
  const ports = new Set<number>();
  while (ports.size < 4) ports.add(await freePort());
  const [port, lambdaPort, dynamodbPort, docsPort] = [...ports] as [number, number, number, number];
  const bundles = bundlesOf(port);
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dev/start.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      LAMBDA_PORT: String(lambdaPort),
      DYNAMODB_PORT: String(dynamodbPort),
      DOCS_PORT: String(docsPort),
      DATA_DIR: dataDir,
      ESBUILD_WORK_FOLDER: bundles.workFolder,
      ...(bundles.prebuilt ? { LOCAL_PREBUILT_BUNDLES: '1' } : {}),
      ...env,
    },
  });
  let output = '';
  const ready = new Promise<string>((resolveReady, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /^ready (\S+)$/m.exec(output);
      if (match?.[1] !== undefined) resolveReady(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`local stack exited with ${code} before ready:\n${output}`)),
    );
  });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    if (!bundles.keep) await rm(join(ROOT, bundles.workFolder), { recursive: true, force: true });
  };

  try {
    const baseUrl = await ready;
    const referenceUrl = /^API reference (\S+)/m.exec(output)?.[1];
    if (referenceUrl === undefined)
      throw new Error(`the local stack printed no API reference line:\n${output}`);
    const consoleUrl = /^console (\S+)/m.exec(output)?.[1];
    if (consoleUrl === undefined) throw new Error(`the local stack printed no console line:\n${output}`);
    // The demo login alone as `demo`: the file also holds the demo API client's id and secret.
    const { username, password, clientId, clientSecret } = JSON.parse(
      await readFile(join(dataDir, 'demo-credentials.json'), 'utf8'),
    );
    const demo = { username, password };
    const demoClient = { clientId, clientSecret };
    return {
      baseUrl,
      dataDir,
      ports: { http: port, lambda: lambdaPort, dynamodb: dynamodbPort, docs: docsPort },
      referenceUrl,
      consoleUrl,
      demo,
      demoClient,
      output: () => output,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The account repository of a running local stack, for setting up users directly. */
export const stackAccounts = (stack: LocalStack) =>
  createDynamoAccountRepository({
    client: createDocumentClient({
      region: 'local',
      dynamodbEndpoint: `http://127.0.0.1:${stack.ports.dynamodb}`,
    }),
    tableName: tableNames('local').accounts,
  });
