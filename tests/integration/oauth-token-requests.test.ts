/**
 * What the token endpoint asks of DynamoDB (docs/clients.md, "Secret scanning" and "Last use"):
 * the real handler behind the fault matrix's proxy (dev/local/dynamodb-proxy.ts), which hears of
 * every request, on the embedded DynamoDB. A secret of no issued format costs no request; a
 * secret's last use costs one write an hour, and a failed one costs the grant nothing.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DynamoProxy, type DynamoRequest, startDynamoProxy } from '../../dev/local/dynamodb-proxy.ts';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { clientKey } from '../../lib/clients/dynamodb-items.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { grantEvent, lambdaContext } from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let dynamo: TestDynamo;
let proxy: DynamoProxy;
let cleanupKeys: () => Promise<void>;
let token: Handler;
/** The requests the handler sent since the test began. */
let sent: DynamoRequest[] = [];
const logs = captureServiceLogs();

beforeAll(async () => {
  dynamo = await startTestDynamo();
  proxy = await startDynamoProxy(dynamo.endpoint);
  const { env, cleanup } = await functionEnv({ endpoint: proxy.endpoint, tables: dynamo.tables });
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  // The refusals' own lines, to show they give a reason and never the secret.
  vi.stubEnv('LOG_LEVEL', 'info');
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await proxy?.close();
  await dynamo?.close();
  await cleanupKeys?.();
});

beforeEach(() => {
  sent = [];
  proxy.decide((request) => {
    sent.push(request);
    return 'forward';
  });
});

let addresses = 0;
/** A new client (written past the proxy) and an address of its own, so no run's counters meet another's. */
async function newClient() {
  addresses += 1;
  const client = await createTestClient(
    { client: dynamo.documentClient, tableName: dynamo.tables.accounts },
    `C-TR${addresses}`,
    ['tracking:read'],
  );
  return { ...client, sourceIp: `198.51.100.${addresses}` };
}
type Client = Awaited<ReturnType<typeof newClient>>;

const grant = (client: Client, secret = client.secret) =>
  token(grantEvent({ clientId: client.clientId, secret }, client.sourceIp), lambdaContext());

/** The requests sent, by action and table: `{ 'UpdateItem accounts': 1, ... }`. */
function requestsSent(): Record<string, number> {
  const roles = new Map(Object.entries(dynamo.tables).map(([role, name]) => [name, role]));
  const counted: Record<string, number> = {};
  for (const { action, body } of sent) {
    const name = `${action} ${roles.get(String(body.TableName)) ?? String(body.TableName)}`;
    counted[name] = (counted[name] ?? 0) + 1;
  }
  return counted;
}

/** Today's grant: the client read beside the two counters' reservations, then the counters settled. */
const GRANT = { 'GetItem accounts': 1, 'UpdateItem loginThrottle': 4 };

const stored = (client: Client) =>
  createDynamoClientRepository({
    client: dynamo.documentClient,
    tableName: dynamo.tables.accounts,
  }).findClient(client.clientId);

const isLastUseWrite = (request: DynamoRequest) =>
  request.action === 'UpdateItem' && request.body.TableName === dynamo.tables.accounts;

describe('a secret of no format we issue', () => {
  it('is refused with 401 invalid_client and no DynamoDB request at all: a failed checksum, a secret cut short', async () => {
    const client = await newClient();
    const last = client.secret.at(-1) === 'A' ? 'B' : 'A';

    for (const secret of [`${client.secret.slice(0, -1)}${last}`, client.secret.slice(0, -1)]) {
      const answer = await grant(client, secret);
      expect(answer.statusCode).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_client' });
      expect(answer.headers?.['WWW-Authenticate']).toMatch(/^Basic realm="parcel-auth"/);
    }
    expect(sent).toEqual([]);
    expect(logs.events('client authentication failed')).toEqual([
      expect.objectContaining({ reason: 'malformed secret' }),
      expect.objectContaining({ reason: 'malformed secret' }),
    ]);

    // A wrong secret of the issued format is read and counted as ever.
    expect((await grant(client, newClientSecret(new Date()).secret)).statusCode).toBe(401);
    expect(requestsSent()).toMatchObject(GRANT);
  });
});

