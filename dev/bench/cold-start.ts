/**
 * Cold start proxies: a fresh Node.js process per run that imports one function and makes
 * its first call, timed from inside the process. Per function, in the same run and taking
 * turns:
 *
 * - empty: a handler that does nothing, the floor of any cold start (the process and its
 *   module loader);
 * - bundled: the deployed artifact, the .mjs `serverless package` zipped;
 * - unbundled: the same source transpiled file by file (esbuild, no bundling, no
 *   minification), its packages loaded from node_modules as installed;
 * - for the authorizer also `bundled, SDK from the runtime`: built with serverless.yml's
 *   esbuild options but the AWS SDK left out, as the nodejs24.x runtime provides it (loaded
 *   here from node_modules, as the runtime loads its own unbundled copy): the way to a
 *   ~20 KiB artifact, and what it would cost at cold start;
 * - for login also `bundled, a DynamoDB client per store`: the same bundle with lib/wiring/shared.ts
 *   building a client for each of its three stores, as before one client per container, so
 *   the report shows what sharing one saves at cold start;
 * - for the authorizer also its floors (dev/bench/floors/authorizer.ts, built by
 *   buildAuthorizerFloors() with the same options): jose and one GetItem, with and without
 *   the SSM client that AWS stages read the key set with.
 *
 * Import and first call are timed separately: the first call pays for what a function does
 * lazily (the DynamoDB client's first connection, bcrypt at the stage's cost for a login).
 * Everything runs against the embedded DynamoDB on loopback with local key files, so no
 * network or SSM time is in these figures; Lambda adds its own (runtime init, code download).
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';
import { revocationCutoff } from '../../lib/revocation/revocation.ts';
import {
  authorizerEvent,
  createShipmentEvent,
  gatewayAuthorizerContext,
  lambdaContext,
  loginEvent,
  trackingEvent,
} from '../../tests/fixtures/events.ts';
import { AUTHORIZER_FLOORS, packagedModule, serverlessEsbuildOptions } from './bundles.ts';
import {
  call200,
  credentialsBody,
  grant200,
  importLogin,
  importOAuthToken,
  introspectionEvent,
  revocationEvent,
  tokenRequestEvent,
} from './handlers.ts';
import { median } from './measure.ts';
import {
  CLIENT_PER_STORE,
  type ColdStartFunction,
  type ColdStartResult,
  type ColdStartSample,
} from './results.ts';
import { type BenchClient, benchStage, PASSWORD } from './stage.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** An administrator of alice's customer, for the self-service API's first call (alice's tokens stay as they are). */
const ADMINISTRATOR = 'dave';

/** The authorizer's context for a token of the administrator issued now: its `iat` as issuedAtFor() gives it. */
function administratorContext() {
  const iat = revocationCutoff(new Date());
  return gatewayAuthorizerContext({
    principalId: ADMINISTRATOR,
    context: {
      username: ADMINISTRATOR,
      clientId: '',
      customerId: 'C-1001',
      scope: 'customer:admin tracking:read',
      iat,
      exp: iat + 3600,
    },
  });
}

const SHARED_CLIENT = 'let client = clients.get(key);';
const clientPerStorePlugin: Plugin = {
  name: 'client-per-store',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]lib[\\/]wiring[\\/]shared\.ts$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (source.split(SHARED_CLIENT).length !== 2)
        throw new Error(`lib/wiring/shared.ts: no single "${SHARED_CLIENT}"`);
      return {
        contents: source.replace(SHARED_CLIENT, 'let client: DynamoDBDocumentClient | undefined;'),
        loader: 'ts',
      };
    });
  },
};

/**
 * What a first event carries: a user's tokens (fresh for the run when `tokens`), the stage's API
 * client, and a token of that client (fresh for the run when `clientToken`).
 */
interface Credentials {
  readonly access: string;
  readonly refresh: string;
  readonly client: BenchClient;
  readonly clientAccess: string;
}

