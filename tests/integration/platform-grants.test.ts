/**
 * A platform's grants (lib/authorization/grants.ts) on dynalite, with the real stores, the real
 * signing and verifying, and a clock the test moves: a code once, by its platform, in its time;
 * a replay ends what the first exchange made; the SDK's resend of our own redemption is ours;
 * a refresh token rotates, is answered again within the grace window, and a reuse after it ends
 * the connection; each refresh moves the connection's idle end.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createAuditRecorder } from '../../lib/audit/recorder.ts';
import { digestOf } from '../../lib/authorization/authorize.ts';
import { createDynamoAuthorizationStore } from '../../lib/authorization/dynamodb.ts';
import { exchangeCode, type PlatformGrantDeps, refreshConnection } from '../../lib/authorization/grants.ts';
import { challengeOf } from '../../lib/authorization/pkce.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { createDynamoClientReader } from '../../lib/clients/dynamodb-readers.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { createDynamoConnectionStore } from '../../lib/connections/dynamodb.ts';
import type { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { createDynamoReplayStore, DPOP_PREFIX } from '../../lib/replay/dynamodb.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import { createConnectionTokenIssuer } from '../../lib/tokens/issue.ts';
import { createConnectionRefreshTokenVerifier } from '../../lib/tokens/verify.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { COUNTER_SECRET, TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { createMemoryMetrics } from '../support/memory-metrics.ts';

const REDIRECT_URI = 'https://shop.example/callback';
const VERIFIER = 'a'.repeat(43);
const CUSTOMER = 'C-GRANTS';
const POLICY = {
  limit: 50,
  windowSeconds: 3600,
  baseLockSeconds: 30,
  maxLockSeconds: 900,
  inflightLimit: 50,
};

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let now: Date;
let deps: PlatformGrantDeps;
let metrics: ReturnType<typeof createMemoryMetrics>;
const platforms: { clientId: string; clientSecret: string }[] = [];
let codeCount = 0;

const clock = () => now;
const later = (seconds: number) => {
  now = new Date(now.getTime() + seconds * 1000);
};
const codeOf = async (promise: Promise<unknown>) =>
  (
    (await promise.then(
      () => undefined,
      (error: unknown) => error,
    )) as AppError | undefined
  )?.code;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const keys = await testKeys();
  const table = { client: dynamo.documentClient, tableName: dynamo.tables.accounts };
  const repository = createDynamoClientRepository(table);
  for (const name of ['Shoply', 'Other']) {
    const { secret, stored } = newClientSecret(new Date());
    const clientId = newClientId();
    await repository.createPlatform({
      clientId,
      name,
      scopes: ['tracking:read'],
      redirectUris: [REDIRECT_URI],
      secret: stored,
    });
    platforms.push({ clientId, clientSecret: secret });
  }
  metrics = createMemoryMetrics();
  const logger = createLogger('error', () => {});
  const settings = { ...TOKEN_SETTINGS, accessTtlSeconds: 3600, refreshTtlSeconds: 30 * 86_400 };
  deps = {
    clients: createDynamoClientReader(table),
    throttle: createLoginThrottle({
      store: createDynamoThrottleStore({
        client: dynamo.documentClient,
        tableName: dynamo.tables.loginThrottle,
      }),
      settings: { username: POLICY, sourceIp: POLICY, clientSourceIp: POLICY, knownSourceSeconds: 0 },
      counterSecret: COUNTER_SECRET,
      logger,
      metrics,
    }),
    logger,
    metrics,
    clock,
    codes: createDynamoAuthorizationStore({
      client: dynamo.documentClient,
      tableName: dynamo.tables.sessions,
    }),
    connections: createDynamoConnectionStore(table),
    recorder: createAuditRecorder({
      trail: createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit }),
      retentionSeconds: 86_400,
      metrics,
      warn: () => {},
      clock,
    }),
    sessions: createDynamoSessionStore({ client: dynamo.documentClient, tableName: dynamo.tables.sessions }),
    dpop: {
      replay: createDynamoReplayStore(
        { client: dynamo.documentClient, tableName: dynamo.tables.sessions },
        DPOP_PREFIX,
      ),
      customerRequiresDpop: async () => false,
    },
    sessionSettings: { maxLifetimeSeconds: 30 * 86_400, reuseGraceSeconds: 30 },
    tokens: createConnectionTokenIssuer({ signingKey: keys.signer, settings }),
    refreshTokens: createConnectionRefreshTokenVerifier({ keys: keys.verifiers, settings, clock }),
  };
});
afterAll(() => dynamo?.close());
beforeEach(() => {
  now = new Date();
});

/** An approval's code for the first platform, stored as the page stores it. */
async function approvedCode(platform = platforms[0]) {
  const connection = await deps.connections.approve({
    clientId: platform?.clientId ?? '',
    customerId: CUSTOMER,
    scopes: ['tracking:read'],
    approvedBy: 'admin',
    at: now,
  });
  const code = `code-${++codeCount}-${createHash('sha256').update(String(Math.random())).digest('hex')}`;
  await createDynamoAuthorizationStore({
    client: dynamo.documentClient,
    tableName: dynamo.tables.sessions,
  }).createCode({
    digest: digestOf(code),
    clientId: platform?.clientId ?? '',
    redirectUri: REDIRECT_URI,
    codeChallenge: challengeOf(VERIFIER),
    connectionId: connection.connectionId,
    customerId: CUSTOMER,
    scopes: ['tracking:read'],
    approvedAt: Math.floor(now.getTime() / 1000),
    expiresAt: Math.floor(now.getTime() / 1000) + 60,
  });
  return { code, connection };
}

