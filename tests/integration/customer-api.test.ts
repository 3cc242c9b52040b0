/**
 * The self-service API as Lambda runs it: a real login, the real authorizer's decision handed
 * to the function as API Gateway hands it, on the embedded DynamoDB (docs/administrators.md).
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { RECENT_LOGIN_SECONDS } from '../../lib/errors.ts';
import {
  authorizerEvent,
  gatewayAuthorizerContext,
  grantEvent,
  lambdaContext,
  loginEvent,
  tokenEvent,
} from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import {
  ADMINISTRATORS,
  CLIENT,
  CLIENTS,
  type CustomerApiOptions,
  customerApiEvent,
  EVENTS,
  REVOKE,
  SECRET,
  SECRETS,
  UNLOCK,
} from '../support/customer-api.ts';
import { startTestDynamo } from '../support/dynamo.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'correct horse battery staple';
let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let login: Handler;
let logout: Handler;
let token: Handler;
let api: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
let accounts: ReturnType<typeof createDynamoAccountRepository>;
let clients: ReturnType<typeof createDynamoClientRepository>;
let trail: ReturnType<typeof createDynamoAuditTrail>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const table = { client: dynamo.documentClient, tableName: dynamo.tables.accounts };
  accounts = createDynamoAccountRepository(table);
  clients = createDynamoClientRepository(table);
  trail = createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit });
  const passwordHash = await hashPassword(PASSWORD, 4);
  for (const [username, customerId] of [
    ['admin-alice', 'C-2001'],
    ['admin-bob', 'C-2002'],
    ['plain-carol', 'C-2001'],
  ] as const) {
    await accounts.createUser({ username, passwordHash, customerId });
  }
  await accounts.setAdministrator('admin-alice', true);
  await accounts.setAdministrator('admin-bob', true);
  login = (await import('../../functions/login.ts')).handler as Handler;
  logout = (await import('../../functions/logout.ts')).handler as Handler;
  token = (await import('../../functions/oauth-token.ts')).handler as Handler;
  api = (await import('../../functions/customer-api.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

const call = (handler: Handler, event: APIGatewayProxyEvent) => handler(event, lambdaContext());
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by an assertion.
const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as Record<string, any>;

/** The authorizer's decision for a fresh login of `username`, as API Gateway passes it on. */
async function signIn(username: string) {
  const answer = await call(login, loginEvent(JSON.stringify({ username, password: PASSWORD })));
  expect(answer.statusCode).toBe(200);
  const accessToken = String(bodyOf(answer).token);
  const decision = await authorizer(authorizerEvent(`Bearer ${accessToken}`));
  return gatewayAuthorizerContext(decision);
}

type Authorizer = Awaited<ReturnType<typeof signIn>>;

/** A request of `who`, from the address every test here calls from, to the route `resource`. */
const request = (who: Authorizer, method: string, resource: string, options?: CustomerApiOptions) =>
  customerApiEvent({ authorizer: who, sourceIp: '203.0.113.7' }, method, resource, options);

const grantStatus = async (client: { clientId: string; secret: string }) =>
  (await call(token, grantEvent(client))).statusCode;