/**
 * Each function of serverless.yml, its source and a realistic first event. Listed by hand, as
 * each needs its own event; the smoke test holds the list to serverless.yml's functions.
 */
const FUNCTIONS: Record<
  string,
  { source: string; event: (credentials: Credentials) => unknown; tokens?: true; clientToken?: true }
> = {
  authorizer: {
    source: 'functions/authorizer.ts',
    tokens: true,
    event: ({ access }) => authorizerEvent(`Bearer ${access}`),
  },
  login: { source: 'functions/login.ts', event: () => loginEvent(credentialsBody('alice', PASSWORD)) },
  loginExtended: {
    source: 'functions/login-extended.ts',
    event: () => loginEvent(credentialsBody('alice', PASSWORD)),
  },
  // A passkey sign-in's challenge (200): one write.
  passkeyLogin: {
    source: 'functions/passkey-login.ts',
    event: () =>
      trackingEvent({
        httpMethod: 'POST',
        resource: '/api/v1/passkey-login/options',
        path: '/api/v1/passkey-login/options',
        pathParameters: null,
        // The relying party is the host the page is on.
        headers: { 'Content-Type': 'application/json', Host: 'localhost:3000' },
      }),
  },
  refresh: {
    source: 'functions/refresh.ts',
    tokens: true,
    event: ({ refresh }) => loginEvent(JSON.stringify({ refreshToken: refresh })),
  },
  logout: {
    source: 'functions/logout.ts',
    tokens: true,
    event: ({ refresh }) => loginEvent(JSON.stringify({ refreshToken: refresh })),
  },
  jwks: {
    source: 'functions/jwks.ts',
    event: () => trackingEvent({ httpMethod: 'GET', path: '/.well-known/jwks.json', pathParameters: null }),
  },
  trackShipment: {
    source: 'functions/track-shipment.ts',
    // An unknown parcel: a 404 after the authorizer context check and one GetItem.
    event: () => trackingEvent({ pathParameters: { parcelNumber: '99999999999999' } }),
  },
  createShipment: {
    source: 'functions/create-shipment.ts',
    event: () =>
      createShipmentEvent(
        JSON.stringify({ recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.25 }] }),
      ),
  },
  oauthToken: { source: 'functions/oauth-token.ts', event: ({ client }) => tokenRequestEvent(client) },
  // The client's own token, revoked (200).
  oauthRevoke: {
    source: 'functions/oauth-revoke.ts',
    clientToken: true,
    event: ({ client, clientAccess }) => revocationEvent(client, clientAccess),
  },
  // A user's token, introspected by the stage's client, which holds every scope (200, active).
  oauthIntrospect: {
    source: 'functions/oauth-introspect.ts',
    tokens: true,
    event: ({ client, access }) => introspectionEvent(client, access),
  },
  // The authorization page asked for by a customer's client, no platform: its 400 page, after the
  // client's read (no redirect to an unverified URI).
  oauthAuthorize: {
    source: 'functions/oauth-authorize.ts',
    event: ({ client }) =>
      trackingEvent({
        httpMethod: 'GET',
        resource: '/api/v1/oauth/authorize',
        path: '/api/v1/oauth/authorize',
        pathParameters: null,
        queryStringParameters: { client_id: client.clientId },
        multiValueQueryStringParameters: { client_id: [client.clientId] },
      }),
  },
  // Another method on the token endpoint: its 405.
  oauthWrongMethod: {
    source: 'functions/oauth-wrong-method.ts',
    event: () =>
      trackingEvent({
        httpMethod: 'GET',
        resource: '/api/v1/oauth/token',
        path: '/api/v1/oauth/token',
        pathParameters: null,
      }),
  },
  oauthMetadata: {
    source: 'functions/oauth-metadata.ts',
    event: () =>
      trackingEvent({
        httpMethod: 'GET',
        resource: '/.well-known/oauth-authorization-server',
        path: '/.well-known/oauth-authorization-server',
        pathParameters: null,
      }),
  },
  // An administrator lists the customer's clients (200): the administration's read, then the clients'.
  customerApi: {
    source: 'functions/customer-api.ts',
    event: () =>
      trackingEvent({
        resource: '/api/v1/customer/clients',
        path: '/api/v1/customer/clients',
        pathParameters: null,
        requestContext: {
          ...trackingEvent().requestContext,
          resourcePath: '/api/v1/customer/clients',
          authorizer: administratorContext(),
        },
      }),
  },
  // The page; its files are read at import, from beside the module.
  console: {
    source: 'functions/console.ts',
    event: () =>
      trackingEvent({ httpMethod: 'GET', resource: '/console', path: '/console', pathParameters: null }),
  },
};

