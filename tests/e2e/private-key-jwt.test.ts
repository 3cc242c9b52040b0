/**
 * `private_key_jwt` (RFC 7523) end to end (docs/clients.md, "Keys instead of secrets"): a client
 * and a platform registered with the admin CLI's `--jwks`, authenticating as a standard client
 * library does (panva's oauth4webapi, `PrivateKeyJwt`) at the token endpoint, PAR, revocation
 * and introspection of the local stack; and assertions made by hand with jose: one replayed, one
 * for another audience, one lasting too long, one of a key the client does not hold, one of an
 * algorithm not taken, and a secret presented for a client of keys. The integrators' client
 * library signs its own assertions with WebCrypto.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { ParcelClient } from '../../integrators/client/parcel-auth-client.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { send } from '../support/http.ts';
import { discover, INSECURE, pushAuthorization } from '../support/platforms.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-PKJWT';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let stack: LocalStack;
let as: oauth.AuthorizationServer;
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
type Key = KeyPair['privateKey'];
let keys: KeyPair;
/** The kid of `keys`: the rotation below moves both on. */
let kid = 'k1';
let clientId: string;

const files: string[] = [];

/** A JWK Set file of `publicKey` alone, as an integrator hands it over. */
async function jwksFile(publicKey: Key, kid: string) {
  const file = join(tmpdir(), `jwks-${randomUUID()}.json`);
  files.push(file);
  await writeFile(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, use: 'sig' }] }));
  return file;
}

/** An assertion signed by `key`, as RFC 7523 section 3 asks, `overrides` aside. */
const assertion = (
  key: Key,
  overrides: { alg?: string; aud?: string; expiresIn?: number; kid?: string; iss?: string } = {},
) =>
  new SignJWT({ jti: randomBytes(16).toString('base64url') })
    .setProtectedHeader({ alg: overrides.alg ?? 'EdDSA', kid: overrides.kid ?? 'k1' })
    .setIssuer(overrides.iss ?? clientId)
    .setSubject(clientId)
    .setAudience(overrides.aud ?? as.issuer)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (overrides.expiresIn ?? 60))
    .sign(key);

/** A client credentials grant with a form of our own making. */
const grant = (form: Record<string, string>) =>
  fetch(String(as.token_endpoint), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...form }),
  });

const asserted = (signed: string) => ({ client_assertion_type: ASSERTION_TYPE, client_assertion: signed });

beforeAll(async () => {
  stack = await startLocalStack();
  as = await discover(new URL(stack.baseUrl).origin);
  keys = await generateKeyPair('Ed25519');
  const added = await stackAdmin(stack, [
    ...['client', 'add', CUSTOMER, '--scope', 'tracking:read', '--scope', 'tokens:introspect'],
    ...['--jwks', await jwksFile(keys.publicKey, 'k1')],
  ]);
  clientId = printedValue(added, 'client id');
  expect(added).not.toMatch(/^secret:/m);
  expect(added).toContain('(kid k1)');
}, 120_000);
afterAll(async () => {
  await Promise.all(files.map((file) => rm(file, { force: true })));
  await stack?.stop();
});

