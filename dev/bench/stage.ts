/**
 * The environment a benchmark child runs the real handlers in: a stage of its own (tables)
 * in the embedded DynamoDB the parent started, the users of the in-process handler suites,
 * an API client, and the functions' environment from serverless.yml (dev/local/handler-env.ts)
 * with the production values where they matter to cost. Handlers read their configuration
 * once at import, so this runs before any handler is imported.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { GRANTABLE_SCOPES } from '../../lib/scopes.ts';
import { tableNames } from '../../lib/stage.ts';
import { localDynamoClient } from '../local/dynalite.ts';
import { functionEnv, stageEnv } from '../local/handler-env.ts';
import { seedHandlerUsers } from '../local/handler-users.ts';
import { ensureTables } from '../local/tables.ts';

export const PASSWORD = 'a-long-test-password';

/**
 * Alice's colleague: her customer, password and hash cost. The known-source rows lock her name
 * (dev/bench/known-source.ts), so the normal rows' alice is never refused.
 */
export const COLLEAGUE = 'carol';

/** serverless.yml's default (production) values of what changes a call's cost, which the tests lower. */
const PRODUCTION = Object.fromEntries(
  Object.entries(stageEnv()).filter(([name]) =>
    [
      'LOG_LEVEL',
      'ACCESS_TOKEN_TTL',
      'REFRESH_TOKEN_TTL',
      'KEY_RELOAD_INTERVAL',
      'REVOCATION_CACHE_TTL',
      'BCRYPT_COST',
    ].includes(name),
  ),
);

/** An API client's credentials, as its integrator holds them. */
export interface BenchClient {
  readonly clientId: string;
  readonly secret: string;
}

/** A seeded client: its credentials, and the id of the secret it presents (its last use is kept under it). */
export interface SeededClient extends BenchClient {
  readonly secretId: string;
}

/**
 * A client of alice's customer with every scope and two live secrets, as during a rotation:
 * the grant's secret check then compares the presented secret with two stored digests. It
 * presents the second.
 */
export async function seedClient(client: DynamoDBDocumentClient, tableName: string): Promise<SeededClient> {
  const clients = createDynamoClientRepository({ client, tableName });
  const clientId = newClientId();
  const first = newClientSecret(new Date());
  await clients.createClient({
    clientId,
    customerId: 'C-1001',
    scopes: GRANTABLE_SCOPES,
    secret: first.stored,
  });
  const second = newClientSecret(new Date());
  await clients.addClientSecret(clientId, second.stored);
  return { clientId, secret: second.secret, secretId: second.stored.id };
}

export async function benchStage(options: {
  /** The embedded DynamoDB, for setting up and seeding. */
  readonly endpoint: string;
  /** Where the handlers reach DynamoDB (a counting proxy); the embedded DynamoDB by default. */
  readonly handlerEndpoint?: string;
  readonly env?: Readonly<Record<string, string>>;
}) {
  const stage = `bench${randomUUID().slice(0, 8)}`;
  const setup = localDynamoClient(options.endpoint);
  await ensureTables(setup, stage);
  setup.destroy();
  const documentClient = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
  const tables = tableNames(stage);
  const accounts = await seedHandlerUsers({ documentClient, tables }, PASSWORD);
  const alice = await accounts.findByUsername('alice');
  if (alice === null) throw new Error('alice was not seeded');
  await accounts.createUser({ username: COLLEAGUE, passwordHash: alice.passwordHash, customerId: 'C-1001' });
  const client = await seedClient(documentClient, tables.accounts);
  // As `client`, for the known-source rows to lock.
  const colleagueClient = await seedClient(documentClient, tables.accounts);
  const { env, cleanup, counterSecret } = await functionEnv({
    endpoint: options.handlerEndpoint ?? options.endpoint,
    tables,
  });
  // The functions write their metric lines as they do on AWS: their cost is part of a call's.
  Object.assign(process.env, env, PRODUCTION, { POWERTOOLS_METRICS_DISABLED: 'false' }, options.env);
  return {
    name: stage,
    accounts,
    client,
    colleagueClient,
    /** What the functions key the name counters and known sources with. */
    counterSecret,
    jwksFile: (env.VERIFICATION_KEYS ?? '').slice('file:'.length),
    keyringFile: (env.SIGNING_KEYRING ?? '').slice('file:'.length),
    async close() {
      documentClient.destroy();
      await cleanup();
    },
  };
}