describe('a secret’s last use', () => {
  it('is written by a new secret’s first grant alone: one request more, then today’s five', async () => {
    const client = await newClient();
    const before = Date.now();

    expect((await grant(client)).statusCode).toBe(200);
    expect(requestsSent()).toEqual({ ...GRANT, 'UpdateItem accounts': 1 });
    const first = await stored(client);
    const recorded = Date.parse(first?.secrets[0]?.lastUsedAt ?? '');
    expect(recorded).toBeGreaterThanOrEqual(before);
    expect(recorded).toBeLessThanOrEqual(Date.now());
    expect(first?.lastUsedAt).toBe(first?.secrets[0]?.lastUsedAt);

    sent = [];
    for (let i = 0; i < 3; i++) expect((await grant(client)).statusCode).toBe(200);
    expect(requestsSent()).toEqual({ 'GetItem accounts': 3, 'UpdateItem loginThrottle': 12 });
    expect((await stored(client))?.lastUsedAt).toBe(first?.lastUsedAt);
  });

  it('is written again by the first grant an hour after the last', async () => {
    const client = await newClient();
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000 - 1000).toISOString();
    await dynamo.documentClient.send(
      new UpdateCommand({
        TableName: dynamo.tables.accounts,
        Key: clientKey(client.clientId),
        UpdateExpression: 'SET secrets.#id.lastUsedAt = :at, lastUsedAt = :at',
        ExpressionAttributeNames: { '#id': client.secretId },
        ExpressionAttributeValues: { ':at': hourAgo },
      }),
    );

    expect((await grant(client)).statusCode).toBe(200);

    expect(requestsSent()).toEqual({ ...GRANT, 'UpdateItem accounts': 1 });
    expect((await stored(client))?.secrets[0]?.lastUsedAt).not.toBe(hourAgo);
  });

  it('is sent by each of grants that come at once, and the writes its condition refuses fail none of them', async () => {
    const client = await newClient();

    const answers = await Promise.all([grant(client), grant(client), grant(client)]);

    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    // Grants that read the item before any wrote each send the conditional write; one applies
    // (the store's contract: tests/integration/clients-repository.test.ts), the others are no failure.
    const writes = sent.filter(isLastUseWrite);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.length).toBeLessThanOrEqual(3);
    const times = writes.map(
      (write) => (write.body.ExpressionAttributeValues as Record<string, { S: string }>)[':at']?.S,
    );
    expect(times).toContain((await stored(client))?.lastUsedAt);
    expect(logs.events('client last use not recorded')).toEqual([]);
    sent = [];
    expect((await grant(client)).statusCode).toBe(200);
    expect(requestsSent()).toEqual(GRANT);
  });

  it('failing to be written fails no grant: the token, and a warning naming the client and the secret’s id', async () => {
    const client = await newClient();
    proxy.decide((request) => {
      sent.push(request);
      return isLastUseWrite(request) ? 'error' : 'forward';
    });

    const answer = await grant(client);

    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('access_token');
    expect(logs.events('client last use not recorded')).toEqual([
      expect.objectContaining({ level: 'WARN', clientId: client.clientId, grantedWith: client.secretId }),
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain(client.secret.slice(4));
    expect((await stored(client))?.secrets[0]?.lastUsedAt).toBeUndefined();
    // The next grant tries again.
    proxy.decide((request) => {
      sent.push(request);
      return 'forward';
    });
    expect((await grant(client)).statusCode).toBe(200);
    expect((await stored(client))?.secrets[0]?.lastUsedAt).toBeDefined();
  });
});
