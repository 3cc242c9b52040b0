/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) end to end, as a standard client
 * library performs them (panva's oauth4webapi: `revocationRequest`, `introspectionRequest`),
 * configured by RFC 8414 discovery from the local stack's issuer; the revoked token in front of
 * the real authorizer. Every answer the library gets is held to docs/openapi.yaml. Clients are
 * made with the admin CLI, as an operator does (docs/clients.md, "Revocation and introspection").
 */
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { INTROSPECTION_PATH, REVOCATION_PATH } from '../../lib/clients/metadata.ts';
import type { Scope } from '../../lib/scopes.ts';
import { bearer, send } from '../support/http.ts';
import { emfLines, summarise } from '../support/metrics-capture.ts';
import { assertDocumented, type ObservedResponse } from '../support/openapi.ts';
import { addStackClient } from '../support/stack-admin.ts';

const CUSTOMER = 'C-RI-1';
const CARRIER = 'C-CARRIER';

let stack: LocalStack;
let as: oauth.AuthorizationServer;
/** Every answer the library got since the last check, held to docs/openapi.yaml after each test. */
let pending: ObservedResponse[] = [];

/** The library's fetch: each answer is kept for the contract check, the library gets it unread. */
const documentedFetch = async (url: string, options: oauth.CustomFetchOptions<string, unknown>) => {
  const response = await fetch(url, options as RequestInit);
  const text = await response.clone().text();
  let body: unknown = text === '' ? undefined : text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the contract check sees the raw text.
  }
  pending.push({
    method: options.method,
    path: new URL(url).pathname,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body,
    headers: response.headers,
  });
  return response;
};

/** Plain http on loopback only; every request through the documented fetch. */
const OPTIONS = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: documentedFetch } as const;

type Credentials = Awaited<ReturnType<typeof addStackClient>>;
const addClient = (customerId: string, scopes: readonly Scope[]) => addStackClient(stack, customerId, scopes);

const basicAuth = (credentials: Credentials) => oauth.ClientSecretBasic(credentials.clientSecret);
const clientOf = (credentials: Credentials): oauth.Client => ({ client_id: credentials.clientId });

async function grant(credentials: Credentials): Promise<string> {
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    clientOf(credentials),
    basicAuth(credentials),
    {},
    OPTIONS,
  );
  return (await oauth.processClientCredentialsResponse(as, clientOf(credentials), response)).access_token;
}

async function revoke(
  credentials: Credentials,
  token: string,
  auth: oauth.ClientAuth = basicAuth(credentials),
): Promise<void> {
  const response = await oauth.revocationRequest(as, clientOf(credentials), auth, token, {
    ...OPTIONS,
    additionalParameters: { token_type_hint: 'access_token' },
  });
  await oauth.processRevocationResponse(response);
}

async function introspect(
  credentials: Credentials,
  token: string,
  auth: oauth.ClientAuth = basicAuth(credentials),
): Promise<oauth.IntrospectionResponse> {
  const response = await oauth.introspectionRequest(as, clientOf(credentials), auth, token, OPTIONS);
  return oauth.processIntrospectionResponse(as, clientOf(credentials), response);
}

