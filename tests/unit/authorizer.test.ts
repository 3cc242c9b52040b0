import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { decodeJwt, SignJWT } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizerContext, stagePrefix } from '../../lib/auth/authorizer.ts';
import { createLogger, type Logger, redact } from '../../lib/log.ts';

import { createRevocationCheck } from '../../lib/revocation/revocation.ts';
import { createTokenIssuer, type IssuedTokens } from '../../lib/tokens/issue.ts';
import { type AccessTokenVerifier, createAccessTokenVerifier } from '../../lib/tokens/verify.ts';
import { authorizerEvent } from '../fixtures/events.ts';
import { authorizeEvent } from '../support/authorizer.ts';
import { TOKEN_SETTINGS, testKeys, tokenRequest } from '../support/keys.ts';
import { memoryClients, noConnections } from '../support/memory-clients.ts';
import { createMemoryMetrics, noMetrics } from '../support/memory-metrics.ts';
import { memoryStatuses } from '../support/memory-statuses.ts';
import { methodArns } from '../support/routes.ts';

let verifier: AccessTokenVerifier;
let tokens: IssuedTokens;
let keys: Awaited<ReturnType<typeof testKeys>>;
const logLines: string[] = [];
const logger = createLogger('debug', (line) => logLines.push(line));

beforeAll(async () => {
  keys = await testKeys();
  verifier = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS });
  tokens = await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
    tokenRequest({ username: 'alice', customerId: 'C-1001' }, new Date()),
  );
});

/** An access token of alice, signed with the stage's key, that expired a minute ago. */
const expiredToken = () =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.signingKey.kid })
    .setIssuer(TOKEN_SETTINGS.issuer)
    .setAudience(TOKEN_SETTINGS.audience)
    .setSubject('alice')
    .setJti('x')
    .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
    .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
    .sign(keys.signingKey.key);

/** The users the revocation check reads, by exact username; tests change them. */
const users = memoryStatuses({ failFor: 'broken' });
const { statuses } = users;
const revocation = createRevocationCheck({
  clients: memoryClients(),
  connections: noConnections,
  metrics: noMetrics,
  users: users.reader,
  cacheTtlMs: 0,
});

beforeEach(() => {
  statuses.clear();
  statuses.set('alice', { enabled: true, revokedBefore: 0 });
});

const decide = (authorizationToken: string) =>
  authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, authorizerEvent(authorizationToken));

/** A REQUEST event carrying exactly these headers: API Gateway's fixture without its Authorization. */
const eventWith = (
  headers: APIGatewayRequestAuthorizerEvent['headers'],
  multiValueHeaders: APIGatewayRequestAuthorizerEvent['multiValueHeaders'] = null,
): APIGatewayRequestAuthorizerEvent => ({ ...authorizerEvent([]), headers, multiValueHeaders });

/**
 * What `authorize` asks its logger to log while deciding `event`, as `{ level, event, ...fields }`;
 * its answer or error is dropped. Recorded at the Logger interface, before lib/log.ts redacts
 * the line; the denial tests check that redaction leaves each reason as it is.
 */
const linesLogged = async (
  event: APIGatewayRequestAuthorizerEvent,
  tokenVerifier: AccessTokenVerifier = verifier,
): Promise<Record<string, unknown>[]> => {
  const lines: Record<string, unknown>[] = [];
  const record =
    (level: string) =>
    (name: string, fields: Record<string, unknown> = {}) =>
      lines.push({ level, event: name, ...fields });
  const log: Logger = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
  await authorizeEvent({ metrics: noMetrics, verifier: tokenVerifier, revocation, logger: log }, event).catch(
    () => undefined,
  );
  return lines;
};

/** An access token of a user without customer, signed with the stage's key. */
const accessTokenOf = async (username: string) =>
  (
    await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
      tokenRequest({ username, customerId: null }, new Date()),
    )
  ).accessToken;

