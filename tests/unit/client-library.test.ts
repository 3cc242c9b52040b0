/**
 * integrators/client/parcel-auth-client.ts against an in-process fake of the API on
 * 127.0.0.1: the token lifecycle an integrator would otherwise write (and get wrong) itself.
 * The fake and the client share a settable clock, so expiry is a step of the test, not a wait;
 * a test that backs off gives the client a sleep that records the wait and returns at once.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ClientCredentials,
  CredentialsRefusedError,
  ParcelApiError,
  ParcelClient,
  type ParcelClientOptions,
  type PasswordCredentials,
  retryAfterMs,
} from '../../integrators/client/parcel-auth-client.ts';
import { rejection } from '../support/errors.ts';

const PASSWORD: PasswordCredentials = {
  kind: 'password',
  username: 'alice',
  password: 'a-password-never-shown',
};
const CLIENT: ClientCredentials = {
  kind: 'client_credentials',
  clientId: 'cl_7Hx',
  clientSecret: 'pcs_secret+/=never-shown',
};
const PARCEL = '/tracking/12345678901234';
const PROBLEM = 'application/problem+json';

/** An answer the fake gives to the next protected call instead of its own. */
type Scripted = (response: ServerResponse) => void;

interface Seen {
  readonly path: string;
  readonly at: number;
  readonly authorization: string | undefined;
  readonly body: string;
}

/**
 * The API as far as the client sees it: login, login-extended, refresh with rotation and
 * reuse detection, logout, the client credentials grant, and one protected route that
 * answers 404 to a live token and 401 to any other.
 */
class FakeApi {
  now = Date.parse('2026-03-01T08:00:00Z');
  ttlSeconds = 3600;
  /** Tokens without claims: only login-extended's expireAt tells their lifetime. */
  opaque = false;
  readonly seen: Seen[] = [];
  /** Answers for the next protected calls, first one first. */
  readonly script: Scripted[] = [];
  /** Answers for the next calls to an authentication route, by path (`/login`, `/oauth/token`, ...). */
  readonly authScript = new Map<string, Scripted[]>();
  /** RateLimit-Policy and RateLimit on every answer of an authentication route, as the service sends them. */
  readonly rateLimitPolicy = '"username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1';
  #addressQuota = 100;
  /** Whether a logout presented the current refresh token of its session. */
  loggedOutCurrent = false;
  /** Hold login answers until released. */
  holdLogins: Promise<void> | undefined;
  refuseLogin = false;
  /** Every token issued, to check that none leaks. */
  readonly issued: string[] = [];
  readonly #access = new Map<string, number>();
  /** refresh token to [session, current?] */
  readonly #refresh = new Map<string, { session: number; current: boolean }>();
  readonly #revoked = new Set<number>();
  #serial = 0;
  #server: Server | undefined;
  #arrivals: (() => void)[] = [];
  baseUrl = '';

