/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) as Lambda runs them, on the embedded
 * DynamoDB: what a client may revoke, what the authorizer refuses afterwards, and what an
 * introspecting client learns about each kind of token (docs/clients.md, "Revocation and
 * introspection").
 */
import { readFile } from 'node:fs/promises';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { INTROSPECTION_PATH, REVOCATION_PATH } from '../../lib/clients/metadata.ts';
import { MAX_REVOKED_TOKENS } from '../../lib/revocation/revocation.ts';
import type { Scope } from '../../lib/scopes.ts';
import { createClientTokenIssuer } from '../../lib/tokens/issue.ts';
import { importSigningKey, parseKeyring } from '../../lib/tokens/keys.ts';
import {
  authorizerEvent,
  basicCredentials,
  grantEvent,
  lambdaContext,
  loginEvent,
  tokenEvent,
} from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'a-long-test-password';
const ARN = 'arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5/prod';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let keyringFile: string;
let token: Handler;
let revoke: Handler;
let introspect: Handler;
let login: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
let accounts: AccountRepository;
let clients: ReturnType<typeof createDynamoClientRepository>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  keyringFile = (env.SIGNING_KEYRING ?? '').slice('file:'.length);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.stubEnv('LOG_LEVEL', 'info');
  accounts = await seedHandlerUsers(dynamo, PASSWORD);
  clients = createDynamoClientRepository({
    client: dynamo.documentClient,
    tableName: dynamo.tables.accounts,
  });
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
  revoke = (await import('../../functions/oauth-revoke.ts')).handler as Handler;
  introspect = (await import('../../functions/oauth-introspect.ts')).handler as Handler;
  login = (await import('../../functions/login.ts')).handler as Handler;
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

type Client = Awaited<ReturnType<typeof createTestClient>>;
const newClient = (customerId: string, scopes: readonly Scope[] = ['tracking:read']) =>
  createTestClient({ client: dynamo.documentClient, tableName: dynamo.tables.accounts }, customerId, scopes);

/** A client of the carrier's own services, allowed to introspect. */
const newIntrospector = () => newClient('C-CARRIER', ['tokens:introspect']);

/** An access token of a fresh client credentials grant of `client`. */
const grant = async (client: Client) => String(bodyOf(await call(token, grantEvent(client))).access_token);

/** POST to `path` with `form`, the client authenticated by HTTP Basic unless `headers` say otherwise. */
const formEvent = (
  path: string,
  form: Record<string, string>,
  client?: Client,
  headers: Record<string, string> = {},
): APIGatewayProxyEvent => ({
  ...tokenEvent(form, {
    ...(client !== undefined && { Authorization: basicCredentials(client.clientId, client.secret) }),
    ...headers,
  }),
  path,
  resource: path,
});

const revokeAs = (client: Client, presented: string, form: Record<string, string> = {}) =>
  call(revoke, formEvent(REVOCATION_PATH, { token: presented, ...form }, client));
const introspectAs = (client: Client, presented: string) =>
  call(introspect, formEvent(INTROSPECTION_PATH, { token: presented }, client));

/** Whether the real authorizer lets `bearer` through to tracking. */
const authorized = (bearer: string) =>
  authorizer(
    { ...authorizerEvent(`Bearer ${bearer}`), methodArn: `${ARN}/GET/api/v1/tracking/1` },
    lambdaContext(),
  ).then(
    () => true,
    (error: Error) => {
      if (error.message !== 'Unauthorized') throw error;
      return false;
    },
  );

/** The client item's `revokedTokens` map, as stored. */
async function revokedTokensOf(clientId: string): Promise<Record<string, number> | undefined> {
  const { Item } = await dynamo.documentClient.send(
    new GetCommand({
      TableName: dynamo.tables.accounts,
      Key: { pk: `CLIENT#${clientId}`, sk: 'CLIENT' },
      ConsistentRead: true,
    }),
  );
  return Item?.revokedTokens as Record<string, number> | undefined;
}

/** Access and refresh tokens of a login of `username`. */
async function loggedIn(username = 'alice') {
  const response = await call(login, loginEvent(JSON.stringify({ username, password: PASSWORD })));
  if (response.statusCode !== 200) throw new Error(`login answered ${response.statusCode}`);
  const body = bodyOf(response);
  return { access: String(body.token), refresh: String(body.refreshToken) };
}

/** A client token signed with the stage's key, as the grant would, but issued `agoSeconds` ago or by another issuer. */
async function signedFor(client: Client, options: { agoSeconds?: number; issuer?: string }) {
  const signingKey = await importSigningKey(parseKeyring(await readFile(keyringFile, 'utf8')).active);
  const issuer = createClientTokenIssuer({
    signingKey: async () => signingKey,
    settings: {
      issuer: options.issuer ?? String(process.env.TOKEN_ISSUER),
      audience: String(process.env.TOKEN_AUDIENCE),
      accessTtlSeconds: 3600,
    },
  });
  const { accessToken } = await issuer.issue({
    clientId: client.clientId,
    grant: { secretId: client.secretId },
    customerId: 'C-RI',
    scopes: ['tracking:read'],
    issuedAt: Math.floor(Date.now() / 1000) - (options.agoSeconds ?? 0),
  });
  return accessToken;
}

describe('POST /api/v1/oauth/revoke', () => {
  it('revokes a client’s own token: 200 with an empty body and no-store; the authorizer then refuses it, not the client’s other tokens', async () => {
    const client = await newClient('C-RI1');
    const revoked = await grant(client);
    const other = await grant(client);
    expect(await authorized(revoked)).toBe(true);

    const response = await revokeAs(client, revoked, { token_type_hint: 'access_token' });

    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
    expect(response.headers).toMatchObject({ 'Cache-Control': 'no-store' });
    expect(response.headers).not.toHaveProperty('Content-Type');
    expect(await authorized(revoked)).toBe(false);
    expect(await authorized(other)).toBe(true);
    const { jti, exp } = decodeJwt(revoked);
    expect(await revokedTokensOf(client.clientId)).toEqual({ [String(jti)]: exp });
    expect(logs.events('client token revoked')).toEqual([
      expect.objectContaining({ clientId: client.clientId, jti }),
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain(revoked.split('.')[1]);
  });

  it('answers 200 when the same token is revoked twice, and lists it once', async () => {
    const client = await newClient('C-RI2');
    const bearer = await grant(client);

    expect((await revokeAs(client, bearer)).statusCode).toBe(200);
    expect((await revokeAs(client, bearer)).statusCode).toBe(200);

    expect(Object.keys((await revokedTokensOf(client.clientId)) ?? {})).toEqual([decodeJwt(bearer).jti]);
    expect(await authorized(bearer)).toBe(false);
  });

  it('answers a token of another client and a user’s token 200 as garbage, and revokes neither', async () => {
    const client = await newClient('C-RI3');
    const stranger = await newClient('C-RI3');
    const strangers = await grant(stranger);
    const users = (await loggedIn()).access;

    for (const presented of [strangers, users]) {
      const response = await revokeAs(client, presented);
      const garbage = await revokeAs(client, 'not-a-token');
      expect([response.statusCode, response.body]).toEqual([200, '']);
      expect([response.statusCode, response.body]).toEqual([garbage.statusCode, garbage.body]);
      expect(await authorized(presented)).toBe(true);
    }
    expect(await revokedTokensOf(client.clientId)).toBeUndefined();
    expect(await revokedTokensOf(stranger.clientId)).toBeUndefined();
  });

  it('answers 200 to garbage, an expired token, a refresh token and another stage’s token, and changes nothing', async () => {
    const client = await newClient('C-RI4');
    const presented = [
      'not-a-token',
      'eyJhbGciOiJub25lIn0.e30.',
      await signedFor(client, { agoSeconds: 2 * 3600 }),
      (await loggedIn()).refresh,
      await signedFor(client, { issuer: 'https://auth.parcel-carrier.example/elsewhere' }),
    ];
    for (const [index, each] of presented.entries()) {
      const response = await revokeAs(client, each);
      expect(response.statusCode, `token ${index}`).toBe(200);
      expect(response.body).toBe('');
    }
    expect(await revokedTokensOf(client.clientId)).toBeUndefined();
  });

  it('authenticates the client as the token endpoint does, before it looks at the token', async () => {
    const client = await newClient('C-RI5');
    const bearer = await grant(client);

    const wrongSecret = await call(
      revoke,
      formEvent(REVOCATION_PATH, { token: bearer }, { ...client, secret: `${client.secret}x` }),
    );
    const both = await call(
      revoke,
      formEvent(REVOCATION_PATH, { token: bearer, client_secret: client.secret }, client),
    );
    const inBody = await call(
      revoke,
      formEvent(REVOCATION_PATH, { token: bearer, client_id: client.clientId, client_secret: client.secret }),
    );
    const noToken = await call(revoke, formEvent(REVOCATION_PATH, {}, client));

    expect(wrongSecret.statusCode).toBe(401);
    expect(bodyOf(wrongSecret).error).toBe('invalid_client');
    expect(wrongSecret.headers?.['WWW-Authenticate']).toMatch(/^Basic realm="parcel-auth"/);
    expect(both.statusCode).toBe(400);
    expect(bodyOf(noToken)).toEqual({
      error: 'invalid_request',
      error_description: 'The parameter token is required.',
    });
    // client_secret_post revokes as well.
    expect(inBody.statusCode).toBe(200);
    expect(await authorized(bearer)).toBe(false);
  });

  it('drops the revoked tokens that have expired when it lists another', async () => {
    const client = await newClient('C-RI6');
    const past = Math.floor(Date.now() / 1000) - 60;
    await dynamo.documentClient.send(
      new UpdateCommand({
        TableName: dynamo.tables.accounts,
        Key: { pk: `CLIENT#${client.clientId}`, sk: 'CLIENT' },
        UpdateExpression: 'SET revokedTokens = :listed',
        ExpressionAttributeValues: { ':listed': { 'expired-1': past, 'expired-2': past } },
      }),
    );
    const bearer = await grant(client);

    expect((await revokeAs(client, bearer)).statusCode).toBe(200);

    expect(await revokedTokensOf(client.clientId)).toEqual({
      [String(decodeJwt(bearer).jti)]: decodeJwt(bearer).exp,
    });
  });

  it(`refuses a revocation with 400 while the client lists ${MAX_REVOKED_TOKENS} revoked tokens that have not expired`, async () => {
    const client = await newClient('C-RI7');
    const future = Math.floor(Date.now() / 1000) + 3600;
    const listed = Object.fromEntries(
      Array.from({ length: MAX_REVOKED_TOKENS }, (_, index) => [`live-${index}`, future]),
    );
    await dynamo.documentClient.send(
      new UpdateCommand({
        TableName: dynamo.tables.accounts,
        Key: { pk: `CLIENT#${client.clientId}`, sk: 'CLIENT' },
        UpdateExpression: 'SET revokedTokens = :listed',
        ExpressionAttributeValues: { ':listed': listed },
      }),
    );
    const bearer = await grant(client);

    const response = await revokeAs(client, bearer);

    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toMatchObject({ error: 'invalid_request' });
    expect(String(bodyOf(response).error_description)).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
    expect(await authorized(bearer)).toBe(true);
    expect(Object.keys((await revokedTokensOf(client.clientId)) ?? {})).toHaveLength(MAX_REVOKED_TOKENS);
  });
});

describe('POST /api/v1/oauth/introspect', () => {
  it('answers a client’s token active, with its claims as RFC 7662 names them, and no-store', async () => {
    const introspector = await newIntrospector();
    const client = await newClient('C-RI8', ['tracking:read', 'shipments:write']);
    const bearer = await grant(client);

    const response = await introspectAs(introspector, bearer);

    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    const claims = decodeJwt(bearer);
    expect(bodyOf(response)).toEqual({
      active: true,
      scope: 'tracking:read shipments:write',
      client_id: client.clientId,
      sub: client.clientId,
      customer_id: 'C-RI8',
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      iss: process.env.TOKEN_ISSUER,
      aud: process.env.TOKEN_AUDIENCE,
      jti: claims.jti,
    });
  });

  it('answers a user’s token active with its username, the login’s client_id and the route scopes only', async () => {
    const introspector = await newIntrospector();
    const { access } = await loggedIn();

    const body = bodyOf(await introspectAs(introspector, access));

    expect(body).toEqual({
      active: true,
      scope: 'tracking:read shipments:write',
      client_id: 'login',
      sub: 'alice',
      username: 'alice',
      customer_id: 'C-1001',
      token_type: 'Bearer',
      exp: decodeJwt(access).exp,
      iat: decodeJwt(access).iat,
      iss: process.env.TOKEN_ISSUER,
      aud: process.env.TOKEN_AUDIENCE,
      jti: decodeJwt(access).jti,
    });
    const { access: solo } = await loggedIn('solo');
    expect(bodyOf(await introspectAs(introspector, solo))).not.toHaveProperty('customer_id');
  });

  it('answers {"active": false} and nothing more for a revoked, an expired, a refresh, another stage’s and a garbage token', async () => {
    const introspector = await newIntrospector();
    const client = await newClient('C-RI9');
    const revoked = await grant(client);
    await revokeAs(client, revoked);
    const disabledClient = await newClient('C-RI9');
    const ofDisabled = await grant(disabledClient);
    await clients.setClientEnabled(disabledClient.clientId, false);
    const user = await loggedIn();
    await accounts.revokeUserTokens('alice');

    for (const [name, presented] of [
      ['revoked by its client', revoked],
      ['of a disabled client', ofDisabled],
      ['of a user whose tokens were revoked', user.access],
      ['expired', await signedFor(client, { agoSeconds: 2 * 3600 })],
      ['a refresh token', user.refresh],
      [
        'another stage’s',
        await signedFor(client, { issuer: 'https://auth.parcel-carrier.example/elsewhere' }),
      ],
      ['garbage', 'not-a-token'],
    ] as const) {
      const response = await introspectAs(introspector, presented);
      expect(response.statusCode, name).toBe(200);
      expect(response.body, name).toBe('{"active":false}');
    }
  });

  it('refuses a client without tokens:introspect with 403 unauthorized_client once authenticated, and a wrong secret with 401', async () => {
    const client = await newClient('C-RI10', ['tracking:read', 'shipments:write']);
    const bearer = await grant(client);

    const refused = await introspectAs(client, bearer);
    const wrongSecret = await introspectAs({ ...(await newIntrospector()), secret: 'pcs_wrong' }, bearer);

    expect(refused.statusCode).toBe(403);
    expect(refused.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
    });
    expect(refused.headers).not.toHaveProperty('WWW-Authenticate');
    expect(bodyOf(refused)).toEqual({
      error: 'unauthorized_client',
      error_description: 'The client does not hold the scope tokens:introspect, which this endpoint needs.',
    });
    expect(logs.events('token introspection refused')).toEqual([
      expect.objectContaining({ reason: 'missing scope', clientId: client.clientId }),
    ]);
    expect(wrongSecret.statusCode).toBe(401);
    expect(bodyOf(wrongSecret).error).toBe('invalid_client');
  });
});
