/**
 * Failed client authentications in the audit trail: the token, revocation and introspection
 * endpoints as Lambda runs them, on the embedded DynamoDB, record each failure of a client that
 * exists (never an unknown client id's), beside the throttle's settle, and a trail that cannot
 * be written changes nothing of the answer.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import type { AuditTrail } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createAuditRecorder, createClientAuthAudit, logAuditFailure } from '../../lib/audit/recorder.ts';
import { authenticateClient, type ClientAuthDeps } from '../../lib/clients/client-auth.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { createDynamoClientReader } from '../../lib/clients/dynamodb-readers.ts';
import { INTROSPECTION_PATH, REVOCATION_PATH } from '../../lib/clients/metadata.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { createLogger } from '../../lib/log.ts';
import type { MetricsRecorder } from '../../lib/metrics/metrics.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import type { ThrottlePolicy } from '../../lib/throttle/throttle.ts';
import { basicCredentials, grantEvent, lambdaContext, tokenEvent } from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { createMemoryMetrics, noMetrics } from '../support/memory-metrics.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let token: Handler;
let revoke: Handler;
let introspect: Handler;
let trail: AuditTrail;
let retentionSeconds: number;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  retentionSeconds = (await import('../../lib/config.ts')).readOAuthTokenConfig().audit.retentionSeconds;
  trail = createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit });
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
  revoke = (await import('../../functions/oauth-revoke.ts')).handler as Handler;
  introspect = (await import('../../functions/oauth-introspect.ts')).handler as Handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

const call = (handler: Handler, event: APIGatewayProxyEvent) => handler(event, lambdaContext());

/** A client of a customer of its own. */
const newClient = async () => {
  const customerId = `C-${newClientId().slice(-8)}`;
  const client = await createTestClient(
    { client: dynamo.documentClient, tableName: dynamo.tables.accounts },
    customerId,
    ['tracking:read'],
  );
  return { ...client, customerId };
};

/** A secret of the issued format that no client holds. */
const wrongSecret = () => newClientSecret(new Date()).secret;

const eventsOf = async (customerId: string) => (await trail.list({ customerId, limit: 100 })).events;
const everyEvent = async () => (await trail.list({ limit: 10_000 })).events;

/** POST to `path` (revocation, introspection) with the client's credentials, from `sourceIp`. */
const formEvent = (path: string, client: { clientId: string; secret: string }, sourceIp: string) => ({
  ...tokenEvent(
    { token: 'not-a-token' },
    { Authorization: basicCredentials(client.clientId, client.secret) },
    sourceIp,
  ),
  path,
  resource: path,
});

describe('the audit trail of failed client authentications', () => {
  it('records a wrong secret of an existing client at the token endpoint: the client, the source address, when, why, never the secret', async () => {
    const client = await newClient();
    const presented = wrongSecret();
    const before = Date.now();

    const answer = await call(token, grantEvent({ ...client, secret: presented }, '198.51.100.7'));

    expect(answer.statusCode).toBe(401);
    const events = await eventsOf(client.customerId);
    expect(events).toEqual([
      {
        customerId: client.customerId,
        type: 'client.authentication.failed',
        at: expect.any(String),
        actor: `client:${client.clientId}`,
        source: 'api',
        sourceIp: '198.51.100.7',
        clientId: client.clientId,
        reason: 'bad secret',
        expiresAt: expect.any(Number),
      },
    ]);
    const [event] = events;
    const at = Date.parse(event?.at ?? '');
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    // The TTL: the event's time plus the stage's retention (90 days by default).
    expect(retentionSeconds).toBe(90 * 86_400);
    expect(event?.expiresAt).toBe(Math.floor(at / 1000) + retentionSeconds);
    expect(JSON.stringify(events)).not.toContain(presented);
  });

  it('records a disabled client’s authentication with the id of the secret it presented', async () => {
    const client = await newClient();
    await createDynamoClientRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.accounts,
    }).setClientEnabled(client.clientId, false);

    const answer = await call(token, grantEvent(client, '198.51.100.8'));

    expect(answer.statusCode).toBe(401);
    expect(await eventsOf(client.customerId)).toEqual([
      expect.objectContaining({
        clientId: client.clientId,
        secretId: client.secretId,
        sourceIp: '198.51.100.8',
        reason: 'disabled client',
      }),
    ]);
  });

  it('records nothing for an unknown client id: it concerns no customer, and may be a secret pasted into the id field', async () => {
    const before = await everyEvent();

    const answer = await call(
      token,
      grantEvent({ clientId: newClientId(), secret: wrongSecret() }, '198.51.100.9'),
    );

    expect(answer.statusCode).toBe(401);
    expect(await everyEvent()).toEqual(before);
  });

  it('records nothing for a grant that succeeds', async () => {
    const client = await newClient();

    expect((await call(token, grantEvent(client, '198.51.100.10'))).statusCode).toBe(200);

    expect(await eventsOf(client.customerId)).toEqual([]);
  });

  it('records a wrong secret at the revocation and introspection endpoints as the token endpoint does', async () => {
    const client = await newClient();
    const guessed = { ...client, secret: wrongSecret() };

    const revoked = await call(revoke, formEvent(REVOCATION_PATH, guessed, '198.51.100.11'));
    const introspected = await call(introspect, formEvent(INTROSPECTION_PATH, guessed, '198.51.100.12'));

    expect([revoked.statusCode, introspected.statusCode]).toEqual([401, 401]);
    expect(
      (await eventsOf(client.customerId))
        .map(({ type, sourceIp, reason }) => [type, sourceIp, reason])
        .sort(),
    ).toEqual([
      ['client.authentication.failed', '198.51.100.11', 'bad secret'],
      ['client.authentication.failed', '198.51.100.12', 'bad secret'],
    ]);
  });
});

