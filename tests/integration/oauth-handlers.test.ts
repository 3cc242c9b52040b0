/**
 * The token endpoint, the metadata and a client's token through the real authorizer and the
 * protected functions, as Lambda runs them, on the embedded DynamoDB (docs/clients.md).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import {
  authorizerEvent,
  basicCredentials,
  createShipmentEvent,
  gatewayAuthorizerContext,
  grantEvent,
  lambdaContext,
  loginEvent,
  tokenEvent,
  trackingEvent,
} from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let token: Handler;
let metadata: Handler;
let refresh: Handler;
let createShipment: Handler;
let trackShipment: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
let clients: ReturnType<typeof createDynamoClientRepository>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  // The grant's own lines, to show they carry neither the secret nor the token.
  vi.stubEnv('LOG_LEVEL', 'info');
  clients = createDynamoClientRepository({
    client: createDocumentClient({ region: 'eu-central-1', dynamodbEndpoint: dynamo.endpoint }),
    tableName: dynamo.tables.accounts,
  });
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
  metadata = (await import('../../functions/oauth-metadata.ts')).handler as Handler;
  refresh = (await import('../../functions/refresh.ts')).handler as Handler;
  createShipment = (await import('../../functions/create-shipment.ts')).handler as Handler;
  trackShipment = (await import('../../functions/track-shipment.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

const logs = captureServiceLogs();
const call = (handler: Handler, event: APIGatewayProxyEvent) => handler(event, lambdaContext());
const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as Record<string, unknown>;

/** A client of `customerId` with `scopes`, and its secret. */
const newClient = (customerId: string, scopes: ('tracking:read' | 'shipments:write')[]) =>
  createTestClient({ client: dynamo.documentClient, tableName: dynamo.tables.accounts }, customerId, scopes);

/** The access token of a client credentials grant of `client`. */
const grant = async (client: { clientId: string; secret: string }) =>
  String(bodyOf(await call(token, grantEvent(client))).access_token);

const basic = basicCredentials;

/** A secret of the format we issue that no client holds: read and counted, as any wrong secret. */
const wrongSecret = () => newClientSecret(new Date()).secret;

/** The protected function behind the real authorizer, given the decision API Gateway would pass on. */
async function throughAuthorizer(
  handler: Handler,
  event: APIGatewayProxyEvent,
  bearer: string,
  methodArn: string,
) {
  const decision = await authorizer({ ...authorizerEvent(`Bearer ${bearer}`), methodArn }, lambdaContext());
  const allowed = decision.policyDocument.Statement.some(
    (statement) =>
      statement.Effect === 'Allow' &&
      'Resource' in statement &&
      [statement.Resource]
        .flat()
        .some((resource) => new RegExp(`^${String(resource).replaceAll('*', '[^/]+')}$`).test(methodArn)),
  );
  const response = await call(handler, {
    ...event,
    headers: { ...event.headers, Authorization: `Bearer ${bearer}` },
    multiValueHeaders: {},
    requestContext: { ...event.requestContext, authorizer: gatewayAuthorizerContext(decision) },
  });
  return { allowed, response };
}

const ARN = 'arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5/prod';

