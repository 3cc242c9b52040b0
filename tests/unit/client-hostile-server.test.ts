/**
 * integrators/client/parcel-auth-client.ts against answers a broken or hostile server (or an
 * edge in front of it) could give: a redirect, which must not carry a credential anywhere, a
 * body without end, which must not be read whole, and rate-limit fields and Retry-After values
 * that must not fail a call. Real servers on 127.0.0.1; a second one, on another port and so
 * another origin, stands for "another host".
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ParcelApiError,
  ParcelClient,
  type ParcelClientOptions,
  type PasswordCredentials,
} from '../../integrators/client/parcel-auth-client.ts';
import { rejection } from '../support/errors.ts';

const PASSWORD: PasswordCredentials = { kind: 'password', username: 'alice', password: 'pw-never-elsewhere' };
const CLIENT = {
  kind: 'client_credentials',
  clientId: 'cl_7Hx',
  clientSecret: 'pcs_never-elsewhere',
} as const;
const REFRESH_TOKEN = 'rt-never-elsewhere';
const PARCEL = '/tracking/12345678901234';
const KIB = 1024;
const MIB = 1024 * KIB;
/** What a hostile server streams at most: far past any cap, bounded so a failing test ends. */
const ENDLESS = 50 * MIB;

interface Received {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}
type Handle = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** A server on 127.0.0.1 that records every request it gets and answers with `handle`. */
class Host {
  readonly received: Received[] = [];
  handle: Handle = (_request, response) => response.writeHead(404).end();
  origin = '';
  #server: Server | undefined;

  async start() {
    this.#server = createServer((request, response) => void this.#serve(request, response));
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop() {
    this.#server?.closeAllConnections();
    await new Promise((done) => this.#server?.close(done));
  }

  async #serve(request: IncomingMessage, response: ServerResponse) {
    let body = '';
    for await (const chunk of request) body += chunk;
    const { method = '', url = '' } = request;
    this.received.push({ method, url, authorization: request.headers.authorization, body });
    this.handle(request, response, body);
  }
}

let api: Host;
/** Another origin: it answers as the API would, so a followed redirect would succeed. */
let elsewhere: Host;
beforeEach(async () => {
  api = new Host();
  elsewhere = new Host();
  elsewhere.handle = (_request, response) => json(response, 200, tokens());
  await Promise.all([api.start(), elsewhere.start()]);
});
afterEach(() => Promise.all([api.stop(), elsewhere.stop()]));

let clock = Date.parse('2026-03-01T08:00:00Z');
const clientOf = (options: Partial<ParcelClientOptions> = {}) =>
  new ParcelClient({ baseUrl: `${api.origin}/api/v1`, credentials: PASSWORD, now: () => clock, ...options });

/** A login answer whose access token lives a minute. */
function tokens() {
  const iat = Math.floor(clock / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const token = `${part({ alg: 'EdDSA', typ: 'at+jwt' })}.${part({ iat, exp: iat + 60 })}.c2ln`;
  return { token, refreshToken: REFRESH_TOKEN, access_token: token, token_type: 'Bearer', expires_in: 60 };
}
const json = (response: ServerResponse, status: number, value: unknown) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
const redirect =
  (status: number, location: string) => (_request: IncomingMessage, response: ServerResponse) =>
    response.writeHead(status, { location }).end();

describe('a redirect', () => {
  it('refuses a 307 from the login and sends the password nowhere else', async () => {
    api.handle = redirect(307, `${elsewhere.origin}/collect/login?user=alice`);

    const error = await rejection(clientOf().token());

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({ operation: 'login', status: 307 });
    expect((error as Error).message).toContain(elsewhere.origin);
    expect((error as Error).message).not.toMatch(/collect|user=/);
    expect(elsewhere.received).toEqual([]);
    expect(api.received).toHaveLength(1);
  });

  it('refuses a 308 from the refresh and sends the refresh token nowhere else', async () => {
    api.handle = (request, response) =>
      request.url === '/api/v1/login'
        ? json(response, 200, tokens())
        : redirect(308, `${elsewhere.origin}/collect`)(request, response);
    const client = clientOf();
    await client.token();
    clock += 3_600_000;

    const error = await rejection(client.token());

    expect(error).toMatchObject({ operation: 'refresh', status: 308 });
    expect((error as Error).message).toContain(elsewhere.origin);
    expect(elsewhere.received).toEqual([]);
  });

  it('refuses a redirect from the token endpoint: the client secret reaches no other host', async () => {
    api.handle = redirect(307, `${elsewhere.origin}/oauth/token`);

    const error = await rejection(clientOf({ credentials: CLIENT }).token());

    expect(error).toMatchObject({ operation: 'client-credentials', status: 307 });
    expect(elsewhere.received).toEqual([]);
  });

  it('refuses a redirect of an API call, naming the target’s origin but not its path or query', async () => {
    api.handle = (request, response) =>
      request.url === '/api/v1/login'
        ? json(response, 200, tokens())
        : redirect(302, `${elsewhere.origin}/collect?token=in-the-query`)(request, response);

    const error = await rejection(clientOf().fetch(PARCEL));

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({ operation: 'request', status: 302 });
    expect((error as Error).message).toContain(`302 to ${elsewhere.origin}`);
    expect((error as Error).message).not.toMatch(/collect|in-the-query/);
    expect(elsewhere.received).toEqual([]);
  });

  it('follows no redirect even when the call asks for redirect: follow', async () => {
    api.handle = (request, response) =>
      request.url === '/api/v1/login'
        ? json(response, 200, tokens())
        : redirect(307, `${elsewhere.origin}/collect`)(request, response);

    const error = await rejection(clientOf().json(PARCEL, { redirect: 'follow' }));

    expect(error).toMatchObject({ operation: 'request', status: 307 });
    expect(elsewhere.received).toEqual([]);
  });

  it('refuses a redirect to the API’s own origin too: any 3xx is an error', async () => {
    api.handle = (request, response) =>
      request.url === '/api/v1/login'
        ? json(response, 200, tokens())
        : redirect(301, '/api/v1/tracking/elsewhere')(request, response);

    const error = await rejection(clientOf().fetch(PARCEL));

    expect(error).toMatchObject({ operation: 'request', status: 301 });
    expect((error as Error).message).toContain(`301 to ${api.origin}`);
    expect(api.received.map((request) => request.url)).toEqual(['/api/v1/login', `/api/v1${PARCEL}`]);
  });

  it('hands a 304 Not Modified to the caller: it redirects nowhere', async () => {
    api.handle = (request, response) =>
      request.url === '/api/v1/login' ? json(response, 200, tokens()) : response.writeHead(304).end();

    const response = await clientOf().fetch(PARCEL, { headers: { 'if-none-match': '"v1"' } });

    expect(response.status).toBe(304);
  });

  it('refuses an answer that a fetch given to the client reached by following a redirect', async () => {
    api.handle = redirect(307, `${elsewhere.origin}/login`);
    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'follow' });

    const error = await rejection(clientOf({ fetch: following }).token());

    // The given fetch sent the password on; the client at least takes no token from elsewhere.
    expect(error).toMatchObject({ operation: 'login' });
    expect((error as Error).message).toContain(elsewhere.origin);
  });

  it('sends the token to no path that names another host, from a base URL without a path', async () => {
    const other = elsewhere.origin.replace('http://', '');
    const client = clientOf({ baseUrl: api.origin });

    for (const path of [`//${other}/x`, `/\\${other}/x`, `${elsewhere.origin}/x`])
      expect(await rejection(client.fetch(path))).toBeInstanceOf(TypeError);
    expect(elsewhere.received).toEqual([]);
    expect(api.received).toEqual([]);
  });
});