  async start() {
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.baseUrl = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/api/v1`;
  }

  async stop() {
    this.#server?.closeAllConnections();
    await new Promise((done) => this.#server?.close(done));
  }

  count(path: string) {
    return this.seen.filter((request) => request.path === path).length;
  }

  /** Answers the next calls to `path`, an authentication route, with `answers` instead of its own. */
  answerNext(path: string, ...answers: Scripted[]) {
    this.authScript.set(path, [...(this.authScript.get(path) ?? []), ...answers]);
  }

  /** Resolves when the next request has arrived. */
  arrival() {
    return new Promise<void>((resolve) => this.#arrivals.push(resolve));
  }

  revokeSessions() {
    for (const { session } of this.#refresh.values()) this.#revoked.add(session);
    this.#access.clear();
  }

  #token(kind: string, ttl: number) {
    const serial = ++this.#serial;
    const iat = Math.floor(this.now / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = this.opaque
      ? `opaque-${kind}-${serial}`
      : `${part({ alg: 'EdDSA', typ: kind })}.${part({ iat, exp: iat + ttl, jti: `${kind}-${serial}` })}.c2ln`;
    this.issued.push(token);
    if (kind === 'at+jwt') this.#access.set(token, (iat + ttl) * 1000);
    return token;
  }

  #pair(session: number) {
    const refreshToken = this.#token('rt+jwt', 30 * 86_400);
    this.#refresh.set(refreshToken, { session, current: true });
    return { token: this.#token('at+jwt', this.ttlSeconds), refreshToken };
  }

  async #handle(request: IncomingMessage, response: ServerResponse) {
    let body = '';
    for await (const chunk of request) body += chunk;
    const path = (request.url ?? '').replace(/^\/api\/v1/, '');
    this.seen.push({ path, at: Date.now(), authorization: request.headers.authorization, body });
    for (const arrived of this.#arrivals.splice(0)) arrived();
    const json = (status: number, value: unknown, type = 'application/json', headers = {}) => {
      response.writeHead(status, { 'content-type': type, ...headers }).end(JSON.stringify(value));
    };
    const invalidCredentials = () =>
      json(
        401,
        { type: 'urn:parcel-auth:problem:invalid-credentials', title: 'Invalid credentials', status: 401 },
        PROBLEM,
      );

    if (['/login', '/login-extended', '/token/refresh', '/oauth/token'].includes(path)) {
      this.#addressQuota--;
      response.setHeader('ratelimit-policy', this.rateLimitPolicy);
      response.setHeader('ratelimit', `"address";r=${this.#addressQuota};t=3600`);
      const scripted = this.authScript.get(path)?.shift();
      if (scripted !== undefined) return scripted(response);
    }
    if (path === '/login' || path === '/login-extended') {
      await this.holdLogins;
      const { username, password } = JSON.parse(body);
      if (this.refuseLogin || username !== PASSWORD.username || password !== PASSWORD.password)
        return invalidCredentials();
      const pair = this.#pair(++this.#serial);
      if (path === '/login') return json(200, pair);
      const expireAt = new Date(this.now + this.ttlSeconds * 1000).toISOString();
      return json(200, { ...pair, userName: username, depotCode: 'PRG01', expireAt });
    }
    if (path === '/token/refresh') {
      const presented = this.#refresh.get(JSON.parse(body).refreshToken);
      if (presented === undefined || this.#revoked.has(presented.session)) return invalidCredentials();
      if (!presented.current) {
        this.#revoked.add(presented.session); // reuse: the whole session ends
        return invalidCredentials();
      }
      presented.current = false;
      return json(200, this.#pair(presented.session));
    }
    if (path === '/logout') {
      const presented = this.#refresh.get(JSON.parse(body).refreshToken);
      this.loggedOutCurrent = presented?.current === true;
      if (presented !== undefined) this.#revoked.add(presented.session);
      return response.writeHead(204).end();
    }
    if (path === '/oauth/token') {
      const expected = `Basic ${Buffer.from('cl_7Hx:pcs_secret%2B%2F%3Dnever-shown').toString('base64')}`;
      if (request.headers.authorization !== expected)
        return json(
          401,
          { error: 'invalid_client', error_description: 'Client authentication failed.' },
          'application/json',
          { 'www-authenticate': 'Basic' },
        );
      const scope = new URLSearchParams(body).get('scope') ?? 'tracking:read shipments:write';
      return json(200, {
        access_token: this.#token('at+jwt', this.ttlSeconds),
        token_type: 'Bearer',
        expires_in: this.ttlSeconds,
        scope,
      });
    }
    const scripted = this.script.shift();
    if (scripted !== undefined) return scripted(response);
    const token = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
    const expiresAt = this.#access.get(token);
    if (expiresAt === undefined || this.now >= expiresAt) return json(401, { message: 'Unauthorized' });
    if (request.method === 'POST')
      return json(
        400,
        {
          type: 'urn:parcel-auth:problem:validation-failed',
          title: 'Invalid request',
          status: 400,
          invalidParams: [{ name: 'parcels', reason: 'is required' }],
        },
        PROBLEM,
      );
    return json(404, { type: 'urn:parcel-auth:problem:not-found', title: 'Not found', status: 404 }, PROBLEM);
  }
}

let api: FakeApi;
beforeEach(async () => {
  api = new FakeApi();
  await api.start();
});
afterEach(() => api.stop());

const clientOf = (
  credentials: ParcelClientOptions['credentials'],
  options: Partial<ParcelClientOptions> = {},
) => new ParcelClient({ baseUrl: api.baseUrl, credentials, now: () => api.now, ...options });

const statuses = (responses: readonly Response[]) => responses.map((response) => response.status);
const many = <T>(n: number, call: () => Promise<T>) => Promise.all(Array.from({ length: n }, call));
const answer =
  (status: number, headers: Record<string, string> = {}): Scripted =>
  (response) =>
    response.writeHead(status, { 'content-type': PROBLEM, ...headers }).end('{"type":"x","title":"y"}');
/** A protected call the fake never answers. */
const hang: Scripted = () => {};
/** The answer to a login with a wrong password. */
const refused: Scripted = (response) =>
  response
    .writeHead(401, { 'content-type': PROBLEM })
    .end('{"type":"urn:parcel-auth:problem:invalid-credentials","title":"Invalid credentials","status":401}');
/** A client's options with a sleep that records each wait and returns at once. */
function recordingWaits(options: Partial<ParcelClientOptions> = {}) {
  const waits: number[] = [];
  const sleep = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };
  return { waits, options: { sleep, ...options } };
}

describe('password login', () => {
  it('logs in once for twenty concurrent first calls, and sends the token as a Bearer token', async () => {
    const client = clientOf(PASSWORD);

    const responses = await many(20, () => client.fetch(PARCEL));

    expect(statuses(responses)).toEqual(Array(20).fill(404));
    expect(api.count('/login')).toBe(1);
    expect(
      api.seen
        .filter(({ path }) => path === PARCEL)
        .every(({ authorization }) => authorization?.startsWith('Bearer ey')),
    ).toBe(true);
  });

  it('renews 10 % of the lifetime before the exp of the JWT, not after it', async () => {
    api.ttlSeconds = 101; // lived 100 s by the rounding of iat: renewed after 90 s
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);

    api.now += 89_000;
    await client.fetch(PARCEL);
    expect(api.count('/token/refresh')).toBe(0);

    api.now += 2_000;
    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/token/refresh')).toBe(1);
    expect(api.count('/login')).toBe(1);
  });

  it('renews at most a minute before expiry however long the token lives', async () => {
    api.ttlSeconds = 24 * 3600 + 1;
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);

    api.now += 24 * 3600 * 1000 - 61_000;
    await client.fetch(PARCEL);
    expect(api.count('/token/refresh')).toBe(0);

    api.now += 2_000;
    await client.fetch(PARCEL);
    expect(api.count('/token/refresh')).toBe(1);
  });