describe('the self-service API', () => {
  it('lets an administrator create a client whose secret, shown once, works at the token endpoint', async () => {
    const alice = await signIn('admin-alice');
    const answer = await call(
      api,
      request(alice, 'POST', CLIENTS, { body: { name: 'Warehouse', scopes: ['tracking:read'] } }),
    );
    expect(answer.statusCode).toBe(201);
    const body = bodyOf(answer);
    expect(body.client).toMatchObject({ name: 'Warehouse', scopes: ['tracking:read'], enabled: true });
    expect(answer.headers?.Location).toMatch(new RegExp(`/api/v1/customer/clients/${body.client.clientId}$`));
    expect(answer.headers?.['Cache-Control']).toBe('no-store');
    expect(body.clientSecret).toMatch(/^pcs_/);
    expect(JSON.stringify(body.client)).not.toContain(body.clientSecret);
    expect(await grantStatus({ clientId: body.client.clientId, secret: body.clientSecret })).toBe(200);

    const listed = bodyOf(await call(api, request(alice, 'GET', CLIENTS)));
    expect(JSON.stringify(listed)).not.toContain(body.clientSecret);
    const shown = bodyOf(
      await call(api, request(alice, 'GET', CLIENT, { params: { clientId: body.client.clientId } })),
    );
    expect(shown.secrets).toEqual([
      {
        secretId: body.secretId,
        createdAt: expect.any(String),
        expiresAt: null,
        lastUsedAt: expect.any(String),
      },
    ]);
    expect(shown.lastUsedAt).toEqual(expect.any(String));
  });

  it('lets an administrator create a client of keys: no secret in the answer or anywhere, its key listed by kid, its assertion a token', async () => {
    const alice = await signIn('admin-alice');
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'warehouse-2026' }] };
    const answer = await call(
      api,
      request(alice, 'POST', CLIENTS, { body: { name: 'Keyed warehouse', scopes: ['tracking:read'], jwks } }),
    );
    expect(answer.statusCode).toBe(201);
    const body = bodyOf(answer);
    expect(Object.keys(body)).toEqual(['client']);
    const clientId = String(body.client.clientId);
    expect(body.client.secrets).toEqual([
      {
        secretId: expect.stringMatching(/^[0-9a-f]{8}$/),
        kid: 'warehouse-2026',
        jwk: { ...jwks.keys[0], kid: 'warehouse-2026' },
        createdAt: expect.any(String),
        expiresAt: null,
        lastUsedAt: null,
      },
    ]);
    const signed = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: 'warehouse-2026' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(String(process.env.TOKEN_ISSUER))
      .setExpirationTime('1m')
      .sign(privateKey);
    const granted = await call(
      token,
      tokenEvent({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: signed,
      }),
    );
    expect(granted.statusCode).toBe(200);
    // A secret for it is refused, and it still has none.
    const secret = await call(api, request(alice, 'POST', SECRETS, { params: { clientId } }));
    expect(secret.statusCode).toBe(409);
    expect(bodyOf(secret).detail).toContain('authenticates with keys');
    const shown = bodyOf(await call(api, request(alice, 'GET', CLIENT, { params: { clientId } })));
    expect(shown.secrets).toHaveLength(1);
    expect(shown.secrets[0].lastUsedAt).toEqual(expect.any(String));

    // A rotation: the next key beside it (a kid of its own), then the first removed.
    const next = await generateKeyPair('ES256');
    const same = await call(
      api,
      request(alice, 'POST', SECRETS, {
        params: { clientId },
        body: { jwk: { ...(await exportJWK(next.publicKey)), kid: 'warehouse-2026' } },
      }),
    );
    expect(same.statusCode).toBe(409);
    const added = await call(
      api,
      request(alice, 'POST', SECRETS, {
        params: { clientId },
        body: { jwk: { ...(await exportJWK(next.publicKey)), kid: 'warehouse-2027' } },
      }),
    );
    expect(added.statusCode).toBe(201);
    expect(Object.keys(bodyOf(added)).sort()).toEqual(['client', 'secretId']);
    expect(bodyOf(added).client.secrets.map((slot: { kid: string }) => slot.kid)).toEqual([
      'warehouse-2026',
      'warehouse-2027',
    ]);
  });

  it('refuses a JWK Set with a private key, a weak RSA key or an algorithm it does not take, creating nothing', async () => {
    const alice = await signIn('admin-alice');
    const before = bodyOf(await call(api, request(alice, 'GET', CLIENTS))).clients.length;
    const { privateKey } = await generateKeyPair('Ed25519', { extractable: true });
    // jose makes no RSA key under 2048 bits: node:crypto does.
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    for (const key of [
      await exportJWK(privateKey),
      weak,
      { ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), alg: 'ES384' },
    ]) {
      const answer = await call(
        api,
        request(alice, 'POST', CLIENTS, {
          body: { name: 'Bad keys', scopes: ['tracking:read'], jwks: { keys: [key] } },
        }),
      );
      expect(answer.statusCode).toBe(400);
    }
    expect(bodyOf(await call(api, request(alice, 'GET', CLIENTS))).clients).toHaveLength(before);
  });

  it('rolls a secret in one call: the old one stops by itself at the time asked, the new one works', async () => {
    const alice = await signIn('admin-alice');
    const made = bodyOf(
      await call(
        api,
        request(alice, 'POST', CLIENTS, { body: { name: 'Shop', scopes: ['shipments:write'] } }),
      ),
    );
    const clientId = String(made.client.clientId);
    const rolled = await call(
      api,
      request(alice, 'POST', SECRETS, { params: { clientId }, body: { expireOthersInSeconds: 3600 } }),
    );
    expect(rolled.statusCode).toBe(201);
    const roll = bodyOf(rolled);
    const old = roll.client.secrets.find((secret: { secretId: string }) => secret.secretId === made.secretId);
    expect(Date.parse(old.expiresAt) - Date.now()).toBeGreaterThan(3590_000);
    expect(Date.parse(old.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(await grantStatus({ clientId, secret: roll.clientSecret })).toBe(200);
    expect(await grantStatus({ clientId, secret: made.clientSecret })).toBe(200);

    // Two live secrets: a third is refused until one goes.
    const third = await call(api, request(alice, 'POST', SECRETS, { params: { clientId } }));
    expect(third.statusCode).toBe(409);
    expect(bodyOf(third).type).toBe('urn:parcel-auth:problem:conflict');

    // The roll is in the trail now; the expiry it scheduled is not, until it happens.
    const events = bodyOf(await call(api, request(alice, 'GET', EVENTS))).events as {
      type: string;
      clientId?: string;
    }[];
    const mine = events.filter((event) => event.clientId === clientId).map((event) => event.type);
    expect(mine).toEqual(['client.secret.rolled', 'client.created']);
    const later = await trail.list({
      customerId: 'C-2001',
      limit: 100,
      until: new Date(Date.now() + 7200_000),
    });
    expect(
      later.events.filter((event) => event.clientId === clientId && event.type === 'client.secret.expired'),
    ).toEqual([
      expect.objectContaining({ secretId: made.secretId, secretExpiresAt: old.expiresAt, at: old.expiresAt }),
    ]);

    // Removing the expiring secret first takes its scheduled expiry back.
    const removed = await call(
      api,
      request(alice, 'DELETE', SECRET, { params: { clientId, secretId: made.secretId } }),
    );
    expect(removed.statusCode).toBe(204);
    expect(await grantStatus({ clientId, secret: made.clientSecret })).toBe(401);
    const after = await trail.list({
      customerId: 'C-2001',
      limit: 100,
      until: new Date(Date.now() + 7200_000),
    });
    expect(
      after.events.filter((event) => event.type === 'client.secret.expired' && event.clientId === clientId),
    ).toEqual([]);

    // The last live secret stays.
    const last = await call(
      api,
      request(alice, 'DELETE', SECRET, { params: { clientId, secretId: roll.secretId } }),
    );
    expect(last.statusCode).toBe(409);
  });

  it('disables, enables, renames, unlocks and removes a client, each in the audit trail with who and from where', async () => {
    const alice = await signIn('admin-alice');
    const made = bodyOf(
      await call(
        api,
        request(alice, 'POST', CLIENTS, { body: { name: 'Labels', scopes: ['tracking:read'] } }),
      ),
    );
    const clientId = String(made.client.clientId);
    const client = { clientId, secret: String(made.clientSecret) };
    const patch = (body: unknown) =>
      call(api, request(alice, 'PATCH', CLIENT, { params: { clientId }, body }));

    expect(bodyOf(await patch({ enabled: false })).enabled).toBe(false);
    expect(await grantStatus(client)).toBe(401);
    expect(bodyOf(await patch({ enabled: true, name: 'Label printer' }))).toMatchObject({
      enabled: true,
      name: 'Label printer',
    });
    expect(await grantStatus(client)).toBe(200);
    expect((await call(api, request(alice, 'POST', UNLOCK, { params: { clientId } }))).statusCode).toBe(204);
    expect((await call(api, request(alice, 'DELETE', CLIENT, { params: { clientId } }))).statusCode).toBe(
      204,
    );
    expect(await grantStatus(client)).toBe(401);
    expect((await call(api, request(alice, 'GET', CLIENT, { params: { clientId } }))).statusCode).toBe(404);

    const events = (
      bodyOf(await call(api, request(alice, 'GET', EVENTS))).events as Record<string, unknown>[]
    ).filter((event) => event.clientId === clientId);
    expect(events.map((event) => event.type)).toEqual([
      'client.removed',
      'client.unlocked',
      'client.enabled',
      'client.renamed',
      // The grant tried while it was disabled.
      'client.authentication.failed',
      'client.disabled',
      'client.created',
    ]);
    for (const event of events.filter((event) => event.type !== 'client.authentication.failed')) {
      expect(event).toMatchObject({ actor: 'user:admin-alice', sourceIp: '203.0.113.7' });
      expect(event).not.toHaveProperty('customerId');
    }
  });

  it('answers another customer’s client as an unknown one, 404 with the same body, and changes nothing', async () => {
    const other = await createTestClient(
      { client: dynamo.documentClient, tableName: dynamo.tables.accounts },
      'C-2002',
      ['tracking:read'],
    );
    const alice = await signIn('admin-alice');
    const unknown = 'pcl_00000000000000000000';
    const answers = async (clientId: string) =>
      Promise.all([
        call(api, request(alice, 'GET', CLIENT, { params: { clientId } })),
        call(api, request(alice, 'PATCH', CLIENT, { params: { clientId }, body: { enabled: false } })),
        call(api, request(alice, 'DELETE', CLIENT, { params: { clientId } })),
        call(api, request(alice, 'POST', UNLOCK, { params: { clientId } })),
        call(api, request(alice, 'POST', SECRETS, { params: { clientId } })),
        call(api, request(alice, 'DELETE', SECRET, { params: { clientId, secretId: '0123abcd' } })),
      ]);
    const theirs = await answers(other.clientId);
    const none = await answers(unknown);
    for (const [index, answer] of theirs.entries()) {
      expect(answer.statusCode).toBe(404);
      expect(answer.body).toBe(none[index]?.body);
    }
    expect((await clients.findClient(other.clientId))?.enabled).toBe(true);
    expect(await grantStatus(other)).toBe(200);
    const listed = bodyOf(await call(api, request(alice, 'GET', CLIENTS))).clients as { clientId: string }[];
    expect(listed.map((client) => client.clientId)).not.toContain(other.clientId);
  });

  it('refuses a user who is not an administrator, and one whose administration ended after login, with 403 naming the scope', async () => {
    const carol = await signIn('plain-carol');
    const refused = await call(api, request(carol, 'GET', CLIENTS));
    expect(refused.statusCode).toBe(403);
    expect(refused.headers?.['WWW-Authenticate']).toContain('scope="customer:admin"');

    await accounts.createUser({
      username: 'admin-dave',
      passwordHash: await hashPassword(PASSWORD, 4),
      customerId: 'C-2001',
    });
    await accounts.setAdministrator('admin-dave', true);
    const dave = await signIn('admin-dave');
    expect((await call(api, request(dave, 'GET', CLIENTS))).statusCode).toBe(200);
    await accounts.setAdministrator('admin-dave', false);
    // The decision API Gateway may still hold in its cache: the function reads the user itself.
    const ended = await call(api, request(dave, 'GET', CLIENTS));
    expect(ended.statusCode).toBe(403);
    expect(bodyOf(ended).type).toBe('urn:parcel-auth:problem:insufficient-scope');
  });

  it('asks for a recent login before showing a secret, and only then', async () => {
    const alice = await signIn('admin-alice');
    const stale = { ...alice, authTime: Math.floor(Date.now() / 1000) - RECENT_LOGIN_SECONDS - 5 };
    const before = (await clients.listClients()).length;
    const refused = await call(
      api,
      request(stale, 'POST', CLIENTS, { body: { name: 'Late', scopes: ['tracking:read'] } }),
    );
    expect(refused.statusCode).toBe(403);
    expect(bodyOf(refused).type).toBe('urn:parcel-auth:problem:recent-login-required');
    expect(refused.headers?.['WWW-Authenticate']).toContain('error="insufficient_user_authentication"');
    expect(refused.headers?.['WWW-Authenticate']).toContain(`max_age=${RECENT_LOGIN_SECONDS}`);
    const after = await clients.listClients();
    const [made] = bodyOf(await call(api, request(alice, 'GET', CLIENTS))).clients as { clientId: string }[];
    const roll = await call(
      api,
      request(stale, 'POST', SECRETS, { params: { clientId: String(made?.clientId) } }),
    );
    expect(roll.statusCode).toBe(403);
    expect(bodyOf(roll).type).toBe('urn:parcel-auth:problem:recent-login-required');
    expect(after.length).toBe(before);
    // Reading and changing without a secret shown: no recent login needed.
    expect((await call(api, request(stale, 'GET', CLIENTS))).statusCode).toBe(200);
  });

  it('lets an administrator make another user of the customer an administrator, and end it, never another customer’s user', async () => {
    await accounts.createUser({
      username: 'plain-erin',
      passwordHash: await hashPassword(PASSWORD, 4),
      customerId: 'C-2001',
    });
    const alice = await signIn('admin-alice');
    const names = async () =>
      (
        bodyOf(await call(api, request(alice, 'GET', ADMINISTRATORS))).administrators as {
          username: string;
        }[]
      ).map((entry) => entry.username);
    expect(await names()).not.toContain('plain-erin');

    const stale = { ...alice, authTime: Math.floor(Date.now() / 1000) - RECENT_LOGIN_SECONDS - 5 };
    const late = await call(
      api,
      request(stale, 'POST', ADMINISTRATORS, { body: { username: 'plain-erin' } }),
    );
    expect(late.statusCode).toBe(403);
    expect(bodyOf(late).type).toBe('urn:parcel-auth:problem:recent-login-required');

    const granted = await call(
      api,
      request(alice, 'POST', ADMINISTRATORS, { body: { username: 'plain-erin' } }),
    );
    expect(granted.statusCode).toBe(204);
    expect(await names()).toContain('plain-erin');
    const erin = await signIn('plain-erin');
    expect((await call(api, request(erin, 'GET', CLIENTS))).statusCode).toBe(200);

    // Another customer's user, and nobody: the same 404, and nothing granted.
    const theirs = await call(
      api,
      request(alice, 'POST', ADMINISTRATORS, { body: { username: 'admin-bob' } }),
    );
    const nobody = await call(
      api,
      request(alice, 'POST', ADMINISTRATORS, { body: { username: 'nobody-here' } }),
    );
    expect(theirs.statusCode).toBe(404);
    expect(theirs.body).toBe(nobody.body);
    const bobBefore = await accounts.findByUsername('admin-bob');
    const revokedOther = await call(api, request(alice, 'POST', REVOKE, { body: { username: 'admin-bob' } }));
    expect(revokedOther.statusCode).toBe(404);
    expect((await accounts.findByUsername('admin-bob'))?.admin).toBe(bobBefore?.admin);

    const revoked = await call(api, request(alice, 'POST', REVOKE, { body: { username: 'plain-erin' } }));
    expect(revoked.statusCode).toBe(204);
    expect(await names()).not.toContain('plain-erin');
    expect((await call(api, request(erin, 'GET', CLIENTS))).statusCode).toBe(403);

    const events = (
      bodyOf(await call(api, request(alice, 'GET', EVENTS))).events as Record<string, unknown>[]
    ).filter((event) => event.username === 'plain-erin');
    expect(events).toEqual([
      expect.objectContaining({ type: 'user.admin.revoked', actor: 'user:admin-alice' }),
      expect.objectContaining({ type: 'user.admin.granted', actor: 'user:admin-alice' }),
    ]);
  });

  it('keeps a customer’s last administrator: ending it answers 409 and changes nothing until another is granted', async () => {
    const passwordHash = await hashPassword(PASSWORD, 4);
    await accounts.createUser({ username: 'admin-ivy', passwordHash, customerId: 'C-2003' });
    await accounts.createUser({ username: 'plain-jon', passwordHash, customerId: 'C-2003' });
    await accounts.setAdministrator('admin-ivy', true);
    const ivy = await signIn('admin-ivy');
    const ownEvents = async () =>
      (bodyOf(await call(api, request(ivy, 'GET', EVENTS))).events as { type: string }[]).map(
        (event) => event.type,
      );

    const refused = await call(api, request(ivy, 'POST', REVOKE, { body: { username: 'admin-ivy' } }));

    expect(refused.statusCode).toBe(409);
    expect(bodyOf(refused)).toMatchObject({
      type: 'urn:parcel-auth:problem:conflict',
      detail: 'This is the customer’s last administrator: grant administration to another user first.',
    });
    expect((await accounts.findByUsername('admin-ivy'))?.admin).toBe(true);
    expect(await ownEvents()).toEqual([]);

    const granted = await call(
      api,
      request(ivy, 'POST', ADMINISTRATORS, { body: { username: 'plain-jon' } }),
    );
    expect(granted.statusCode).toBe(204);
    const ended = await call(api, request(ivy, 'POST', REVOKE, { body: { username: 'admin-ivy' } }));
    expect(ended.statusCode).toBe(204);
    expect((await accounts.findByUsername('admin-ivy'))?.admin).toBe(false);
    const jon = await signIn('plain-jon');
    const last = await call(api, request(jon, 'POST', REVOKE, { body: { username: 'plain-jon' } }));
    expect(last.statusCode).toBe(409);

    // An administrator an operator disabled cannot act, so does not count as another.
    await accounts.createUser({ username: 'admin-kai', passwordHash, customerId: 'C-2003' });
    await accounts.setAdministrator('admin-kai', true);
    await accounts.setEnabled('admin-kai', false);
    const stillLast = await call(api, request(jon, 'POST', REVOKE, { body: { username: 'plain-jon' } }));
    expect(stillLast.statusCode).toBe(409);
    expect((await accounts.findByUsername('plain-jon'))?.admin).toBe(true);
  });

  it('refuses a cached decision of a token revoked since (user logout), 401 as the authorizer would', async () => {
    await accounts.createUser({
      username: 'admin-fay',
      passwordHash: await hashPassword(PASSWORD, 4),
      customerId: 'C-2001',
    });
    await accounts.setAdministrator('admin-fay', true);
    const fay = await signIn('admin-fay');
    expect((await call(api, request(fay, 'GET', CLIENTS))).statusCode).toBe(200);
    await accounts.revokeUserTokens('admin-fay');
    const refused = await call(
      api,
      request(fay, 'POST', CLIENTS, { body: { name: 'Late', scopes: ['tracking:read'] } }),
    );
    expect(refused.statusCode).toBe(401);
    expect((await clients.listClients('C-2001')).map((client) => client.name)).not.toContain('Late');
  });

  it('gives a client no scope its narrowed administrator lacks, 403 naming it', async () => {
    await accounts.createUser({
      username: 'admin-gus',
      passwordHash: await hashPassword(PASSWORD, 4),
      customerId: 'C-2001',
    });
    await accounts.setUserScopes('admin-gus', ['tracking:read']);
    await accounts.setAdministrator('admin-gus', true);
    const gus = await signIn('admin-gus');
    const refused = await call(
      api,
      request(gus, 'POST', CLIENTS, { body: { name: 'Wide', scopes: ['shipments:write'] } }),
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.headers?.['WWW-Authenticate']).toContain('scope="shipments:write"');
    const allowed = await call(
      api,
      request(gus, 'POST', CLIENTS, { body: { name: 'Narrow', scopes: ['tracking:read'] } }),
    );
    expect(allowed.statusCode).toBe(201);
  });

  it('keeps a client’s last secret that does not expire, and asks a recent login to enable a client', async () => {
    const alice = await signIn('admin-alice');
    const made = bodyOf(
      await call(api, request(alice, 'POST', CLIENTS, { body: { name: 'Keep', scopes: ['tracking:read'] } })),
    );
    const clientId = String(made.client.clientId);
    const roll = bodyOf(
      await call(
        api,
        request(alice, 'POST', SECRETS, { params: { clientId }, body: { expireOthersInSeconds: 86_400 } }),
      ),
    );
    // The new secret, in use, is the only one without an end: removing it would leave the client to stop by itself.
    expect(await grantStatus({ clientId, secret: String(roll.clientSecret) })).toBe(200);
    const kept = await call(
      api,
      request(alice, 'DELETE', SECRET, { params: { clientId, secretId: roll.secretId } }),
    );
    expect(kept.statusCode).toBe(409);
    expect(bodyOf(kept).detail).toMatch(/does not expire/);
    // One that never got a token runs nothing, and goes; the first keeps the end the roll gave it.
    const other = bodyOf(
      await call(
        api,
        request(alice, 'POST', CLIENTS, { body: { name: 'Unused', scopes: ['tracking:read'] } }),
      ),
    );
    const otherId = String(other.client.clientId);
    const unused = bodyOf(
      await call(
        api,
        request(alice, 'POST', SECRETS, {
          params: { clientId: otherId },
          body: { expireOthersInSeconds: 86_400 },
        }),
      ),
    );
    const gone = await call(
      api,
      request(alice, 'DELETE', SECRET, { params: { clientId: otherId, secretId: unused.secretId } }),
    );
    expect(gone.statusCode).toBe(204);
    const left = bodyOf(await call(api, request(alice, 'GET', CLIENT, { params: { clientId: otherId } })));
    expect(left.secrets).toEqual([
      expect.objectContaining({ secretId: other.secretId, expiresAt: expect.any(String) }),
    ]);

    expect(
      (await call(api, request(alice, 'PATCH', CLIENT, { params: { clientId }, body: { enabled: false } })))
        .statusCode,
    ).toBe(200);
    const stale = { ...alice, authTime: Math.floor(Date.now() / 1000) - RECENT_LOGIN_SECONDS - 5 };
    const enable = await call(
      api,
      request(stale, 'PATCH', CLIENT, { params: { clientId }, body: { enabled: true } }),
    );
    expect(enable.statusCode).toBe(403);
    expect(bodyOf(enable).type).toBe('urn:parcel-auth:problem:recent-login-required');
    expect((await clients.findClient(clientId))?.enabled).toBe(false);
  });

  it('pages the audit trail with next, newest first, and refuses a next it never gave', async () => {
    const bob = await signIn('admin-bob');
    const made = bodyOf(
      await call(api, request(bob, 'POST', CLIENTS, { body: { name: 'B', scopes: ['tracking:read'] } })),
    );
    const clientId = String(made.client.clientId);
    for (const name of ['B1', 'B2', 'B3', 'B4']) {
      await call(api, request(bob, 'PATCH', CLIENT, { params: { clientId }, body: { name } }));
    }
    const first = bodyOf(await call(api, request(bob, 'GET', EVENTS, { query: { limit: '2' } })));
    expect(first.events.map((event: { name?: string }) => event.name)).toEqual(['B4', 'B3']);
    const second = bodyOf(
      await call(api, request(bob, 'GET', EVENTS, { query: { limit: '2', next: first.next } })),
    );
    expect(second.events.map((event: { name?: string }) => event.name)).toEqual(['B2', 'B1']);
    const third = bodyOf(
      await call(api, request(bob, 'GET', EVENTS, { query: { limit: '2', next: second.next } })),
    );
    expect(third.events.map((event: { type: string }) => event.type)).toEqual(['client.created']);
    expect(third.next).toBeNull();
    for (const query of [
      { next: 'bm90LWFuLWlk' },
      { limit: '0' },
      { limit: '101' },
      { other: 'x' },
    ] as Record<string, string>[]) {
      const refused = await call(api, request(bob, 'GET', EVENTS, { query }));
      expect(refused.statusCode).toBe(400);
      expect(refused.headers?.['Content-Type']).toBe('application/problem+json');
    }
  });

  it('holds a new secret, a roll and an enabling within the narrowed administrator’s scopes: 403 naming the scope, nothing changed', async () => {
    await accounts.createUser({
      username: 'admin-hal',
      passwordHash: await hashPassword(PASSWORD, 4),
      customerId: 'C-2001',
    });
    await accounts.setUserScopes('admin-hal', ['tracking:read']);
    await accounts.setAdministrator('admin-hal', true);
    const alice = await signIn('admin-alice');
    const wide = bodyOf(
      await call(
        api,
        request(alice, 'POST', CLIENTS, { body: { name: 'Wide', scopes: ['shipments:write'] } }),
      ),
    );
    const clientId = String(wide.client.clientId);
    const params = { clientId };
    expect(
      (await call(api, request(alice, 'PATCH', CLIENT, { params, body: { enabled: false } }))).statusCode,
    ).toBe(200);
    const hal = await signIn('admin-hal');

    for (const [method, resource, body] of [
      ['POST', SECRETS, undefined],
      ['POST', SECRETS, { expireOthersInSeconds: 3600 }],
      ['PATCH', CLIENT, { enabled: true }],
      ['PATCH', CLIENT, { enabled: true, name: 'Renamed on the way' }],
    ] as const) {
      const refused = await call(api, request(hal, method, resource, { params, body }));
      expect(refused.statusCode).toBe(403);
      expect(bodyOf(refused).type).toBe('urn:parcel-auth:problem:insufficient-scope');
      expect(refused.headers?.['WWW-Authenticate']).toContain('scope="shipments:write"');
      expect(bodyOf(refused).detail).toMatch(/does not include shipments:write/);
    }
    const stored = await clients.findClient(clientId);
    expect(stored).toMatchObject({ enabled: false, name: 'Wide' });
    expect(stored?.secrets).toHaveLength(1);
    // What takes a credential away or names it stays the narrowed administrator’s to do.
    expect(
      (await call(api, request(hal, 'PATCH', CLIENT, { params, body: { name: 'Wide 2' } }))).statusCode,
    ).toBe(200);
    expect((await call(api, request(hal, 'DELETE', CLIENT, { params }))).statusCode).toBe(204);
  });

  it('answers a client holding a scope it never gives (tokens:introspect) as an unknown one: unlisted, 404, untouched', async () => {
    const introspector = await createTestClient(
      { client: dynamo.documentClient, tableName: dynamo.tables.accounts },
      'C-2001',
      ['tokens:introspect'],
    );
    const alice = await signIn('admin-alice');
    const params = { clientId: introspector.clientId };
    const unknown = await call(
      api,
      request(alice, 'GET', CLIENT, { params: { clientId: 'pcl_00000000000000000000' } }),
    );
    const listed = bodyOf(await call(api, request(alice, 'GET', CLIENTS))).clients as { clientId: string }[];
    expect(listed.map((client) => client.clientId)).not.toContain(introspector.clientId);
    for (const [method, resource, body] of [
      ['GET', CLIENT, undefined],
      ['POST', SECRETS, undefined],
      ['POST', SECRETS, { expireOthersInSeconds: 0 }],
      ['PATCH', CLIENT, { enabled: false }],
      ['PATCH', CLIENT, { name: 'Mine now' }],
      ['POST', UNLOCK, undefined],
      ['DELETE', SECRET, undefined],
      ['DELETE', CLIENT, undefined],
    ] as const) {
      const answer = await call(
        api,
        request(alice, method, resource, { params: { ...params, secretId: introspector.secretId }, body }),
      );
      expect([answer.statusCode, answer.body]).toEqual([404, unknown.body]);
    }
    const stored = await clients.findClient(introspector.clientId);
    expect(stored).toMatchObject({ enabled: true, scopes: ['tokens:introspect'] });
    expect(stored?.secrets.map((secret) => secret.id)).toEqual([introspector.secretId]);
    expect(await grantStatus({ clientId: introspector.clientId, secret: introspector.secret })).toBe(200);
  });

  it('lets a narrowed administrator make administrators only of users whose scopes are within its own', async () => {
    const passwordHash = await hashPassword(PASSWORD, 4);
    await accounts.createUser({ username: 'admin-ned', passwordHash, customerId: 'C-2005' });
    await accounts.setUserScopes('admin-ned', ['tracking:read']);
    await accounts.setAdministrator('admin-ned', true);
    await accounts.createUser({ username: 'plain-ola', passwordHash, customerId: 'C-2005' });
    await accounts.createUser({ username: 'plain-pia', passwordHash, customerId: 'C-2005' });
    await accounts.setUserScopes('plain-pia', ['tracking:read']);
    const ned = await signIn('admin-ned');

    const wider = await call(api, request(ned, 'POST', ADMINISTRATORS, { body: { username: 'plain-ola' } }));
    expect(wider.statusCode).toBe(403);
    expect(wider.headers?.['WWW-Authenticate']).toContain('scope="shipments:write"');
    expect((await accounts.findByUsername('plain-ola'))?.admin).toBe(false);
    const within = await call(api, request(ned, 'POST', ADMINISTRATORS, { body: { username: 'plain-pia' } }));
    expect(within.statusCode).toBe(204);
    expect((await accounts.findByUsername('plain-pia'))?.admin).toBe(true);
  });

  it('leaves a customer an administrator whatever two ends of administration run at once', async () => {
    const passwordHash = await hashPassword(PASSWORD, 4);
    const customerId = 'C-2006';
    await accounts.createUser({ username: 'admin-lea', passwordHash, customerId });
    await accounts.createUser({ username: 'admin-max', passwordHash, customerId });
    const administrators = async () =>
      (await Promise.all(['admin-lea', 'admin-max'].map((name) => accounts.findByUsername(name)))).filter(
        (user) => user?.admin === true,
      ).length;
    for (let round = 0; round < 4; round += 1) {
      await accounts.setAdministrator('admin-lea', true);
      await accounts.setAdministrator('admin-max', true);
      const [lea, max] = [await signIn('admin-lea'), await signIn('admin-max')];
      // One administrator ending both, or each the other's, at the same moment.
      const pairs =
        round % 2 === 0
          ? [
              request(lea, 'POST', REVOKE, { body: { username: 'admin-max' } }),
              request(lea, 'POST', REVOKE, { body: { username: 'admin-lea' } }),
            ]
          : [
              request(lea, 'POST', REVOKE, { body: { username: 'admin-max' } }),
              request(max, 'POST', REVOKE, { body: { username: 'admin-lea' } }),
            ];
      const answers = await Promise.all(pairs.map((event) => call(api, event)));
      const statuses = answers.map((answer) => answer.statusCode);
      expect(statuses.filter((status) => status === 204).length).toBeLessThanOrEqual(1);
      expect(statuses.every((status) => status === 204 || status === 409)).toBe(true);
      // Both refused: each found the other's end under way, which is no last administrator.
      if (statuses.every((status) => status === 409))
        for (const answer of answers) expect(bodyOf(answer).detail).toMatch(/in progress/);
      expect(await administrators()).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses a change of name and enabling without a recent login before it renames anything', async () => {
    const alice = await signIn('admin-alice');
    const made = bodyOf(
      await call(
        api,
        request(alice, 'POST', CLIENTS, { body: { name: 'Kept name', scopes: ['tracking:read'] } }),
      ),
    );
    const params = { clientId: String(made.client.clientId) };
    await call(api, request(alice, 'PATCH', CLIENT, { params, body: { enabled: false } }));
    const stale = { ...alice, authTime: Math.floor(Date.now() / 1000) - RECENT_LOGIN_SECONDS - 5 };
    const refused = await call(
      api,
      request(stale, 'PATCH', CLIENT, { params, body: { name: 'New name', enabled: true } }),
    );
    expect(refused.statusCode).toBe(403);
    expect(bodyOf(refused).type).toBe('urn:parcel-auth:problem:recent-login-required');
    expect(await clients.findClient(params.clientId)).toMatchObject({ name: 'Kept name', enabled: false });
    const events = (
      bodyOf(await call(api, request(alice, 'GET', EVENTS))).events as Record<string, unknown>[]
    )
      .filter((event) => event.clientId === params.clientId)
      .map((event) => event.type);
    expect(events).toEqual(['client.disabled', 'client.created']);
  });

  it('refuses a query parameter a route does not take, on every route, with 400 naming it', async () => {
    const alice = await signIn('admin-alice');
    const params = { clientId: 'pcl_00000000000000000000' };
    for (const [method, resource] of [
      ['GET', CLIENTS],
      ['GET', CLIENT],
      ['GET', ADMINISTRATORS],
      ['DELETE', CLIENT],
    ] as const) {
      const refused = await call(
        api,
        request(alice, method, resource, { params, query: { customerId: 'C-2002' } }),
      );
      expect(refused.statusCode).toBe(400);
      expect(bodyOf(refused).invalidParams).toEqual([
        { name: 'customerId', reason: 'is not a query parameter of this route' },
      ]);
    }
  });

  it('refuses every call of an administrator’s access token once its session logged out, as the console’s Sign out does', async () => {
    const answer = await call(
      login,
      loginEvent(JSON.stringify({ username: 'admin-alice', password: PASSWORD })),
    );
    const { token: accessToken, refreshToken } = bodyOf(answer) as { token: string; refreshToken: string };
    const alice = gatewayAuthorizerContext(await authorizer(authorizerEvent(`Bearer ${accessToken}`)));
    const other = await signIn('admin-alice');
    expect((await call(api, request(alice, 'GET', CLIENTS))).statusCode).toBe(200);

    expect((await call(logout, loginEvent(JSON.stringify({ refreshToken })))).statusCode).toBe(204);

    // The decision API Gateway may still hold: the function refuses it; the authorizer, anew.
    for (const [method, resource, body] of [
      ['GET', CLIENTS, undefined],
      ['POST', CLIENTS, { name: 'After sign-out', scopes: ['tracking:read'] }],
      ['POST', ADMINISTRATORS, { username: 'plain-carol' }],
    ] as const) {
      expect((await call(api, request(alice, method, resource, { body }))).statusCode).toBe(401);
    }
    await expect(authorizer(authorizerEvent(`Bearer ${accessToken}`))).rejects.toThrow('Unauthorized');
    expect((await accounts.findByUsername('plain-carol'))?.admin).toBe(false);
    // The same user's other session goes on.
    expect((await call(api, request(other, 'GET', CLIENTS))).statusCode).toBe(200);
  });

  it('refuses bad bodies and ids with 400 problem+json, before anything is written', async () => {
    const alice = await signIn('admin-alice');
    const before = (await clients.listClients('C-2001')).length;
    for (const body of [
      { name: '', scopes: ['tracking:read'] },
      { name: ' padded', scopes: ['tracking:read'] },
      { name: 'evil\u202Egnp.exe', scopes: ['tracking:read'] },
      { name: 'x'.repeat(101), scopes: ['tracking:read'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['customer:admin'] },
      { name: 'x', scopes: ['tokens:introspect'] },
      { name: 'x', scopes: ['tracking:read', 'tracking:read'] },
      { name: 'x', scopes: ['tracking:read'], customerId: 'C-2002' },
    ]) {
      const answer = await call(api, request(alice, 'POST', CLIENTS, { body }));
      expect(answer.statusCode).toBe(400);
    }
    const badId = await call(api, request(alice, 'GET', CLIENT, { params: { clientId: 'pcl_zz' } }));
    expect(badId.statusCode).toBe(400);
    const badExpiry = await call(
      api,
      request(alice, 'POST', SECRETS, {
        params: { clientId: 'pcl_00000000000000000000' },
        body: { expireOthersInSeconds: 30 * 86_400 + 1 },
      }),
    );
    expect(badExpiry.statusCode).toBe(400);
    expect((await clients.listClients('C-2001')).length).toBe(before);
  });
});

describe('the customer’s passkey policy', () => {
  const POLICY = '/api/v1/customer/security-policy';
  /** A passkey's session, as the authorizer hands its decision on (lib/auth/authorizer.ts). */
  const withPasskey = (who: Authorizer): Authorizer => ({ ...who, signIn: 'passkey' });
  const STEP_UP =
    'Bearer error="insufficient_user_authentication", error_description="A sign-in with a passkey is required", acr_values="phr"';

  it('is off until a passkey’s session turns it on; then a password’s session administers nothing, with RFC 9470’s challenge', async () => {
    const alice = await signIn('admin-alice');
    expect(bodyOf(await call(api, request(alice, 'GET', POLICY)))).toEqual({
      administratorsRequirePasskey: false,
      shipmentsWriteRequiresDpop: false,
    });

    const fromPassword = await call(
      api,
      request(alice, 'PUT', POLICY, { body: { administratorsRequirePasskey: true } }),
    );
    expect(fromPassword.statusCode).toBe(401);
    expect(fromPassword.headers?.['WWW-Authenticate']).toBe(STEP_UP);
    expect(bodyOf(await call(api, request(alice, 'GET', POLICY)))).toEqual({
      administratorsRequirePasskey: false,
      shipmentsWriteRequiresDpop: false,
    });

    const on = await call(
      api,
      request(withPasskey(alice), 'PUT', POLICY, { body: { administratorsRequirePasskey: true } }),
    );
    expect(on.statusCode).toBe(200);
    try {
      const refused = await call(api, request(alice, 'GET', CLIENTS));
      expect(refused.statusCode).toBe(401);
      expect(refused.headers?.['WWW-Authenticate']).toBe(STEP_UP);
      expect(bodyOf(refused)).toMatchObject({
        type: 'urn:parcel-auth:problem:passkey-required',
        status: 401,
      });
      expect((await call(api, request(withPasskey(alice), 'GET', CLIENTS))).statusCode).toBe(200);
      // Another customer's administrators are not its.
      expect((await call(api, request(await signIn('admin-bob'), 'GET', CLIENTS))).statusCode).toBe(200);
      const { events } = await trail.list({ customerId: 'C-2001', limit: 100 });
      expect(events.map((event) => event.type)).toEqual(
        expect.arrayContaining(['policy.passkeys.required', 'administration.password.refused']),
      );
    } finally {
      const off = await call(
        api,
        request(withPasskey(alice), 'PUT', POLICY, { body: { administratorsRequirePasskey: false } }),
      );
      expect(off.statusCode).toBe(200);
    }
    expect((await call(api, request(alice, 'GET', CLIENTS))).statusCode).toBe(200);
  });

  it('sets the DPoP rule alone, keeping the passkey rule, in the trail', async () => {
    const alice = await signIn('admin-alice');
    const on = await call(api, request(alice, 'PUT', POLICY, { body: { shipmentsWriteRequiresDpop: true } }));
    expect(bodyOf(on)).toEqual({ administratorsRequirePasskey: false, shipmentsWriteRequiresDpop: true });
    const off = await call(
      api,
      request(alice, 'PUT', POLICY, { body: { shipmentsWriteRequiresDpop: false } }),
    );
    expect(bodyOf(off)).toEqual({ administratorsRequirePasskey: false, shipmentsWriteRequiresDpop: false });
    const { events } = await trail.list({ customerId: 'C-2001', limit: 100 });
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['policy.dpop.required', 'policy.dpop.optional']),
    );
  });

  it('refuses a body that sets no rule, or another, or not true or false, and changes nothing', async () => {
    const alice = withPasskey(await signIn('admin-alice'));
    for (const body of [
      {},
      { administratorsRequirePasskey: 'yes' },
      { shipmentsWriteRequiresDpop: 1 },
      { administratorsRequirePasskey: true, more: 1 },
    ]) {
      const answer = await call(api, request(alice, 'PUT', POLICY, { body }));
      expect(answer.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(bodyOf(await call(api, request(alice, 'GET', POLICY)))).toEqual({
      administratorsRequirePasskey: false,
      shipmentsWriteRequiresDpop: false,
    });
  });
});
