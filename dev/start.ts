/**
 * `npm start`: the whole service on this machine.
 *
 * 1. the embedded DynamoDB (dynalite) on 127.0.0.1:DYNAMODB_PORT, data under DATA_DIR, or
 *    the DynamoDB at DYNAMODB_ENDPOINT when it is set (left running on stop);
 * 2. the tables of infra/tables.yml where missing, the local signing key, and demo data when empty
 *    (dev/local/seed.ts: the demo user and the demo API client, both printed on every start);
 * 3. serverless-offline (stage `local`) on an internal port, behind the gateway front
 *    (dev/local/gateway.ts) that serves the API at http://127.0.0.1:PORT/api/v1 with API
 *    Gateway's gateway responses;
 * 4. the API reference page (Swagger UI on docs/openapi.yaml) at http://127.0.0.1:DOCS_PORT/.
 *
 * Checks first that its four ports are free, and stops with one line naming the port and its
 * variable if not, before anything is written. Prints `API reference <page URL>`, `console
 * <URL>` (the administrators' console, which the stack's API serves) and then `ready <base URL>`
 * once the API serves.
 * SIGINT, SIGTERM or SIGHUP, to it or to the `npm start` that runs it, stops everything it
 * started (dev/local/stop-requests.ts); it prints `stopped` when it has.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import * as v from 'valibot';
import { LocalStackEnvSchema } from '../infra/local-stage.ts';
import { readStageParams } from '../infra/stage-params.ts';
import { createDynamoAccountRepository } from '../lib/accounts/dynamodb.ts';
import { createDocumentClient } from '../lib/aws/dynamodb.ts';
import { createDynamoClientRepository } from '../lib/clients/dynamodb.ts';
import { tableNames } from '../lib/stage.ts';
import { ensureLocalKeys } from '../ops/keys/local.ts';
import { localDynamoClient, startDynalite } from './local/dynalite.ts';
import { type GatewayFront, startGatewayFront } from './local/gateway.ts';
import { freePort, portProblem } from './local/ports.ts';
import { type ReferenceServer, startReferenceServer } from './local/reference.ts';
import { seedDemo } from './local/seed.ts';
import { onStopRequest } from './local/stop-requests.ts';
import { ensureTables } from './local/tables.ts';

const STAGE = 'local';
const envResult = v.safeParse(LocalStackEnvSchema, process.env);
if (!envResult.success) {
  for (const issue of envResult.issues) console.error(`${v.getDotPath(issue)}: ${issue.message}`);
  process.exit(2);
}
const env = envResult.output;
const dataDir = resolve(env.DATA_DIR);
const apiOrigin = `http://127.0.0.1:${env.PORT}`;
const baseUrl = `${apiOrigin}/api/v1`;

const external = env.DYNAMODB_ENDPOINT?.replace(/\/$/, '');
const ports = [
  { variable: 'PORT', port: env.PORT },
  { variable: 'LAMBDA_PORT', port: env.LAMBDA_PORT },
  ...(external === undefined ? [{ variable: 'DYNAMODB_PORT', port: env.DYNAMODB_PORT }] : []),
  { variable: 'DOCS_PORT', port: env.DOCS_PORT },
];
const problem = await portProblem(ports);
if (problem !== undefined) {
  console.error(`npm start: ${problem}`);
  process.exit(1);
}
// serverless-offline's own HTTP port: only the gateway front connects to it.
const offlinePort = await freePort();

await mkdir(dataDir, { recursive: true, mode: 0o700 });
const dynamo =
  external === undefined
    ? await startDynalite({ port: env.DYNAMODB_PORT, path: resolve(dataDir, 'dynamodb') }).catch(
        (error: NodeJS.ErrnoException) => {
          // Taken in the moment since the check above.
          console.error(`npm start: DYNAMODB_PORT ${env.DYNAMODB_PORT}: ${error.code ?? error.message}`);
          process.exit(1);
        },
      )
    : { endpoint: external, client: () => localDynamoClient(external), close: async () => {} };
let offline: ChildProcess | undefined;
let front: GatewayFront | undefined;
let reference: ReferenceServer | undefined;
let stopping = false;

/** Signals serverless-offline and every process it started: it leads its own process group. */
function signalOffline(signal: NodeJS.Signals) {
  if (offline?.pid === undefined || offline.exitCode !== null || offline.signalCode !== null) return;
  try {
    process.kill(-offline.pid, signal);
  } catch {
    // Gone in the meantime.
  }
}

