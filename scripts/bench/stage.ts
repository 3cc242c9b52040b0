/**
 * The environment a benchmark child runs the real handlers in: a stage of its own (tables)
 * in the embedded DynamoDB the parent started, the users of the in-process handler suites,
 * and the functions' environment from tests/helpers/function-env.ts with the production
 * values where they matter to cost. Handlers read their configuration once at import, so
 * this runs before any handler is imported.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import type { TestDynamo } from '../../tests/helpers/dynamo.ts';
import { functionEnv } from '../../tests/helpers/function-env.ts';
import { seedHandlerUsers } from '../../tests/helpers/handler-users.ts';
import { ensureTables } from '../local/tables.ts';

export const PASSWORD = 'a-long-test-password';

/** serverless.yml's default (production) values that change what a call costs. */
const PRODUCTION = {
  LOG_LEVEL: 'info',
  ACCESS_TOKEN_TTL: '24h',
  REFRESH_TOKEN_TTL: '30d',
  KEY_RELOAD_INTERVAL: '5m',
  REVOCATION_CACHE_TTL: '30s',
  BCRYPT_COST: '10',
} as const;

const localClient = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

export async function benchStage(options: {
  /** The embedded DynamoDB, for setting up and seeding. */
  readonly endpoint: string;
  /** Where the handlers reach DynamoDB (a counting proxy); the embedded DynamoDB by default. */
  readonly handlerEndpoint?: string;
  readonly env?: Readonly<Record<string, string>>;
}) {
  const stage = `bench${randomUUID().slice(0, 8)}`;
  const setup = localClient(options.endpoint);
  await ensureTables(setup, stage);
  setup.destroy();
  const documentClient = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
  const dynamo: TestDynamo = {
    kind: 'dynalite',
    endpoint: options.handlerEndpoint ?? options.endpoint,
    stage,
    tables: tableNames(stage),
    client: () => localClient(options.endpoint),
    documentClient,
    close: async () => documentClient.destroy(),
  };
  const accounts = await seedHandlerUsers(dynamo, PASSWORD);
  const { env, cleanup } = await functionEnv(dynamo);
  Object.assign(process.env, env, PRODUCTION, options.env);
  return {
    name: stage,
    accounts,
    jwksFile: (env.VERIFICATION_KEYS ?? '').slice('file:'.length),
    async close() {
      await dynamo.close();
      await cleanup();
    },
  };
}