/** Runs in the fresh process: timestamps relative to the process's own start. */
const RUNNER = `import { readFileSync } from 'node:fs';
const [modulePath, eventPath] = process.argv.slice(2);
const { event, context } = JSON.parse(readFileSync(eventPath, 'utf8'));
context.getRemainingTimeInMillis = () => 10000;
const started = performance.now();
const module = await import(modulePath);
const imported = performance.now();
const result = await module.handler(event, context);
const answered = performance.now();
process.stdout.write(JSON.stringify({ started, imported, answered,
  status: result && typeof result === 'object' ? (result.statusCode ?? 'policy') : String(result) }) + '\\n');
process.exit(0);
`;

const EMPTY = 'export const handler = async () => ({ statusCode: 200, body: "" });\n';

/** functions/ and lib/ transpiled file by file into `dir`, relative imports pointing at .mjs. */
async function transpileUnbundled(dir: string) {
  const sources: string[] = [];
  for (const folder of ['functions', 'lib']) {
    for (const entry of await readdir(join(ROOT, folder), { recursive: true })) {
      if (entry.endsWith('.ts')) sources.push(join(folder, entry));
      // Data the sources read as it is (lib/limits.json, the console's page), beside them as in the tree.
      else if (/\.(json|html|js|css)$/.test(entry))
        await cp(join(ROOT, folder, entry), join(dir, folder, entry));
    }
  }
  await build({
    entryPoints: sources.map((source) => join(ROOT, source)),
    outdir: dir,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  });
  for (const source of sources) {
    const file = join(dir, source.replace(/\.ts$/, '.mjs'));
    const code = await readFile(file, 'utf8');
    await writeFile(
      file,
      code.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, '$1$2.mjs$3'),
    );
  }
}

function runOnce(modulePath: string, eventPath: string, runnerPath: string): Promise<ColdStartSample> {
  const child = spawn(process.execPath, [runnerPath, modulePath, eventPath], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4096);
  });
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        if (code !== 0) throw new Error(`exited with ${code}`);
        const { started, imported, answered, status } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
        resolveRun({
          startMs: started,
          importMs: imported - started,
          firstCallMs: answered - imported,
          status,
        });
      } catch (error) {
        reject(new Error(`cold start of ${modulePath}: ${String(error)}\n${stderr}`));
      }
    });
  });
}

const summarize = (samples: readonly ColdStartSample[]) => ({
  runs: samples.length,
  startMs: median(samples.map((sample) => sample.startMs)),
  importMs: median(samples.map((sample) => sample.importMs)),
  firstCallMs: median(samples.map((sample) => sample.firstCallMs)),
  totalMs: median(samples.map((sample) => sample.startMs + sample.importMs + sample.firstCallMs)),
  statuses: [...new Set(samples.map((sample) => String(sample.status)))],
});