describe('the metadata', () => {
  it('lists private_key_jwt and the algorithms an assertion may be signed with, at each endpoint', () => {
    for (const endpoint of ['token', 'revocation', 'introspection'] as const) {
      expect(as[`${endpoint}_endpoint_auth_methods_supported`]).toContain('private_key_jwt');
      expect(as[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual([
        'EdDSA',
        'Ed25519',
        'ES256',
        'PS256',
      ]);
    }
  });
});

describe('a client of keys', () => {
  it('gets a token as oauth4webapi’s PrivateKeyJwt asks for it, which tracks parcels, and revokes and introspects it so', async () => {
    const client = { client_id: clientId };
    const auth = oauth.PrivateKeyJwt({ key: keys.privateKey, kid: 'k1' });
    const granted = async () =>
      oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'tracking:read' }, INSECURE),
      );
    const [kept, revoked] = [await granted(), await granted()];
    expect(kept).toMatchObject({ scope: 'tracking:read' });
    const tracked = await send(stack, 'GET', '/tracking/12345678901234', {
      headers: { authorization: `Bearer ${kept.access_token}` },
    });
    expect(tracked.status).toBe(404);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, revoked.access_token, INSECURE),
    );
    const introspected = async (token: string) =>
      oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, token, INSECURE),
      );
    expect(await introspected(kept.access_token)).toMatchObject({ active: true, client_id: clientId });
    expect((await introspected(revoked.access_token)).active).toBe(false);
  });

  it('takes an assertion once: the same one again is invalid_client, however soon, counted as a replay', async () => {
    const signed = await assertion(keys.privateKey);
    expect((await grant(asserted(signed))).status).toBe(200);
    const replayed = await grant(asserted(signed));
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ error: 'invalid_client' });
    // Counted apart from other refusals: a valid assertion sent twice was stolen.
    await expect.poll(() => stack.output()).toContain('"reason":"ReplayedAssertion"');
  });

  it('takes the issuer alone as its audience: the token endpoint’s URL, or another server, is refused', async () => {
    for (const aud of [String(as.token_endpoint), 'https://elsewhere.example']) {
      const answer = await grant(asserted(await assertion(keys.privateKey, { aud })));
      expect(answer.status, aud).toBe(401);
    }
  });

  it('refuses an assertion lasting over five minutes, one of a key it does not hold, one of HS256, and one naming another client', async () => {
    const stranger = await generateKeyPair('Ed25519');
    const refused = [
      await assertion(keys.privateKey, { expiresIn: 600 }),
      await assertion(stranger.privateKey),
      await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(as.issuer)
        .setExpirationTime('1m')
        .sign(randomBytes(32)),
    ];
    for (const signed of refused) {
      const answer = await grant(asserted(signed));
      expect(answer.status).toBe(401);
      expect(await answer.json()).toMatchObject({ error: 'invalid_client' });
    }
    // Signed by the client's key but naming another client: the other's keys do not verify it.
    const other = await grant(
      asserted(await assertion(keys.privateKey, { iss: 'pcl_00000000000000000000' })),
    );
    expect(other.status).toBe(401);
  });

  it('refuses a secret: a client of keys has none, and takes none', async () => {
    const answer = await grant({ client_id: clientId, client_secret: newClientSecret(new Date()).secret });
    expect(answer.status).toBe(401);
    const added = await stackAdmin(stack, ['client', 'secret', 'add', clientId]).catch(
      (error: Error) => error.message,
    );
    expect(String(added)).toContain('authenticates with keys');
  });

  it('refuses a form that mixes an assertion with a secret, or names another assertion type', async () => {
    const signed = await assertion(keys.privateKey);
    const mixed = await grant({ ...asserted(signed), client_secret: 'pcs_x' });
    expect(mixed.status).toBe(400);
    const typed = await grant({ client_assertion_type: 'urn:other', client_assertion: signed });
    expect(typed.status).toBe(400);
  });
});

describe('a key rotation', () => {
  it('adds the next key beside the first, and removing the first refuses it and leaves the next working', async () => {
    const next = await generateKeyPair('Ed25519');
    const added = await stackAdmin(stack, [
      'client',
      'secret',
      'add',
      clientId,
      '--jwks',
      await jwksFile(next.publicKey, 'k2'),
    ]);
    const nextId = /added key ([0-9a-f]{8}) \(kid k2\)/.exec(added)?.[1];
    expect(nextId).toBeDefined();
    expect((await grant(asserted(await assertion(next.privateKey, { kid: 'k2' })))).status).toBe(200);
    const shown = JSON.parse(await stackAdmin(stack, ['client', 'show', clientId])) as {
      secrets: { id: string; kid?: string }[];
    };
    expect(shown.secrets.map((slot) => slot.kid)).toEqual(['k1', 'k2']);
    const first = shown.secrets.find((slot) => slot.kid === 'k1')?.id ?? '';
    await stackAdmin(stack, ['client', 'secret', 'remove', clientId, first]);
    expect((await grant(asserted(await assertion(keys.privateKey)))).status).toBe(401);
    expect((await grant(asserted(await assertion(next.privateKey, { kid: 'k2' })))).status).toBe(200);
    keys = next;
    kid = 'k2';
  });
});

describe('the integrators’ client library', () => {
  it('gets a client of keys’ token with its private key alone, a new assertion for each grant', async () => {
    const api = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: {
        kind: 'client_credentials',
        clientId,
        privateKey: keys.privateKey,
        kid,
        issuer: as.issuer,
        scope: ['tracking:read'],
      },
    });
    expect((await api.fetch('/tracking/12345678901234')).status).toBe(404);
    // A second client, so a second grant: its assertion is its own (a replay would be 401).
    const again = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: { kind: 'client_credentials', clientId, privateKey: keys.privateKey, issuer: as.issuer },
    });
    expect((await again.fetch('/tracking/12345678901234')).status).toBe(404);
  });
});

describe('a platform of keys', () => {
  it('pushes its authorization request with PrivateKeyJwt', async () => {
    const platformKeys = await generateKeyPair('ES256');
    const added = await stackAdmin(stack, [
      ...['platform', 'add', 'Keyed Shop', '--redirect-uri', 'http://127.0.0.1:9/callback'],
      ...['--scope', 'tracking:read', '--jwks', await jwksFile(platformKeys.publicKey, 'p1')],
    ]);
    const platform = { client_id: printedValue(added, 'client id') };
    const { url } = await pushAuthorization(
      as,
      platform,
      oauth.PrivateKeyJwt({ key: platformKeys.privateKey, kid: 'p1' }),
      { redirectUri: 'http://127.0.0.1:9/callback', scope: 'tracking:read' },
    );
    expect(url).toContain('request_uri=');
  });
});