describe('authorizer', () => {
  it('allows every protected route of a user whose scopes were never narrowed, so a cached decision fits each', async () => {
    const result = await decide(`Bearer ${tokens.accessToken}`);
    expect(result.principalId).toBe('alice');
    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Action: 'execute-api:Invoke',
          Effect: 'Allow',
          Resource: methodArns('arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5/prod'),
        },
      ],
    });
  });

  it('passes the username, customer id, scopes, the token’s iat and exp, its login time and session to the backend in the context', async () => {
    const { iat, exp } = decodeJwt(tokens.accessToken);
    expect((await decide(`Bearer ${tokens.accessToken}`)).context).toEqual({
      username: 'alice',
      clientId: '',
      customerId: 'C-1001',
      scope: 'tracking:read shipments:write',
      iat,
      exp,
      authTime: decodeJwt(tokens.accessToken).auth_time,
      sessionId: decodeJwt(tokens.accessToken).sid,
    });
  });

  it('passes an administrator’s customer:admin scope and login time on, with the same policy as every user’s', async () => {
    const loggedInAt = new Date(Date.now() - 600_000);
    const { accessToken } = await createTokenIssuer({
      signingKey: keys.signer,
      settings: TOKEN_SETTINGS,
    }).issue(
      tokenRequest({ username: 'alice', customerId: 'C-1001', admin: true }, loggedInAt, {
        issuedAt: Math.floor(Date.now() / 1000),
      }),
    );
    const result = await decide(`Bearer ${accessToken}`);
    expect(result.context).toMatchObject({
      scope: 'tracking:read shipments:write customer:admin',
      authTime: Math.floor(loggedInAt.getTime() / 1000),
    });
    expect(result.policyDocument).toEqual((await decide(`Bearer ${tokens.accessToken}`)).policyDocument);
  });

  it('passes no login time for a user’s token signed before access tokens carried auth_time, nor for a client', async () => {
    const now = Math.floor(Date.now() / 1000);
    const legacy = await new SignJWT({ client_id: 'login', scope: 'tracking:read', sid: 's-1' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.signingKey.kid })
      .setIssuer(TOKEN_SETTINGS.issuer)
      .setAudience(TOKEN_SETTINGS.audience)
      .setSubject('alice')
      .setJti('legacy')
      .setIssuedAt(now - 60)
      .setExpirationTime(now + 600)
      .sign(keys.signingKey.key);
    const { context } = await decide(`Bearer ${legacy}`);
    expect(context).toMatchObject({ username: 'alice', scope: 'tracking:read' });
    expect(context).not.toHaveProperty('authTime');
    const client = authorizerContext(
      {
        kind: 'client',
        clientId: 'pcl_0123456789abcdef0123',
        grant: { secretId: '0123abcd' },
        customerId: 'C-1001',
        scopes: ['tracking:read'],
        jti: 'j',
        issuer: TOKEN_SETTINGS.issuer,
        audience: TOKEN_SETTINGS.audience,
        issuedAt: now,
        expiresAt: now + 600,
      },
      'tracking:read',
    );
    expect(client).not.toHaveProperty('authTime');
  });

  it('passes an empty customer id in the context of a user without customer', async () => {
    statuses.set('solo', { enabled: true, revokedBefore: 0 });
    const result = await decide(`Bearer ${await accessTokenOf('solo')}`);
    expect(result.context).toMatchObject({ username: 'solo', customerId: '' });
  });

  it('accepts the scheme name in any case', async () => {
    await expect(decide(`bearer ${tokens.accessToken}`)).resolves.toMatchObject({ principalId: 'alice' });
    await expect(decide(`BEARER ${tokens.accessToken}`)).resolves.toMatchObject({ principalId: 'alice' });
  });

  it('refuses with an error that carries no stack frames: a refusal is no crash, in no log', async () => {
    const error = await decide('Bearer not.a.jwt').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).stack).toBe('Error: Unauthorized');
  });

  it.each([
    ['an empty header', ''],
    ['no scheme', 'TOKEN'],
    ['another scheme', 'Basic YWxpY2U6c2VjcmV0'],
    ['a bearer without token', 'Bearer '],
    ['a token with spaces', 'Bearer abc def'],
    ['a malformed token', 'Bearer not.a.jwt'],
  ])('throws exactly Unauthorized for %s', async (_name, header) => {
    await expect(decide(header)).rejects.toThrow(new Error('Unauthorized'));
  });

  it.each([
    ['a valid token and junk', () => [`Bearer ${tokens.accessToken}`, 'Bearer junk']],
    ['junk and a valid token', () => ['Bearer junk', `Bearer ${tokens.accessToken}`]],
    ['the same valid token twice', () => [`Bearer ${tokens.accessToken}`, `Bearer ${tokens.accessToken}`]],
  ])('throws exactly Unauthorized for two Authorization headers: %s', async (_name, values) => {
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, authorizerEvent(values())),
    ).rejects.toThrow(new Error('Unauthorized'));
  });

  it('reads the Authorization header in any letter case', async () => {
    const event = {
      ...authorizerEvent([]),
      multiValueHeaders: { authorization: [`Bearer ${tokens.accessToken}`] },
    };
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
    ).resolves.toMatchObject({
      principalId: 'alice',
    });
  });

  it('throws exactly Unauthorized for a refresh token', async () => {
    const error = await decide(`Bearer ${tokens.refreshToken}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Unauthorized');
  });

  it('throws exactly Unauthorized for an expired token', async () => {
    const expired = await expiredToken();
    await expect(decide(`Bearer ${expired}`)).rejects.toThrow(new Error('Unauthorized'));
  });

  it('logs the reason of a denial but never the token', async () => {
    logLines.length = 0;
    await decide(`Bearer ${tokens.refreshToken}`).catch(() => undefined);
    expect(logLines).toHaveLength(1);
    expect(JSON.parse(logLines[0] ?? '{}')).toMatchObject({ event: 'authorizer denied' });
    expect(logLines.join('\n')).not.toContain(tokens.refreshToken.split('.')[2]);
  });

  it.each([
    ['a user that no longer exists', undefined],
    ['a disabled user', { enabled: false, revokedBefore: 0 }],
    ['a user whose tokens issued before a later moment are revoked', { enabled: true, revokedBefore: 4e9 }],
  ])('throws exactly Unauthorized for a valid token of %s', async (_name, status) => {
    if (status === undefined) statuses.delete('alice');
    else statuses.set('alice', status);
    await expect(decide(`Bearer ${tokens.accessToken}`)).rejects.toThrow(new Error('Unauthorized'));
  });

  it('throws exactly Unauthorized for a token of a session revoked for reuse, and accepts one of another session', async () => {
    const sessionId = String(decodeJwt(tokens.accessToken).sid);
    statuses.set('alice', { enabled: true, revokedBefore: 0, revokedSessions: new Set([sessionId]) });
    await expect(decide(`Bearer ${tokens.accessToken}`)).rejects.toThrow(new Error('Unauthorized'));
    statuses.set('alice', { enabled: true, revokedBefore: 0, revokedSessions: new Set(['another-session']) });
    await expect(decide(`Bearer ${tokens.accessToken}`)).resolves.toMatchObject({ principalId: 'alice' });
  });

  it('accepts a token issued in the very second of the revocation cutoff', async () => {
    const { iat } = decodeJwt(tokens.accessToken);
    statuses.set('alice', { enabled: true, revokedBefore: iat ?? 0 });
    await expect(decide(`Bearer ${tokens.accessToken}`)).resolves.toMatchObject({ principalId: 'alice' });
  });

  it('does not read the user store for a token that fails verification', async () => {
    const readsBefore = users.reads();
    await decide(`Bearer ${tokens.refreshToken}`).catch(() => undefined);
    expect(users.reads()).toBe(readsBefore);
  });

  it('fails closed, and not as a 401, when the user store cannot be read', async () => {
    const token = (
      await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
        tokenRequest({ username: 'broken', customerId: null }, new Date()),
      )
    ).accessToken;
    const error = await decide(`Bearer ${token}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toBe('Unauthorized');
    expect((error as Error).message).not.toContain('DynamoDB');
  });

  it('derives the stage’s ARN prefix from a method ARN', () => {
    expect(stagePrefix('arn:aws:execute-api:eu-central-1:1:api/dev/POST/api/v1/shipments')).toBe(
      'arn:aws:execute-api:eu-central-1:1:api/dev',
    );
  });

  it('derives the stage’s ARN prefix from a method ARN that ends with the stage', () => {
    expect(stagePrefix('arn:aws:execute-api:eu-central-1:1:api/dev')).toBe(
      'arn:aws:execute-api:eu-central-1:1:api/dev',
    );
  });

  it.each([
    ['no slash at all', 'arn:aws:execute-api:eu-central-1:1:api'],
    ['no API id before the first slash', '/dev/GET/x'],
    ['an empty stage', 'arn:aws:execute-api:eu-central-1:1:api//GET/x'],
  ])('refuses, exactly Unauthorized, to derive a resource from a method ARN with %s', (_name, methodArn) => {
    expect(() => stagePrefix(methodArn)).toThrow(new Error('Unauthorized'));
  });
});