export async function coldStartPart(options: {
  endpoint: string;
  /** Where measureBundles() left each deployed .mjs, as `<function>.mjs`; inside the project. */
  artifacts: string;
  runs: number;
}): Promise<ColdStartResult> {
  const stage = await benchStage({ endpoint: options.endpoint });
  try {
    const work = join(options.artifacts, 'cold-start');
    await mkdir(work, { recursive: true });
    const runner = join(work, 'runner.mjs');
    const empty = join(work, 'empty.mjs');
    await writeFile(runner, RUNNER);
    await writeFile(empty, EMPTY);
    const unbundled = join(work, 'unbundled');
    await transpileUnbundled(unbundled);
    const runtimeSdk = join(work, 'authorizer-runtime-sdk.mjs');
    await build({
      ...(await serverlessEsbuildOptions()),
      entryPoints: [join(ROOT, FUNCTIONS.authorizer?.source ?? '')],
      external: ['@aws-sdk/*'],
      outfile: runtimeSdk,
      logLevel: 'error',
    });
    const runtimeSdkCode = await readFile(runtimeSdk);
    const clientPerStore = join(work, 'login-client-per-store.mjs');
    await build({
      ...(await serverlessEsbuildOptions()),
      entryPoints: [join(ROOT, FUNCTIONS.login?.source ?? '')],
      plugins: [clientPerStorePlugin],
      outfile: clientPerStore,
      logLevel: 'error',
    });

    const alice = await stage.accounts.findByUsername('alice');
    if (alice === null) throw new Error('alice was not seeded');
    await stage.accounts.createUser({
      username: ADMINISTRATOR,
      passwordHash: alice.passwordHash,
      customerId: 'C-1001',
    });
    await stage.accounts.setAdministrator(ADMINISTRATOR, true);
    const login = await importLogin();
    const freshTokens = async () => {
      const body = await call200(login, credentialsBody('alice', PASSWORD));
      return { access: String(body.token), refresh: String(body.refreshToken) };
    };
    const oauthToken = await importOAuthToken();

    const functions: ColdStartFunction[] = [];
    for (const [name, spec] of Object.entries(FUNCTIONS)) {
      const variants: Record<string, string> = {
        empty,
        bundled: await packagedModule(options.artifacts, name),
        unbundled: join(unbundled, spec.source.replace(/\.ts$/, '.mjs')),
        ...(name === 'login' && { [CLIENT_PER_STORE]: clientPerStore }),
        ...(name === 'authorizer' && {
          'bundled, SDK from the runtime': runtimeSdk,
          // Built by buildAuthorizerFloors() beside the deployed bundles.
          ...Object.fromEntries(
            AUTHORIZER_FLOORS.map((floor) => [floor.variant, join(options.artifacts, floor.file)]),
          ),
        }),
      };
      const samples = new Map<string, ColdStartSample[]>(
        Object.keys(variants).map((variant) => [variant, []]),
      );
      const names = Object.keys(variants);
      for (let run = 0; run < options.runs; run++) {
        for (let offset = 0; offset < names.length; offset++) {
          const variant = names[(run + offset) % names.length] ?? 'empty';
          const eventPath = join(work, `event-${name}-${variant.replaceAll(/\W/g, '')}.json`);
          const tokens = spec.tokens ? await freshTokens() : { access: '', refresh: '' };
          const clientAccess = spec.clientToken ? await grant200(oauthToken, stage.client) : '';
          const event = spec.event({ ...tokens, client: stage.client, clientAccess });
          await writeFile(eventPath, JSON.stringify({ event, context: lambdaContext() }));
          const modulePath = variants[variant] ?? empty;
          samples.get(variant)?.push(await runOnce(modulePath, eventPath, runner));
        }
      }
      functions.push({
        function: name,
        artifact: relative(ROOT, variants.bundled ?? ''),
        variants: Object.fromEntries([...samples].map(([variant, list]) => [variant, summarize(list)])),
        ...(name === 'authorizer' && {
          note:
            `The authorizer with the SDK from the runtime would ship ${(runtimeSdkCode.length / 1024).toFixed(1)} KiB ` +
            `(${(gzipSync(runtimeSdkCode).length / 1024).toFixed(1)} KiB gzip).`,
        }),
      });
    }
    return { part: 'cold-start', functions };
  } finally {
    await stage.close();
  }
}
