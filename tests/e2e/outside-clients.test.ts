/**
 * The service as libraries nobody here wrote see it, against one local stack: oauth4webapi
 * discovers it by its issuer (RFC 8414), is granted client tokens, validates client and user
 * tokens as RFC 9068 access tokens, revokes (RFC 7009) and introspects (RFC 7662) them and reads
 * the routes' RFC 6750 challenges; fast-jwt and aws-jwt-verify verify the same tokens as a
 * resource server would; Authlib (Debian's python3-authlib) discovers, is granted, validates,
 * revokes and introspects in Python, and runs a platform's authorization code flow with PKCE
 * through the sign-in and consent pages to rotated refresh tokens
 * (tests/support/authlib-client.py). Every answer the
 * JavaScript libraries get is held to docs/openapi.yaml. Plain http is allowed only because the
 * stack listens on loopback.
 */

import { spawnSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { resolve } from 'node:path';
import { JwtVerifier } from 'aws-jwt-verify';
import { JwtInvalidAudienceError, JwtInvalidScopeError } from 'aws-jwt-verify/error';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { createVerifier, TokenError } from 'fast-jwt';
import * as oauth from 'oauth4webapi';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { answerLog } from '../support/answer-log.ts';
import { send } from '../support/http.ts';
import { runProgram } from '../support/run-script.ts';
import { addStackClient, printedValue, stackAdmin } from '../support/stack-admin.ts';

/** serverless.yml's tokenAudience of the local stage: what its resource servers expect in `aud`. */
const AUDIENCE = 'https://api.parcel-carrier.example/local';
/** The scopes every route but the administrators' needs: the demo client's, and the demo user's defaults. */
const CLIENT_ROUTE_SCOPES = 'tracking:read shipments:write';
/** The demo user's scopes: the default ones, and customer:admin (it administers the demo customer). */
const ROUTE_SCOPES = `${CLIENT_ROUTE_SCOPES} customer:admin`;
const CUSTOMER = 'C-OUTSIDE-1';
const SHIPMENT = { recipient: { name: 'Jana Nováková', city: 'Brno' }, parcels: [{ weightKg: 1.2 }] };
/** A platform Authlib runs the authorization code flow for, and the administrator of CUSTOMER who approves it. */
const PLATFORM_NAME = 'Authlib Shop';
const PLATFORM_SCOPE = 'tracking:read';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const ADMINISTRATOR = { username: 'outside-admin', password: 'correct horse battery staple' };
/** RFC 9068 section 2.2: the claims every access token carries. */
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'];

const JwksSchema = v.object({
  keys: v.array(v.looseObject({ kty: v.string(), crv: v.string(), x: v.string(), kid: v.string() })),
});

const log = answerLog();
/** oauth4webapi's options: plain http (loopback only), every answer kept. */
const http = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: log.fetch };

let stack: LocalStack;
let issuer: string;
let as: oauth.AuthorizationServer;
let demoClientId: string;
/** The scopes the demo client was granted: every route's, at least. */
let demoScope: string;
/** The demo client's token (client_secret_basic) and a tracking-only client's (client_secret_post). */
let clientToken: string;
type Credentials = { clientId: string; clientSecret: string };
let reader: Credentials;
let readerToken: string;
/** A client holding tokens:introspect only, as the carrier's own services do. */
let introspector: Credentials;
/** The demo user's tokens from POST /api/v1/login. */
let userToken: string;
let refreshToken: string;

/** RFC 8414 section 3: the metadata from the issuer alone, its `issuer` checked against it. */
async function discover() {
  const issuerUrl = new URL(issuer);
  return oauth.processDiscoveryResponse(
    issuerUrl,
    await oauth.discoveryRequest(issuerUrl, { algorithm: 'oauth2', ...http }),
  );
}

