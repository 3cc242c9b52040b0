/**
 * API clients end to end: the OAuth 2.0 client credentials grant as a standard client library
 * (panva's openid-client) performs it against the local stack, configured from the server's
 * RFC 8414 metadata; client tokens in front of the real authorizer and handlers; the token
 * endpoint's RFC 6749 errors as the library sees them. Every answer is held to
 * docs/openapi.yaml, the library's too. Clients are made and changed with the admin CLI, as an
 * operator does.
 */

import { request } from 'node:http';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { GRANTABLE_SCOPES, type Scope } from '../../lib/scopes.ts';
import { answerLog } from '../support/answer-log.ts';
import { type Answer, bearer, send } from '../support/http.ts';
import { emfLines, summarise } from '../support/metrics-capture.ts';
import type { ObservedResponse } from '../support/openapi.ts';
import { addStackClient, printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-OAUTH-1';
const OTHER_CUSTOMER = 'C-OAUTH-2';
const SHIPMENT = { recipient: { name: 'Petra Malá', city: 'Ostrava' }, parcels: [{ weightKg: 0.8 }] };
/** Of the format we issue, held by no client: read and counted (a malformed one is refused unread). */
const WRONG_SECRET = newClientSecret(new Date()).secret;

/** The metadata members the service publishes (RFC 8414 section 2), as the library takes them. */
const MetadataSchema = v.strictObject({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  pushed_authorization_request_endpoint: v.string(),
  require_pushed_authorization_requests: v.boolean(),
  response_modes_supported: v.array(v.string()),
  code_challenge_methods_supported: v.array(v.string()),
  authorization_response_iss_parameter_supported: v.boolean(),
  token_endpoint: v.string(),
  jwks_uri: v.string(),
  grant_types_supported: v.array(v.string()),
  token_endpoint_auth_methods_supported: v.array(v.string()),
  token_endpoint_auth_signing_alg_values_supported: v.array(v.string()),
  revocation_endpoint: v.string(),
  revocation_endpoint_auth_methods_supported: v.array(v.string()),
  revocation_endpoint_auth_signing_alg_values_supported: v.array(v.string()),
  introspection_endpoint: v.string(),
  introspection_endpoint_auth_methods_supported: v.array(v.string()),
  introspection_endpoint_auth_signing_alg_values_supported: v.array(v.string()),
  dpop_signing_alg_values_supported: v.array(v.string()),
  scopes_supported: v.array(v.string()),
  response_types_supported: v.array(v.string()),
});

let stack: LocalStack;
let origin: string;
let metadata: v.InferOutput<typeof MetadataSchema>;
/** Every answer the token endpoint, the metadata route and the library's calls got (tests/support/answer-log.ts). */
const answers = answerLog();
const assertAnswersDocumented = () => answers.assertDocumented();
const observe = answers.observe;
const documentedFetch: client.CustomFetch = (url, options) => answers.fetch(url, options);
const lastAnswer = () => answers.last();

/** The admin CLI against this stack, as an operator runs `npm run admin -- …`: its stdout. */
const admin = (args: readonly string[], stdin?: string) => stackAdmin(stack, args, stdin);
const printed = printedValue;

/** `client add`: a client of `customerId` with `scopes`, its id and its secret as printed once. */
const addClient = (customerId: string, scopes: readonly Scope[]) => addStackClient(stack, customerId, scopes);

type Credentials = Awaited<ReturnType<typeof addClient>>;

/**
 * The library's configuration for a client, from the published metadata (discovery by issuer:
 * tests/e2e/outside-clients.test.ts); plain http only on loopback.
 */
function configure(
  { clientId, clientSecret }: Credentials,
  authentication: (secret: string) => client.ClientAuth = client.ClientSecretBasic,
) {
  const config = new client.Configuration(metadata, clientId, clientSecret, authentication(clientSecret));
  client.allowInsecureRequests(config);
  config[client.customFetch] = documentedFetch;
  return config;
}

const tokenOf = async (credentials: Credentials, parameters: Record<string, string> = {}) =>
  (await client.clientCredentialsGrant(configure(credentials), parameters)).access_token;

/** What the library throws for a refused token request; fails the test if it did not throw. */
async function refusal(request: Promise<unknown>): Promise<unknown> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (error === undefined) throw new Error('the token request was not refused');
  return error;
}

/** A refused token request's answer: RFC 6749's error, not stored, no token in it. */
function expectRefused(answer: ObservedResponse, status: number, error: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.body).toMatchObject({ error, error_description: expect.any(String) });
  expect(JSON.stringify(answer.body)).not.toMatch(/access_token|eyJ/);
}

