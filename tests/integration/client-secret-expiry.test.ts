/**
 * Expiring client secrets at the token endpoint as Lambda runs it, on the embedded DynamoDB: a
 * roll-over ends the other secret at a time; from then on it is a wrong secret to the client
 * (invalid_client) and an expired one to the audit trail, and until then it works as ever.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import type { AuditTrail } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { grantEvent, lambdaContext } from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo, type TestDynamo } from '../support/dynamo.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let dynamo: TestDynamo;
let cleanupKeys: () => Promise<void>;
let token: Handler;
let trail: AuditTrail;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  trail = createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit });
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo?.close();
  await cleanupKeys?.();
});

let addresses = 0;
/** A client of a customer of its own that rolled its secret over, the old one ending at `end`. */
async function rolledClient(end: Date) {
  addresses += 1;
  const customerId = `C-${newClientId().slice(-8)}`;
  const table = { client: dynamo.documentClient, tableName: dynamo.tables.accounts };
  const old = await createTestClient(table, customerId, ['tracking:read']);
  const next = newClientSecret(new Date(Date.now() + 1));
  await createDynamoClientRepository(table).addClientSecret(old.clientId, next.stored, {
    expireOthersAt: end,
  });
  const grant = (secret: string) =>
    token(grantEvent({ clientId: old.clientId, secret }, `198.51.100.${addresses}`), lambdaContext());
  return { customerId, old, next, grant };
}

const failuresOf = async (customerId: string) =>
  (await trail.list({ customerId, limit: 100 })).events.filter(
    (event) => event.type === 'client.authentication.failed',
  );

describe('an expiring client secret at the token endpoint', () => {
  it('is refused once its expiresAt has passed: 401 invalid_client as any wrong secret, recorded as an expired secret', async () => {
    const { customerId, old, next, grant } = await rolledClient(new Date(Date.now() - 1000));

    const refused = await grant(old.secret);

    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_client' });
    const wrong = await grant(newClientSecret(new Date()).secret);
    expect(JSON.parse(wrong.body)).toEqual(JSON.parse(refused.body));
    expect((await grant(next.secret)).statusCode).toBe(200);
    expect((await failuresOf(customerId)).map(({ reason, secretId }) => ({ reason, secretId }))).toEqual(
      expect.arrayContaining([
        { reason: 'expired secret', secretId: old.secretId },
        { reason: 'bad secret', secretId: undefined },
      ]),
    );
  });

  it('works until its expiresAt, beside its successor', async () => {
    const { customerId, old, next, grant } = await rolledClient(new Date(Date.now() + 60 * 60 * 1000));

    expect((await grant(old.secret)).statusCode).toBe(200);
    expect((await grant(next.secret)).statusCode).toBe(200);
    expect(await failuresOf(customerId)).toEqual([]);
  });
});