async function grant(
  { clientId, clientSecret }: Credentials,
  authentication: (secret: string) => oauth.ClientAuth,
) {
  const client = { client_id: clientId };
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    authentication(clientSecret),
    {},
    http,
  );
  return oauth.processClientCredentialsResponse(as, client, response);
}

/** A resource server's check of the token a request carries (RFC 9068 section 4). */
const validate = (token: string) =>
  oauth.validateJwtAccessToken(
    as,
    new Request(`${stack.baseUrl}/tracking/12345678901234`, {
      headers: { authorization: `Bearer ${token}` },
    }),
    AUDIENCE,
    { ...http, signingAlgorithms: ['EdDSA'] },
  );

/** RFC 7662: the introspection endpoint's answer to the introspector. */
async function introspect(token: string) {
  const client = { client_id: introspector.clientId };
  const authentication = oauth.ClientSecretBasic(introspector.clientSecret);
  const response = await oauth.introspectionRequest(as, client, authentication, token, http);
  return oauth.processIntrospectionResponse(as, client, response);
}

/** What a call rejected with; fails the test if it did not reject. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (error === undefined) throw new Error('the call was not rejected');
  return error;
}

/** The token's header and claims with another token's signature: a signature that does not match. */
const forged = (token: string, signedBy: string) =>
  `${token.split('.').slice(0, 2).join('.')}.${signedBy.split('.')[2]}`;

beforeAll(async () => {
  stack = await startLocalStack();
  issuer = new URL(stack.baseUrl).origin;
  demoClientId = stack.demoClient.clientId;
  as = await discover();
  const granted = await grant(stack.demoClient, oauth.ClientSecretBasic);
  clientToken = granted.access_token;
  demoScope = String(granted.scope);
  reader = await addStackClient(stack, CUSTOMER, ['tracking:read']);
  readerToken = (await grant(reader, oauth.ClientSecretPost)).access_token;
  introspector = await addStackClient(stack, CUSTOMER, ['tokens:introspect']);
  const login = await send(stack, 'POST', '/login', { body: stack.demo });
  expect(login.status).toBe(200);
  userToken = String(login.json.token);
  refreshToken = String(login.json.refreshToken);
  log.assertDocumented();
});
afterEach(() => log.assertDocumented());
afterAll(() => stack?.stop());