const createShipment = (token: string) =>
  send(stack, 'POST', '/shipments', { body: SHIPMENT, headers: bearer(token) });
const track = (token: string, parcelNumber: string) =>
  send(stack, 'GET', `/tracking/${parcelNumber}`, { headers: bearer(token) });

beforeAll(async () => {
  stack = await startLocalStack();
  origin = new URL(stack.baseUrl).origin;
  const url = `${origin}/.well-known/oauth-authorization-server`;
  const answer = await observe('GET', url, await fetch(url));
  assertAnswersDocumented();
  metadata = v.parse(MetadataSchema, answer.body);
});
afterEach(assertAnswersDocumented);
afterAll(() => stack?.stop());

describe('the authorization server metadata (RFC 8414)', () => {
  it('names the authorization, PAR, token, revocation and introspection endpoints and key set as reached, the grants, PKCE S256, both authentication methods and every scope', () => {
    expect(metadata).toEqual({
      // The stack's own origin: clients discover it by its issuer (RFC 8414 section 3).
      issuer: origin,
      authorization_endpoint: `${origin}/api/v1/oauth/authorize`,
      pushed_authorization_request_endpoint: `${origin}/api/v1/oauth/par`,
      require_pushed_authorization_requests: false,
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint: `${origin}/api/v1/oauth/token`,
      jwks_uri: `${origin}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      revocation_endpoint: `${origin}/api/v1/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      introspection_endpoint: `${origin}/api/v1/oauth/introspect`,
      introspection_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      introspection_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      dpop_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      scopes_supported: [...GRANTABLE_SCOPES],
      response_types_supported: ['code'],
    });
    expect(lastAnswer().headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
  });

  it('names the stack’s own URLs whatever Host and X-Forwarded-Proto a caller sends, so a shared cache may keep it', async () => {
    const forged = await new Promise<{ status: number; body: string }>((done, fail) => {
      const headers = { Host: 'attacker.example', 'X-Forwarded-Proto': 'https' };
      const sent = request(`${origin}/.well-known/oauth-authorization-server`, { headers }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        response.once('end', () => done({ status: response.statusCode ?? 0, body }));
      });
      sent.once('error', fail).end();
    });
    expect(forged.status).toBe(200);
    expect(v.parse(MetadataSchema, JSON.parse(forged.body))).toEqual(metadata);
  });
});

describe('a client token from openid-client (client_secret_basic)', () => {
  let writer: Credentials;
  let reader: Credentials;
  let parcelNumber: string;
  beforeAll(async () => {
    writer = await addClient(CUSTOMER, ['shipments:write']);
    reader = await addClient(CUSTOMER, ['tracking:read']);
    const created = await createShipment(await tokenOf(writer));
    expect(created.status).toBe(201);
    parcelNumber = String(created.json.parcelNumber);
  });

  it('is granted with the client’s scopes, as a Bearer token for its customer with the issuer of the metadata', async () => {
    const grant = await client.clientCredentialsGrant(configure(reader));

    expect(grant).toMatchObject({ scope: 'tracking:read', expires_in: 3600 });
    expect(grant.token_type.toLowerCase()).toBe('bearer');
    expect(lastAnswer().headers.get('cache-control')).toBe('no-store');
    expect(decodeJwt(grant.access_token)).toMatchObject({
      iss: metadata.issuer,
      sub: reader.clientId,
      client_id: reader.clientId,
      customer_id: CUSTOMER,
      scope: 'tracking:read',
    });
  });

  it('tracks a shipment of its customer (200) through the library', async () => {
    const config = configure(reader);
    const token = (await client.clientCredentialsGrant(config)).access_token;

    const response = await client.fetchProtectedResource(
      config,
      token,
      new URL(`${stack.baseUrl}/tracking/${parcelNumber}`),
      'GET',
    );

    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ parcelNumber, status: 'registered', shipment: SHIPMENT });
  });

  it('does not find a shipment of another customer (404), for a client of that customer', async () => {
    const stranger = await addClient(OTHER_CUSTOMER, ['tracking:read']);

    expect((await track(await tokenOf(stranger), parcelNumber)).status).toBe(404);
  });

  it('asks for fewer scopes than the client holds, and gets a token for those only', async () => {
    const both = await addClient(CUSTOMER, ['tracking:read', 'shipments:write']);

    const token = await tokenOf(both, { scope: 'tracking:read' });

    expect(decodeJwt(token).scope).toBe('tracking:read');
    expect((await track(token, parcelNumber)).status).toBe(200);
    expect((await createShipment(token)).status).toBe(403);
  });
});

