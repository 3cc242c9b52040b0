import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { type DynamoKind, describeEachDynamo, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';

/**
 * What DescribeTimeToLive says of the sessions table. dynalite answers DescribeTimeToLive but
 * does not implement UpdateTimeToLive, so its tables never have one (nor delete expired items).
 */
const SESSIONS_TTL: Record<DynamoKind, string> = {
  dynalite: 'DISABLED',
  'dynamodb-local': 'ENABLED expiresAt',
};

const otherRegionClient = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'eu-central-1',
    credentials: { accessKeyId: 'other', secretAccessKey: 'other' },
    maxAttempts: 1,
  });

/** DescribeTable's status of a table, or 'none' where there is no such table. */
const tableStatus = (client: DynamoDBClient, TableName: string) =>
  client.send(new DescribeTableCommand({ TableName })).then(
    ({ Table }) => Table?.TableStatus ?? 'none',
    (error: unknown) => {
      if (error instanceof ResourceNotFoundException) return 'none';
      throw error;
    },
  );

describeEachDynamo('test DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  it('answers on 127.0.0.1 with every table of infra/tables.yml, seen from any region and key', async () => {
    expect(dynamo.kind).toBe(kind);
    expect(dynamo.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const other = otherRegionClient(dynamo.endpoint);
    const statuses = await Promise.all(
      Object.values(dynamo.tables).map((name) => tableStatus(other, name)),
    ).finally(() => other.destroy());
    expect(statuses).toEqual(Object.values(dynamo.tables).map(() => 'ACTIVE'));
  });

  it('turns on the time to live of the sessions table where the implementation has one', async () => {
    const client = dynamo.client();
    const { TimeToLiveDescription: ttl } = await client
      .send(new DescribeTimeToLiveCommand({ TableName: dynamo.tables.sessions }))
      .finally(() => client.destroy());
    expect([ttl?.TimeToLiveStatus, ttl?.AttributeName].filter(Boolean).join(' ')).toBe(SESSIONS_TTL[kind]);
  });

  it('gives each start a stage of its own and stops answering once closed, twice safely', async () => {
    const [first, second] = await Promise.all([
      startTestDynamo(kind, { own: true }),
      startTestDynamo(kind, { own: true }),
    ]);
    expect(first.stage).not.toBe(second.stage);
    const client = first.client();
    await Promise.all([first.close(), first.close(), second.close()]);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
    client.destroy();
  });

  it('shares one server between the starts of a run where it can, each with tables of its own, dropped at its close', async () => {
    const [first, second] = await Promise.all([startTestDynamo(kind), startTestDynamo(kind)]);
    expect(first.stage).not.toBe(second.stage);
    // dynalite always starts one of its own; DynamoDB Local is shared where the run started one.
    const sharing = kind === 'dynamodb-local' && inject('sharedDynamodbLocal') !== undefined;
    expect(first.endpoint === second.endpoint).toBe(sharing);
    await Promise.all([first.close(), first.close()]);
    const client = second.client();
    if (sharing) {
      const dropped = await Promise.all(Object.values(first.tables).map((name) => tableStatus(client, name)));
      expect(dropped).toEqual(Object.values(first.tables).map(() => 'none'));
    }
    const kept = await Promise.all(Object.values(second.tables).map((name) => tableStatus(client, name)));
    expect(kept).toEqual(Object.values(second.tables).map(() => 'ACTIVE'));
    client.destroy();
    await second.close();
  });
});