async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  // Whatever hangs, nothing of the stack outlives this process.
  setTimeout(() => {
    signalOffline('SIGKILL');
    process.exit(code);
  }, 10_000).unref();
  if (offline !== undefined && offline.exitCode === null && offline.signalCode === null) {
    const exited = new Promise((done) => offline?.once('exit', done));
    signalOffline('SIGTERM');
    const timer = setTimeout(() => signalOffline('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  await Promise.all([front?.close(), reference?.close(), dynamo.close()]);
  console.log('stopped');
  process.exit(code);
}
onStopRequest(() => void stop(0));

/**
 * serverless-offline's output line with the API's port where it names its internal one, the
 * right border of its route table kept in place.
 */
function publicLine(line: string): string {
  const internal = `127.0.0.1:${offlinePort}`;
  if (!line.includes(internal)) return line;
  const replaced = line.replaceAll(internal, `127.0.0.1:${env.PORT}`);
  const border = / *│$/.exec(replaced);
  if (border === null) return replaced;
  const padding = Math.max(1, border[0].length - 1 - (replaced.length - line.length));
  return `${replaced.slice(0, border.index)}${' '.repeat(padding)}│`;
}

try {
  const lowLevel = dynamo.client();
  await ensureTables(lowLevel, STAGE);
  const keys = await ensureLocalKeys(dataDir);
  if (keys.created) console.log(`Created a signing keyring in ${keys.keyringFile}`);
  const tables = tableNames(STAGE);
  const documents = {
    client: createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint }),
    tableName: tables.accounts,
  };
  const demo = await seedDemo({
    dataDir,
    client: lowLevel,
    accountsTable: tables.accounts,
    accounts: createDynamoAccountRepository(documents),
    clients: createDynamoClientRepository(documents),
    bcryptCost: readStageParams(STAGE).bcryptCost,
  });
  if (demo !== null) {
    console.log(`Demo login: username "${demo.username}", password "${demo.password}"`);
    console.log(`Demo API client: client id "${demo.clientId}", secret "${demo.clientSecret}"`);
  }
  reference = await startReferenceServer({ port: env.DOCS_PORT, apiOrigin, demo }).catch(
    (error: NodeJS.ErrnoException) => {
      // Taken in the moment since the check above.
      throw new Error(`DOCS_PORT ${env.DOCS_PORT}: ${error.code ?? error.message}`);
    },
  );
  const referenceUrl = reference.url;
  front = await startGatewayFront({ port: env.PORT, upstreamPort: offlinePort }).catch(
    (error: NodeJS.ErrnoException) => {
      // Taken in the moment since the check above.
      throw new Error(`PORT ${env.PORT}: ${error.code ?? error.message}`);
    },
  );
  // Stopped while starting: spawn nothing stop() would not see.
  if (stopping) throw new Error('stopped while starting');

  const serverless = createRequire(import.meta.url).resolve('serverless/bin/serverless.js');
  offline = spawn(process.execPath, [serverless, 'offline', 'start', '--stage', STAGE], {
    cwd: resolve(import.meta.dirname, '..'),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(offlinePort),
      LAMBDA_PORT: String(env.LAMBDA_PORT),
      // The issuer is where the metadata is served, so OAuth clients discover the stack by it.
      TOKEN_ISSUER: apiOrigin,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      LOCAL_SIGNING_KEYRING_FILE: keys.keyringFile,
      LOCAL_JWKS_FILE: keys.jwksFile,
    },
  });
  // serverless-offline reports through the framework's log, on stderr.
  let announced = false;
  const relay = (from: NodeJS.ReadableStream | null, to: NodeJS.WriteStream) => {
    if (from === null) return;
    // serverless-offline reports the authorizer's refusal, an `Error('Unauthorized')`, as an
    // unhandled exception in two lines, then as "Authorization function returned an error
    // response": those two lines are dropped, any other exception is printed.
    let held: string | undefined;
    createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
      if (held !== undefined) {
        const refusal = /\[Error: Unauthorized\]$/.test(line);
        if (!refusal) to.write(`${publicLine(held)}\n`);
        held = undefined;
        if (refusal) return;
      }
      if (/Unhandled exception in handler 'authorizer'\.$/.test(line)) {
        held = line;
        return;
      }
      to.write(`${publicLine(line)}\n`);
      if (!announced && line.includes('Server ready')) {
        announced = true;
        console.log(
          `API reference ${referenceUrl} (try the API from the browser: its login example is the demo login)`,
        );
        console.log(
          // localhost: WebAuthn takes no IP address for a relying party (the console's passkeys).
          `console http://localhost:${env.PORT}/console (the administrators' console: the demo login administers the demo customer)`,
        );
        console.log(`ready ${baseUrl}`);
      }
    });
  };
  relay(offline.stdout, process.stdout);
  relay(offline.stderr, process.stderr);
  offline.once('exit', (code) => {
    if (!stopping) {
      console.error(`serverless-offline exited (${code ?? 'signal'}); stopping`);
      void stop(1);
    }
  });
} catch (error) {
  if (!stopping) console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
}