  it('lets twenty concurrent calls past the renewal time share one refresh', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.now += 3600_000;

    const responses = await many(20, () => client.fetch(PARCEL));

    expect(statuses(responses)).toEqual(Array(20).fill(404));
    expect(api.count('/token/refresh')).toBe(1);
    expect(api.count('/login')).toBe(1);
  });

  it('presents the newest refresh token each time, as refresh tokens rotate', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    for (let round = 0; round < 3; round++) {
      api.now += 3600_000;
      expect((await client.fetch(PARCEL)).status).toBe(404);
    }

    // The fake revokes the session when a spent refresh token comes back, forcing a login.
    expect(api.count('/token/refresh')).toBe(3);
    expect(api.count('/login')).toBe(1);
    const presented = api.seen
      .filter(({ path }) => path === '/token/refresh')
      .map(({ body }) => JSON.parse(body).refreshToken);
    expect(new Set(presented).size).toBe(3);
  });

  it('logs in again when the refresh is refused (401)', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.revokeSessions();
    api.now += 3600_000;

    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/token/refresh')).toBe(1);
    expect(api.count('/login')).toBe(2);
  });

  it('schedules opaque tokens from login-extended’s expireAt', async () => {
    api.opaque = true;
    api.ttlSeconds = 100;
    const client = clientOf({ ...PASSWORD, loginRoute: 'login-extended' });
    await client.fetch(PARCEL);
    expect(api.count('/login-extended')).toBe(1);

    api.now += 89_000;
    await client.fetch(PARCEL);
    expect(api.count('/token/refresh')).toBe(0);
    api.now += 2_000;
    await client.fetch(PARCEL);
    expect(api.count('/token/refresh')).toBe(1);
  });

  it('ends the session on logout with the newest refresh token, and logs in for the next call', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.now += 3600_000;
    await client.fetch(PARCEL);

    await client.logout();
    await client.fetch(PARCEL);

    expect(api.loggedOutCurrent).toBe(true);
    expect(api.count('/logout')).toBe(1);
    expect(api.count('/login')).toBe(2);
  });
});

describe('a 401 from a protected route', () => {
  it('renews the token and retries the call once', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(answer(401));

    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count(PARCEL)).toBe(3);
    expect(api.count('/token/refresh')).toBe(1);
  });

  it('returns the second 401 rather than retrying again', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(answer(401), answer(401), answer(401));

    expect((await client.fetch(PARCEL)).status).toBe(401);
    expect(api.count(PARCEL)).toBe(3);
    expect(api.script).toHaveLength(1);
  });

  it('renews once for ten concurrent calls refused with the same token', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.revokeSessions();

    const responses = await many(10, () => client.fetch(PARCEL));

    expect(statuses(responses)).toEqual(Array(10).fill(404));
    expect(api.count('/token/refresh')).toBe(1);
    expect(api.count('/login')).toBe(2);
  });

  it('rejects with the login’s ParcelApiError when the password no longer works', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.revokeSessions();
    api.refuseLogin = true;

    const error = await rejection(client.fetch(PARCEL));

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({
      operation: 'login',
      status: 401,
      problem: {
        type: 'urn:parcel-auth:problem:invalid-credentials',
        title: 'Invalid credentials',
        status: 401,
      },
    });
  });
});

describe('client credentials', () => {
  it('gets one token for twenty concurrent calls, with the id and secret form-encoded in Basic', async () => {
    const client = clientOf(CLIENT);

    const responses = await many(20, () => client.fetch(PARCEL));

    expect(statuses(responses)).toEqual(Array(20).fill(404));
    expect(api.count('/oauth/token')).toBe(1);
    expect(api.seen.find(({ path }) => path === '/oauth/token')?.body).toBe('grant_type=client_credentials');
  });

  it('asks for the scopes given, and for a new token 10 % of expires_in before expiry', async () => {
    api.ttlSeconds = 101;
    const client = clientOf({ ...CLIENT, scope: ['tracking:read'] });
    await client.fetch(PARCEL);
    api.now += 89_000;
    await client.fetch(PARCEL);
    expect(api.count('/oauth/token')).toBe(1);

    api.now += 2_000;
    await client.fetch(PARCEL);

    expect(api.count('/oauth/token')).toBe(2);
    expect(api.seen.find(({ path }) => path === '/oauth/token')?.body).toBe(
      'grant_type=client_credentials&scope=tracking%3Aread',
    );
  });

  it('gets a new token and retries once after a 401', async () => {
    const client = clientOf(CLIENT);
    await client.fetch(PARCEL);
    api.script.push(answer(401));

    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/oauth/token')).toBe(2);
  });

  it('rejects with the RFC 6749 error when the client is refused', async () => {
    const client = clientOf({ ...CLIENT, clientSecret: 'pcs_wrong-secret-never-shown' });

    const error = await rejection(client.fetch(PARCEL));

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({
      name: 'CredentialsRefusedError',
      operation: 'client-credentials',
      status: 401,
      oauthError: 'invalid_client',
      oauthErrorDescription: 'Client authentication failed.',
      problem: undefined,
    });
    expect(api.count(PARCEL)).toBe(0);
  });
});