describe('authorizer policy per scope set and stage', () => {
  const STAGE = 'arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5';
  const tokenOf = async (username: string, scopes?: ('tracking:read' | 'shipments:write')[]) => {
    statuses.set(username, { enabled: true, revokedBefore: 0 });
    const issued = await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
      tokenRequest({ username, customerId: null, scopes }, new Date()),
    );
    return issued.accessToken;
  };
  /** Whether no request's code can change what the next request is answered. */
  const frozenThroughout = (value: unknown): boolean =>
    typeof value !== 'object' ||
    value === null ||
    (Object.isFrozen(value) && Object.values(value).every(frozenThroughout));
  const decideOn = async (token: string, methodArn: string) =>
    authorizeEvent(
      { metrics: noMetrics, verifier, revocation, logger },
      { ...authorizerEvent(`Bearer ${token}`), methodArn },
    );

  it('answers every token with the same scopes on one stage with one frozen policy, built once per container', async () => {
    const first = await decideOn(await tokenOf('alice'), `${STAGE}/prod/GET/api/v1/tracking/1`);
    const second = await decideOn(await tokenOf('solo'), `${STAGE}/prod/POST/api/v1/shipments`);
    expect(second.policyDocument).toBe(first.policyDocument);
    expect(frozenThroughout(first.policyDocument)).toBe(true);
  });

  it('gives a narrowed user after a token with every scope on the same stage its own scopes, and the same routes', async () => {
    const full = await decideOn(await tokenOf('alice'), `${STAGE}/prod/GET/api/v1/tracking/1`);
    const narrowed = await decideOn(
      await tokenOf('narrow', ['tracking:read']),
      `${STAGE}/prod/GET/api/v1/tracking/1`,
    );
    expect(narrowed.policyDocument).toEqual(full.policyDocument);
    expect(narrowed.context).toMatchObject({ scope: 'tracking:read' });
    expect(full.context).toMatchObject({ scope: 'tracking:read shipments:write' });
  });

  it('gives the same scopes on another stage that stage’s method ARNs', async () => {
    const token = await tokenOf('alice');
    await decideOn(token, `${STAGE}/prod/GET/api/v1/tracking/1`);
    const other = await decideOn(token, `${STAGE}/dev/GET/api/v1/tracking/1`);
    expect(other.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: methodArns(`${STAGE}/dev`),
      },
    ]);
  });
});

