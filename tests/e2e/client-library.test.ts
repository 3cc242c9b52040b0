/**
 * The integrators' client (integrators/client/parcel-auth-client.ts) against the local stack
 * with short-lived tokens: the real login, refresh with rotation and reuse detection, the
 * token endpoint, and the real authorizer refusing expired and revoked tokens. What goes over
 * the wire is counted by the fetch the client is given, and logins also by the stack's log.
 */
import { decodeJwt } from 'jose';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import {
  type ClientCredentials,
  ParcelApiError,
  ParcelClient,
  type PasswordCredentials,
} from '../../integrators/client/parcel-auth-client.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

/**
 * A user's token lives 8 s: a call queued on the wire (below) longer than that is sent with an
 * expired token, and its retry may queue as long again, so a round of calls, warm (under a
 * second here), must fit in it. A client's lives 20 s: its test counts token requests, so a
 * round on a busy machine (seconds) must fit in one token's life.
 */
const ACCESS_TOKEN_TTL = '8s';
const CLIENT_TOKEN_TTL = '20s';
const UNKNOWN_PARCEL = '/tracking/12345678901234';
const SHIPMENT = { recipient: { name: 'Eva Dvořáková', city: 'Plzeň' }, parcels: [{ weightKg: 2 }] };
const CreatedSchema = v.object({ parcelNumber: v.string(), status: v.string() });
const created = (body: unknown) => v.parse(CreatedSchema, body);

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({
    env: {
      ACCESS_TOKEN_TTL,
      CLIENT_TOKEN_TTL,
      // The authorizer sees an operator's revocation at once rather than within a second.
      REVOCATION_CACHE_TTL: '0s',
      // No grace window: within one, two refreshes with one token at once are answered alike,
      // and a client that refreshes twice at once would pass the one-at-a-time test below.
      REFRESH_REUSE_GRACE: '0s',
    },
  });
});
afterAll(() => stack?.stop());

/**
 * What the clients send goes through this fetch: it counts requests by path under /api/v1,
 * keeps the last Bearer token sent, and carries eight requests at a time. serverless-offline
 * runs each concurrent invocation in a Lambda worker of its own, and a hundred cold workers
 * at once on a small machine run the authorizer past its 5 s timeout, failing the call. The
 * hundred calls stay concurrent in the client, where the token is shared; on the wire they
 * queue, as behind a browser's few connections per host.
 */
function wire() {
  const counts = new Map<string, number>();
  let lastBearer = '';
  let inFlight = 0;
  const queue: (() => void)[] = [];
  const counted: typeof fetch = async (input, init) => {
    if (inFlight >= 8) await new Promise<void>((resolve) => queue.push(resolve));
    inFlight++;
    const url = new URL(input instanceof Request ? input.url : input);
    const path = url.pathname.replace(/^\/api\/v1/, '');
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const authorization = new Headers(init?.headers).get('authorization') ?? '';
    if (authorization.startsWith('Bearer ')) lastBearer = authorization.slice('Bearer '.length);
    try {
      const response = await fetch(input, init);
      // The slot is held until the body is read, as a connection is.
      return new Response(response.status === 204 ? null : await response.arrayBuffer(), response);
    } finally {
      inFlight--;
      queue.shift()?.();
    }
  };
  return {
    fetch: counted,
    count: (path: string) => counts.get(path) ?? 0,
    /** Until the last token sent has expired, by its own exp. */
    expiry: () => {
      const { exp } = decodeJwt(lastBearer);
      return new Promise((resolve) => setTimeout(resolve, Math.max(0, (exp ?? 0) * 1000 - Date.now() + 100)));
    },
  };
}

const hundred = (call: () => Promise<Response>) =>
  Promise.all(Array.from({ length: 100 }, call)).then((responses) => responses.map(({ status }) => status));
const all = (status: number) => Array(100).fill(status);

/**
 * Eight calls at once through a client of its own, so that the stack's eight Lambda workers of
 * the authorizer and the tracking handler have started (seconds each on a busy machine) before
 * a round whose calls queue behind them.
 */
async function warm(credentials: PasswordCredentials | ClientCredentials) {
  const client = new ParcelClient({ baseUrl: stack.baseUrl, credentials });
  await Promise.all(Array.from({ length: 8 }, () => client.fetch(UNKNOWN_PARCEL).then(discard)));
}
const discard = (response: Response) => response.arrayBuffer();
const loginsLogged = () =>
  stack
    .output()
    .split('\n')
    .filter((line) => line.includes('login succeeded')).length;

/** `npm run admin -- …` against this stack: its stdout. */
const admin = (args: readonly string[]) => stackAdmin(stack, args);