describe('client authentication with its audit trail', () => {
  const POLICY: ThrottlePolicy = {
    limit: 5,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 10,
  };
  const AT = new Date('2026-07-01T12:00:00.000Z');

  /** Client authentication on the test DynamoDB through `documentClient`, its trail on `auditTable`. */
  const authDeps = (
    options: {
      auditTable?: string;
      documentClient?: typeof dynamo.documentClient;
      log?: string[];
      metrics?: MetricsRecorder;
    } = {},
  ): ClientAuthDeps => {
    const client = options.documentClient ?? dynamo.documentClient;
    const logger = createLogger('warn', (line) => options.log?.push(line));
    return {
      clients: createDynamoClientReader({ client, tableName: dynamo.tables.accounts }),
      throttle: createLoginThrottle({
        store: createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle }),
        settings: {
          username: POLICY,
          sourceIp: POLICY,
          clientSourceIp: POLICY,
          knownSourceSeconds: 0,
        },
        counterSecret: new Uint8Array(32),
        clock: () => AT,
        logger,
        metrics: noMetrics,
      }),
      logger,
      metrics: noMetrics,
      clock: () => AT,
      audit: createClientAuthAudit(
        createAuditRecorder({
          trail: createDynamoAuditTrail({ client, tableName: options.auditTable ?? dynamo.tables.audit }),
          retentionSeconds: 86_400,
          metrics: options.metrics ?? noMetrics,
          warn: logAuditFailure(logger),
          clock: () => AT,
        }),
      ),
    };
  };

  /** What a failed authentication rejects with: its code and the quota it reports. */
  const refusal = (deps: ClientAuthDeps, clientId: string, sourceIp: string) =>
    authenticateClient(deps, { clientId, clientSecret: wrongSecret(), sourceIp }).then(
      () => {
        throw new Error('the authentication succeeded');
      },
      (error: { code?: string; quota?: unknown }) => ({ code: error.code, quota: error.quota }),
    );

  it('a trail that cannot be written leaves the client’s answer as it was, logs a warning naming the client, and counts AuditWriteFailed', async () => {
    const [recorded, unrecorded] = [await newClient(), await newClient()];
    const log: string[] = [];
    const metrics = createMemoryMetrics();

    const answered = await refusal(authDeps(), recorded.clientId, '192.0.2.1');
    const answeredWithout = await refusal(
      authDeps({ auditTable: 'parcel-auth-no-such-audit', log, metrics }),
      unrecorded.clientId,
      '192.0.2.2',
    );
    // What the alarm on lost audit events counts: the OAuth endpoints' losses too.
    expect(metrics.names()).toContain('AuditWriteFailed');

    expect(answered.code).toBe('INVALID_CLIENT');
    expect(answeredWithout).toEqual(answered);
    expect(await eventsOf(recorded.customerId)).toHaveLength(1);
    expect(await eventsOf(unrecorded.customerId)).toEqual([]);
    const warnings = log.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'WARN',
        event: 'audit event not recorded',
        type: 'client.authentication.failed',
        clientId: unrecorded.clientId,
      }),
    ]);
  });

  it('writes the event beside the throttle’s settle, not after it: no step is added to the answer', async () => {
    const client = await newClient();
    const roles = new Map(Object.entries(dynamo.tables).map(([role, name]) => [name, role]));
    // Each request sent and answered, by table, in order.
    const seen: string[] = [];
    const documentClient = new Proxy(dynamo.documentClient, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: { input: { TableName?: string } }) => {
          const role = roles.get(command.input.TableName ?? '');
          seen.push(`send ${role}`);
          const answer = await Reflect.apply(target.send, target, [command]);
          seen.push(`answer ${role}`);
          return answer;
        };
      },
    });

    expect(await refusal(authDeps({ documentClient }), client.clientId, '192.0.2.3')).toMatchObject({
      code: 'INVALID_CLIENT',
    });

    // Sent before the settle's writes are answered, so the answer waits for neither one after the other.
    expect(seen.filter((step) => step === 'send audit')).toHaveLength(1);
    expect(seen.indexOf('send audit')).toBeLessThan(seen.lastIndexOf('answer loginThrottle'));
    expect(seen.indexOf('send audit')).toBeGreaterThan(seen.indexOf('answer accounts'));
    expect(await eventsOf(client.customerId)).toEqual([
      expect.objectContaining({ at: AT.toISOString(), expiresAt: AT.getTime() / 1000 + 86_400 }),
    ]);
  });
});