describe('Retry-After on 429 and 503', () => {
  it('waits the Retry-After of a 429 before the next attempt', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(answer(429, { 'retry-after': '1' }));

    expect((await client.fetch(PARCEL)).status).toBe(404);

    const [refused, retried] = api.seen.filter(({ path }) => path === PARCEL).slice(1);
    expect((retried?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('makes three attempts at most, then returns the last answer', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(...Array(5).fill(answer(503, { 'retry-after': '0' })));

    const response = await client.fetch(PARCEL);

    expect(response.status).toBe(503);
    expect(api.count(PARCEL)).toBe(4);
  });

  it('returns at once a 429 whose Retry-After is longer than maxRetryAfterMs', async () => {
    const client = clientOf(PASSWORD, { maxRetryAfterMs: 5_000, timeoutMs: 3_600_000 });
    await client.fetch(PARCEL);
    api.script.push(answer(429, { 'retry-after': '900' }));

    const response = await client.fetch(PARCEL);

    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('900');
    expect(api.count(PARCEL)).toBe(2);
  });

  it('does not send a POST again after a 503 unless it is declared idempotent', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(answer(503, { 'retry-after': '0' }), answer(503, { 'retry-after': '0' }));

    expect((await client.fetch(PARCEL, { method: 'POST', json: {} })).status).toBe(503);
    expect((await client.fetch(PARCEL, { method: 'POST', json: {}, idempotent: true })).status).toBe(400);
    expect(api.count(PARCEL)).toBe(4);
  });

  it('sends a login answered 503 again, with the same body, after its Retry-After', async () => {
    api.answerNext('/login', answer(503, { 'retry-after': '0' }));
    const client = clientOf(PASSWORD);

    expect((await client.fetch(PARCEL)).status).toBe(404);

    const logins = api.seen.filter(({ path }) => path === '/login').map(({ body }) => JSON.parse(body));
    expect(logins).toEqual([
      { username: PASSWORD.username, password: PASSWORD.password },
      { username: PASSWORD.username, password: PASSWORD.password },
    ]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-03-01T08:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 7 ', now)).toBe(7_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 08:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 07:00:00 GMT', now)).toBe(0);
    // The obsolete forms RFC 9110 section 5.6.7 still has a recipient read; asctime is GMT too.
    expect(retryAfterMs('Sunday, 01-Mar-26 08:01:00 GMT', now)).toBe(60_000);
    // A two-digit year more than 50 years ahead is in the past century.
    expect(retryAfterMs('Friday, 31-Dec-99 23:59:59 GMT', now)).toBe(0);
    expect(retryAfterMs('Sun Mar  1 08:00:10 2026', now)).toBe(10_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('reads no Retry-After into what is neither delta-seconds nor an HTTP date', () => {
    const now = Date.parse('2026-03-01T08:00:00Z');
    // Date.parse would read each of these as some date.
    for (const value of ['1.5', '-5', '2026-03-01T08:00:30Z', 'Sun, 01 Mar 2026 08:00:30', '', '1e3'])
      expect(retryAfterMs(value, now)).toBeUndefined();
    // A delta-seconds past 2^31 counts as 2^31 (RFC 9111 section 1.2.2).
    expect(retryAfterMs('9'.repeat(400), now)).toBe(2 ** 31 * 1000);
  });

  it('waits a login’s 429 Retry-After in seconds, then logs in and succeeds', async () => {
    const { waits, options } = recordingWaits();
    api.answerNext('/login', answer(429, { 'retry-after': '7' }));
    const client = clientOf(PASSWORD, options);

    expect((await client.fetch(PARCEL)).status).toBe(404);

    expect(waits).toEqual([7_000]);
    expect(api.count('/login')).toBe(2);
  });

  it('waits until a Retry-After given as an HTTP date, by the client’s clock', async () => {
    const { waits, options } = recordingWaits();
    const client = clientOf(PASSWORD, options);
    await client.fetch(PARCEL);
    api.now += 3600_000;
    api.answerNext(
      '/token/refresh',
      answer(503, { 'retry-after': new Date(api.now + 12_000).toUTCString() }),
    );

    expect((await client.fetch(PARCEL)).status).toBe(404);

    expect(waits).toEqual([12_000]);
    expect(api.count('/token/refresh')).toBe(2);
    expect(api.count('/login')).toBe(1);
  });

  it('waits a 503’s Retry-After from the token endpoint, then gets the token', async () => {
    const { waits, options } = recordingWaits();
    api.answerNext('/oauth/token', answer(503, { 'retry-after': '3' }), answer(429, { 'retry-after': '4' }));

    expect(await clientOf(CLIENT, options).token()).toMatch(/^ey/);

    expect(waits).toEqual([3_000, 4_000]);
    expect(api.count('/oauth/token')).toBe(3);
  });

  it('gives up after maxAttempts, rejecting with the last 429 and its retryAfterSeconds', async () => {
    const { waits, options } = recordingWaits({ maxAttempts: 3 });
    api.answerNext('/login', ...Array(4).fill(answer(429, { 'retry-after': '2' })));

    const error = await rejection(clientOf(PASSWORD, options).token());

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({ operation: 'login', status: 429, retryAfterSeconds: 2 });
    expect(waits).toEqual([2_000, 2_000]);
    expect(api.count('/login')).toBe(3);
  });

  it('gives up at once on a Retry-After past maxRetryAfterMs, leaving the wait to the caller', async () => {
    const { waits, options } = recordingWaits({ maxRetryAfterMs: 60_000 });
    api.answerNext('/login', answer(429, { 'retry-after': '61' }));

    const error = await rejection(clientOf(PASSWORD, options).token());

    expect(error).toMatchObject({
      name: 'ParcelApiError',
      operation: 'login',
      status: 429,
      retryAfterSeconds: 61,
    });
    expect(waits).toEqual([]);
    expect(api.count('/login')).toBe(1);
  });

  it('waits a Retry-After of exactly maxRetryAfterMs', async () => {
    const { waits, options } = recordingWaits({ maxRetryAfterMs: 60_000, timeoutMs: 120_000 });
    api.answerNext('/login', answer(429, { 'retry-after': '60' }));

    await clientOf(PASSWORD, options).token();

    expect(waits).toEqual([60_000]);
  });

  it('starts no wait that the call’s time limit would cut short', async () => {
    const { waits, options } = recordingWaits({ maxRetryAfterMs: 60_000, timeoutMs: 10_000 });
    const client = clientOf(PASSWORD, options);
    await client.fetch(PARCEL);
    api.script.push(answer(429, { 'retry-after': '10' }));

    expect((await client.fetch(PARCEL)).status).toBe(429);
    expect(waits).toEqual([]);
  });

  it('backs off without Retry-After by full jitter: a random share of 1 s, 2 s, 4 s …, under maxRetryAfterMs', async () => {
    const half = recordingWaits({ maxAttempts: 5, random: () => 0.5 });
    const client = clientOf(PASSWORD, half.options);
    await client.fetch(PARCEL);
    api.script.push(...Array(4).fill(answer(503)));
    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(half.waits).toEqual([500, 1_000, 2_000, 4_000]);

    const capped = recordingWaits({ maxAttempts: 5, random: () => 0.5, maxRetryAfterMs: 1_500 });
    const cappedClient = clientOf(PASSWORD, capped.options);
    await cappedClient.fetch(PARCEL);
    api.script.push(...Array(4).fill(answer(429)));
    expect((await cappedClient.fetch(PARCEL)).status).toBe(404);
    expect(capped.waits).toEqual([500, 750, 750, 750]);
  });

  it('draws each jittered wait from [0, its ceiling) with the platform’s random', async () => {
    const { waits, options } = recordingWaits({ maxAttempts: 7, maxRetryAfterMs: 20_000 });
    const client = clientOf(PASSWORD, options);
    await client.fetch(PARCEL);
    for (let round = 0; round < 20; round++) {
      api.script.push(...Array(6).fill(answer(503)));
      expect((await client.fetch(PARCEL)).status).toBe(404);
    }

    expect(waits).toHaveLength(120);
    waits.forEach((wait, index) => {
      const ceiling = Math.min(20_000, 1_000 * 2 ** (index % 6));
      expect(Number.isInteger(wait) && wait >= 0 && wait < ceiling).toBe(true);
    });
    // Not one fixed wait: 120 draws from [0, ceiling) are not all the same.
    expect(new Set(waits).size).toBeGreaterThan(50);
  });

  it('sends a login cut off by a network error only once: it may have been done', async () => {
    const { waits, options } = recordingWaits();
    api.answerNext('/login', (response) => response.socket?.destroy());

    expect(await rejection(clientOf(PASSWORD, options).token())).toBeInstanceOf(TypeError);

    expect(api.count('/login')).toBe(1);
    expect(waits).toEqual([]);
  });
});

describe('abort and timeout', () => {
  it('rejects with the caller’s abort reason while the call is in flight', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(hang);
    const controller = new AbortController();
    const arrived = api.arrival();

    const call = client.fetch(PARCEL, { signal: controller.signal });
    await arrived;
    controller.abort();

    expect(await rejection(call)).toMatchObject({ name: 'AbortError' });
  });

  it('rejects with a TimeoutError when the call outlives its timeout', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(hang);

    expect(await rejection(client.fetch(PARCEL, { timeoutMs: 200 }))).toMatchObject({ name: 'TimeoutError' });
  });

  it('stops waiting for a Retry-After when aborted, without another attempt', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.script.push(answer(429, { 'retry-after': '20' }));
    const controller = new AbortController();
    const arrived = api.arrival();

    const call = client.fetch(PARCEL, { signal: controller.signal });
    await arrived;
    controller.abort();

    expect(await rejection(call)).toMatchObject({ name: 'AbortError' });
    expect(api.count(PARCEL)).toBe(2);
  });

  it('stops a wait on abort even when the sleep it was given would never end', async () => {
    let asleep = () => {};
    const sleeping = new Promise<void>((resolve) => {
      asleep = resolve;
    });
    const sleep = () => {
      asleep();
      return new Promise<void>(() => {});
    };
    const client = clientOf(PASSWORD, { sleep });
    await client.fetch(PARCEL);
    api.script.push(answer(503, { 'retry-after': '5' }));
    const controller = new AbortController();

    const call = client.fetch(PARCEL, { signal: controller.signal });
    await sleeping;
    controller.abort();

    expect(await rejection(call)).toMatchObject({ name: 'AbortError' });
    expect(api.count(PARCEL)).toBe(2);
  });

  it('lets the other callers have the renewal one of them stopped waiting for', async () => {
    let release = () => {};
    api.holdLogins = new Promise((resolve) => {
      release = resolve;
    });
    const client = clientOf(PASSWORD);
    const controller = new AbortController();
    const arrived = api.arrival();

    const aborted = client.fetch(PARCEL, { signal: controller.signal });
    const patient = client.fetch(PARCEL);
    await arrived;
    controller.abort();
    expect(await rejection(aborted)).toMatchObject({ name: 'AbortError' });
    release();

    expect((await patient).status).toBe(404);
    expect(api.count('/login')).toBe(1);
  });
});

