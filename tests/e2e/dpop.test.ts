/**
 * DPoP (RFC 9449) end to end (docs/clients.md, "Tokens bound to a key"): a client gets a token
 * bound to its key as a standard client library asks for one (panva's oauth4webapi, its `DPoP`
 * handle), and calls the API with it through serverless-offline, the real authorizer in front of
 * the real handlers; the same token as `Bearer`, without a proof, with a proof replayed, of
 * another key, for another URL or method, is refused 401 with the DPoP challenge; a client
 * registered for DPoP gets no token without a proof; introspection says what the token is bound to.
 */
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { ParcelClient } from '../../integrators/client/parcel-auth-client.ts';
import { accessTokenHash } from '../../lib/dpop/proof.ts';
import { discover, INSECURE } from '../support/platforms.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-DPOP';
const SHIPMENT = { recipient: { name: 'Petra Malá', city: 'Ostrava' }, parcels: [{ weightKg: 0.8 }] };

let stack: LocalStack;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let auth: oauth.ClientAuth;
let secret: string;
let keys: oauth.CryptoKeyPair;
let dpop: oauth.DPoPHandle;

/** A parcel of the customer's, made in beforeAll: tracking it answers 200. */
let parcel: string;
const trackingUrl = () => new URL(`${stack.baseUrl}/tracking/${parcel}`);

async function addClient(extra: readonly string[] = [], customerId = CUSTOMER) {
  const added = await stackAdmin(stack, [
    ...['client', 'add', customerId, '--scope', 'tracking:read', '--scope', 'shipments:write'],
    ...['--scope', 'tokens:introspect', ...extra],
  ]);
  return {
    client: { client_id: printedValue(added, 'client id') } as oauth.Client,
    auth: oauth.ClientSecretBasic(printedValue(added, 'secret')),
    secret: printedValue(added, 'secret'),
    printed: added,
  };
}

/** A token of `client`, bound to `handle`'s key when there is one. */
async function grant(handle?: oauth.DPoPHandle) {
  return oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(
      as,
      client,
      auth,
      { scope: 'tracking:read shipments:write' },
      { ...INSECURE, ...(handle !== undefined && { DPoP: handle }) },
    ),
  );
}

/** A proof made by hand (section 4.2), for what oauth4webapi would never send. */
async function proof(
  pair: oauth.CryptoKeyPair,
  claims: { htm: string; htu: string; ath?: string; iat?: number; jti?: string },
) {
  return new SignJWT({
    jti: claims.jti ?? crypto.randomUUID(),
    htm: claims.htm,
    htu: claims.htu,
    ...(claims.ath !== undefined && { ath: claims.ath }),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(pair.publicKey) })
    .setIssuedAt(claims.iat ?? Math.floor(Date.now() / 1000))
    .sign(pair.privateKey);
}

const track = (headers: Record<string, string>) => fetch(trackingUrl(), { headers, redirect: 'manual' });

