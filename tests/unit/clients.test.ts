/**
 * API clients (docs/clients.md): the secret check, the token request's parsing, the grant, and
 * what the verifier and the authorizer make of a client's token and of a narrowed user's.
 */
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import * as v from 'valibot';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuditRecorder } from '../../lib/audit/recorder.ts';
import {
  ClientNameSchema,
  type ClientRecord,
  grantedScopes,
  newClientId,
} from '../../lib/clients/clients.ts';
import { type GrantDeps, grantClientToken } from '../../lib/clients/grant.ts';
import { introspectToken } from '../../lib/clients/introspect.ts';
import { revokeToken } from '../../lib/clients/revoke.ts';
import {
  liveSecrets,
  matchExpiredSecret,
  matchSecret,
  newClientSecret,
  secretDigest,
} from '../../lib/clients/secrets.ts';
import { parseTokenQuery, parseTokenRequest, toTokenResponse } from '../../lib/clients/token-request.ts';
import type { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { createRevocationCheck } from '../../lib/revocation/revocation.ts';
import { allowedMethodArns, type Scope, ScopeListSchema } from '../../lib/scopes.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import type { Clock } from '../../lib/time.ts';
import { createClientTokenIssuer, createTokenIssuer } from '../../lib/tokens/issue.ts';
import {
  type AccessTokenVerifier,
  createAccessTokenVerifier,
  createConnectionRefreshTokenVerifier,
} from '../../lib/tokens/verify.ts';
import { authorizerEvent } from '../fixtures/events.ts';
import { authorizeEvent } from '../support/authorizer.ts';
import { COUNTER_SECRET, TOKEN_SETTINGS, testKeys, tokenRequest } from '../support/keys.ts';
import { memoryClients, noConnections } from '../support/memory-clients.ts';
import { createMemoryMetrics, noMetrics } from '../support/memory-metrics.ts';
import { memoryReplay } from '../support/memory-replay.ts';
import { memoryStatuses } from '../support/memory-statuses.ts';
import { memoryThrottleStore } from '../support/memory-throttle.ts';
import { methodArns } from '../support/routes.ts';

const CLIENT_SETTINGS = { ...TOKEN_SETTINGS, accessTtlSeconds: 3600 };
/** A secret of the format we issue that no client holds: a wrong secret the throttle counts. */
const WRONG = newClientSecret(new Date()).secret;
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const codeOf = (run: () => unknown) => {
  try {
    run();
    return 'none';
  } catch (error) {
    return (error as AppError).code;
  }
};

describe('client secrets', () => {
  const now = new Date('2026-11-25T10:00:00Z');

  it('generates a prefixed secret of 256 random bits and stores only its SHA-256', () => {
    const { secret, stored } = newClientSecret(now);
    expect(secret).toMatch(/^pcs_[A-Za-z0-9]{49}$/);
    expect(stored.digest).toBe(secretDigest(secret));
    expect(JSON.stringify(stored)).not.toContain(secret.slice(4));
    expect(stored.id).toMatch(/^[0-9a-f]{8}$/);
    expect(newClientId()).toMatch(/^pcl_[0-9a-f]{20}$/);
  });

  it('matches either of two live secrets by id, and nothing else', () => {
    const first = newClientSecret(now);
    const second = newClientSecret(now);
    const secrets = [first.stored, second.stored];
    expect(matchSecret(first.secret, secrets, now)).toBe(first.stored.id);
    expect(matchSecret(second.secret, secrets, now)).toBe(second.stored.id);
    expect(matchSecret(`${first.secret}x`, secrets, now)).toBeNull();
    expect(matchSecret(first.secret, [], now)).toBeNull();
    expect(matchSecret('', secrets, now)).toBeNull();
  });

  it('matches only live secrets: an expired one matches nothing and takes no live one’s slot', () => {
    const [expired, first, second] = [newClientSecret(now), newClientSecret(now), newClientSecret(now)];
    const ended = { ...expired.stored, expiresAt: now.toISOString() };
    const ending = { ...first.stored, expiresAt: new Date(now.getTime() + 1).toISOString() };
    const secrets = [ended, ending, second.stored];

    expect(liveSecrets(secrets, now)).toEqual([ending, second.stored]);
    expect(matchSecret(expired.secret, secrets, now)).toBeNull();
    expect(matchSecret(first.secret, secrets, now)).toBe(first.stored.id);
    expect(matchSecret(second.secret, secrets, now)).toBe(second.stored.id);
    expect(matchExpiredSecret(expired.secret, secrets, now)).toBe(expired.stored.id);
    expect(matchExpiredSecret(first.secret, secrets, now)).toBeNull();
    expect(matchSecret(first.secret, secrets, new Date(now.getTime() + 1))).toBeNull();
  });

  it.each([
    ['takes', 'a plain name', 'Warehouse sync'],
    ['takes', '100 characters', 'x'.repeat(100)],
    ['takes', 'letters of any script', 'Sklad Brno – příjem'],
    ['refuses', 'an empty name', ''],
    ['refuses', '101 characters', 'x'.repeat(101)],
    ['refuses', 'a leading space', ' Warehouse'],
    ['refuses', 'a trailing space', 'Warehouse '],
    ['refuses', 'a line break', 'Ware\nhouse'],
    ['refuses', 'a tab', 'Ware\thouse'],
    ['refuses', 'a C1 control character', 'Ware\u0085house'],
    ['refuses', 'a zero-width space', 'Ware\u200Bhouse'],
    ['refuses', 'a soft hyphen', 'Ware\u00ADhouse'],
    ['refuses', 'a line separator', 'Ware\u2028house'],
    ['refuses', 'a paragraph separator', 'Ware\u2029house'],
    ['refuses', 'a Hangul filler, invisible', 'Ware\u3164house'],
    ['refuses', 'a variation selector', 'Ware\uFE0Fhouse'],
    ['refuses', 'a private-use character', 'Ware\uE000house'],
    ['refuses', 'a lone surrogate', 'Ware\uD800house'],
    ['refuses', 'a no-break space, which looks like a space', 'Ware\u00A0house'],
    ['refuses', 'an ideographic space', 'Ware\u3000house'],
    ['refuses', 'only Braille blanks, which look empty', '\u2800\u2800'],
    ['refuses', 'an object replacement character', 'Ware\uFFFChouse'],
  ])('%s %s as a client name', (verb, _label, name) => {
    expect(v.is(ClientNameSchema, name)).toBe(verb === 'takes');
  });

  it('never matches the all-zero digest that stands in for an absent secret', () => {
    const zero = { id: 'deadbeef', digest: Buffer.alloc(32).toString('base64url'), createdAt: '' };
    expect(matchSecret('anything', [zero], now)).toBeNull();
  });

  it('grants the client’s own scopes when none are asked for, a subset when asked, nothing beyond', () => {
    const client = { scopes: ['tracking:read', 'shipments:write'] } as unknown as ClientRecord;
    expect(grantedScopes(client, undefined)).toEqual(['tracking:read', 'shipments:write']);
    expect(grantedScopes(client, ['shipments:write'])).toEqual(['shipments:write']);
    const reader = { scopes: ['tracking:read'] } as unknown as ClientRecord;
    expect(grantedScopes(reader, ['tracking:read', 'shipments:write'])).toBeNull();
  });
});

describe('scopes', () => {
  it('reads a space-delimited scope list of known scopes into the declaration’s order', () => {
    expect(v.parse(ScopeListSchema, 'shipments:write tracking:read')).toEqual([
      'tracking:read',
      'shipments:write',
    ]);
  });

  it.each([
    ['an unknown scope', 'tracking:write'],
    ['a scope twice', 'tracking:read tracking:read'],
    ['two spaces', 'tracking:read  shipments:write'],
    ['a leading space', ' tracking:read'],
    ['a quote', 'tracking:"read'],
  ])('refuses %s', (_name, text) => {
    expect(v.is(ScopeListSchema, text)).toBe(false);
  });

  it('lists the method ARNs of exactly the routes a set of scopes allows, a path parameter as *', () => {
    const prefix = 'arn:aws:execute-api:eu-central-1:1:api/prod';
    expect(allowedMethodArns(prefix, ['tracking:read'])).toEqual([`${prefix}/GET/api/v1/tracking/*`]);
    expect(allowedMethodArns(prefix, ['tracking:read', 'shipments:write'])).toEqual([
      `${prefix}/GET/api/v1/tracking/*`,
      `${prefix}/POST/api/v1/shipments`,
    ]);
    expect(allowedMethodArns(prefix, [])).toEqual([]);
  });
});

describe('token request', () => {
  const id = 'pcl_0123456789abcdef0123';
  const grant = { grant_type: 'client_credentials' };

  it('reads HTTP Basic credentials, form-urlencoded before base64 as RFC 6749 section 2.3.1 says', () => {
    expect(parseTokenRequest(grant, [basic(id, 'a:b+c%d é')])).toEqual({
      clientId: id,
      clientSecret: 'a:b+c%d é',
      scopes: undefined,
    });
  });

  it('reads credentials from the body (client_secret_post), and a narrowing scope', () => {
    expect(
      parseTokenRequest({ ...grant, client_id: id, client_secret: 's', scope: 'tracking:read' }, []),
    ).toEqual({ clientId: id, clientSecret: 's', scopes: ['tracking:read'] });
  });

  it('takes an empty scope for none, and a client_id in the body that repeats the Basic one', () => {
    expect(
      parseTokenRequest({ ...grant, scope: '', client_id: id }, [basic(id, 's')]).scopes,
    ).toBeUndefined();
  });

  it.each([
    ['no grant_type', {}, [], 'VALIDATION_FAILED'],
    ['another grant', { grant_type: 'password' }, [], 'UNSUPPORTED_GRANT_TYPE'],
    ['no credentials', grant, [], 'INVALID_CLIENT'],
    ['a body id without a secret', { ...grant, client_id: id }, [], 'INVALID_CLIENT'],
    ['two authentication methods', { ...grant, client_secret: 's' }, [basic(id, 's')], 'VALIDATION_FAILED'],
    [
      'a body id other than the Basic one',
      { ...grant, client_id: 'pcl_ffffffffffffffffffff' },
      [basic(id, 's')],
      'VALIDATION_FAILED',
    ],
    ['two Authorization headers', grant, [basic(id, 's'), basic(id, 's')], 'VALIDATION_FAILED'],
    ['a Bearer header', grant, ['Bearer abc'], 'INVALID_CLIENT'],
    [
      'Basic without a colon',
      grant,
      [`Basic ${Buffer.from('nocolon').toString('base64')}`],
      'INVALID_CLIENT',
    ],
    [
      'Basic with broken percent-encoding',
      grant,
      [`Basic ${Buffer.from(`${id}:%E0%A4%A`).toString('base64')}`],
      'INVALID_CLIENT',
    ],
    [
      'an id that is not a client id',
      { ...grant, client_id: 'alice', client_secret: 's' },
      [],
      'INVALID_CLIENT',
    ],
    ['an empty secret', { ...grant, client_id: id, client_secret: '' }, [], 'INVALID_CLIENT'],
    [
      'a secret of 257 characters',
      { ...grant, client_id: id, client_secret: 'x'.repeat(257) },
      [],
      'INVALID_CLIENT',
    ],
    ['an unknown scope', { ...grant, scope: 'admin' }, [basic(id, 's')], 'INVALID_SCOPE'],
  ] as const)('refuses %s', (_name, form, authorization, code) => {
    expect(codeOf(() => parseTokenRequest({ ...form }, [...authorization]))).toBe(code);
  });

  it('answers the token as RFC 6749 section 5.1 shapes it, with no refresh token', () => {
    expect(toTokenResponse({ accessToken: 't', expiresIn: 3600, scopes: ['tracking:read'] })).toEqual({
      access_token: 't',
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'tracking:read',
    });
  });
});

describe('client credentials grant', () => {
  let keys: Awaited<ReturnType<typeof testKeys>>;
  let verifier: AccessTokenVerifier;
  const now = new Date();
  const POLICY = {
    limit: 3,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 50,
  };

  beforeAll(async () => {
    keys = await testKeys();
    verifier = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS });
  });

  const setUp = async (
    scopes: readonly Scope[] = ['tracking:read', 'shipments:write'],
    clientSourceIpLimit = 50,
    options: { readonly clock?: Clock; readonly failUseWrites?: boolean } = {},
  ) => {
    const clients = memoryClients({ ...(options.failUseWrites !== undefined && { failUseWrites: true }) });
    const metrics = createMemoryMetrics();
    const store = memoryThrottleStore();
    const clientId = newClientId();
    const { secret, stored } = newClientSecret(now);
    await clients.createClient({ clientId, customerId: 'C-1001', scopes: [...scopes], secret: stored });
    const lines: string[] = [];
    const deps: GrantDeps = {
      clients,
      tokens: createClientTokenIssuer({ signingKey: keys.signer, settings: CLIENT_SETTINGS }),
      dpop: { replay: memoryReplay(), customerRequiresDpop: async () => false },
      throttle: createLoginThrottle({
        metrics,
        store,
        settings: {
          username: POLICY,
          sourceIp: { ...POLICY, limit: 100 },
          clientSourceIp: { ...POLICY, limit: clientSourceIpLimit },
          knownSourceSeconds: 0,
        },
        counterSecret: COUNTER_SECRET,
        logger: createLogger('error', () => {}),
      }),
      logger: createLogger('info', (line) => lines.push(line)),
      metrics,
      ...(options.clock !== undefined && { clock: options.clock }),
    };
    const ask = (
      overrides: Partial<Omit<Parameters<typeof grantClientToken>[1], 'clientSecret' | 'assertion'>> & {
        clientSecret?: string;
      } = {},
    ) =>
      grantClientToken(deps, {
        clientId,
        clientSecret: secret,
        scopes: undefined,
        sourceIp: '198.51.100.7',
        ...overrides,
      });
    /** The grant's log lines named `event`. */
    const logged = (event: string) =>
      lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === event);
    return { clients, metrics, store, clientId, secret, stored, ask, throttle: deps.throttle, lines, logged };
  };

  it('issues an at+jwt for the client’s customer and scopes, with client_id as sub and the secret’s id', async () => {
    const { clientId, stored, ask, metrics } = await setUp();
    const grant = await ask();
    const claims = decodeJwt(grant.accessToken);
    expect(decodeProtectedHeader(grant.accessToken)).toMatchObject({ typ: 'at+jwt', alg: 'EdDSA' });
    expect(claims).toMatchObject({
      sub: clientId,
      client_id: clientId,
      customer_id: 'C-1001',
      scope: 'tracking:read shipments:write',
      secret_id: stored.id,
      iss: TOKEN_SETTINGS.issuer,
      aud: TOKEN_SETTINGS.audience,
    });
    expect(claims).not.toHaveProperty('sid');
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
    expect(grant.expiresIn).toBe(3600);
    expect(await verifier.verify(grant.accessToken)).toMatchObject({
      kind: 'client',
      clientId,
      grant: { secretId: stored.id },
      customerId: 'C-1001',
      scopes: ['tracking:read', 'shipments:write'],
    });
    expect(metrics.names()).toContain('ClientTokenIssued');
  });

  it('narrows the token to the scopes asked for, and refuses a scope beyond the client’s after authenticating it', async () => {
    const { ask, metrics } = await setUp(['tracking:read']);
    expect((await ask({ scopes: ['tracking:read'] })).scopes).toEqual(['tracking:read']);
    await expect(ask({ scopes: ['shipments:write'] })).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
    expect(metrics.names()).toContain('ClientTokenRefused{reason=InvalidScope}');
  });

  it('answers one INVALID_CLIENT for an unknown client, a wrong secret and a disabled client, counting each reason', async () => {
    const { ask, clients, clientId, metrics } = await setUp();
    await expect(ask({ clientId: newClientId() })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await expect(ask({ clientSecret: WRONG })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await clients.setClientEnabled(clientId, false);
    await expect(ask()).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    expect(metrics.names()).toEqual([
      'ClientAuthFailed{reason=UnknownClient}',
      'ClientAuthFailed{reason=BadSecret}',
      'ClientAuthFailed{reason=Disabled}',
    ]);
  });

  it('locks a client id after the limit of wrong secrets, then refuses even the right one until the lock ends', async () => {
    const { ask, metrics } = await setUp();
    for (let i = 0; i < POLICY.limit; i++) {
      await expect(ask({ clientSecret: WRONG })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    }
    const locked = await ask().catch((error: AppError) => error);
    expect(locked).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect((locked as AppError).retryAfterSeconds).toBeGreaterThan(0);
    expect(metrics.names()).toContain('LockoutStarted{counter=Client}');
    expect(metrics.names()).toContain('ClientAuthFailed{reason=Locked}');
  });

  it('refuses a client whose every scope was since retired: invalid_scope, no token that could call nothing', async () => {
    const { ask, clients, clientId } = await setUp();
    const record = clients.records.get(clientId);
    if (record === undefined) throw new Error('no client');
    clients.records.set(clientId, { ...record, scopes: [] });
    await expect(ask()).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
  });

  it('refuses a platform’s own client credentials after authenticating it: unauthorized_client, no token, the failure not counted', async () => {
    const { clients, ask, metrics, store } = await setUp();
    const platformId = newClientId();
    const { secret, stored } = newClientSecret(now);
    await clients.createPlatform({
      clientId: platformId,
      name: 'Shop app',
      scopes: ['tracking:read'],
      redirectUris: ['https://shop.example/callback'],
      secret: stored,
    });
    const refused = await ask({ clientId: platformId, clientSecret: secret }).catch(
      (error: AppError) => error,
    );
    expect(refused).toMatchObject({ code: 'UNAUTHORIZED_CLIENT' });
    expect(metrics.names()).toEqual(['ClientTokenRefused{reason=UnauthorizedClient}']);
    // Its secret was right: the throttle counts no failure against the platform's id.
    expect([...store.all.values()].filter((counter) => counter.failures > 0)).toEqual([]);
  });

  it('counts a client id apart from a username of the same text', async () => {
    const { store, clientId, ask } = await setUp();
    await expect(ask({ clientSecret: WRONG })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    expect([...store.all.keys()].filter((key) => key.startsWith('CLIENT#'))).toHaveLength(1);
    expect([...store.all.keys()].some((key) => key.startsWith('USER#'))).toBe(false);
    expect(clientId).toMatch(/^pcl_/);
  });

  it('counts a client’s authentications from an address apart from people’s logins from it, to the machines’ limit', async () => {
    const { ask, store, metrics, throttle } = await setUp(undefined, 2);
    await expect(ask({ clientSecret: WRONG })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await expect(ask({ clientSecret: WRONG })).rejects.toMatchObject({ code: 'INVALID_CLIENT' });

    // Two failures: below the client id's limit of three, at the address's machines' limit.
    await expect(ask()).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(metrics.names()).toContain('LockoutStarted{counter=ClientSourceAddress}');
    expect(store.all.get('CLIENTIP#198.51.100.7')?.failures).toBe(2);
    expect([...store.all.keys()].some((key) => key.startsWith('IP#'))).toBe(false);
    await expect(throttle.begin({ username: 'carol', sourceIp: '198.51.100.7' })).resolves.toBeDefined();
  });

  it('tells what is left of the address’s limit with a token and with INVALID_CLIENT, and of the client’s to no source it does not know', async () => {
    // Known sources are off here: no source is known to the client id, so none is told its count.
    const { ask } = await setUp();
    const refused = await ask({ clientSecret: WRONG }).catch((error: AppError) => error);
    const grant = await ask();
    expect((refused as AppError).quota?.map(({ policy, remaining }) => ({ policy, remaining }))).toEqual([
      { policy: 'address', remaining: 49 },
    ]);
    expect(grant.quota.map(({ policy, remaining }) => ({ policy, remaining }))).toEqual([
      { policy: 'address', remaining: 49 },
    ]);
  });

  it('records a secret’s first use, writes nothing again within the hour, and again once an hour has passed', async () => {
    let at = new Date('2026-11-25T10:00:00.000Z');
    const { ask, clients, clientId, stored } = await setUp(undefined, undefined, { clock: () => at });
    const lastUse = () => {
      const record = clients.records.get(clientId);
      return {
        client: record?.lastUsedAt,
        secret: record?.secrets.find((s) => s.id === stored.id)?.lastUsedAt,
      };
    };

    await ask();
    expect(clients.useWrites()).toBe(1);
    expect(lastUse()).toEqual({ client: '2026-11-25T10:00:00.000Z', secret: '2026-11-25T10:00:00.000Z' });

    at = new Date('2026-11-25T10:59:59.999Z');
    await ask();
    expect(clients.useWrites(), 'a grant within the hour').toBe(1);
    expect(lastUse().secret).toBe('2026-11-25T10:00:00.000Z');

    at = new Date('2026-11-25T11:00:00.000Z');
    await ask();
    expect(clients.useWrites(), 'the first grant an hour on').toBe(2);
    expect(lastUse()).toEqual({ client: '2026-11-25T11:00:00.000Z', secret: '2026-11-25T11:00:00.000Z' });
  });

  it('records the use once when grants come at once', async () => {
    const { ask, clients } = await setUp();
    // Three: the client id's limit of attempts in flight from a source it does not know yet.
    const grants = await Promise.all(Array.from({ length: POLICY.limit }, () => ask()));
    expect(grants).toHaveLength(POLICY.limit);
    expect(clients.useWrites()).toBe(1);
  });

  it('records each secret’s use apart; the client’s is the latest', async () => {
    let at = new Date('2026-11-25T10:00:00.000Z');
    const { ask, clients, clientId, stored } = await setUp(undefined, undefined, { clock: () => at });
    const next = newClientSecret(at);
    await clients.addClientSecret(clientId, next.stored);
    await ask();
    at = new Date('2026-11-25T10:20:00.000Z');
    await ask({ clientSecret: next.secret });
    const record = clients.records.get(clientId);
    expect(record?.secrets.map((s) => [s.id, s.lastUsedAt])).toEqual([
      [stored.id, '2026-11-25T10:00:00.000Z'],
      [next.stored.id, '2026-11-25T10:20:00.000Z'],
    ]);
    expect(record?.lastUsedAt).toBe('2026-11-25T10:20:00.000Z');
  });

  it('grants the token when the last-use write fails, logging it without the secret', async () => {
    const { ask, clientId, stored, secret, logged, lines } = await setUp(undefined, undefined, {
      failUseWrites: true,
    });
    const grant = await ask();
    expect(decodeJwt(grant.accessToken).sub).toBe(clientId);
    expect(logged('client last use not recorded')).toEqual([
      expect.objectContaining({ level: 'WARN', clientId, grantedWith: stored.id }),
    ]);
    expect(lines.join('\n')).not.toContain(secret.slice(4));
  });

  it('records no use for a grant refused for its scope', async () => {
    const { ask, clients } = await setUp(['tracking:read']);
    await expect(ask({ scopes: ['shipments:write'] })).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
    expect(clients.useWrites()).toBe(0);
  });

  it('refuses a secret from its expiresAt on as any wrong secret, logging it as expired, and grants with it until then', async () => {
    let at = new Date('2026-11-25T10:00:00.000Z');
    const { ask, clients, clientId, metrics, logged } = await setUp(undefined, undefined, {
      clock: () => at,
    });
    const next = newClientSecret(at);
    const end = new Date('2026-11-25T11:00:00.000Z');
    await clients.addClientSecret(clientId, next.stored, { expireOthersAt: end });

    at = new Date(end.getTime() - 1);
    await expect(ask()).resolves.toBeDefined();
    at = end;
    await expect(ask()).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await expect(ask({ clientSecret: next.secret })).resolves.toBeDefined();

    expect(metrics.names().filter((name) => name.startsWith('ClientAuthFailed'))).toEqual([
      'ClientAuthFailed{reason=BadSecret}',
    ]);
    expect(logged('client authentication failed')).toEqual([
      expect.objectContaining({ reason: 'expired secret', clientId }),
    ]);
  });

  it('gives the second live secret’s tokens its own id, which the first’s removal leaves alive', async () => {
    const { clients, clientId, stored, ask } = await setUp();
    const next = newClientSecret(now);
    await clients.addClientSecret(clientId, next.stored);
    const token = await ask({ clientSecret: next.secret });
    expect(decodeJwt(token.accessToken).secret_id).toBe(next.stored.id);
    await clients.removeClientSecret(clientId, stored.id);
    await expect(ask()).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await expect(ask({ clientSecret: next.secret })).resolves.toBeDefined();
  });
});

describe('client secrets of no format we issue, at the grant', () => {
  let keys: Awaited<ReturnType<typeof testKeys>>;
  const POLICY = {
    limit: 3,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 50,
  };
  beforeAll(async () => {
    keys = await testKeys();
  });

  /** A client holding `secret` (stored as the store holds any: its digest), and the grant's deps. */
  const withSecret = async (secret: string) => {
    const clients = memoryClients();
    const metrics = createMemoryMetrics();
    const store = memoryThrottleStore();
    const clientId = newClientId();
    const stored = { id: '0a1b2c3d', digest: secretDigest(secret), createdAt: new Date().toISOString() };
    await clients.createClient({ clientId, customerId: 'C-1001', scopes: ['tracking:read'], secret: stored });
    const lines: string[] = [];
    const deps: GrantDeps = {
      clients,
      tokens: createClientTokenIssuer({ signingKey: keys.signer, settings: CLIENT_SETTINGS }),
      dpop: { replay: memoryReplay(), customerRequiresDpop: async () => false },
      throttle: createLoginThrottle({
        metrics,
        store,
        settings: {
          username: POLICY,
          sourceIp: { ...POLICY, limit: 100 },
          clientSourceIp: { ...POLICY, limit: 50 },
          knownSourceSeconds: 0,
        },
        counterSecret: COUNTER_SECRET,
        logger: createLogger('error', () => {}),
      }),
      logger: createLogger('info', (line) => lines.push(line)),
      metrics,
    };
    const ask = (clientSecret: string) =>
      grantClientToken(deps, { clientId, clientSecret, scopes: undefined, sourceIp: '198.51.100.7' });
    return { clients, metrics, store, ask, lines };
  };

  it('refuses a secret whose checksum fails, and a pcs_ one of neither format, unread and uncounted: INVALID_CLIENT, MalformedSecret', async () => {
    const issued = newClientSecret(new Date()).secret;
    const { clients, metrics, store, ask, lines } = await withSecret(issued);
    const last = issued.at(-1) === 'A' ? 'B' : 'A';
    const refused = [`${issued.slice(0, -1)}${last}`, issued.slice(0, -1), `${issued}A`, 'pcs_wrong'];

    for (const secret of refused) {
      const error = await ask(secret).catch((caught: AppError) => caught);
      expect(error).toMatchObject({ code: 'INVALID_CLIENT' });
      expect((error as AppError).quota, 'no quota: no counter was read').toBeUndefined();
    }

    expect(clients.reads()).toBe(0);
    expect(store.all.size).toBe(0);
    expect(metrics.names()).toEqual(Array(refused.length).fill('ClientAuthFailed{reason=MalformedSecret}'));
    const failures = lines
      .map((line) => JSON.parse(line))
      .filter((line) => line.event === 'client authentication failed');
    expect(failures).toHaveLength(refused.length);
    for (const failure of failures) expect(failure).toMatchObject({ reason: 'malformed secret' });
    for (const secret of refused) expect(lines.join('\n')).not.toContain(secret.slice(4));
  });

  it('takes a legacy secret (pcs_ and 43 base64url characters, before the checksum) as it always did', async () => {
    const legacy = `pcs_${Buffer.alloc(32, 0xfb).toString('base64url')}`;
    const { ask, metrics } = await withSecret(legacy);
    await expect(ask(legacy)).resolves.toMatchObject({ scopes: ['tracking:read'] });
    // One character off is a wrong secret, counted as any: it has the legacy format.
    await expect(ask(`${legacy.slice(0, -1)}A`)).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    expect(metrics.names()).toEqual(['ClientTokenIssued', 'ClientAuthFailed{reason=BadSecret}']);
  });
});

describe('the authorizer and a client’s or a narrowed user’s token', () => {
  let keys: Awaited<ReturnType<typeof testKeys>>;
  let verifier: AccessTokenVerifier;
  const clients = memoryClients();
  const users = memoryStatuses();
  const prefix = 'arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5/prod';
  const clientId = newClientId();
  const secret = newClientSecret(new Date());

  beforeAll(async () => {
    keys = await testKeys();
    verifier = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS });
  });

  /** The tracking:read client of C-1001 with one secret, afresh. */
  const freshClient = async () => {
    clients.records.clear();
    await clients.createClient({
      clientId,
      customerId: 'C-1001',
      scopes: ['tracking:read'],
      secret: secret.stored,
    });
  };

  beforeEach(freshClient);

  const clientToken = async (scopes: readonly Scope[] = ['tracking:read']) =>
    (
      await createClientTokenIssuer({ signingKey: keys.signer, settings: CLIENT_SETTINGS }).issue({
        clientId,
        grant: { secretId: secret.stored.id },
        customerId: 'C-1001',
        scopes: [...scopes],
        issuedAt: Math.floor(Date.now() / 1000),
      })
    ).accessToken;

  const decide = (
    token: string,
    methodArn = `${prefix}/POST/api/v1/shipments`,
    metrics = createMemoryMetrics(),
  ) =>
    authorizeEvent(
      {
        metrics,
        verifier,
        revocation: createRevocationCheck({
          users: users.reader,
          clients,
          connections: noConnections,
          cacheTtlMs: 0,
          metrics: noMetrics,
        }),
        logger: createLogger('error', () => {}),
      },
      { ...authorizerEvent(`Bearer ${token}`), methodArn },
    );

  const EVERY_ROUTE = methodArns(prefix);

  it('allows a tracking:read client every protected route, whichever filled the cache, and passes its scope on for the functions to check', async () => {
    const token = await clientToken();
    for (const methodArn of [
      `${prefix}/POST/api/v1/shipments`,
      `${prefix}/GET/api/v1/tracking/12345678901234`,
    ]) {
      const result = await decide(token, methodArn);
      expect(result.policyDocument.Statement).toEqual([
        { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: EVERY_ROUTE },
      ]);
      expect(result.context).toMatchObject({
        username: '',
        clientId,
        customerId: 'C-1001',
        scope: 'tracking:read',
      });
    }
  });

  it('counts a decision for a route beyond the token’s scopes as insufficient scope, not an allow', async () => {
    const metrics = createMemoryMetrics();
    await decide(await clientToken(), `${prefix}/POST/api/v1/shipments`, metrics);
    await decide(await clientToken(), `${prefix}/GET/api/v1/tracking/1`, metrics);
    expect(metrics.names()).toEqual(['AuthorizerInsufficientScope', 'AuthorizerAllow']);
  });

  it('refuses a client’s token once the client is disabled, removed, or its secret removed', async () => {
    const token = await clientToken();
    await expect(decide(token)).resolves.toBeDefined();
    const next = newClientSecret(new Date());
    await clients.addClientSecret(clientId, next.stored);
    await clients.removeClientSecret(clientId, secret.stored.id);
    await expect(decide(token)).rejects.toThrow('Unauthorized');
    await freshClient();
    await clients.setClientEnabled(clientId, false);
    await expect(decide(token)).rejects.toThrow('Unauthorized');
    await clients.setClientEnabled(clientId, true);
    await expect(decide(token)).rejects.toThrow('Unauthorized');
    await clients.removeClient(clientId);
    await expect(decide(await clientToken())).rejects.toThrow('Unauthorized');
  });

  it('refuses a client’s token once the secret it was granted with expires, as once it is removed', async () => {
    const token = await clientToken();
    await expect(decide(token)).resolves.toBeDefined();
    await clients.addClientSecret(clientId, newClientSecret(new Date()).stored, {
      expireOthersAt: new Date(Date.now() - 1),
    });
    await expect(decide(token)).rejects.toThrow('Unauthorized');
  });

  it('never reads a user’s state for a client’s token, even when a user has the client id as username', async () => {
    users.statuses.set(clientId, { enabled: true, revokedBefore: 0 });
    await clients.removeClient(clientId);
    await expect(decide(await clientToken())).rejects.toThrow('Unauthorized');
  });

  it.each([
    ['a scope since retired', 'parcels:legacy'],
    ['an empty scope, a user narrowed to scopes since retired', ''],
  ])(
    'passes on no scope for a user token whose scopes allow no route, %s: every function then answers 403',
    async (_name, scope) => {
      users.statuses.set('narrow', { enabled: true, revokedBefore: 0 });
      const at = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ scope })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.signingKey.kid })
        .setIssuer(TOKEN_SETTINGS.issuer)
        .setAudience(TOKEN_SETTINGS.audience)
        .setSubject('narrow')
        .setJti('j')
        .setIssuedAt(at)
        .setExpirationTime(at + 60)
        .sign(keys.signingKey.key);
      expect((await decide(token)).context).toMatchObject({ username: 'narrow', scope: '' });
    },
  );

  it('narrows a user whose scopes an operator narrowed: the token carries them, the context passes them on', async () => {
    users.statuses.set('bob', { enabled: true, revokedBefore: 0 });
    const token = (
      await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
        tokenRequest({ username: 'bob', customerId: 'C-1', scopes: ['tracking:read'] }, new Date()),
      )
    ).accessToken;
    expect(decodeJwt(token).scope).toBe('tracking:read');
    const result = await decide(token);
    expect(result.policyDocument.Statement[0]).toMatchObject({ Resource: EVERY_ROUTE });
    expect(result.context).toMatchObject({ username: 'bob', clientId: '', scope: 'tracking:read' });
  });
});