describe('a client token without the route’s scope', () => {
  // The authorizer's policy lists the routes the token's scopes allow. On AWS, API Gateway
  // caches that decision per token and reuses it on the next route, so the policy computed
  // for tracking must already leave out shipments. The local stack keeps no decision cache
  // (serverless-offline, authorizerCacheTtl 0): here each request gets a fresh decision, and
  // the cached case is tests/integration/cached-decision.test.ts's.
  let reader: Credentials;
  let token: string;
  beforeAll(async () => {
    reader = await addClient(CUSTOMER, ['tracking:read']);
    token = await tokenOf(reader);
  });

  /** Refused by the route's function, which names the scope the route needs (RFC 6750 section 3.1). */
  const expectRefusedForScope = (answer: Answer) => {
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="shipments:write"',
    );
    expect(answer.json).toMatchObject({ type: 'urn:parcel-auth:problem:insufficient-scope', status: 403 });
  };

  it('is refused 403 on POST /api/v1/shipments on its first call', async () => {
    expectRefusedForScope(await createShipment(token));
  });

  it('is refused 403 on POST /api/v1/shipments after a call to tracking', async () => {
    expect((await track(token, '12345678901234')).status).toBe(404);

    expectRefusedForScope(await createShipment(token));
  });
});

describe('the token endpoint’s RFC 6749 errors, as openid-client sees them', () => {
  let credentials: Credentials;
  beforeAll(async () => {
    credentials = await addClient(CUSTOMER, ['tracking:read']);
  });

  it('a wrong secret: 401 invalid_client, with a Basic challenge', async () => {
    const error = await refusal(
      client.clientCredentialsGrant(
        configure({ ...credentials, clientSecret: newClientSecret(new Date()).secret }),
      ),
    );

    // RFC 6749 section 5.2 asks for the challenge; the library reports a challenged 401 as such.
    expect(error).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect(error).toMatchObject({
      status: 401,
      cause: [{ scheme: 'basic', parameters: { realm: 'parcel-auth', charset: 'UTF-8' } }],
    });
    expectRefused(lastAnswer(), 401, 'invalid_client');
    expect(lastAnswer().headers.get('www-authenticate')).toBe('Basic realm="parcel-auth", charset="UTF-8"');
  });

  it('an unknown client: the same 401 as a wrong secret', async () => {
    const wrongSecret = await refusal(
      client.clientCredentialsGrant(configure({ ...credentials, clientSecret: WRONG_SECRET })),
    );
    const wrongBody = lastAnswer().body;
    const unknown = await refusal(
      client.clientCredentialsGrant(configure({ clientId: newClientId(), clientSecret: WRONG_SECRET })),
    );

    expect(unknown).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect(wrongSecret).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expectRefused(lastAnswer(), 401, 'invalid_client');
    expect(lastAnswer().body).toEqual(wrongBody);
  });

  it('a scope beyond the client’s, or one the service does not know: 400 invalid_scope', async () => {
    for (const scope of ['shipments:write', 'tracking:read shipments:write', 'parcels:delete']) {
      const error = await refusal(client.clientCredentialsGrant(configure(credentials), { scope }));

      expect(error, scope).toBeInstanceOf(client.ResponseBodyError);
      expect(error, scope).toMatchObject({ status: 400, error: 'invalid_scope' });
      expectRefused(lastAnswer(), 400, 'invalid_scope');
    }
  });

  it('another grant (password): 400 unsupported_grant_type', async () => {
    const error = await refusal(
      client.genericGrantRequest(configure(credentials), 'password', {
        username: stack.demo.username,
        password: stack.demo.password,
      }),
    );

    expect(error).toBeInstanceOf(client.ResponseBodyError);
    expect(error).toMatchObject({ status: 400, error: 'unsupported_grant_type' });
    expectRefused(lastAnswer(), 400, 'unsupported_grant_type');
  });

  it('a JSON body: 400 invalid_request, whatever it holds', async () => {
    const url = metadata.token_endpoint;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', ...credentials }),
    });

    expectRefused(await observe('POST', url, response), 400, 'invalid_request');
  });
});

