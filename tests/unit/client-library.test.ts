/**
 * integrators/client/parcel-auth-client.ts against an in-process fake of the API on
 * 127.0.0.1: the token lifecycle an integrator would otherwise write (and get wrong) itself.
 * The fake and the client share a settable clock, so expiry is a step of the test, not a wait.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ClientCredentials,
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
  /** Answers for the next logins. */
  readonly loginScript: Scripted[] = [];
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

    if (path === '/login' || path === '/login-extended') {
      await this.holdLogins;
      const scripted = this.loginScript.shift();
      if (scripted !== undefined) return scripted(response);
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

    expect(error).toMatchObject({
      name: 'ParcelApiError',
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
    api.loginScript.push(answer(503, { 'retry-after': '0' }));
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
    expect(retryAfterMs('Sun, 01 Mar 2026 08:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sun, 01 Mar 2026 07:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
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
    api.script.push(hang);
    api.refuseLogin = false;
    errors.push(await rejection(client.fetch(PARCEL, { timeoutMs: 300 })));

    expect(errors).toHaveLength(5);
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