/** `client add`: an API client of the demo customer, with its id and secret as printed once. */
async function addClient(...scopes: string[]): Promise<ClientCredentials> {
  const stdout = await admin([
    'client',
    'add',
    'DEMO-CUSTOMER',
    ...scopes.flatMap((scope) => ['--scope', scope]),
  ]);
  return {
    kind: 'client_credentials',
    clientId: printedValue(stdout, 'client id'),
    clientSecret: printedValue(stdout, 'secret'),
  };
}

describe('a password login', () => {
  const demo = (): PasswordCredentials => ({ kind: 'password', ...stack.demo });

  it('serves a hundred concurrent calls, and a hundred more after each of two expiries, with one login', async () => {
    await warm(demo());
    const counted = wire();
    const client = new ParcelClient({ baseUrl: stack.baseUrl, credentials: demo(), fetch: counted.fetch });
    const logged = loginsLogged();

    expect(await hundred(() => client.fetch(UNKNOWN_PARCEL))).toEqual(all(404));
    for (const expiry of [1, 2]) {
      await counted.expiry();
      expect(await hundred(() => client.fetch(UNKNOWN_PARCEL))).toEqual(all(404));
      expect(counted.count('/token/refresh')).toBeGreaterThanOrEqual(expiry);
    }

    // Every renewal was a refresh with the newest refresh token, one at a time: two refreshes
    // with one token, or a spent one presented again, would have revoked the session, and the
    // refused refresh would have made the client log in again.
    expect(counted.count('/login')).toBe(1);
    expect(loginsLogged() - logged).toBe(1);
  }, 120_000);

  it('logs in again after an operator’s user logout revoked its tokens and session, and the call succeeds', async () => {
    const counted = wire();
    const client = new ParcelClient({ baseUrl: stack.baseUrl, credentials: demo(), fetch: counted.fetch });
    const shipment = await client.json('/shipments', { method: 'POST', json: SHIPMENT, parse: created });
    expect(shipment.status).toBe('registered');

    await admin(['user', 'logout', stack.demo.username]);
    const tracked = await client.fetch(`/tracking/${shipment.parcelNumber}`);

    expect(tracked.status).toBe(200);
    // The refresh was refused (the session is over), so the client logged in again.
    expect(counted.count('/token/refresh')).toBeGreaterThanOrEqual(1);
    expect(counted.count('/login')).toBe(2);
  });

  it('rejects with the login’s problem, and neither password nor token in the error, when the password is wrong', async () => {
    const client = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: { ...demo(), password: 'not-the-demo-password' },
    });

    const error = await client.fetch(UNKNOWN_PARCEL).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(error).toBeInstanceOf(ParcelApiError);
    expect(error).toMatchObject({
      operation: 'login',
      status: 401,
      problem: { type: 'urn:parcel-auth:problem:invalid-credentials' },
    });
    expect(JSON.stringify(error)).not.toContain('not-the-demo-password');
    expect(String(error)).not.toContain('not-the-demo-password');
  });
});

describe('client credentials from `client add`', () => {
  it('serves a hundred concurrent calls, and a hundred more after the token expired, with one token request each', async () => {
    const counted = wire();
    const owner = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: { kind: 'password', ...stack.demo },
    });
    const { parcelNumber } = await owner.json('/shipments', {
      method: 'POST',
      json: SHIPMENT,
      parse: created,
    });
    const client = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: await addClient('tracking:read'),
      fetch: counted.fetch,
    });

    expect(await hundred(() => client.fetch(`/tracking/${parcelNumber}`))).toEqual(all(200));
    expect(counted.count('/oauth/token')).toBe(1);

    await counted.expiry();
    expect(await hundred(() => client.fetch(`/tracking/${parcelNumber}`))).toEqual(all(200));
    expect(counted.count('/oauth/token')).toBe(2);
  }, 120_000);

  it('answers 403 to a route beyond the token’s scopes without asking for another token', async () => {
    const counted = wire();
    const client = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: await addClient('tracking:read'),
      fetch: counted.fetch,
    });

    const response = await client.fetch('/shipments', { method: 'POST', json: SHIPMENT });

    expect(response.status).toBe(403);
    expect(counted.count('/oauth/token')).toBe(1);
    expect(counted.count('/shipments')).toBe(1);
  });

  it('rejects with invalid_client, and not the secret, for a wrong secret', async () => {
    const { clientId } = await addClient('tracking:read');
    const wrong = 'pcs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const client = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: { kind: 'client_credentials', clientId, clientSecret: wrong },
    });

    const error = await client.token().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(error).toMatchObject({
      operation: 'client-credentials',
      status: 401,
      oauthError: 'invalid_client',
    });
    expect(JSON.stringify(error)).not.toContain(wrong);
    expect(String(error)).not.toContain(wrong);
  });
});
