/**
 * Creates a stage's tables in a (local) DynamoDB from infra/tables.yml, the same definitions
 * CloudFormation deploys, so the local key schemas cannot drift from the deployed ones.
 */
import { readFileSync } from 'node:fs';
import {
  type AttributeDefinition,
  CreateTableCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { type TableKey, tableNames } from '../../lib/stage.ts';

interface TableResource {
  Type: string;
  Properties: {
    TableName: string;
    AttributeDefinitions: AttributeDefinition[];
    KeySchema: KeySchemaElement[];
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
      };
    });
}

/** Creates every table that does not exist yet. */
export async function ensureTables(client: DynamoDBClient, stage: string): Promise<void> {
  for (const definition of tableDefinitions(stage)) {
    try {
      await client.send(new CreateTableCommand({ ...definition, BillingMode: 'PAY_PER_REQUEST' }));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
  }
}