beforeAll(async () => {
  stack = await startLocalStack();
  as = await discover(new URL(stack.baseUrl).origin);
  ({ client, auth, secret } = await addClient());
  keys = (await generateKeyPair('ES256', { extractable: true })) as oauth.CryptoKeyPair;
  dpop = oauth.DPoP(client, keys);
  const { access_token } = await grant();
  const created = await fetch(`${stack.baseUrl}/shipments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify(SHIPMENT),
  });
  expect(created.status).toBe(201);
  parcel = ((await created.json()) as { parcelNumber: string }).parcelNumber;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('the metadata', () => {
  it('lists the algorithms a DPoP proof may be signed with', () => {
    expect(as.dpop_signing_alg_values_supported).toEqual(['EdDSA', 'Ed25519', 'ES256', 'PS256']);
  });
});

describe('a token bound to a key', () => {
  it('is granted as oauth4webapi’s DPoP asks, of type DPoP, its cnf.jkt the key’s thumbprint', async () => {
    const granted = await grant(dpop);
    expect(granted.token_type).toBe('dpop');
    expect(decodeJwt(granted.access_token).cnf).toEqual({
      jkt: await calculateJwkThumbprint(await exportJWK(keys.publicKey)),
    });
  });

  it('creates and tracks shipments with oauth4webapi’s proofs, a new one for each call', async () => {
    const { access_token } = await grant(dpop);
    for (let call = 0; call < 2; call++) {
      const tracked = await oauth.protectedResourceRequest(
        access_token,
        'GET',
        trackingUrl(),
        undefined,
        undefined,
        {
          ...INSECURE,
          DPoP: dpop,
        },
      );
      expect(tracked.status).toBe(200);
    }
    const created = await oauth.protectedResourceRequest(
      access_token,
      'POST',
      new URL(`${stack.baseUrl}/shipments`),
      new Headers({ 'content-type': 'application/json' }),
      JSON.stringify(SHIPMENT),
      { ...INSECURE, DPoP: dpop },
    );
    expect(created.status).toBe(201);
  });

  it('is refused as Bearer, and without a proof, 401 with the DPoP challenge', async () => {
    const { access_token } = await grant(dpop);
    const asBearer = await track({ authorization: `Bearer ${access_token}` });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toBe(
      'DPoP error="invalid_token", algs="EdDSA Ed25519 ES256 PS256"',
    );
    expect(asBearer.headers.get('content-type')).toBe('application/problem+json');
    const unproven = await track({ authorization: `DPoP ${access_token}` });
    expect(unproven.status).toBe(401);
    expect(unproven.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
  });

  it('takes a proof once: the same proof again is refused, even answered from the authorizer’s cache', async () => {
    const { access_token } = await grant(dpop);
    const signed = await proof(keys, {
      htm: 'GET',
      htu: trackingUrl().href,
      ath: accessTokenHash(access_token),
    });
    const headers = { authorization: `DPoP ${access_token}`, dpop: signed };
    expect((await track(headers)).status).toBe(200);
    const replayed = await track(headers);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({
      type: 'urn:parcel-auth:problem:invalid-dpop-proof',
      detail: 'The DPoP proof was used before.',
    });
  });

  it('refuses a proof of another key, for another URL or method, without ath, or stale', async () => {
    const { access_token } = await grant(dpop);
    const ath = accessTokenHash(access_token);
    const stranger = (await generateKeyPair('ES256')) as oauth.CryptoKeyPair;
    const htu = trackingUrl().href;
    const proofs = [
      await proof(stranger, { htm: 'GET', htu, ath }),
      await proof(keys, { htm: 'GET', htu: `${stack.baseUrl}/tracking/99999999999999`, ath }),
      await proof(keys, { htm: 'POST', htu, ath }),
      await proof(keys, { htm: 'GET', htu }),
      await proof(keys, { htm: 'GET', htu, ath, iat: Math.floor(Date.now() / 1000) - 120 }),
    ];
    for (const signed of proofs) {
      const answer = await track({ authorization: `DPoP ${access_token}`, dpop: signed });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    }
  });

  it('is introspected as a DPoP token with its cnf', async () => {
    const { access_token } = await grant(dpop);
    const introspected = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, access_token, INSECURE),
    );
    expect(introspected).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: expect.any(String) },
    });
  });
});

describe('the integrators’ client library', () => {
  it('binds its tokens to dpopKeys and proves the key on every call, which a client registered for DPoP needs', async () => {
    const registered = await addClient(['--dpop']);
    const api = new ParcelClient({
      baseUrl: stack.baseUrl,
      credentials: {
        kind: 'client_credentials',
        clientId: registered.client.client_id,
        clientSecret: registered.secret,
        dpopKeys: keys,
      },
    });
    for (let call = 0; call < 2; call++) expect((await api.fetch(`/tracking/${parcel}`)).status).toBe(200);
    const created = await api.fetch('/shipments', { method: 'POST', json: SHIPMENT });
    expect(created.status).toBe(201);
    expect(decodeJwt(await api.token()).cnf).toBeDefined();
  });
});

describe('a token request', () => {
  it('refuses a proof replayed, or for another URL, with invalid_dpop_proof, and grants nothing', async () => {
    const signed = await proof(keys, { htm: 'POST', htu: String(as.token_endpoint) });
    const send = (dpopHeader: string, credentials: Record<string, string> = {}) =>
      fetch(String(as.token_endpoint), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: dpopHeader },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client.client_id,
          ...credentials,
        }),
      });
    // Without its credentials first: the client is refused, and the proof is not spent by it.
    expect((await send(signed)).status).toBe(401);
    const granted = await send(signed, { client_secret: secret });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toMatchObject({ token_type: 'DPoP' });
    const replayed = await send(signed, { client_secret: secret });
    expect(replayed.status).toBe(400);
    expect(await replayed.json()).toMatchObject({ error: 'invalid_dpop_proof' });
    const misdirected = await send(await proof(keys, { htm: 'POST', htu: `${stack.baseUrl}/oauth/revoke` }), {
      client_secret: secret,
    });
    expect(misdirected.status).toBe(400);
    expect(await misdirected.json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('of a client registered for DPoP without a proof is refused, and with one granted', async () => {
    const registered = await addClient(['--dpop']);
    expect(registered.printed).toContain('DPoP-bound tokens only');
    const refused = await oauth.clientCredentialsGrantRequest(
      as,
      registered.client,
      registered.auth,
      { scope: 'tracking:read' },
      INSECURE,
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_dpop_proof' });
    const bound = await oauth.processClientCredentialsResponse(
      as,
      registered.client,
      await oauth.clientCredentialsGrantRequest(
        as,
        registered.client,
        registered.auth,
        { scope: 'tracking:read' },
        { ...INSECURE, DPoP: oauth.DPoP(registered.client, keys) },
      ),
    );
    expect(bound.token_type).toBe('dpop');
  });

  it('without a proof still gets a bearer token, which the API takes as Bearer as before', async () => {
    const { access_token, token_type } = await grant();
    expect(token_type).toBe('bearer');
    expect((await track({ authorization: `Bearer ${access_token}` })).status).toBe(200);
    const asDpop = await track({ authorization: `DPoP ${access_token}` });
    expect(asDpop.status).toBe(401);
    expect(asDpop.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
  });
});

describe('the customer’s policy', () => {
  it('requires DPoP of its clients for shipments:write once an administrator sets it, and leaves tracking:read alone', async () => {
    // A customer of its own: the token endpoint trusts a rule it read for DPOP_POLICY_CACHE_SECONDS.
    const customerId = 'C-DPOP-POLICY';
    const password = 'correct horse battery staple';
    await stackAdmin(stack, ['user', 'add', 'dpop-admin', '--customer', customerId], `${password}\n`);
    await stackAdmin(stack, ['user', 'admin', 'grant', 'dpop-admin']);
    const login = await fetch(`${stack.baseUrl}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'dpop-admin', password }),
    });
    const { token } = (await login.json()) as { token: string };
    const policy = await fetch(`${stack.baseUrl}/customer/security-policy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ shipmentsWriteRequiresDpop: true }),
    });
    expect(await policy.json()).toEqual({
      administratorsRequirePasskey: false,
      shipmentsWriteRequiresDpop: true,
    });
    const held = await addClient([], customerId);
    const ask = (scope: string, options: oauth.TokenEndpointRequestOptions = {}) =>
      oauth.clientCredentialsGrantRequest(as, held.client, held.auth, { scope }, { ...INSECURE, ...options });
    const refused = await ask('tracking:read shipments:write');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.stringContaining('shipments:write'),
    });
    expect((await ask('tracking:read')).status).toBe(200);
    const bound = await ask('tracking:read shipments:write', { DPoP: oauth.DPoP(held.client, keys) });
    expect(bound.status).toBe(200);
  });
});