/** What the library threw; fails the test when it did not throw. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error === undefined) throw new Error('the request was not refused');
  return error;
}

const track = (token: string) => send(stack, 'GET', '/tracking/12345678901234', { headers: bearer(token) });

beforeAll(async () => {
  stack = await startLocalStack();
  // The local stack's issuer is its own origin, so RFC 8414 discovery finds the metadata.
  const issuer = new URL(new URL(stack.baseUrl).origin);
  const response = await oauth.discoveryRequest(issuer, { ...OPTIONS, algorithm: 'oauth2' });
  as = await oauth.processDiscoveryResponse(issuer, response);
});
afterEach(() => {
  const answers = pending;
  pending = [];
  for (const answer of answers) assertDocumented(answer);
});
afterAll(() => stack?.stop());

describe('discovery (RFC 8414)', () => {
  it('names the revocation and introspection endpoints beside the token endpoint, each with both authentication methods', () => {
    const origin = new URL(stack.baseUrl).origin;
    expect(as).toMatchObject({
      revocation_endpoint: `${origin}${REVOCATION_PATH}`,
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      introspection_endpoint: `${origin}${INTROSPECTION_PATH}`,
      introspection_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      introspection_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
    });
    expect(as.scopes_supported).toContain('tokens:introspect');
  });
});

describe('a client revoking its own token (RFC 7009)', () => {
  it('is answered 200; the API refuses that token within the revocation bound, and not the client’s other token', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const revoked = await grant(credentials);
    const kept = await grant(credentials);
    expect((await track(revoked)).status).toBe(404);

    await revoke(credentials, revoked);

    // The local stage trusts a client's state for revocationCacheTtl (1 s).
    await expect.poll(async () => (await track(revoked)).status, { timeout: 5_000, interval: 250 }).toBe(401);
    expect((await track(kept)).status).toBe(404);
    // Revoking it again, or a token that is no token, is no error either (section 2.2).
    await revoke(credentials, revoked);
    await revoke(credentials, 'not-a-token');
  });

  it('revokes with client_secret_post as with client_secret_basic', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const token = await grant(credentials);

    await revoke(credentials, token, oauth.ClientSecretPost(credentials.clientSecret));

    await expect.poll(async () => (await track(token)).status, { timeout: 5_000, interval: 250 }).toBe(401);
  });

  it('answers another client’s token and a user’s token 200, as garbage, and both keep working', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const others = await grant(await addClient(CUSTOMER, ['tracking:read']));
    const login = await send(stack, 'POST', '/login', { body: stack.demo });
    const users = String(login.json.token);

    for (const token of [others, users]) {
      await expect(revoke(credentials, token)).resolves.toBeUndefined();
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await track(others)).status).toBe(404);
    expect((await track(users)).status).toBe(404);
  });

  it('refuses a wrong secret with 401 invalid_client and its Basic challenge, as the token endpoint does', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const token = await grant(credentials);

    const error = await thrown(
      revoke({ ...credentials, clientSecret: `${credentials.clientSecret}x` }, token),
    );

    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect(error).toMatchObject({ status: 401 });
    expect(pending.at(-1)?.body).toMatchObject({ error: 'invalid_client' });
  });
});

describe('a service of the carrier introspecting tokens (RFC 7662)', () => {
  let introspector: Credentials;
  beforeAll(async () => {
    introspector = await addClient(CARRIER, ['tokens:introspect']);
  });

  it('learns a client token’s client, customer, scope and lifetime', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read', 'shipments:write']);
    const token = await grant(credentials);

    const answer = await introspect(introspector, token);

    const claims = decodeJwt(token);
    expect(answer).toEqual({
      active: true,
      scope: 'tracking:read shipments:write',
      client_id: credentials.clientId,
      sub: credentials.clientId,
      customer_id: CUSTOMER,
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      iss: as.issuer,
      aud: claims.aud,
      jti: claims.jti,
    });
    expect(pending.at(-1)?.headers.get('cache-control')).toBe('no-store');
  });

  it('learns a user token’s username and the route scopes, never tokens:introspect', async () => {
    const login = await send(stack, 'POST', '/login', { body: stack.demo });

    const answer = await introspect(
      introspector,
      String(login.json.token),
      oauth.ClientSecretPost(introspector.clientSecret),
    );

    expect(answer).toMatchObject({
      active: true,
      client_id: 'login',
      sub: stack.demo.username,
      username: stack.demo.username,
      // The default scopes, and the demo customer's administration.
      scope: 'tracking:read shipments:write customer:admin',
    });
  });

  it('is told {"active": false} and nothing more of a revoked token, a refresh token and garbage', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const revoked = await grant(credentials);
    await revoke(credentials, revoked);
    const login = await send(stack, 'POST', '/login', { body: stack.demo });

    await expect
      .poll(async () => introspect(introspector, revoked), { timeout: 5_000, interval: 250 })
      .toEqual({ active: false });
    expect(await introspect(introspector, String(login.json.refreshToken))).toEqual({ active: false });
    expect(await introspect(introspector, 'not-a-token')).toEqual({ active: false });
  });

  it('refuses a client without tokens:introspect with 403 unauthorized_client, naming the scope', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read', 'shipments:write']);
    const token = await grant(credentials);

    const error = await thrown(introspect(credentials, token));

    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(error).toMatchObject({
      status: 403,
      error: 'unauthorized_client',
      error_description: 'The client does not hold the scope tokens:introspect, which this endpoint needs.',
    });
  });
});

describe('another method than POST on either endpoint: 405, Allow: POST, RFC 6749’s error JSON', () => {
  it.each([
    ['GET', REVOCATION_PATH],
    ['PUT', INTROSPECTION_PATH],
    ['DELETE', REVOCATION_PATH],
    ['GET', INTROSPECTION_PATH],
  ])('answers %s %s', async (method, path) => {
    const response = await fetch(`${new URL(stack.baseUrl).origin}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'This endpoint accepts POST only.',
    });
  });
});

describe('the metrics of revocation and introspection', () => {
  it('counts revocations, refusals and introspections by result', async () => {
    const metrics = () => emfLines(stack.output()).flatMap(summarise);
    for (const metric of [
      'ClientTokenRevoked=1',
      'TokenRevocationRefused{reason=NotIssuedToClient}=1',
      'TokenIntrospected{result=Active}=1',
      'TokenIntrospected{result=Inactive}=1',
      'TokenIntrospectionRefused{reason=MissingScope}=1',
    ]) {
      await expect.poll(metrics, { timeout: 5_000 }).toContain(metric);
    }
  });
});