/**
 * Streams `total` bytes of a JSON string, as fast as the client reads them, and tells whether
 * the client cut the stream before its end.
 */
function endless(response: ServerResponse, status: number, total = ENDLESS) {
  const stream = { sent: 0, cut: false };
  const closed = once(response, 'close').then(() => {
    stream.cut = !response.writableFinished;
    return stream;
  });
  response.writeHead(status, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * KIB, 'a');
  void (async () => {
    response.write('"');
    while (stream.sent < total && !response.destroyed) {
      stream.sent += chunk.length;
      if (!response.write(chunk)) await Promise.race([once(response, 'drain'), closed]);
    }
    response.end('"');
  })();
  return closed;
}

describe('the size of an answer', () => {
  it('refuses a login answer past 64 KiB and cuts its stream', async () => {
    let streamed: Promise<{ sent: number; cut: boolean }> | undefined;
    api.handle = (_request, response) => {
      streamed = endless(response, 200);
    };

    const error = await rejection(clientOf().token());

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({ operation: 'login', status: 200 });
    expect((error as Error).message).toContain(String(64 * KIB));
    const stream = await streamed;
    expect(stream?.cut).toBe(true);
    expect(stream?.sent).toBeLessThan(ENDLESS);
  });

  it('refuses an endless error answer with its status and the cap, and quotes none of it', async () => {
    let streamed: Promise<{ sent: number; cut: boolean }> | undefined;
    api.handle = (request, response) => {
      if (request.url === '/api/v1/login') return json(response, 200, tokens());
      streamed = endless(response, 500);
    };

    const error = await rejection(clientOf().json(PARCEL));

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({ operation: 'request', status: 500, problem: undefined });
    expect((error as Error).message).toContain('500');
    expect((error as Error).message).toContain(String(64 * KIB));
    expect((error as Error).message).not.toContain('aaaa');
    expect((await streamed)?.cut).toBe(true);
  });

  it('refuses an answer whose Content-Length passes the cap without waiting for its body', async () => {
    let closed: Promise<unknown> | undefined;
    api.handle = (request, response) => {
      if (request.url === '/api/v1/login') return json(response, 200, tokens());
      // Declares 400 MiB, sends a little and stalls: only the header can end this early.
      closed = once(response, 'close');
      response.writeHead(502, { 'content-type': 'application/json', 'content-length': 400 * MIB });
      response.write('{"type":"');
    };

    const error = await rejection(clientOf({ timeoutMs: 5000 }).json(PARCEL));

    expect(error).toMatchObject({ name: 'ParcelApiError', operation: 'request', status: 502 });
    expect((error as Error).message).toContain(String(64 * KIB));
    await closed;
  });

  it('reads an API answer up to maxResponseBytes, 1 MiB by default, and refuses a longer one', async () => {
    let size = 0;
    api.handle = (request, response) => {
      if (request.url === '/api/v1/login') return json(response, 200, tokens());
      json(response, 200, 'a'.repeat(size - 2));
    };
    const read = async (bytes: number, client: ParcelClient, init = {}) => {
      size = bytes;
      return client.json(PARCEL, init);
    };
    const client = clientOf();
    const limited = clientOf({ maxResponseBytes: 1000 });

    expect(await read(MIB, client)).toHaveLength(MIB - 2);
    expect(await rejection(read(MIB + 1, client))).toMatchObject({ status: 200, operation: 'request' });
    expect(await read(1000, limited)).toHaveLength(998);
    const error = await rejection(read(1001, limited));
    expect(error).toBeInstanceOf(ParcelApiError);
    expect((error as Error).message).toContain('1000');
    expect(await read(5000, limited, { maxResponseBytes: 5000 })).toHaveLength(4998);
  });

  it('refuses a maxResponseBytes that is no whole number of bytes, as a mistake of the caller', async () => {
    for (const maxResponseBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => clientOf({ maxResponseBytes })).toThrow(
        'maxResponseBytes must be a whole number of bytes',
      );
    expect(await rejection(clientOf().json(PARCEL, { maxResponseBytes: -1 }))).toBeInstanceOf(TypeError);
    expect(api.received).toEqual([]);
  });
});