describe('token revocation and introspection', () => {
  let keys: Awaited<ReturnType<typeof testKeys>>;
  let verifier: AccessTokenVerifier;
  const POLICY = {
    limit: 3,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 50,
  };

  beforeAll(async () => {
    keys = await testKeys();
    verifier = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS });
  });

  /** A client store with `scopes`'s client and another; deps for both endpoints, counting into `metrics`. */
  const setUp = async (scopes: readonly Scope[] = ['tracking:read']) => {
    const clients = memoryClients();
    const users = memoryStatuses();
    const metrics = createMemoryMetrics();
    const add = async (granted: readonly Scope[]) => {
      const clientId = newClientId();
      const { secret, stored } = newClientSecret(new Date());
      await clients.createClient({ clientId, customerId: 'C-1001', scopes: [...granted], secret: stored });
      const token = async () =>
        (
          await createClientTokenIssuer({ signingKey: keys.signer, settings: CLIENT_SETTINGS }).issue({
            clientId,
            grant: { secretId: stored.id },
            customerId: 'C-1001',
            scopes: [...granted],
            issuedAt: Math.floor(Date.now() / 1000),
          })
        ).accessToken;
      return { clientId, secret, token };
    };
    const own = await add(scopes);
    const other = await add(['tracking:read']);
    const revocation = createRevocationCheck({
      users: users.reader,
      clients,
      connections: noConnections,
      cacheTtlMs: 0,
      metrics: noMetrics,
    });
    const deps = {
      clients,
      throttle: createLoginThrottle({
        metrics,
        store: memoryThrottleStore(),
        settings: {
          username: POLICY,
          sourceIp: { ...POLICY, limit: 100 },
          clientSourceIp: { ...POLICY, limit: 50 },
          knownSourceSeconds: 0,
        },
        counterSecret: COUNTER_SECRET,
        logger: createLogger('error', () => {}),
      }),
      logger: createLogger('error', () => {}),
      metrics,
      verifier,
      revoker: clients,
      revocation,
      // A customer's clients only here: a platform's revocation of a refresh token, which ends its
      // connection, is held end to end (tests/e2e/platforms.test.ts).
      connections: {
        refreshTokens: createConnectionRefreshTokenVerifier({
          keys: keys.verifiers,
          settings: { ...TOKEN_SETTINGS, refreshTtlSeconds: 86_400 },
        }),
        store: { find: async () => null, remove: async () => false },
        revoker: { endConnectionTokens: async () => 'listed' as const },
        accessTtlSeconds: 3600,
        recorder: createAuditRecorder({
          trail: { append: async () => {} },
          retentionSeconds: 86_400,
          metrics,
          warn: () => {},
        }),
      },
    };
    const request = (token: string) => ({
      clientId: own.clientId,
      clientSecret: own.secret,
      token,
      sourceIp: '198.51.100.7',
    });
    return { clients, users, metrics, deps, own, other, revocation, request };
  };

  it('reads the client’s credentials before the token, and requires the token but not its hint', () => {
    const id = 'pcl_0123456789abcdef0123';
    expect(parseTokenQuery({ token: 't', token_type_hint: 'refresh_token' }, [basic(id, 's')])).toEqual({
      clientId: id,
      clientSecret: 's',
      token: 't',
    });
    expect(codeOf(() => parseTokenQuery({}, []))).toBe('INVALID_CLIENT');
    expect(codeOf(() => parseTokenQuery({ token: '' }, [basic(id, 's')]))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => parseTokenQuery({ token: 't', client_secret: 's' }, [basic(id, 's')]))).toBe(
      'VALIDATION_FAILED',
    );
    expect(parseTokenQuery({ token: 't', client_id: id, client_secret: 's' }, [])).toMatchObject({
      clientId: id,
      token: 't',
    });
  });

  it('revokes a client’s own token by its jti until it expires, which the authorizer’s check then refuses', async () => {
    const { deps, own, clients, revocation, metrics, request } = await setUp();
    const token = await own.token();
    const kept = await own.token();

    await revokeToken(deps, request(token));

    const { jti } = decodeJwt(token);
    expect((await clients.findClientStatus(own.clientId))?.revokedTokens).toEqual(new Set([jti]));
    expect(await revocation.isRevoked(await verifier.verify(token))).toBe(true);
    expect(await revocation.isRevoked(await verifier.verify(kept))).toBe(false);
    expect(metrics.names()).toContain('ClientTokenRevoked');
  });

  it('answers another client’s token and a user’s as garbage, revoking nothing', async () => {
    const { deps, other, clients, metrics, request } = await setUp();
    const users = (
      await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
        tokenRequest({ username: 'alice', customerId: 'C-1001' }, new Date()),
      )
    ).accessToken;

    for (const token of [await other.token(), users]) {
      await expect(revokeToken(deps, request(token))).resolves.toBeUndefined();
    }
    expect((await clients.findClientStatus(other.clientId))?.revokedTokens.size).toBe(0);
    expect(metrics.names().filter((name) => name.startsWith('TokenRevocationRefused'))).toEqual([
      'TokenRevocationRefused{reason=NotIssuedToClient}',
      'TokenRevocationRefused{reason=NotIssuedToClient}',
    ]);
  });

  it('takes a token it cannot verify as nothing to revoke, and a wrong secret as INVALID_CLIENT', async () => {
    const { deps, own, clients, request } = await setUp();
    await expect(revokeToken(deps, request('not-a-token'))).resolves.toBeUndefined();
    await expect(
      revokeToken(deps, { ...request(await own.token()), clientSecret: WRONG }),
    ).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    expect((await clients.findClientStatus(own.clientId))?.revokedTokens.size).toBe(0);
  });

  it('answers an active token with the authorizer’s verdict, counting each answer by result', async () => {
    const { deps, own, other, metrics, request } = await setUp(['tokens:introspect']);
    const token = await other.token();

    const active = await introspectToken(deps, request(token));
    await revokeToken(
      { ...deps, ...{ clients: deps.clients } },
      { ...request(token), clientId: other.clientId, clientSecret: other.secret },
    );
    const revoked = await introspectToken(deps, request(token));

    expect(active).toMatchObject({
      active: true,
      client_id: other.clientId,
      sub: other.clientId,
      scope: 'tracking:read',
    });
    expect(active).not.toHaveProperty('username');
    expect(revoked).toEqual({ active: false });
    expect(await introspectToken(deps, request(await own.token()))).toMatchObject({ active: true });
    expect(metrics.names().filter((name) => name.startsWith('TokenIntrospected'))).toEqual([
      'TokenIntrospected{result=Active}',
      'TokenIntrospected{result=Inactive}',
      'TokenIntrospected{result=Active}',
    ]);
  });

  it('refuses a secret of no format we issue unread at both endpoints, and counts neither as a use of the secret', async () => {
    const { deps, own, clients, metrics, request } = await setUp(['tokens:introspect']);
    const token = await own.token();
    const malformed = { ...request(token), clientSecret: `${own.secret.slice(0, -1)}!` };

    await expect(revokeToken(deps, malformed)).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    await expect(introspectToken(deps, malformed)).rejects.toMatchObject({ code: 'INVALID_CLIENT' });
    expect(clients.reads()).toBe(0);
    expect(metrics.names()).toEqual([
      'ClientAuthFailed{reason=MalformedSecret}',
      'ClientAuthFailed{reason=MalformedSecret}',
    ]);

    await introspectToken(deps, request(token));
    await revokeToken(deps, request(token));
    expect(clients.useWrites()).toBe(0);
    expect(clients.records.get(own.clientId)?.lastUsedAt).toBeUndefined();
  });

  it('refuses a client without tokens:introspect once authenticated, before it reads the token’s state', async () => {
    const { deps, other, clients, metrics, request } = await setUp(['tracking:read', 'shipments:write']);
    const before = clients.reads();

    await expect(introspectToken(deps, request(await other.token()))).rejects.toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      requiredScope: 'tokens:introspect',
    });
    // The client's own read only: not the token's client's state.
    expect(clients.reads() - before).toBe(1);
    expect(metrics.names()).toContain('TokenIntrospectionRefused{reason=MissingScope}');
    expect(metrics.names()).not.toContain('TokenIntrospected{result=Inactive}');
  });
});
