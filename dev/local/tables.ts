/**
 * Creates a stage's tables in a (local) DynamoDB from infra/tables.yml, the same definitions
 * CloudFormation deploys, so the local key schemas cannot drift from the deployed ones.
 */
import { readFileSync } from 'node:fs';
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  ResourceInUseException,
  type TimeToLiveSpecification,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { type TableKey, tableNames } from '../../lib/stage.ts';

interface TableResource {
  Type: string;
  Properties: {
    TableName: string;
    AttributeDefinitions: AttributeDefinition[];
    KeySchema: KeySchemaElement[];
    GlobalSecondaryIndexes?: GlobalSecondaryIndex[];
    TimeToLiveSpecification?: TimeToLiveSpecification;
  };
}

const TABLES_FILE = new URL('../../infra/tables.yml', import.meta.url);

/** The table definitions of infra/tables.yml, named for `stage`. */
export function tableDefinitions(stage: string) {
  const { Resources } = parse(readFileSync(TABLES_FILE, 'utf8')) as {
    Resources: Record<string, TableResource>;
  };
  const names = tableNames(stage);
  return Object.values(Resources)
    .filter((resource) => resource.Type === 'AWS::DynamoDB::Table')
    .map(({ Properties }) => {
      const key = /\$\{self:custom\.tables\.(\w+)\}/.exec(Properties.TableName)?.[1] as TableKey | undefined;
      if (key === undefined || !(key in names)) throw new Error(`unknown table name ${Properties.TableName}`);
      return {
        TableName: names[key],
        AttributeDefinitions: Properties.AttributeDefinitions,
        KeySchema: Properties.KeySchema,
        ...(Properties.GlobalSecondaryIndexes !== undefined && {
          GlobalSecondaryIndexes: Properties.GlobalSecondaryIndexes,
        }),
        TimeToLiveSpecification: Properties.TimeToLiveSpecification,
      };
    });
}

/**
 * Creates every table that does not exist yet and turns on the time to live of the new ones
 * that infra/tables.yml gives one. A table that already exists keeps its data and gets the
 * indexes it lacks (a data directory made before an index was added), as a deployment would.
 */
export async function ensureTables(client: DynamoDBClient, stage: string): Promise<void> {
  for (const { TimeToLiveSpecification, ...definition } of tableDefinitions(stage)) {
    try {
      await client.send(new CreateTableCommand({ ...definition, BillingMode: 'PAY_PER_REQUEST' }));
    } catch (error) {
      if (error instanceof ResourceInUseException) {
        await addMissingIndexes(client, definition);
        continue;
      }
      throw error;
    }
    if (TimeToLiveSpecification !== undefined) {
      await enableTimeToLive(client, definition.TableName, TimeToLiveSpecification);
    }
  }
}

/**
 * dynalite does not implement UpdateTimeToLive and answers UnknownOperationException; it
 * never deletes expired items, which the code does not rely on. DynamoDB Local and DynamoDB
 * implement it, so there any failure is real and is thrown.
 */
async function enableTimeToLive(client: DynamoDBClient, tableName: string, spec: TimeToLiveSpecification) {
  try {
    await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: spec }));
  } catch (error) {
    if (!(error instanceof Error && error.name === 'UnknownOperationException')) throw error;
  }
}

async function addMissingIndexes(
  client: DynamoDBClient,
  definition: Omit<ReturnType<typeof tableDefinitions>[number], 'TimeToLiveSpecification'>,
): Promise<void> {
  const wanted = definition.GlobalSecondaryIndexes ?? [];
  if (wanted.length === 0) return;
  const { Table } = await client.send(new DescribeTableCommand({ TableName: definition.TableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  // DynamoDB creates one index per update.
  for (const index of wanted.filter((index) => !present.has(index.IndexName))) {
    await client.send(
      new UpdateTableCommand({
        TableName: definition.TableName,
        AttributeDefinitions: definition.AttributeDefinitions,
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  }
}
