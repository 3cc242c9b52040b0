import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import {
  authorizerEvent,
  callerContext,
  createShipmentEvent,
  lambdaContext,
  loginEvent,
  trackingEvent,
} from '../fixtures/events.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let login: Handler;
let loginExtended: Handler;
let createShipment: Handler;
let trackShipment: Handler;
let refresh: Handler;
let logout: Handler;
let jwks: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
let keyFiles: { jwksFile: string };
let accounts: Awaited<ReturnType<typeof seedHandlerUsers>>;

const PASSWORD = 'a-long-test-password';

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  keyFiles = { jwksFile: env.VERIFICATION_KEYS?.slice('file:'.length) ?? '' };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  accounts = await seedHandlerUsers(dynamo, PASSWORD);
  login = (await import('../../functions/login.ts')).handler as Handler;
  loginExtended = (await import('../../functions/login-extended.ts')).handler as Handler;
  createShipment = (await import('../../functions/create-shipment.ts')).handler as Handler;
  trackShipment = (await import('../../functions/track-shipment.ts')).handler as Handler;
  refresh = (await import('../../functions/refresh.ts')).handler as Handler;
  logout = (await import('../../functions/logout.ts')).handler as Handler;
  jwks = (await import('../../functions/jwks.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

const call = (handler: Handler, event: APIGatewayProxyEvent) => handler(event, lambdaContext());
const json = (body: unknown) => JSON.stringify(body);
const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as Record<string, unknown>;

const logs = captureServiceLogs();

describe('login handlers', () => {
  it('answers 400 for a username that Unicode normalisation would make too long for a key', async () => {
    const response = await call(login, loginEvent(json({ username: '\uFDFA'.repeat(256), password: 'x' })));
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response).invalidParams).toEqual([{ name: 'username', reason: 'is too long' }]);
  });

  it('checks each of a burst of parallel guesses at most once, and locks the username after them', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const before = compare.mock.calls.length;
    const guess = () =>
      call(login, loginEvent(json({ username: 'burst-target', password: 'a-guessed-password' })));
    const responses = await Promise.all(Array.from({ length: 12 }, guess));
    const statuses = responses.map((r) => r.statusCode);
    const checked = statuses.filter((status) => status === 401).length;
    // How many of a burst are checked is the throttle's rule (docs/behaviour.md, "Brute force:
    // the login throttle"); here: at least the limit's, no check without its failure counted.
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    expect(checked).toBeGreaterThanOrEqual(5);
    expect(compare.mock.calls.length - before).toBe(checked);
    expect((await guess()).statusCode).toBe(429);
    compare.mockRestore();
  });

  it('answers 429 problem+json with Retry-After once a username has failed too often', async () => {
    const attempt = (password: string) =>
      call(login, loginEvent(json({ username: 'throttled-user', password })));
    for (let i = 0; i < 5; i += 1) expect((await attempt('wrong-password')).statusCode).toBe(401);
    const response = await attempt('wrong-password');
    expect(response.statusCode).toBe(429);
    expect(logs.events('lockout started')).toEqual([
      expect.objectContaining({ level: 'WARN', counter: 'username', failures: 5, reason: 'unknown user' }),
    ]);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/problem+json',
      'Retry-After': '30',
    });
    expect(bodyOf(response)).toMatchObject({
      type: 'urn:parcel-auth:problem:too-many-attempts',
      status: 429,
    });
    expect(response.body).not.toContain('eyJ');
  });

  it('answers 200 with tokens, no-store and JSON', async () => {
    const response = await call(login, loginEvent(json({ username: 'alice', password: PASSWORD })));
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    expect(Object.keys(bodyOf(response)).sort()).toEqual(['refreshToken', 'token']);
  });

  it('answers login-extended with the first non-empty depot code and expireAt of the access token', async () => {
    const body = bodyOf(
      await call(loginExtended, loginEvent(json({ username: 'alice', password: PASSWORD }))),
    );
    expect(body).toMatchObject({ userName: 'alice', depotCode: 'PRG01' });
    expect(Date.parse(String(body.expireAt)) / 1000).toBe(decodeJwt(String(body.token)).exp);
  });

  it('answers login-extended 403 problem+json without tokens for a user without customer', async () => {
    const response = await call(loginExtended, loginEvent(json({ username: 'solo', password: PASSWORD })));
    expect(response.statusCode).toBe(403);
    expect(response.headers?.['Content-Type']).toBe('application/problem+json');
    expect(bodyOf(response)).toEqual({
      type: 'urn:parcel-auth:problem:auto-login-context-missing',
      title: 'Auto-login context missing',
      status: 403,
      detail: 'This login is not linked to a customer account.',
    });
  });

  it('answers every failed login with the same 401 body on both operations', async () => {
    const attempts = [
      { username: 'alice', password: 'wrong-password' },
      { username: 'nobody', password: PASSWORD },
      { username: 'Alice', password: PASSWORD },
    ];
    const responses = await Promise.all(
      [login, loginExtended].flatMap((handler) =>
        attempts.map((attempt) => call(handler, loginEvent(json(attempt)))),
      ),
    );
    expect(new Set(responses.map((r) => r.statusCode))).toEqual(new Set([401]));
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
  });

  it.each([
    ['a missing password', json({ username: 'alice' }), 'password'],
    ['a missing username', json({ password: PASSWORD }), 'username'],
    ['a number as password', json({ username: 'alice', password: 123456789 }), 'password'],
    ['an empty username', json({ username: '', password: PASSWORD }), 'username'],
    ['an array', json([{ username: 'alice', password: PASSWORD }]), 'username'],
    ['JSON null', 'null', 'body'],
    ['a JSON string', '"alice"', 'body'],
  ])('answers 400 naming the field for %s', async (_name, body, field) => {
    const response = await call(login, loginEvent(body));
    expect(response.statusCode).toBe(400);
    const problem = bodyOf(response);
    expect(problem.type).toBe('urn:parcel-auth:problem:validation-failed');
    expect(problem.invalidParams).toContainEqual(expect.objectContaining({ name: field }));
    expect(response.body).not.toContain('123456789');
    expect(response.body).not.toContain(PASSWORD);
  });

  it.each([
    ['malformed JSON', '{"username": "alice", '],
    ['no body at all', null],
    ['an empty body', ''],
  ])('answers 400 for %s', async (_name, body) => {
    const response = await call(login, loginEvent(body));
    expect(response.statusCode).toBe(400);
    expect(response.headers?.['Content-Type']).toBe('application/problem+json');
  });

  it('answers 400 for a __proto__ key without touching any prototype', async () => {
    const response = await call(
      login,
      loginEvent('{"username":"alice","password":"x","__proto__":{"admin":true}}'),
    );
    expect(response.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('answers 415 for a body that is not declared as JSON', async () => {
    const response = await call(
      login,
      loginEvent(json({ username: 'alice', password: PASSWORD }), { 'Content-Type': 'text/plain' }),
    );
    expect(response.statusCode).toBe(415);
  });

  it('reads the content type header in any letter case', async () => {
    const event = loginEvent(json({ username: 'alice', password: PASSWORD }));
    event.headers = { 'CONTENT-TYPE': 'application/json; charset=utf-8' };
    expect((await call(login, event)).statusCode).toBe(200);
  });

  it('answers 413 for a body over 16 KB, before any password hashing', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const response = await call(login, loginEvent(json({ username: 'alice', password: 'x'.repeat(17_000) })));
    expect(response.statusCode).toBe(413);
    expect(compare).not.toHaveBeenCalled();
    compare.mockRestore();
  });

  it('does no password hashing for malformed JSON or an invalid body', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    await call(login, loginEvent('{nope'));
    await call(login, loginEvent(json({ username: 'alice' })));
    expect(compare).not.toHaveBeenCalled();
    compare.mockRestore();
  });
});