describe('the rate limits the service publishes', () => {
  it('keeps the RateLimit-Policy and RateLimit of the last answer that had them', async () => {
    const client = clientOf(PASSWORD);
    expect(client.rateLimits).toBeUndefined();

    await client.fetch(PARCEL);
    expect(client.rateLimits).toEqual({
      operation: 'login',
      receivedAt: api.now,
      policies: [
        { name: 'username', quota: 5, windowSeconds: 86_400 },
        { name: 'address', quota: 100, windowSeconds: 3600 },
        { name: 'route', quota: 50, windowSeconds: 1 },
      ],
      remaining: [{ name: 'address', remaining: 99, resetSeconds: 3600 }],
    });

    api.now += 3600_000;
    await client.fetch(PARCEL);
    expect(client.rateLimits).toMatchObject({
      operation: 'refresh',
      receivedAt: api.now,
      remaining: [{ name: 'address', remaining: 98 }],
    });

    // A protected route's answer has neither field: the refresh's stand.
    await client.fetch(PARCEL);
    expect(client.rateLimits?.operation).toBe('refresh');
  });

  it('reads them from a 429 too, and from the token endpoint', async () => {
    api.answerNext(
      '/oauth/token',
      answer(429, {
        'retry-after': '3600',
        ratelimit: '"client";r=0;t=3600',
        'ratelimit-policy': '"client";q=10;w=3600',
      }),
    );
    const client = clientOf(CLIENT);

    expect(await rejection(client.token())).toMatchObject({ status: 429, retryAfterSeconds: 3600 });
    expect(client.rateLimits).toEqual({
      operation: 'client-credentials',
      receivedAt: api.now,
      policies: [{ name: 'client', quota: 10, windowSeconds: 3600 }],
      remaining: [{ name: 'client', remaining: 0, resetSeconds: 3600 }],
    });
  });
});

