import { DescribeTimeToLiveCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
    const { TableNames } = await other.send(new ListTablesCommand({})).finally(() => other.destroy());
    expect(TableNames).toEqual(expect.arrayContaining(Object.values(dynamo.tables)));
  });

  it('turns on the time to live of the sessions table where the implementation has one', async () => {
    const client = dynamo.client();
    const { TimeToLiveDescription: ttl } = await client
      .send(new DescribeTimeToLiveCommand({ TableName: dynamo.tables.sessions }))
      .finally(() => client.destroy());
    expect([ttl?.TimeToLiveStatus, ttl?.AttributeName].filter(Boolean).join(' ')).toBe(SESSIONS_TTL[kind]);
  });

  it('gives each start a stage of its own and stops answering once closed, twice safely', async () => {
    const [first, second] = await Promise.all([startTestDynamo(kind), startTestDynamo(kind)]);
    expect(first.stage).not.toBe(second.stage);
    const client = first.client();
    await Promise.all([first.close(), first.close(), second.close()]);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
    client.destroy();
  });
});