const exchange = (
  code: string,
  platform = platforms[0],
  overrides: Partial<Omit<Parameters<typeof exchangeCode>[1], 'clientSecret' | 'assertion'>> & {
    clientSecret?: string;
  } = {},
) =>
  exchangeCode(deps, {
    clientId: platform?.clientId ?? '',
    clientSecret: platform?.clientSecret ?? '',
    code,
    redirectUri: REDIRECT_URI,
    codeVerifier: VERIFIER,
    sourceIp: '198.51.100.7',
    ...overrides,
  });

const refresh = (refreshToken: string) =>
  refreshConnection(deps, {
    clientId: platforms[0]?.clientId ?? '',
    clientSecret: platforms[0]?.clientSecret ?? '',
    refreshToken,
    sourceIp: '198.51.100.7',
  });

describe('the authorization code', () => {
  it('is exchanged once; a second use is invalid_grant and ends the connection the first made', async () => {
    const { code, connection } = await approvedCode();
    const grant = await exchange(code);
    expect(grant).toMatchObject({ customerId: CUSTOMER, scopes: ['tracking:read'] });
    expect(await codeOf(exchange(code))).toBe('INVALID_GRANT');
    expect(await deps.connections.find(connection.clientId, CUSTOMER)).toBeNull();
    expect(await codeOf(refresh(grant.refreshToken))).toBe('INVALID_GRANT');
    expect(metrics.names()).toContain('ConnectionEnded{by=CodeReplayed}');
  });

  it('is spent by no other platform: another’s exchange is invalid_grant and the rightful one still works', async () => {
    const { code } = await approvedCode();
    expect(await codeOf(exchange(code, platforms[1]))).toBe('INVALID_GRANT');
    expect((await exchange(code)).customerId).toBe(CUSTOMER);
  });

  it('needs its PKCE verifier and its redirect URI, and lives 60 seconds', async () => {
    const wrongVerifier = await approvedCode();
    expect(await codeOf(exchange(wrongVerifier.code, platforms[0], { codeVerifier: 'b'.repeat(43) }))).toBe(
      'INVALID_GRANT',
    );
    const wrongUri = await approvedCode();
    expect(
      await codeOf(exchange(wrongUri.code, platforms[0], { redirectUri: 'https://shop.example/other' })),
    ).toBe('INVALID_GRANT');
    const expired = await approvedCode();
    later(61);
    expect(await codeOf(exchange(expired.code))).toBe('INVALID_GRANT');
    // An unspent code that expired is merely unknown: the connection stays.
    expect(await deps.connections.find(expired.connection.clientId, CUSTOMER)).not.toBeNull();
  });

  it('takes the SDK’s resend of our own redemption for ours, not for a replay', async () => {
    const { code } = await approvedCode();
    const redemption = `redemption-${codeCount}`;
    const binding = {
      clientId: platforms[0]?.clientId ?? '',
      redirectUri: REDIRECT_URI,
      codeChallenge: challengeOf(VERIFIER),
    };
    const first = await deps.codes.redeemCode(digestOf(code), binding, redemption, now);
    const resent = await deps.codes.redeemCode(digestOf(code), binding, redemption, now);
    expect([first.outcome, resent.outcome]).toEqual(['redeemed', 'redeemed']);
    const other = await deps.codes.redeemCode(digestOf(code), binding, 'another exchange', now);
    // Presented with another verifier, a spent code is merely unknown: nothing ends for it.
    const wrong = await deps.codes.redeemCode(
      digestOf(code),
      { ...binding, codeChallenge: challengeOf('w'.repeat(43)) },
      'a thief',
      now,
    );
    expect(wrong.outcome).toBe('unknown');
    expect(other.outcome).toBe('replayed');
  });
});