describe('POST /api/v1/oauth/token', () => {
  it('grants a client a token with Basic authentication: RFC 6749 section 5.1, no-store, no refresh token', async () => {
    const { clientId, secret, secretId } = await newClient('C-OA1', ['tracking:read', 'shipments:write']);
    const response = await call(
      token,
      tokenEvent({ grant_type: 'client_credentials' }, { Authorization: basic(clientId, secret) }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    const body = bodyOf(response);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'tracking:read shipments:write',
    });
    expect(decodeJwt(String(body.access_token))).toMatchObject({
      sub: clientId,
      client_id: clientId,
      customer_id: 'C-OA1',
      secret_id: secretId,
    });
    expect(logs.events('client token issued')).toEqual([
      expect.objectContaining({
        clientId,
        grantedWith: secretId,
        scope: 'tracking:read shipments:write',
        sourceIp: '203.0.113.9',
      }),
    ]);
    const logged = JSON.stringify(logs.lines());
    expect(logged).not.toContain(secret.slice(4));
    expect(logged).not.toContain(String(body.access_token).split('.')[1]);
  });

  it('grants with client_secret_post, narrowed to the scope asked for', async () => {
    const { clientId, secret } = await newClient('C-OA2', ['tracking:read', 'shipments:write']);
    const response = await call(
      token,
      tokenEvent({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
        scope: 'tracking:read',
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response).scope).toBe('tracking:read');
  });

  it.each([
    [
      'a wrong secret',
      (id: string) =>
        tokenEvent({ grant_type: 'client_credentials' }, { Authorization: basic(id, wrongSecret()) }),
      401,
      'invalid_client',
    ],
    [
      'a secret whose checksum fails',
      (id: string) =>
        tokenEvent(
          { grant_type: 'client_credentials' },
          { Authorization: basic(id, `${wrongSecret().slice(0, -1)}!`) },
        ),
      401,
      'invalid_client',
    ],
    [
      'an unknown client',
      () =>
        tokenEvent(
          { grant_type: 'client_credentials' },
          { Authorization: basic(newClientId(), wrongSecret()) },
        ),
      401,
      'invalid_client',
    ],
    ['no credentials', () => tokenEvent({ grant_type: 'client_credentials' }), 401, 'invalid_client'],
    [
      'the password grant',
      (id: string) => tokenEvent({ grant_type: 'password' }, { Authorization: basic(id, 'x') }),
      400,
      'unsupported_grant_type',
    ],
    [
      'no grant_type',
      (id: string) => tokenEvent({}, { Authorization: basic(id, 'x') }),
      400,
      'invalid_request',
    ],
    [
      'a JSON body',
      () => ({
        ...tokenEvent({}),
        headers: { 'Content-Type': 'application/json' },
        body: '{"grant_type":"client_credentials"}',
      }),
      400,
      'invalid_request',
    ],
    [
      'a parameter sent twice',
      () => ({ ...tokenEvent({}), body: 'grant_type=client_credentials&grant_type=client_credentials' }),
      400,
      'invalid_request',
    ],
    [
      'an unknown scope',
      (id: string) =>
        tokenEvent({ grant_type: 'client_credentials', scope: 'admin' }, { Authorization: basic(id, 'x') }),
      400,
      'invalid_scope',
    ],
  ])('answers %s with RFC 6749’s error JSON, no token', async (_name, event, status, error) => {
    const { clientId } = await newClient('C-OA3', ['tracking:read']);
    const response = await call(token, event(clientId) as APIGatewayProxyEvent);
    expect(response.statusCode).toBe(status);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    expect(bodyOf(response).error).toBe(error);
    expect(response.body).not.toMatch(/eyJ/);
    if (status === 401) expect(response.headers?.['WWW-Authenticate']).toMatch(/^Basic realm="parcel-auth"/);
  });

  it('answers invalid_scope to a client asking beyond its scopes, once authenticated', async () => {
    const { clientId, secret } = await newClient('C-OA4', ['tracking:read']);
    const response = await call(
      token,
      tokenEvent(
        { grant_type: 'client_credentials', scope: 'shipments:write' },
        { Authorization: basic(clientId, secret) },
      ),
    );
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response).error).toBe('invalid_scope');
  });

  it('answers unauthorized_client to a platform asking for a token of its own, once authenticated', async () => {
    const clientId = newClientId();
    const { secret, stored } = newClientSecret(new Date());
    await createDynamoClientRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.accounts,
    }).createPlatform({
      clientId,
      name: 'Shop app',
      scopes: ['tracking:read'],
      redirectUris: ['https://shop.example/callback'],
      secret: stored,
    });
    const response = await call(
      token,
      tokenEvent({ grant_type: 'client_credentials' }, { Authorization: basic(clientId, secret) }),
    );
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toEqual({
      error: 'unauthorized_client',
      error_description: 'A platform acts only for the customers that approve it, never for itself.',
    });
    expect(response.body).not.toContain('access_token');
  });
});