describe('authorizer reading single-value headers (an event without multiValueHeaders)', () => {
  it.each(['Authorization', 'authorization', 'AUTHORIZATION'])(
    'reads the token from a header named %s',
    async (name) => {
      const event = eventWith({ Host: 'api.example', [name]: `Bearer ${tokens.accessToken}` });
      await expect(
        authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
      ).resolves.toMatchObject({
        principalId: 'alice',
      });
    },
  );

  it('ignores another header whose name has the length of Authorization', async () => {
    const event = eventWith({
      'X-Request-Ids': 'Bearer junk',
      Authorization: `Bearer ${tokens.accessToken}`,
    });
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
    ).resolves.toMatchObject({
      principalId: 'alice',
    });
  });

  it('skips an Authorization header without a value', async () => {
    const event = eventWith({ authorization: undefined, Authorization: `Bearer ${tokens.accessToken}` });
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
    ).resolves.toMatchObject({
      principalId: 'alice',
    });
  });

  it('reads them when multiValueHeaders names Authorization without values', async () => {
    const event = eventWith({ Authorization: `Bearer ${tokens.accessToken}` }, { Authorization: undefined });
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
    ).resolves.toMatchObject({
      principalId: 'alice',
    });
  });

  it('throws exactly Unauthorized for an event without any headers', async () => {
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, eventWith(null)),
    ).rejects.toThrow(new Error('Unauthorized'));
  });
});

describe('authorizer multi-value headers', () => {
  it('ignores another header whose name has the length of Authorization', async () => {
    const event = eventWith(null, {
      'X-Request-Ids': ['Bearer junk'],
      Authorization: [`Bearer ${tokens.accessToken}`],
    });
    await expect(
      authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, event),
    ).resolves.toMatchObject({
      principalId: 'alice',
    });
  });
});