describe('oauth4webapi (JavaScript)', () => {
  it('discovers the authorization server from its issuer alone, at the RFC 8414 well-known URL', async () => {
    const discovered = await discover();

    expect(log.last()).toMatchObject({ method: 'GET', path: '/.well-known/oauth-authorization-server' });
    expect(discovered).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/api/v1/oauth/token`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      revocation_endpoint: `${issuer}/api/v1/oauth/revoke`,
      introspection_endpoint: `${issuer}/api/v1/oauth/introspect`,
      grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['EdDSA', 'Ed25519', 'ES256', 'PS256'],
    });
  });

  it('is granted a Bearer token with the demo client’s scopes (client_credentials, client_secret_basic)', async () => {
    const granted = await grant(stack.demoClient, oauth.ClientSecretBasic);

    expect(granted).toMatchObject({ token_type: 'bearer', scope: demoScope, expires_in: 3600 });
    expect(demoScope.split(' ')).toEqual(expect.arrayContaining(CLIENT_ROUTE_SCOPES.split(' ')));
    expect(log.last()).toMatchObject({ method: 'POST', path: '/api/v1/oauth/token', status: 200 });
  });

  it('validates a client’s token as an RFC 9068 access token: its issuer, the API’s audience, the client as sub', async () => {
    const claims = await validate(clientToken);

    expect(claims).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: demoClientId,
      client_id: demoClientId,
      scope: demoScope,
      jti: expect.any(String),
    });
    expect(claims.exp - claims.iat).toBe(3600);
  });

  it('validates a user’s login token alike: client_id "login", the user as sub, the user’s scopes', async () => {
    const claims = await validate(userToken);

    expect(claims).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: stack.demo.username,
      client_id: 'login',
      scope: ROUTE_SCOPES,
      jti: expect.any(String),
    });
    expect(claims.exp).toBeGreaterThan(claims.iat);
  });

  it('refuses the user’s refresh token as an access token: its typ is not at+jwt', async () => {
    const error = await rejection(validate(refreshToken));

    expect(error).toBeInstanceOf(oauth.OperationProcessingError);
    expect(error).toMatchObject({ message: 'unexpected JWT "typ" header parameter value' });
  });

  it('creates a shipment and tracks it with the client’s token through protectedResourceRequest', async () => {
    const created = await oauth.protectedResourceRequest(
      clientToken,
      'POST',
      new URL(`${stack.baseUrl}/shipments`),
      new Headers({ 'content-type': 'application/json' }),
      JSON.stringify(SHIPMENT),
      http,
    );
    expect(created.status).toBe(201);
    const { parcelNumber } = v.parse(v.object({ parcelNumber: v.string() }), await created.json());

    const tracked = await oauth.protectedResourceRequest(
      clientToken,
      'GET',
      new URL(`${stack.baseUrl}/tracking/${parcelNumber}`),
      undefined,
      undefined,
      http,
    );

    expect(tracked.status).toBe(200);
    expect(await tracked.json()).toMatchObject({ parcelNumber, status: 'registered', shipment: SHIPMENT });
  });

  it('reads the 401 challenge to a token whose signature does not match as invalid_token', async () => {
    const error = await rejection(
      oauth.protectedResourceRequest(
        forged(clientToken, userToken),
        'GET',
        new URL(`${stack.baseUrl}/tracking/12345678901234`),
        undefined,
        undefined,
        http,
      ),
    );

    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect(error).toMatchObject({
      status: 401,
      cause: [
        { scheme: 'bearer', parameters: { error: 'invalid_token', error_description: expect.any(String) } },
      ],
    });
  });

  it('reads the 403 challenge to a token without the route’s scope as insufficient_scope, naming the scope', async () => {
    const error = await rejection(
      oauth.protectedResourceRequest(
        readerToken,
        'POST',
        new URL(`${stack.baseUrl}/shipments`),
        new Headers({ 'content-type': 'application/json' }),
        JSON.stringify(SHIPMENT),
        http,
      ),
    );

    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect(error).toMatchObject({
      status: 403,
      cause: [{ scheme: 'bearer', parameters: { error: 'insufficient_scope', scope: 'shipments:write' } }],
    });
  });

  it('introspects a client’s and a user’s token as active, with what each token says (RFC 7662)', async () => {
    expect(await introspect(clientToken)).toMatchObject({
      active: true,
      client_id: demoClientId,
      sub: demoClientId,
      scope: demoScope,
      token_type: 'Bearer',
      iss: issuer,
      aud: AUDIENCE,
    });
    expect(log.last()).toMatchObject({ method: 'POST', path: '/api/v1/oauth/introspect', status: 200 });
    expect(await introspect(userToken)).toMatchObject({
      active: true,
      client_id: 'login',
      sub: stack.demo.username,
      scope: ROUTE_SCOPES,
    });
  });

  it('introspects the user’s refresh token as inactive: it calls no route', async () => {
    expect(await introspect(refreshToken)).toEqual({ active: false });
  });

  it('revokes a client’s own token (RFC 7009): introspection then answers inactive and the route 401', async () => {
    const { access_token: token } = await grant(reader, oauth.ClientSecretPost);
    const client = { client_id: reader.clientId };

    const response = await oauth.revocationRequest(
      as,
      client,
      oauth.ClientSecretPost(reader.clientSecret),
      token,
      http,
    );

    expect(await oauth.processRevocationResponse(response)).toBeUndefined();
    expect(log.last()).toMatchObject({ method: 'POST', path: '/api/v1/oauth/revoke', status: 200 });
    // Seen by introspection and the authorizer within the stage's revocation bound (1 s locally).
    await expect
      .poll(async () => (await introspect(token)).active, { timeout: 5_000, interval: 250 })
      .toBe(false);
    const track = () =>
      oauth.protectedResourceRequest(
        token,
        'GET',
        new URL(`${stack.baseUrl}/tracking/12345678901234`),
        undefined,
        undefined,
        http,
      );
    const status = () =>
      track().then(
        (answer) => answer.status,
        (error: unknown) =>
          error instanceof oauth.WWWAuthenticateChallengeError ? error.status : Promise.reject(error),
      );
    await expect.poll(status, { timeout: 5_000, interval: 250 }).toBe(401);
    expect(await rejection(track())).toMatchObject({
      cause: [{ scheme: 'bearer', parameters: { error: 'invalid_token' } }],
    });
  });
});

describe('fast-jwt (JavaScript)', () => {
  let keys: v.InferOutput<typeof JwksSchema>['keys'];
  /** The key set's keys as fast-jwt takes them, by kid: node:crypto public keys from the JWKs, as PEM. */
  let pems: Map<string, string>;
  beforeAll(async () => {
    const response = await log.fetch(String(as.jwks_uri), { method: 'GET' });
    expect(response.status).toBe(200);
    ({ keys } = v.parse(JwksSchema, await response.json()));
    pems = new Map(
      keys.map((jwk) => [
        jwk.kid,
        String(createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' })),
      ]),
    );
  });

  const verifier = () =>
    createVerifier({
      key: async ({ header }: { header: { kid?: string } }) => {
        const pem = header.kid === undefined ? undefined : pems.get(header.kid);
        if (pem === undefined) throw new Error(`no key ${header.kid} in the key set`);
        return pem;
      },
      algorithms: ['EdDSA'],
      checkTyp: 'at+jwt',
      allowedIss: issuer,
      allowedAud: AUDIENCE,
      requiredClaims: REQUIRED_CLAIMS,
      clockTolerance: 5_000,
    });

  it('verifies a client’s token with RFC 9068’s required claims, the issuer and the API’s audience', async () => {
    expect(await verifier()(clientToken)).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: demoClientId,
      client_id: demoClientId,
      scope: demoScope,
    });
  });

  it('verifies a user’s login token alike', async () => {
    expect(await verifier()(userToken)).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: stack.demo.username,
      client_id: 'login',
      scope: ROUTE_SCOPES,
    });
  });

  it('refuses the user’s refresh token (typ rt+jwt) and a token whose signature does not match', async () => {
    const verify = verifier();

    expect(await rejection(verify(refreshToken))).toMatchObject({ code: TokenError.codes.invalidType });
    expect(await rejection(verify(forged(clientToken, userToken)))).toMatchObject({
      code: TokenError.codes.invalidSignature,
    });
  });

  it('takes the key as PEM only: the JWK itself and a node:crypto KeyObject are refused', () => {
    const [jwk] = keys;
    if (jwk === undefined) throw new Error('the key set is empty');
    const verifyWith = (key: unknown) => () =>
      // Its types say string or Buffer; other keys go in as its JavaScript callers would pass them.
      createVerifier({ key: key as string, algorithms: ['EdDSA'] })(clientToken);

    expect(verifyWith(JSON.stringify(jwk))).toThrow(
      'Raw asymmetric JWK/JWKS JSON cannot be used as an HMAC secret.',
    );
    expect(verifyWith(createPublicKey({ key: jwk, format: 'jwk' }))).toThrow(
      'The public key must be a string or a buffer.',
    );
  });
});

describe('aws-jwt-verify 5 (JavaScript)', () => {
  const verifier = () =>
    JwtVerifier.create(
      {
        issuer,
        audience: AUDIENCE,
        jwksUri: String(as.jwks_uri),
        graceSeconds: 5,
        // The library checks signature, iss, aud, exp, nbf and scope; RFC 9068's typ is left to this hook.
        customJwtCheck: ({ header }) => {
          if (header.typ !== 'at+jwt') throw new Error(`typ ${String(header.typ)}, not at+jwt`);
        },
      },
      {
        // Its own fetcher speaks https only (node:https); the stack on loopback is plain http.
        jwksCache: new SimpleJwksCache({
          fetcher: { fetch: async (uri) => (await log.fetch(uri, { method: 'GET' })).arrayBuffer() },
        }),
      },
    );

  it('verifies a client’s token from the issuer’s key set, for the API’s audience and a scope it holds', async () => {
    const payload = await verifier().verify(clientToken, { scope: 'shipments:write' });

    expect(log.last()).toMatchObject({ method: 'GET', path: '/.well-known/jwks.json', status: 200 });
    expect(payload).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: demoClientId,
      client_id: demoClientId,
      scope: demoScope,
      jti: expect.any(String),
    });
  });

  it('verifies a user’s login token alike', async () => {
    expect(await verifier().verify(userToken)).toMatchObject({
      iss: issuer,
      aud: AUDIENCE,
      sub: stack.demo.username,
      client_id: 'login',
      scope: ROUTE_SCOPES,
    });
  });

  it('refuses a token without the scope asked for, and the user’s refresh token for its audience', async () => {
    const verify = verifier();

    expect(await rejection(verify.verify(readerToken, { scope: 'shipments:write' }))).toBeInstanceOf(
      JwtInvalidScopeError,
    );
    const refused = await rejection(verify.verify(refreshToken));
    expect(refused).toBeInstanceOf(JwtInvalidAudienceError);
    expect(refused).toMatchObject({ message: `Audience not allowed: ${issuer}. Expected: ${AUDIENCE}` });
  });
});

/** Debian's Python, which sees Debian's python3-authlib (a pyenv or venv python3 may not). */
const PYTHON = '/usr/bin/python3';
const AUTHLIB_CLIENT = resolve(import.meta.dirname, '../support/authlib-client.py');
const authlibMissing =
  spawnSync(PYTHON, ['-c', 'import authlib, requests'], { stdio: 'ignore' }).status !== 0
    ? 'python3-authlib is not installed: apt-get install python3-authlib python3-requests'
    : undefined;

/** Runs tests/support/authlib-client.py with `input` on stdin: what it printed, parsed. */
async function runAuthlib(input: Record<string, unknown>): Promise<unknown> {
  // AUTHLIB_INSECURE_TRANSPORT: Authlib's switch for plain http, which it otherwise refuses.
  const env = {
    PATH: process.env.PATH,
    TMPDIR: process.env.TMPDIR,
    PYTHONDONTWRITEBYTECODE: '1',
    AUTHLIB_INSECURE_TRANSPORT: '1',
  };
  const run = await runProgram(PYTHON, [AUTHLIB_CLIENT], { env, stdin: JSON.stringify(input) });
  if (run.code !== 0) throw new Error(`authlib-client.py exited ${run.code}:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe.skipIf(authlibMissing !== undefined)(
  `Authlib, Debian’s python3-authlib (Python)${authlibMissing === undefined ? '' : ` (skipped: ${authlibMissing})`}`,
  () => {
    let result: unknown;
    let platformId: string;
    beforeAll(async () => {
      const added = await stackAdmin(stack, [
        'platform',
        'add',
        PLATFORM_NAME,
        '--redirect-uri',
        REDIRECT_URI,
        '--scope',
        PLATFORM_SCOPE,
      ]);
      platformId = printedValue(added, 'client id');
      const { username, password } = ADMINISTRATOR;
      await stackAdmin(stack, ['user', 'add', username, '--customer', CUSTOMER], `${password}\n`);
      await stackAdmin(stack, ['user', 'admin', 'grant', username]);
      result = await runAuthlib({
        issuer,
        audience: AUDIENCE,
        api: stack.baseUrl,
        client_id: stack.demoClient.clientId,
        client_secret: stack.demoClient.clientSecret,
        reader_id: reader.clientId,
        reader_secret: reader.clientSecret,
        introspector_id: introspector.clientId,
        introspector_secret: introspector.clientSecret,
        user_token: userToken,
        refresh_token: refreshToken,
        platform: {
          client_id: platformId,
          client_secret: printedValue(added, 'secret'),
          redirect_uri: REDIRECT_URI,
          scope: PLATFORM_SCOPE,
          username,
          password,
          customer_id: CUSTOMER,
        },
      });
    });

    const clientClaims = () => ({
      header: { alg: 'EdDSA', typ: 'at+jwt', kid: expect.any(String) },
      claims: { iss: issuer, aud: AUDIENCE, sub: demoClientId, client_id: demoClientId, scope: demoScope },
    });

    it('discovers the metadata at the URL it derives from the issuer (RFC 8414 section 3)', () => {
      expect(result).toMatchObject({
        discovery: {
          url: `${issuer}/.well-known/oauth-authorization-server`,
          issuer,
          authorization_endpoint: `${issuer}/api/v1/oauth/authorize`,
          token_endpoint: `${issuer}/api/v1/oauth/token`,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          revocation_endpoint: `${issuer}/api/v1/oauth/revoke`,
          introspection_endpoint: `${issuer}/api/v1/oauth/introspect`,
        },
      });
    });

    it('finds every metadata member valid (AuthorizationServerMetadata.validate())', () => {
      expect(result).toMatchObject({ discovery: { problems: {} } });
      expect(Object.keys((result as { discovery: { problems: object } }).discovery.problems)).toEqual([]);
    });

    it('is granted a token with client_secret_basic (the secret in a Basic header only) that tracks', () => {
      expect(result).toMatchObject({
        grants: {
          client_secret_basic: {
            sent: { authorization: 'Basic', body: ['grant_type'] },
            token: { token_type: 'Bearer', scope: demoScope, expires_in: 3600 },
            // Through the authorizer to the route: an unknown parcel number.
            tracking_status: 404,
          },
        },
      });
    });

    it('is granted a token with client_secret_post (id and secret in the body, no Authorization header)', () => {
      expect(result).toMatchObject({
        grants: {
          client_secret_post: {
            sent: { authorization: null, body: ['client_id', 'client_secret', 'grant_type'] },
            token: { token_type: 'Bearer', scope: demoScope, expires_in: 3600 },
            tracking_status: 404,
          },
        },
      });
    });

    it('validates both client tokens with JsonWebToken([EdDSA]) against the key set, each RFC 9068 claim essential', () => {
      expect(result).toMatchObject({
        grants: {
          client_secret_basic: { validated: clientClaims() },
          client_secret_post: { validated: clientClaims() },
        },
      });
    });

    it('validates a user’s login token alike: client_id "login", the user as sub', () => {
      expect(result).toMatchObject({
        user: {
          header: { alg: 'EdDSA', typ: 'at+jwt' },
          claims: {
            iss: issuer,
            aud: AUDIENCE,
            sub: stack.demo.username,
            client_id: 'login',
            scope: ROUTE_SCOPES,
          },
        },
      });
    });

    it('refuses the user’s refresh token: it has no client_id, an essential claim of an access token', () => {
      expect(result).toMatchObject({
        refresh: {
          refused: 'MissingClaimError',
          error: 'missing_claim',
          description: 'Missing "client_id" claim',
        },
      });
    });

    it('introspects the tokens it was granted and the user’s as active, the refresh token as inactive', () => {
      const active = { active: true, client_id: demoClientId, sub: demoClientId, scope: demoScope };
      expect(result).toMatchObject({
        grants: {
          client_secret_basic: { introspected: active },
          client_secret_post: { introspected: active },
        },
        introspected: {
          user: { active: true, client_id: 'login', sub: stack.demo.username, scope: ROUTE_SCOPES },
          refresh: { active: false },
        },
      });
    });

    it('revokes a client’s own token with client_secret_post: introspection then answers inactive and the route 401', () => {
      expect(result).toMatchObject({
        revoked: {
          status: 200,
          introspected_before: { active: true, client_id: reader.clientId, scope: 'tracking:read' },
          introspected_after: { active: false },
          tracking_status_after: 401,
        },
      });
    });

    /** The token response's members: RFC 6749 section 5.1's with the refresh token, and customer_id. */
    const platformToken = () => ({
      fields: ['access_token', 'customer_id', 'expires_in', 'refresh_token', 'scope', 'token_type'],
      token_type: 'Bearer',
      scope: PLATFORM_SCOPE,
      customer_id: CUSTOMER,
    });

    it('asks for the code with an S256 challenge it derives from its verifier (create_authorization_url)', () => {
      expect(result).toMatchObject({
        platform: {
          authorization: {
            request: {
              names: [
                'client_id',
                'code_challenge',
                'code_challenge_method',
                'redirect_uri',
                'response_type',
                'scope',
                'state',
              ],
              code_challenge_method: 'S256',
              scope: PLATFORM_SCOPE,
            },
          },
        },
      });
    });

    it('signs the customer’s administrator in and approves on the page, a requests.Session playing the browser', () => {
      expect(result).toMatchObject({
        platform: {
          authorization: {
            pages: {
              sign_in: 200,
              cookies: ['__Host-parcel-authz'],
              consent: 200,
              consent_names_customer: true,
              decided: 303,
            },
          },
        },
      });
    });

    it('is answered at its redirect URI with the code, its state and the metadata’s issuer as iss (RFC 9207)', () => {
      expect(result).toMatchObject({
        platform: {
          authorization: {
            response: {
              redirected_to: REDIRECT_URI,
              names: ['code', 'iss', 'state'],
              state_matches: true,
              iss_is_issuer: true,
            },
          },
        },
      });
      expect(result).not.toHaveProperty('platform.refused');
    });

    it('exchanges the code with its verifier and client_secret_basic for tokens naming the customer (fetch_token)', () => {
      expect(result).toMatchObject({
        platform: {
          exchange: {
            sent: {
              authorization: 'Basic',
              body: ['code', 'code_verifier', 'grant_type', 'redirect_uri'],
            },
            token: { ...platformToken(), expires_in: 3600 },
            // Through the authorizer to the route, for the customer: an unknown parcel number.
            tracking_status: 404,
          },
        },
      });
    });

    it('validates the platform’s access token with JsonWebToken([EdDSA]): the platform as client_id and sub, the customer', () => {
      expect(result).toMatchObject({
        platform: {
          exchange: {
            validated: {
              header: { alg: 'EdDSA', typ: 'at+jwt' },
              claims: {
                iss: issuer,
                aud: AUDIENCE,
                sub: platformId,
                client_id: platformId,
                customer_id: CUSTOMER,
                scope: PLATFORM_SCOPE,
                connection_id: expect.stringMatching(/^con_/),
              },
            },
          },
        },
      });
    });

    it('rotates the refresh token (refresh_token), sending no scope, and the new access token tracks', () => {
      expect(result).toMatchObject({
        platform: {
          refresh: {
            sent: { authorization: 'Basic', body: ['grant_type', 'refresh_token'] },
            token: platformToken(),
            rotated: true,
            new_access_token: true,
            tracking_status: 404,
          },
        },
      });
    });

    it('is answered for the spent refresh token used again within the grace window, and the connection goes on', () => {
      expect(result).toMatchObject({
        platform: { spent_refresh_again: platformToken(), current_refresh_after: platformToken() },
      });
    });
  },
);
