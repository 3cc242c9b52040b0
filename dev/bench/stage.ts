/**
 * The environment a benchmark child runs the real handlers in: a stage of its own (tables)
 * in the embedded DynamoDB the parent started, the users of the in-process handler suites,
 * and the functions' environment from serverless.yml (dev/local/handler-env.ts) with the production
 * values where they matter to cost. Handlers read their configuration once at import, so
 * this runs before any handler is imported.
 */
import { randomUUID } from 'node:crypto';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { localDynamoClient } from '../local/dynalite.ts';
import { functionEnv, stageEnv } from '../local/handler-env.ts';
import { seedHandlerUsers } from '../local/handler-users.ts';
import { ensureTables } from '../local/tables.ts';

export const PASSWORD = 'a-long-test-password';

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
  const { env, cleanup } = await functionEnv({
    endpoint: options.handlerEndpoint ?? options.endpoint,
    tables,
  });
  // The functions write their metric lines as they do on AWS: their cost is part of a call's.
  Object.assign(process.env, env, PRODUCTION, { POWERTOOLS_METRICS_DISABLED: 'false' }, options.env);
  return {
    name: stage,
    accounts,
    jwksFile: (env.VERIFICATION_KEYS ?? '').slice('file:'.length),
    async close() {
      documentClient.destroy();
      await cleanup();
    },
  };
}
