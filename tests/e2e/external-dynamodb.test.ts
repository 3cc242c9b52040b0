/**
 * `npm start` on a DynamoDB it did not start (DYNAMODB_ENDPOINT): here the fault proxy in
 * front of dynalite, so a fault reaches the client through API Gateway's emulation, the real
 * authorizer and handlers, as it would on AWS.
 */
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedDynamo, startDynalite } from '../../dev/local/dynalite.ts';
import { type DynamoProxy, startDynamoProxy } from '../../dev/local/dynamodb-proxy.ts';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { tableNames } from '../../lib/stage.ts';

describe('npm start with DYNAMODB_ENDPOINT', () => {
  let dynamo: EmbeddedDynamo;
  let proxy: DynamoProxy;
  let stack: LocalStack;

  beforeAll(async () => {
    dynamo = await startDynalite({ port: 0 });
    proxy = await startDynamoProxy(dynamo.endpoint);
    stack = await startLocalStack({ env: { DYNAMODB_ENDPOINT: proxy.endpoint } });
  });
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
    await dynamo?.close();
  });

  const login = () =>
    fetch(`${stack.baseUrl}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(stack.demo),
    });

  it('creates the missing tables in that DynamoDB and serves from it', async () => {
    const client = dynamo.client();
    const { TableNames = [] } = await client.send(new ListTablesCommand({}));
    client.destroy();

    expect(TableNames).toEqual(expect.arrayContaining(Object.values(tableNames('local'))));
    expect((await login()).status).toBe(200);
  });

  it('answers 503 problem+json with Retry-After while that DynamoDB fails, and 200 once it is back', async () => {
    proxy.decide(() => 'error');
    const during = await login();
    proxy.decide(() => 'forward');

    expect(during.status).toBe(503);
    expect(during.headers.get('content-type')).toBe('application/problem+json');
    expect(during.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await during.text()).not.toMatch(/eyJ/);
    expect((await login()).status).toBe(200);
  });

  it('leaves that DynamoDB running when it stops', async () => {
    await stack.stop();
    const client = dynamo.client();

    await expect(client.send(new ListTablesCommand({}))).resolves.toBeDefined();
    client.destroy();
  });
});