describe('the limits every answer of the login routes publishes', () => {
  // The default stage's: loginFailureLimit 5 in 24h, ipFailureLimit 100 in 1h, loginRateLimit 50, no web ACL.
  const LOGIN_POLICY = '"username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1';
  const WHOLE = '"username";r=5;t=0, "address";r=100;t=0';
  let addresses = 0;
  const newAddress = () => {
    addresses += 1;
    return `198.51.100.${addresses}`;
  };
  /** A login from `sourceIp`, by default an address no other test used, so its count is this test's alone. */
  const from = (body: unknown, sourceIp = newAddress()) => {
    const event = loginEvent(json(body));
    const identity = { ...event.requestContext.identity, sourceIp };
    return { ...event, requestContext: { ...event.requestContext, identity } };
  };
  beforeAll(async () => {
    const passwordHash = await hashPassword(PASSWORD, 4);
    await accounts.createUser({ username: 'limits-alice', passwordHash, customerId: 'C-1001' });
    await accounts.createUser({ username: 'limits-solo', passwordHash, customerId: null });
  });

  it('publishes on a login’s 200 its policies and its quotas whole again', async () => {
    for (const handler of [login, loginExtended]) {
      const response = await call(handler, from({ username: 'limits-alice', password: PASSWORD }));
      expect(response.statusCode).toBe(200);
      expect(response.headers).toMatchObject({ 'RateLimit-Policy': LOGIN_POLICY, RateLimit: WHOLE });
    }
  });

  it('counts a 401 once on the username and once on the address, each whole again within two windows', async () => {
    // From an address the name knows: only such a source is told the name's quota.
    const sourceIp = newAddress();
    await call(login, from({ username: 'limits-alice', password: PASSWORD }, sourceIp));
    const response = await call(
      login,
      from({ username: 'limits-alice', password: 'wrong-password' }, sourceIp),
    );
    const stranger = await call(login, from({ username: 'limits-alice', password: 'wrong-password' }));
    expect([response.statusCode, stranger.statusCode]).toEqual([401, 401]);
    expect(response.headers?.['RateLimit-Policy']).toBe(LOGIN_POLICY);
    expect(String(stranger.headers?.RateLimit)).toMatch(/^"address";r=99;t=\d+$/);
    const [, name = '', address = ''] =
      /^"username";r=4;t=(\d+), "address";r=99;t=(\d+)$/.exec(String(response.headers?.RateLimit)) ?? [];
    expect(Number(name)).toBeGreaterThan(86_400);
    expect(Number(name)).toBeLessThanOrEqual(2 * 86_400);
    expect(Number(address)).toBeGreaterThan(3600);
    expect(Number(address)).toBeLessThanOrEqual(2 * 3600);
  });

  it('answers the locked username’s 429 with Retry-After and nothing left of it until then, naming only the username', async () => {
    // One address for all six, so its count is theirs.
    const sourceIp = newAddress();
    const attempt = () =>
      call(login, from({ username: 'limits-locked', password: 'wrong-password' }, sourceIp));
    for (let i = 0; i < 5; i += 1) expect((await attempt()).statusCode).toBe(401);
    const response = await attempt();
    expect(response.statusCode).toBe(429);
    const retryAfter = Number(response.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(response.headers?.['RateLimit-Policy']).toBe(LOGIN_POLICY);
    // Only the counter that refused: its reset is the Retry-After, which no other may undercut.
    expect(response.headers?.RateLimit).toBe(`"username";r=0;t=${retryAfter}`);
  });

  it('answers login-extended’s 403 with the quotas whole again: the password was right', async () => {
    const response = await call(loginExtended, from({ username: 'limits-solo', password: PASSWORD }));
    expect(response.statusCode).toBe(403);
    expect(response.headers).toMatchObject({ 'RateLimit-Policy': LOGIN_POLICY, RateLimit: WHOLE });
  });

  it('publishes the policies alone on a 400, 413 or 415: nothing was counted', async () => {
    const refused = [
      from({ username: 'limits-alice' }),
      from({ username: 'limits-alice', password: 'x'.repeat(17_000) }),
      {
        ...from({ username: 'limits-alice', password: PASSWORD }),
        headers: { 'Content-Type': 'text/plain' },
      },
    ];
    const responses = await Promise.all(refused.map((event) => call(login, event)));
    expect(responses.map((response) => response.statusCode)).toEqual([400, 413, 415]);
    for (const response of responses) {
      expect(response.headers?.['RateLimit-Policy']).toBe(LOGIN_POLICY);
      expect(response.headers).not.toHaveProperty('RateLimit');
    }
  });

  it('publishes on refresh only the route’s rate: it counts nothing of its own', async () => {
    const { refreshToken } = bodyOf(
      await call(login, from({ username: 'limits-alice', password: PASSWORD })),
    );
    const refreshed = await call(refresh, from({ refreshToken }));
    const refused = await call(refresh, from({ refreshToken: 'junk' }));
    expect([refreshed.statusCode, refused.statusCode]).toEqual([200, 401]);
    for (const response of [refreshed, refused]) {
      expect(response.headers?.['RateLimit-Policy']).toBe('"route";q=50;w=1');
      expect(response.headers).not.toHaveProperty('RateLimit');
    }
  });
});

describe('shipment handlers behind the authorizer context', () => {
  const asCaller = (event: APIGatewayProxyEvent, username: string, customerId: string) => ({
    ...event,
    requestContext: { ...event.requestContext, authorizer: callerContext(username, customerId) },
  });
  const shipmentEvent = (body: string, username = 'alice', customerId = 'C-1001') =>
    asCaller(createShipmentEvent(body), username, customerId);
  const trackEvent = (parcelNumber: string, username = 'alice', customerId = 'C-1001') =>
    asCaller(trackingEvent({ pathParameters: { parcelNumber } }), username, customerId);

  it('stores a shipment for the caller’s customer and tracks it for that customer only', async () => {
    const shipment = { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.25 }] };
    const created = await call(createShipment, shipmentEvent(json(shipment)));
    expect(created.statusCode).toBe(201);
    const { parcelNumber } = bodyOf(created);
    expect(parcelNumber).toMatch(/^\d{14}$/);
    expect(created.headers?.Location).toBe(`/api/v1/tracking/${parcelNumber}`);

    const tracked = await call(trackShipment, trackEvent(String(parcelNumber)));
    expect(tracked.statusCode).toBe(200);
    expect(bodyOf(tracked)).toMatchObject({ parcelNumber, status: 'registered', shipment });

    const foreign = await call(trackShipment, trackEvent(String(parcelNumber), 'bob', 'C-2002'));
    expect(foreign.statusCode).toBe(404);
    const noCustomer = await call(trackShipment, trackEvent(String(parcelNumber), 'solo', ''));
    expect(noCustomer.statusCode).toBe(404);
  });

  it('answers 404 for a parcel number nobody created', async () => {
    expect((await call(trackShipment, trackEvent('99999999999999'))).statusCode).toBe(404);
  });

  it('answers 400 for a malformed parcel number', async () => {
    const response = await call(trackShipment, trackEvent('../../etc'));
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response).invalidParams).toContainEqual(expect.objectContaining({ name: 'parcelNumber' }));
  });

  it('answers 403 to a caller without customer creating a shipment', async () => {
    expect((await call(createShipment, shipmentEvent(json({ a: 1 }), 'solo', ''))).statusCode).toBe(403);
  });

  it('answers 400 for a shipment body that is not a JSON object', async () => {
    expect((await call(createShipment, shipmentEvent(json([1, 2])))).statusCode).toBe(400);
    expect((await call(createShipment, shipmentEvent('42'))).statusCode).toBe(400);
  });
});