describe('authorizer log lines', () => {
  it.each([
    ['no Authorization header', () => eventWith(null), '0 authorization headers'],
    [
      'two Authorization headers',
      () => authorizerEvent([`Bearer ${tokens.accessToken}`, 'Bearer junk']),
      '2 authorization headers',
    ],
    ['another scheme', () => authorizerEvent('Basic YWxpY2U6c2VjcmV0'), 'no Bearer- or DPoP-scheme token'],
    [
      'a refresh token',
      () => authorizerEvent(`Bearer ${tokens.refreshToken}`),
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    ],
  ])(
    'logs a denial for %s with its reason, which the redaction leaves readable',
    async (_name, event, reason) => {
      const lines = await linesLogged(event());
      expect(lines).toEqual([expect.objectContaining({ level: 'info', event: 'authorizer denied', reason })]);
      expect(redact('reason', reason)).toBe(reason);
    },
  );

  it('logs a verifier failure that carries no code as an invalid token', async () => {
    const withoutKeys = createAccessTokenVerifier({
      keys: () => Promise.reject(new Error('key set unavailable')),
      settings: TOKEN_SETTINGS,
    });
    const lines = await linesLogged(authorizerEvent(`Bearer ${tokens.accessToken}`), withoutKeys);
    expect(lines).toEqual([expect.objectContaining({ event: 'authorizer denied', reason: 'invalid token' })]);
  });

  it('logs the denial of a disabled user’s token as revoked', async () => {
    statuses.set('alice', { enabled: false, revokedBefore: 0 });
    const lines = await linesLogged(authorizerEvent(`Bearer ${tokens.accessToken}`));
    expect(lines).toEqual([expect.objectContaining({ event: 'authorizer denied', reason: 'revoked' })]);
  });

  it('logs an error with its cause when the user store cannot be read', async () => {
    const lines = await linesLogged(authorizerEvent(`Bearer ${await accessTokenOf('broken')}`));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        event: 'authorizer cannot check revocation',
        error: expect.objectContaining({
          code: 'DEPENDENCY_UNAVAILABLE',
          cause: expect.objectContaining({ message: 'DynamoDB unreachable' }),
        }),
      }),
    ]);
  });
});

describe('authorizer metrics', () => {
  const counted = async (authorization: string | string[], cacheTtlMs = 0) => {
    const metrics = createMemoryMetrics();
    const check = createRevocationCheck({
      clients: memoryClients(),
      connections: noConnections,
      users: users.reader,
      cacheTtlMs,
      metrics,
    });
    await authorizeEvent(
      { verifier, revocation: check, logger, metrics },
      authorizerEvent(authorization),
    ).catch(() => undefined);
    return metrics.names();
  };

  it('counts an allow, and the revocation check that read the user as a cache miss', async () => {
    expect(await counted(`Bearer ${tokens.accessToken}`)).toEqual(['RevocationCacheMiss', 'AuthorizerAllow']);
  });

  it('counts each denial by a reason of its fixed vocabulary', async () => {
    expect(await counted([])).toEqual(['AuthorizerDeny{reason=MissingToken}']);
    expect(await counted('Basic YWxpY2U6eA==')).toEqual(['AuthorizerDeny{reason=MissingToken}']);
    expect(await counted([`Bearer ${tokens.accessToken}`, 'junk'])).toEqual([
      'AuthorizerDeny{reason=SeveralTokens}',
    ]);
    expect(await counted(`Bearer ${await expiredToken()}`)).toEqual(['AuthorizerDeny{reason=Expired}']);
    expect(await counted(`Bearer ${tokens.refreshToken}`)).toEqual(['AuthorizerDeny{reason=InvalidToken}']);
    statuses.set('alice', { enabled: false, revokedBefore: 0 });
    expect(await counted(`Bearer ${tokens.accessToken}`)).toEqual([
      'RevocationCacheMiss',
      'AuthorizerDeny{reason=Revoked}',
    ]);
  });

  it('counts a request without any headers as a missing token', async () => {
    const metrics = createMemoryMetrics();
    await authorizeEvent({ verifier, revocation, logger, metrics }, eventWith(null)).catch(() => undefined);
    expect(metrics.names()).toEqual(['AuthorizerDeny{reason=MissingToken}']);
  });

  it('counts a fail-closed answer as AuthorizerUnavailable, not as a denial', async () => {
    const token = (
      await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
        tokenRequest({ username: 'broken', customerId: null }, new Date()),
      )
    ).accessToken;
    expect(await counted(`Bearer ${token}`)).toEqual(['RevocationCacheMiss', 'AuthorizerUnavailable']);
  });

  it('counts a check answered from the revocation cache as a hit', async () => {
    const metrics = createMemoryMetrics();
    const check = createRevocationCheck({
      clients: memoryClients(),
      connections: noConnections,
      users: users.reader,
      cacheTtlMs: 30_000,
      metrics,
    });
    const deps = { verifier, revocation: check, logger, metrics };
    const readsBefore = users.reads();
    for (let call = 0; call < 3; call++)
      await authorizeEvent(deps, authorizerEvent(`Bearer ${tokens.accessToken}`));
    expect(users.reads() - readsBefore).toBe(1);
    expect(metrics.names().filter((name) => name.startsWith('Revocation'))).toEqual([
      'RevocationCacheMiss',
      'RevocationCacheHit',
      'RevocationCacheHit',
    ]);
  });
});