describe('credentials the service refused', () => {
  it('sends a refused password no more: later calls reject at once, without a request, until setCredentials', async () => {
    api.refuseLogin = true;
    const client = clientOf(PASSWORD);

    const first = await rejection(client.fetch(PARCEL));
    expect(first).toBeInstanceOf(CredentialsRefusedError);
    expect(first).toBeInstanceOf(ParcelApiError);
    expect(first).toMatchObject({
      operation: 'login',
      status: 401,
      problem: { type: 'urn:parcel-auth:problem:invalid-credentials' },
    });
    expect((first as Error).cause).toBeUndefined();
    expect(client.credentialsRefusal).toBe(first);
    const requests = api.seen.length;

    api.refuseLogin = false; // the password was put right at the service: the client cannot know
    for (const call of [() => client.fetch(PARCEL), () => client.token(), () => client.json('/shipments')]) {
      const later = await rejection(call());
      expect(later).toBeInstanceOf(CredentialsRefusedError);
      expect(later).toMatchObject({
        operation: 'login',
        status: 401,
        problem: { type: 'urn:parcel-auth:problem:invalid-credentials' },
        cause: first,
      });
      expect((later as Error).message).toContain('setCredentials');
    }
    expect(api.seen).toHaveLength(requests);

    client.setCredentials(PASSWORD);
    expect(client.credentialsRefusal).toBeUndefined();
    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/login')).toBe(2);
  });

  it('stops after a refused login-extended as after a refused login', async () => {
    api.answerNext('/login-extended', refused);
    const client = clientOf({ ...PASSWORD, loginRoute: 'login-extended' });

    expect(await rejection(client.token())).toBeInstanceOf(CredentialsRefusedError);
    expect(await rejection(client.token())).toBeInstanceOf(CredentialsRefusedError);

    expect(api.count('/login-extended')).toBe(1);
  });

  it('rejects every caller waiting for the refused login, with one login sent', async () => {
    api.refuseLogin = true;
    const client = clientOf(PASSWORD);

    const errors = await Promise.all(Array.from({ length: 10 }, () => rejection(client.fetch(PARCEL))));

    expect(errors.every((error) => error instanceof CredentialsRefusedError)).toBe(true);
    expect(api.count('/login')).toBe(1);
  });

  it('sends a refused API client secret no more, until it is given credentials again', async () => {
    const client = clientOf({ ...CLIENT, clientSecret: 'pcs_wrong-secret-never-shown' });
    const first = await rejection(client.token());
    expect(first).toMatchObject({ name: 'CredentialsRefusedError', oauthError: 'invalid_client' });

    const later = await rejection(client.fetch(PARCEL));

    expect(later).toMatchObject({
      name: 'CredentialsRefusedError',
      operation: 'client-credentials',
      oauthError: 'invalid_client',
      cause: first,
    });
    expect(api.count('/oauth/token')).toBe(1);
    client.setCredentials(CLIENT);
    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/oauth/token')).toBe(2);
  });

  it('takes invalid_client answered 400 as a refusal too, and other 400s not', async () => {
    const invalid =
      (error: string): Scripted =>
      (response) =>
        response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
    api.answerNext('/oauth/token', invalid('invalid_scope'), invalid('invalid_client'));
    const client = clientOf(CLIENT);

    expect(await rejection(client.token())).toMatchObject({
      name: 'ParcelApiError',
      oauthError: 'invalid_scope',
    });
    expect(await rejection(client.token())).toMatchObject({
      name: 'CredentialsRefusedError',
      oauthError: 'invalid_client',
    });
    expect(await rejection(client.token())).toMatchObject({ cause: expect.any(CredentialsRefusedError) });
    expect(api.count('/oauth/token')).toBe(2);
  });

  it('does not take a 429 from the login for a refusal: the next call logs in', async () => {
    api.answerNext('/login', answer(429, { 'retry-after': '900' }));
    const client = clientOf(PASSWORD);

    expect(await rejection(client.fetch(PARCEL))).toMatchObject({ name: 'ParcelApiError', status: 429 });
    expect(client.credentialsRefusal).toBeUndefined();

    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/login')).toBe(2);
  });

  it('does not take a refused refresh for a refusal of the password: it ends the session only', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    api.revokeSessions();
    api.now += 3600_000;

    expect((await client.fetch(PARCEL)).status).toBe(404);

    expect(client.credentialsRefusal).toBeUndefined();
    expect(api.count('/token/refresh')).toBe(1);
    expect(api.count('/login')).toBe(2);
  });

  it('keeps no refusal of credentials replaced while they were on their way', async () => {
    let release = () => {};
    api.holdLogins = new Promise((resolve) => {
      release = resolve;
    });
    const client = clientOf({ ...PASSWORD, password: 'a-wrong-password' });
    const arrived = api.arrival();
    const call = client.fetch(PARCEL);
    await arrived;

    client.setCredentials(PASSWORD);
    api.holdLogins = undefined;
    release();

    expect(await rejection(call)).toBeInstanceOf(CredentialsRefusedError);
    expect(client.credentialsRefusal).toBeUndefined();
    expect((await client.fetch(PARCEL)).status).toBe(404);
    expect(api.count('/login')).toBe(2);
  });

  it('takes no other 401 from the login for a refusal of the credentials', async () => {
    api.answerNext('/login', answer(401));
    const client = clientOf(PASSWORD);

    expect(await rejection(client.token())).toMatchObject({ name: 'ParcelApiError', status: 401 });
    expect(client.credentialsRefusal).toBeUndefined();
    expect(await client.token()).toMatch(/^ey/);
  });

  it('keeps no token got with credentials replaced while it was on its way', async () => {
    let release = () => {};
    api.holdLogins = new Promise((resolve) => {
      release = resolve;
    });
    const client = clientOf(PASSWORD);
    const arrived = api.arrival();
    const call = client.fetch(PARCEL);
    await arrived;

    client.setCredentials({ ...PASSWORD, loginRoute: 'login-extended' });
    release();
    expect((await call).status).toBe(404);
    expect((await client.fetch(PARCEL)).status).toBe(404);

    expect(api.count('/login')).toBe(1);
    expect(api.count('/login-extended')).toBe(1);
  });

  it('shares one login among the calls after setCredentials, though one with the former credentials ends meanwhile', async () => {
    let refuse = () => {};
    const refusing = new Promise<void>((resolve) => {
      refuse = resolve;
    });
    let release = () => {};
    api.holdLogins = new Promise((resolve) => {
      release = resolve;
    });
    api.answerNext('/login', (response) => void refusing.then(() => refused(response)));
    const client = clientOf({ ...PASSWORD, password: 'a-wrong-password' });
    let arrived = api.arrival();
    const former = client.fetch(PARCEL);
    await arrived;

    client.setCredentials(PASSWORD);
    arrived = api.arrival();
    const first = client.fetch(PARCEL);
    await arrived;
    refuse();
    expect(await rejection(former)).toBeInstanceOf(CredentialsRefusedError);
    const second = client.fetch(PARCEL);
    release();

    expect(statuses(await Promise.all([first, second]))).toEqual([404, 404]);
    expect(api.count('/login')).toBe(2);
  });

  it('forgets the tokens got with the former credentials when given new ones', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);

    client.setCredentials({ ...PASSWORD, loginRoute: 'login-extended' });
    expect((await client.fetch(PARCEL)).status).toBe(404);

    expect(api.count('/login')).toBe(1);
    expect(api.count('/login-extended')).toBe(1);
    expect(api.count('/token/refresh')).toBe(0);
  });
});

