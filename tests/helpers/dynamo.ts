/** An in-memory embedded DynamoDB with the tables of infra/tables.yml, for integration tests. */
import { randomUUID } from 'node:crypto';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { startDynalite } from '../../scripts/local/dynalite.ts';
import { ensureTables } from '../../scripts/local/tables.ts';

export async function startTestDynamo() {
  const dynamo = await startDynalite({ port: 0 });
  // A unique stage name per suite: its own tables, nothing shared between suites.
  const stage = `test${randomUUID().slice(0, 8)}`;
  await ensureTables(dynamo.client(), stage);
  return {
    ...dynamo,
    stage,
    tables: tableNames(stage),
    documentClient: createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint }),
  };
}