describe('an operator’s changes to a client', () => {
  // The authorizer trusts a client's state it has read for the stage's revocationCacheTtl
  // (1 s on the local stage): a change takes effect within it.
  const refusedSoon = (token: string) =>
    expect
      .poll(async () => (await track(token, '12345678901234')).status, { timeout: 5_000, interval: 250 })
      .toBe(401);

  it('disabling a client refuses its tokens and its secret', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const token = await tokenOf(credentials);
    expect((await track(token, '12345678901234')).status).toBe(404);

    await admin(['client', 'disable', credentials.clientId]);

    await refusedSoon(token);
    await refusal(client.clientCredentialsGrant(configure(credentials)));
    expectRefused(lastAnswer(), 401, 'invalid_client');
  });

  it('removing a secret refuses the tokens granted with it, not those of the client’s other secret', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const successor = await admin(['client', 'secret', 'add', credentials.clientId]);
    const old = await tokenOf(credentials);
    const current = await tokenOf({ ...credentials, clientSecret: printed(successor, 'secret') });
    const oldSecretId = String(decodeJwt(old).secret_id);
    expect(decodeJwt(current).secret_id).toBe(printed(successor, 'secret id'));
    expect(oldSecretId).not.toBe(printed(successor, 'secret id'));

    await admin(['client', 'secret', 'remove', credentials.clientId, oldSecretId]);

    await refusedSoon(old);
    expect((await track(current, '12345678901234')).status).toBe(404);
    await refusal(client.clientCredentialsGrant(configure(credentials)));
    expectRefused(lastAnswer(), 401, 'invalid_client');
  });
});

describe('failed client authentications, throttled like logins', () => {
  it('locks a client id after loginFailureLimit failures: 429 temporarily_unavailable, its right secret unchecked', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const wrong = configure({ ...credentials, clientSecret: newClientSecret(new Date()).secret });
    // The local stage's loginFailureLimit: 5.
    for (let failure = 1; failure <= 5; failure++) {
      await refusal(client.clientCredentialsGrant(wrong));
      expect(lastAnswer().status, `failure ${failure}`).toBe(401);
    }

    const error = await refusal(client.clientCredentialsGrant(configure(credentials)));

    expect(error).toBeInstanceOf(client.ResponseBodyError);
    expect(error).toMatchObject({ status: 429, error: 'temporarily_unavailable' });
    expectRefused(lastAnswer(), 429, 'temporarily_unavailable');
    expect(Number(lastAnswer().headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('client authentication in the body (client_secret_post)', () => {
  it('gets a token that tracks like one from client_secret_basic', async () => {
    const credentials = await addClient(CUSTOMER, ['tracking:read']);
    const config = configure(credentials, client.ClientSecretPost);

    const { access_token } = await client.clientCredentialsGrant(config);

    expect(decodeJwt(access_token).client_id).toBe(credentials.clientId);
    expect((await track(access_token, '12345678901234')).status).toBe(404);
  });
});

describe('client tokens beside user tokens', () => {
  it('refuses a client token at /api/v1/token/refresh: it is not a refresh token', async () => {
    const token = await tokenOf(await addClient(CUSTOMER, ['tracking:read', 'shipments:write']));

    const refused = await send(stack, 'POST', '/token/refresh', { body: { refreshToken: token } });

    expect(refused.status).toBe(401);
    expect(refused.json.type).toBe('urn:parcel-auth:problem:invalid-credentials');
  });

  it('still lets a user’s login token call every protected route', async () => {
    const login = await send(stack, 'POST', '/login', { body: stack.demo });
    const token = String(login.json.token);

    const created = await createShipment(token);
    expect(created.status).toBe(201);
    expect((await track(token, String(created.json.parcelNumber))).status).toBe(200);
  });

  it('narrows a user’s tokens, refreshed ones too, to the scopes an operator set', async () => {
    const password = 'a-long-tracker-password';
    await admin(['user', 'add', 'tracker', '--customer', CUSTOMER], `${password}\n`);
    await admin(['user', 'scopes', 'tracker', '--scope', 'tracking:read']);

    const login = await send(stack, 'POST', '/login', { body: { username: 'tracker', password } });
    const refreshed = await send(stack, 'POST', '/token/refresh', {
      body: { refreshToken: login.json.refreshToken },
    });

    for (const token of [String(login.json.token), String(refreshed.json.token)]) {
      expect(decodeJwt(token).scope).toBe('tracking:read');
      expect((await track(token, '12345678901234')).status).toBe(404);
      expect((await createShipment(token)).status).toBe(403);
    }
  });
});

describe('the metrics of the grants', () => {
  it('writes what the dashboard and the failed client authentication alarm read', async () => {
    // Written by the functions as they answer; the stack prints them a moment later.
    const metrics = () => emfLines(stack.output()).flatMap(summarise);
    for (const metric of [
      'ClientTokenIssued=1',
      'ClientAuthFailed{reason=BadSecret}=1',
      'ClientAuthFailed{reason=UnknownClient}=1',
      'ClientAuthFailed{reason=Disabled}=1',
      'ClientAuthFailed{reason=Locked}=1',
      'LockoutStarted{counter=Client}=1',
      'ClientTokenRefused{reason=InvalidScope}=1',
      'AuthorizerInsufficientScope=1',
    ]) {
      await expect.poll(metrics, { timeout: 5_000 }).toContain(metric);
    }
  });
});