describe('what the client keeps to itself', () => {
  /** Every way an error is commonly printed or serialised. */
  const renderings = (value: unknown) => [
    String(value),
    JSON.stringify(value),
    inspect(value, { showHidden: true, depth: Number.POSITIVE_INFINITY }),
    value instanceof Error ? `${value.stack} ${inspect(value.cause)}` : '',
    JSON.stringify(Object.entries(value ?? {})),
  ];
  const secrets = () => [
    PASSWORD.password,
    CLIENT.clientSecret,
    'pcs_wrong-secret-never-shown',
    ...api.issued,
  ];

  it('puts no token, password or secret into any error it throws', async () => {
    const errors: unknown[] = [];
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);
    errors.push(await rejection(client.json(PARCEL)));
    errors.push(await rejection(client.json(PARCEL, { method: 'POST', json: { token: 'x' } })));
    api.revokeSessions();
    api.refuseLogin = true;
    errors.push(await rejection(client.fetch(PARCEL)));
    errors.push(
      await rejection(clientOf({ ...CLIENT, clientSecret: 'pcs_wrong-secret-never-shown' }).token()),
    );
    errors.push(await rejection(client.fetch(PARCEL)));
    api.script.push(hang);
    api.refuseLogin = false;
    client.setCredentials(PASSWORD);
    errors.push(await rejection(client.fetch(PARCEL, { timeoutMs: 300 })));

    expect(errors).toHaveLength(6);
    expect(api.issued.length).toBeGreaterThan(2);
    for (const error of errors)
      for (const text of renderings(error))
        for (const secret of secrets()) expect(text).not.toContain(secret);
  });

  it('quotes nothing of an answer that is not JSON: a broken login answer may hold a token', async () => {
    // V8 quotes a short text whole in its SyntaxError: `Unexpected token 'e', "{"token":eyJ…}"`.
    api.script.push((response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"token":eyJbroken-token}'),
    );
    const error = await rejection(clientOf(PASSWORD).json(PARCEL));
    for (const text of renderings(error)) expect(text).not.toContain('eyJbroken');
  });

  it('shows no token or password when the client itself is printed or serialised', async () => {
    const client = clientOf(PASSWORD);
    await client.fetch(PARCEL);

    for (const text of renderings(client)) for (const secret of secrets()) expect(text).not.toContain(secret);
  });

  it('types a problem answer’s fields for the caller', async () => {
    const client = clientOf(PASSWORD);

    const error = await rejection(client.json(PARCEL, { method: 'POST', json: {} }));

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({
      message: 'request failed: 400 Invalid request',
      operation: 'request',
      status: 400,
      problem: {
        type: 'urn:parcel-auth:problem:validation-failed',
        invalidParams: [{ name: 'parcels', reason: 'is required' }],
      },
    });
  });

  it('sends the token to the API’s origin only, and never over plain http beyond loopback', async () => {
    const client = clientOf(PASSWORD);

    expect(await rejection(client.fetch('https://elsewhere.example/api'))).toBeInstanceOf(TypeError);
    expect(api.seen).toEqual([]);
    expect(
      () => new ParcelClient({ baseUrl: 'http://api.example.com/api/v1', credentials: PASSWORD }),
    ).toThrow('baseUrl must be https');
    expect(
      () => new ParcelClient({ baseUrl: 'https://user:pw@api.example.com/api/v1', credentials: PASSWORD }),
    ).toThrow('baseUrl must not contain credentials');
  });
});