describe('the limits every answer of the token endpoint publishes', () => {
  // The default stage's: loginFailureLimit 5 in 24h per client, clientIpFailureLimit 50 in 1h, loginRateLimit 50.
  const TOKEN_POLICY = '"client";q=5;w=86400, "address";q=50;w=3600, "route";q=50;w=1';
  let addresses = 0;
  /** An address no other test used, so its count is this test's alone. */
  const newAddress = () => {
    addresses += 1;
    return `198.51.100.${addresses}`;
  };

  it('publishes on a grant its policies and its quotas whole again', async () => {
    const client = await newClient('C-RL1', ['tracking:read']);
    const response = await call(token, grantEvent(client, newAddress()));
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'RateLimit-Policy': TOKEN_POLICY,
      RateLimit: '"client";r=5;t=0, "address";r=50;t=0',
    });
  });

  it('counts a wrong secret on the client and on the address, and gives a locked client’s 429 Retry-After and nothing left', async () => {
    const { clientId } = await newClient('C-RL2', ['tracking:read']);
    const sourceIp = newAddress();
    const wrong = wrongSecret();
    const attempt = () => call(token, grantEvent({ clientId, secret: wrong }, sourceIp));
    const first = await attempt();
    expect(first.statusCode).toBe(401);
    expect(first.headers?.['RateLimit-Policy']).toBe(TOKEN_POLICY);
    // A source the client id does not know is told the address's quota only.
    expect(String(first.headers?.RateLimit)).toMatch(/^"address";r=49;t=\d+$/);
    for (let i = 1; i < 5; i += 1) expect((await attempt()).statusCode).toBe(401);
    const locked = await attempt();
    expect(locked.statusCode).toBe(429);
    expect(bodyOf(locked).error).toBe('temporarily_unavailable');
    const retryAfter = Number(locked.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(locked.headers?.['RateLimit-Policy']).toBe(TOKEN_POLICY);
    expect(locked.headers?.RateLimit).toBe(`"client";r=0;t=${retryAfter}`);
  });

  it('counts nothing for a secret of no format we issue: 401 with the policies alone, the quotas whole after it', async () => {
    const { clientId, secret } = await newClient('C-RL4', ['tracking:read']);
    const sourceIp = newAddress();
    const last = secret.at(-1) === 'A' ? 'B' : 'A';

    const refused = await call(
      token,
      grantEvent({ clientId, secret: `${secret.slice(0, -1)}${last}` }, sourceIp),
    );
    const granted = await call(token, grantEvent({ clientId, secret }, sourceIp));

    expect(refused.statusCode).toBe(401);
    expect(bodyOf(refused).error).toBe('invalid_client');
    expect(refused.headers?.['RateLimit-Policy']).toBe(TOKEN_POLICY);
    expect(refused.headers).not.toHaveProperty('RateLimit');
    expect(granted.headers?.RateLimit).toBe('"client";r=5;t=0, "address";r=50;t=0');
    expect(logs.events('client authentication failed')).toEqual([
      expect.objectContaining({ reason: 'malformed secret', sourceIp }),
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain(secret.slice(4, 47));
  });

  it('gives invalid_scope after a right secret the quotas whole again, and a request refused before authentication the policies alone', async () => {
    const { clientId, secret } = await newClient('C-RL3', ['tracking:read']);
    const beyond = await call(
      token,
      tokenEvent(
        { grant_type: 'client_credentials', scope: 'shipments:write' },
        { Authorization: basic(clientId, secret) },
        newAddress(),
      ),
    );
    expect(beyond.statusCode).toBe(400);
    expect(beyond.headers).toMatchObject({
      'RateLimit-Policy': TOKEN_POLICY,
      RateLimit: '"client";r=5;t=0, "address";r=50;t=0',
    });
    const password = await call(
      token,
      tokenEvent({ grant_type: 'password' }, { Authorization: basic(clientId, secret) }, newAddress()),
    );
    expect(password.statusCode).toBe(400);
    expect(password.headers?.['RateLimit-Policy']).toBe(TOKEN_POLICY);
    expect(password.headers).not.toHaveProperty('RateLimit');
  });
});

describe('GET /.well-known/oauth-authorization-server', () => {
  it('names the issuer, the OAuth endpoints under the stage, the grant, both auth methods, the scopes and the key set', async () => {
    const event = {
      ...trackingEvent(),
      httpMethod: 'GET',
      path: '/.well-known/oauth-authorization-server',
      resource: '/.well-known/oauth-authorization-server',
      headers: { Host: 'abc123.execute-api.eu-central-1.amazonaws.com', 'X-Forwarded-Proto': 'https' },
    };
    event.requestContext = {
      ...event.requestContext,
      domainName: 'abc123.execute-api.eu-central-1.amazonaws.com',
      path: '/prod/.well-known/oauth-authorization-server',
    };
    const response = await call(metadata, event);
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual({
      issuer: process.env.TOKEN_ISSUER,
      authorization_endpoint:
        'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/authorize',
      token_endpoint: 'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/token',
      jwks_uri: 'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/.well-known/jwks.json',
      pushed_authorization_request_endpoint:
        'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/par',
      require_pushed_authorization_requests: false,
      grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      revocation_endpoint: 'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/revoke',
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      introspection_endpoint:
        'https://abc123.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/introspect',
      introspection_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      introspection_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      dpop_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
      scopes_supported: ['tracking:read', 'shipments:write', 'tokens:introspect'],
      discovery_note: `The issuer ${process.env.TOKEN_ISSUER} is an identifier on this stage, not where this document is served (https://abc123.execute-api.eu-central-1.amazonaws.com/prod/.well-known/oauth-authorization-server): configure OAuth clients with this document's URL or the token endpoint.`,
    });
  });

  it('has no discovery note where it is served at its issuer, as on a stage with a custom domain', async () => {
    const issuer = process.env.TOKEN_ISSUER ?? '';
    const { host } = new URL(issuer);
    const event = {
      ...trackingEvent(),
      httpMethod: 'GET',
      path: '/.well-known/oauth-authorization-server',
      resource: '/.well-known/oauth-authorization-server',
      headers: { Host: host, 'X-Forwarded-Proto': 'https' },
    };
    const issuerPath = new URL(issuer).pathname.replace(/\/$/, '');
    event.requestContext = {
      ...event.requestContext,
      domainName: host,
      path: `${issuerPath}/.well-known/oauth-authorization-server`,
    };
    const body = bodyOf(await call(metadata, event));
    expect(body.issuer).toBe(issuer);
    expect(body.token_endpoint).toBe(`${issuer}/api/v1/oauth/token`);
    expect(body).not.toHaveProperty('discovery_note');
  });

  it('names API Gateway’s domain, not a Host header the caller chose', async () => {
    const event = {
      ...trackingEvent(),
      path: '/.well-known/oauth-authorization-server',
      headers: { Host: 'attacker.example', 'X-Forwarded-Proto': 'https' },
    };
    event.requestContext = { ...event.requestContext, path: '/prod/.well-known/oauth-authorization-server' };
    expect(bodyOf(await call(metadata, event)).token_endpoint).toBe(
      'https://a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com/prod/api/v1/oauth/token',
    );
  });

  it('refuses a Host header that is not a host name where it is all there is (the local stack)', async () => {
    const event = {
      ...trackingEvent(),
      path: '/.well-known/oauth-authorization-server',
      headers: { Host: 'evil"><x' },
    };
    event.requestContext = { ...event.requestContext, domainName: 'offlineContext_domainName' };
    expect((await call(metadata, event)).statusCode).toBe(400);
  });
});

describe('a client’s token on the protected routes', () => {
  it('lets a tracking:read client track its customer’s shipments and refuses it shipment creation with 403 insufficient_scope', async () => {
    const writer = await newClient('C-OA5', ['shipments:write']);
    const reader = await newClient('C-OA5', ['tracking:read']);
    const writerToken = await grant(writer);
    const readerToken = await grant(reader);

    const made = await throughAuthorizer(
      createShipment,
      createShipmentEvent('{"weight":2}'),
      writerToken,
      `${ARN}/POST/api/v1/shipments`,
    );
    expect(made.allowed).toBe(true);
    expect(made.response.statusCode).toBe(201);
    const parcelNumber = String(bodyOf(made.response).parcelNumber);

    const tracked = await throughAuthorizer(
      trackShipment,
      trackingEvent({ pathParameters: { parcelNumber } }),
      readerToken,
      `${ARN}/GET/api/v1/tracking/${parcelNumber}`,
    );
    expect(tracked.allowed).toBe(true);
    expect(tracked.response.statusCode).toBe(200);

    // The policy lets the request through to the function, whose 403 names the scope the route needs.
    const refused = await throughAuthorizer(
      createShipment,
      createShipmentEvent('{}'),
      readerToken,
      `${ARN}/POST/api/v1/shipments`,
    );
    expect(refused.allowed).toBe(true);
    expect(refused.response.statusCode).toBe(403);
    expect(refused.response.headers).toMatchObject({
      'Content-Type': 'application/problem+json',
      'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="shipments:write"',
    });
    expect(bodyOf(refused.response).type).toBe('urn:parcel-auth:problem:insufficient-scope');

    // The writer's token does not track: its scopes do not include tracking:read.
    const writerTracks = await throughAuthorizer(
      trackShipment,
      trackingEvent({ pathParameters: { parcelNumber } }),
      writerToken,
      `${ARN}/GET/api/v1/tracking/${parcelNumber}`,
    );
    expect(writerTracks.allowed).toBe(true);
    expect(writerTracks.response.statusCode).toBe(403);
    expect(writerTracks.response.headers).toMatchObject({
      'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="tracking:read"',
    });
  });

  it('hides another customer’s shipment from a client as not found', async () => {
    const writer = await newClient('C-OA6', ['shipments:write']);
    const stranger = await newClient('C-OA7', ['tracking:read']);
    const made = await throughAuthorizer(
      createShipment,
      createShipmentEvent('{}'),
      await grant(writer),
      `${ARN}/POST/api/v1/shipments`,
    );
    const parcelNumber = String(bodyOf(made.response).parcelNumber);
    const tracked = await throughAuthorizer(
      trackShipment,
      trackingEvent({ pathParameters: { parcelNumber } }),
      await grant(stranger),
      `${ARN}/GET/api/v1/tracking/${parcelNumber}`,
    );
    expect(tracked.response.statusCode).toBe(404);
  });

  it('refuses a client’s token at the refresh endpoint: it is no refresh token', async () => {
    const client = await newClient('C-OA8', ['tracking:read']);
    const body = bodyOf(await call(token, grantEvent(client)));
    const response = await call(refresh, loginEvent(JSON.stringify({ refreshToken: body.access_token })));
    expect(response.statusCode).toBe(401);
  });

  it('stops a client’s token at the authorizer once its secret is removed or the client disabled', async () => {
    const client = await newClient('C-OA9', ['tracking:read']);
    const bearer = await grant(client);
    const decide = () =>
      authorizer(
        { ...authorizerEvent(`Bearer ${bearer}`), methodArn: `${ARN}/GET/api/v1/tracking/1` },
        lambdaContext(),
      );
    await expect(decide()).resolves.toBeDefined();
    await clients.setClientEnabled(client.clientId, false);
    await expect(decide()).rejects.toThrow('Unauthorized');
  });
});