describe('authorizer handler', () => {
  it('allows a token from the login handler and denies its refresh token with exactly Unauthorized', async () => {
    const { token, refreshToken } = bodyOf(
      await call(login, loginEvent(json({ username: 'alice', password: PASSWORD }))),
    );
    await expect(authorizer(authorizerEvent(`Bearer ${token}`))).resolves.toMatchObject({
      principalId: 'alice',
      context: { username: 'alice', customerId: 'C-1001' },
    });
    await expect(authorizer(authorizerEvent(`Bearer ${refreshToken}`))).rejects.toThrow(/^Unauthorized$/);
  });
});

describe('session handlers', () => {
  const loggedIn = async () =>
    bodyOf(await call(login, loginEvent(json({ username: 'alice', password: PASSWORD }))));
  const refreshWith = (refreshToken: unknown) => call(refresh, loginEvent(json({ refreshToken })));

  it('answers a refresh with a new token pair and expireAt, no-store', async () => {
    const { refreshToken } = await loggedIn();
    const response = await refreshWith(refreshToken);
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'Cache-Control': 'no-store' });
    const body = bodyOf(response);
    expect(Object.keys(body).sort()).toEqual(['expireAt', 'refreshToken', 'token']);
    expect(Date.parse(String(body.expireAt)) / 1000).toBe(decodeJwt(String(body.token)).exp);
    await expect(authorizer(authorizerEvent(`Bearer ${body.token}`))).resolves.toMatchObject({
      principalId: 'alice',
    });
  });

  it('answers a token spent two refreshes ago, an access or a junk token with one 401 body: a failed login’s type, a detail about the token', async () => {
    const failedLogin = bodyOf(
      await call(login, loginEvent(json({ username: 'alice', password: 'wrong-password' }))),
    );
    const { token, refreshToken } = await loggedIn();
    // Two refreshes: the token spent only by the last one is a retry within the grace window.
    const second = await refreshWith(refreshToken);
    expect(second.statusCode).toBe(200);
    expect((await refreshWith(bodyOf(second).refreshToken)).statusCode).toBe(200);
    const bodies = new Set<string>();
    for (const presented of [refreshToken, token, 'junk']) {
      const response = await refreshWith(presented);
      expect(response.statusCode).toBe(401);
      expect(response.headers).toMatchObject({ 'Content-Type': 'application/problem+json' });
      const body = bodyOf(response);
      expect(body).toMatchObject({ type: failedLogin.type, title: failedLogin.title, status: 401 });
      expect(body.detail).toMatch(/refresh token/);
      expect(body.detail).not.toMatch(/username|password/);
      bodies.add(response.body);
    }
    expect(bodies.size).toBe(1);
    // The token two generations back was reuse: its session is revoked, and an operator is told.
    expect(logs.events('refresh token reuse: session revoked')).toEqual([
      expect.objectContaining({ level: 'WARN', username: 'alice' }),
    ]);
  });

  it('answers 400 naming the field for a refresh or logout body without a refresh token', async () => {
    for (const handler of [refresh, logout]) {
      const response = await call(handler, loginEvent(json({ token: 'x' })));
      expect(response.statusCode).toBe(400);
      expect(bodyOf(response).invalidParams).toEqual([{ name: 'refreshToken', reason: 'is required' }]);
    }
  });

  it('answers logout 204 with no body, ends the session, and answers 204 again', async () => {
    const { refreshToken } = await loggedIn();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const response = await call(logout, loginEvent(json({ refreshToken })));
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
    }
    expect((await refreshWith(refreshToken)).statusCode).toBe(401);
    expect((await call(logout, loginEvent(json({ refreshToken: 'junk' })))).statusCode).toBe(204);
  });

  it('publishes the public key set, cacheable, and nothing private', async () => {
    const response = await call(jwks, trackingEvent({ pathParameters: null, body: null }));
    expect(response.statusCode).toBe(200);
    // Cacheable until the function would reload the key set: at most keyReloadInterval (5m here).
    const maxAge = /^public, max-age=(\d+)$/.exec(String(response.headers?.['Cache-Control']))?.[1];
    expect(Number(maxAge)).toBeGreaterThan(0);
    expect(Number(maxAge)).toBeLessThanOrEqual(300);
    expect(response.headers?.Pragma).toBeUndefined();
    const published = JSON.parse(readFileSync(keyFiles.jwksFile, 'utf8')) as { keys: { kid: string }[] };
    const body = bodyOf(response) as { keys: Record<string, unknown>[] };
    expect(body.keys.map((key) => key.kid)).toEqual(published.keys.map((key) => key.kid));
    for (const key of body.keys)
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
  });
});