describe('a connection’s refresh token', () => {
  it('rotates, is answered again within the grace window, and a reuse after it ends the connection', async () => {
    const { code, connection } = await approvedCode();
    const first = await exchange(code);
    const second = await refresh(first.refreshToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    later(10);
    const retried = await refresh(first.refreshToken);
    expect(retried.accessToken).toEqual(expect.any(String));
    later(31);
    expect(await codeOf(refresh(first.refreshToken))).toBe('INVALID_GRANT');
    expect(await deps.connections.find(connection.clientId, CUSTOMER)).toBeNull();
    expect(await codeOf(refresh(second.refreshToken))).toBe('INVALID_GRANT');
    expect(metrics.names()).toContain('ConnectionEnded{by=RefreshReused}');
  });

  it('narrows an access token to a scope asked for, and refuses one beyond the approval before spending the token', async () => {
    const { code } = await approvedCode();
    const grant = await exchange(code);
    const beyond = refreshConnection(deps, {
      clientId: platforms[0]?.clientId ?? '',
      clientSecret: platforms[0]?.clientSecret ?? '',
      refreshToken: grant.refreshToken,
      scopes: ['shipments:write'],
      sourceIp: '198.51.100.7',
    });
    expect(await codeOf(beyond)).toBe('INVALID_SCOPE');
    const narrowed = await refreshConnection(deps, {
      clientId: platforms[0]?.clientId ?? '',
      clientSecret: platforms[0]?.clientSecret ?? '',
      refreshToken: grant.refreshToken,
      scopes: ['tracking:read'],
      sourceIp: '198.51.100.7',
    });
    expect(narrowed.scopes).toEqual(['tracking:read']);
  });

  it('moves the connection’s idle end with each refresh, so a platform that refreshes keeps it', async () => {
    const { code } = await approvedCode();
    let grant = await exchange(code);
    // Two idle lifetimes in all, refreshed every 20 days: never more than one idle lifetime apart.
    for (let step = 0; step < 3; step++) {
      later(20 * 86_400);
      grant = await refresh(grant.refreshToken);
    }
    expect(grant.customerId).toBe(CUSTOMER);
    later(31 * 86_400);
    expect(await codeOf(refresh(grant.refreshToken))).toBe('INVALID_GRANT');
  });
});