describe('rate-limit fields and a Retry-After that make no sense', () => {
  /** A login answered with `headers`, after the answers of `before`. */
  const loginWith = (headers: Record<string, string>, before: Handle[] = []) => {
    api.handle = (request, response, body) => {
      const next = before.shift();
      if (next !== undefined) return next(request, response, body);
      response
        .writeHead(200, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(tokens()));
    };
  };

  it('answers the call, and keeps no limits, when both RateLimit fields are malformed', async () => {
    loginWith({ 'ratelimit-policy': '"username;q=5', ratelimit: ',,,;' });
    const client = clientOf();

    expect(await client.token()).toMatch(/^ey/);
    expect(client.rateLimits).toBeUndefined();
  });

  it('keeps the well-formed field of the two when the other is malformed', async () => {
    loginWith({ 'ratelimit-policy': '"address";q=100;w=3600', ratelimit: '"address";r=' });
    const client = clientOf();

    await client.token();

    expect(client.rateLimits).toMatchObject({
      policies: [{ name: 'address', quota: 100, windowSeconds: 3600 }],
      remaining: [],
    });
  });

  it('backs off with jitter after a Retry-After that is neither seconds nor an HTTP date', async () => {
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    };
    const throttled: Handle = (_request, response) => response.writeHead(429, { 'retry-after': '1.5' }).end();
    loginWith({}, [throttled]);

    await clientOf({ sleep, random: () => 0.25 }).token();

    // Date.parse would read "1.5" as a day in 2001: a wait of nothing.
    expect(waits).toEqual([250]);
    expect(api.received).toHaveLength(2);
  });

  it('hands a Retry-After of centuries to the caller rather than waiting it', async () => {
    const throttled: Handle = (_request, response) =>
      response.writeHead(503, { 'retry-after': '9'.repeat(40) }).end();
    loginWith({}, [throttled]);

    const error = await rejection(clientOf().token());

    expect(error).toMatchObject({ operation: 'login', status: 503, retryAfterSeconds: 2 ** 31 });
    expect(api.received).toHaveLength(1);
  });
});
