/**
 * DPoP proofs (RFC 9449; lib/dpop/): their checks at a token request and at a protected call, and
 * their single use, with keys and signatures made by jose, never mocked.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { checkProtectedCall, grantBinding, tokenRequestProof } from '../../lib/dpop/binding.ts';
import { accessTokenHash, verifyProof } from '../../lib/dpop/proof.ts';
import { memoryReplay } from '../support/memory-replay.ts';

const NOW = new Date('2026-12-02T12:00:00Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const TOKEN_URL = 'https://api.example/prod/api/v1/oauth/token';
const TRACKING_URL = 'https://api.example/prod/api/v1/tracking/12345678901234';
const ACCESS_TOKEN = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJwY2wifQ.c2ln';

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
const pairs = new Map<string, Pair>();
async function pairOf(alg: string): Promise<Pair> {
  const found = pairs.get(alg);
  if (found !== undefined) return found;
  const made = await generateKeyPair(alg, { extractable: true });
  pairs.set(alg, made);
  return made;
}

interface ProofOptions {
  alg?: string;
  typ?: string;
  jwk?: JWK;
  htm?: string;
  htu?: string;
  iat?: number;
  jti?: string | null;
  ath?: string;
  signWith?: Pair['privateKey'];
}

/** A proof as a client makes it (section 4.2), `options` aside. */
async function proof(options: ProofOptions = {}) {
  const alg = options.alg ?? 'ES256';
  const pair = await pairOf(alg);
  const claims: Record<string, unknown> = {
    htm: options.htm ?? 'POST',
    htu: options.htu ?? TOKEN_URL,
    ...(options.jti !== null && { jti: options.jti ?? crypto.randomUUID() }),
    ...(options.ath !== undefined && { ath: options.ath }),
  };
  return new SignJWT(claims)
    .setProtectedHeader({
      alg,
      typ: options.typ ?? 'dpop+jwt',
      jwk: options.jwk ?? (await exportJWK(pair.publicKey)),
    })
    .setIssuedAt(options.iat ?? NOW_SECONDS)
    .sign(options.signWith ?? pair.privateKey);
}

const thumbprintOf = async (alg: string) =>
  calculateJwkThumbprint(await exportJWK((await pairOf(alg)).publicKey), 'sha256');

const atToken = { method: 'POST', url: TOKEN_URL, now: NOW };
const refused = { code: 'INVALID_DPOP_PROOF' };

describe('a DPoP proof at the token endpoint', () => {
  it.each(['ES256', 'EdDSA', 'Ed25519', 'PS256'])(
    'takes one signed with %s and answers its key’s thumbprint',
    async (alg) => {
      const checked = await verifyProof(await proof({ alg }), atToken);
      expect(checked.jkt).toBe(await thumbprintOf(alg));
      expect(checked.iat).toBe(NOW_SECONDS);
    },
  );

  it('takes the URL with a query or fragment added, which the comparison drops (section 4.3, check 9)', async () => {
    await expect(verifyProof(await proof({ htu: `${TOKEN_URL}?a=1#b` }), atToken)).resolves.toBeDefined();
  });

  it.each<[string, ProofOptions, RegExp]>([
    ['of another type', { typ: 'JWT' }, /type dpop\+jwt/],
    ['for another method', { htm: 'GET' }, /htm/],
    ['for another URL', { htu: 'https://api.example/prod/api/v1/oauth/revoke' }, /htu/],
    ['for another host', { htu: 'https://evil.example/prod/api/v1/oauth/token' }, /htu/],
    ['with an htu that is no URL', { htu: 'token' }, /htu/],
    ['made 61 seconds ago', { iat: NOW_SECONDS - 61 }, /iat/],
    ['made 61 seconds ahead', { iat: NOW_SECONDS + 61 }, /iat/],
    ['without a jti', { jti: null }, /JWT/],
    ['with a jti of 257 characters', { jti: 'j'.repeat(257) }, /jti/],
    ['with an ath, at a token request', { ath: accessTokenHash(ACCESS_TOKEN) }, /ath/],
  ])('refuses one %s', async (_name, options, detail) => {
    await expect(verifyProof(await proof(options), atToken)).rejects.toMatchObject({
      ...refused,
      detail: expect.stringMatching(detail),
    });
  });

  it('refuses a proof whose header key did not sign it', async () => {
    const other = await generateKeyPair('ES256');
    const jwk = await exportJWK(other.publicKey);
    await expect(verifyProof(await proof({ jwk }), atToken)).rejects.toMatchObject(refused);
  });

  it('refuses a proof whose header carries the private key', async () => {
    const pair = await pairOf('ES256');
    const jwk = await exportJWK(pair.privateKey);
    await expect(verifyProof(await proof({ jwk }), atToken)).rejects.toMatchObject(refused);
  });

  it('refuses a proof signed with a symmetric key, whatever the header says', async () => {
    const secret = new TextEncoder().encode('a-shared-secret-of-thirty-two-bytes!');
    const forged = await new SignJWT({ htm: 'POST', htu: TOKEN_URL, jti: 'x' })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct' } })
      .setIssuedAt(NOW_SECONDS)
      .sign(secret);
    await expect(verifyProof(forged, atToken)).rejects.toMatchObject(refused);
  });

  it('refuses a proof longer than 4096 characters before any cryptography', async () => {
    await expect(verifyProof(`${'a'.repeat(4097)}`, atToken)).rejects.toMatchObject({
      ...refused,
      detail: expect.stringMatching(/too long/),
    });
  });

  it('refuses two DPoP headers, and takes a request without one as unbound', async () => {
    const one = await proof();
    await expect(tokenRequestProof([one, one], { url: () => TOKEN_URL, now: NOW })).rejects.toMatchObject(
      refused,
    );
    await expect(tokenRequestProof([], { url: () => TOKEN_URL, now: NOW })).resolves.toBeUndefined();
  });
});

const grantOf = (client: { dpopBoundAccessTokens?: boolean }, scopes: string[] = ['tracking:read']) => ({
  client,
  customerId: 'C-1001',
  scopes,
  quota: [],
});

describe('a grant’s binding', () => {
  it('binds to the proof’s key and spends its jti: the same proof again is refused', async () => {
    const deps = { replay: memoryReplay(), customerRequiresDpop: async () => false };
    const checked = await verifyProof(await proof(), atToken);
    await expect(grantBinding(deps, grantOf({}), checked)).resolves.toBe(checked.jkt);
    await expect(grantBinding(deps, grantOf({}), checked)).rejects.toMatchObject({
      ...refused,
      detail: 'The DPoP proof was used before.',
    });
  });

  it('refuses a client registered for DPoP without a proof, and binds nothing for another', async () => {
    const deps = { replay: memoryReplay(), customerRequiresDpop: async () => false };
    await expect(
      grantBinding(deps, grantOf({ dpopBoundAccessTokens: true }), undefined),
    ).rejects.toMatchObject({
      ...refused,
      detail: expect.stringMatching(/registered for DPoP/),
    });
    await expect(grantBinding(deps, grantOf({}), undefined)).resolves.toBeUndefined();
    expect(deps.replay.spent.size).toBe(0);
  });

  it('refuses a grant of shipments:write without a proof where the customer requires DPoP, reading its policy only then', async () => {
    const asked: string[] = [];
    const deps = {
      replay: memoryReplay(),
      customerRequiresDpop: async (customerId: string) => {
        asked.push(customerId);
        return true;
      },
    };
    await expect(grantBinding(deps, grantOf({}, ['shipments:write']), undefined)).rejects.toMatchObject({
      ...refused,
      detail: expect.stringMatching(/customer requires DPoP-bound tokens for shipments:write/),
    });
    await expect(grantBinding(deps, grantOf({}, ['tracking:read']), undefined)).resolves.toBeUndefined();
    const checked = await verifyProof(await proof(), atToken);
    await expect(grantBinding(deps, grantOf({}, ['shipments:write']), checked)).resolves.toBe(checked.jkt);
    expect(asked).toEqual(['C-1001']);
  });
});

describe('a protected call', () => {
  const call = async (overrides: Partial<Parameters<typeof checkProtectedCall>[1]> = {}) => ({
    authorization: `DPoP ${ACCESS_TOKEN}`,
    dpop: [await proof({ htm: 'GET', htu: TRACKING_URL, ath: accessTokenHash(ACCESS_TOKEN) })],
    method: 'GET',
    url: () => TRACKING_URL,
    jkt: await thumbprintOf('ES256'),
    now: NOW,
    ...overrides,
  });

  it('takes a bound token as DPoP with a proof of its key, once', async () => {
    const deps = { replay: memoryReplay() };
    const good = await call();
    await expect(checkProtectedCall(deps, good)).resolves.toBeUndefined();
    await expect(checkProtectedCall(deps, good)).rejects.toMatchObject(refused);
  });

  it('takes a bearer token as Bearer without reading the URL or any DPoP header', async () => {
    const deps = { replay: memoryReplay() };
    const url = () => {
      throw new Error('read');
    };
    await expect(
      checkProtectedCall(deps, await call({ authorization: `bearer ${ACCESS_TOKEN}`, jkt: undefined, url })),
    ).resolves.toBeUndefined();
  });

  it('refuses a bound token as Bearer, and a bearer token as DPoP, with INVALID_BOUND_TOKEN', async () => {
    const deps = { replay: memoryReplay() };
    await expect(
      checkProtectedCall(deps, await call({ authorization: `Bearer ${ACCESS_TOKEN}` })),
    ).rejects.toMatchObject({ code: 'INVALID_BOUND_TOKEN' });
    await expect(checkProtectedCall(deps, await call({ jkt: undefined }))).rejects.toMatchObject({
      code: 'INVALID_BOUND_TOKEN',
    });
  });

  it.each<[string, () => Promise<ProofOptions>]>([
    ['without ath', async () => ({ htm: 'GET', htu: TRACKING_URL })],
    ['for another token', async () => ({ htm: 'GET', htu: TRACKING_URL, ath: accessTokenHash('other') })],
    ['for another route', async () => ({ htm: 'GET', htu: TOKEN_URL, ath: accessTokenHash(ACCESS_TOKEN) })],
    ['for POST', async () => ({ htm: 'POST', htu: TRACKING_URL, ath: accessTokenHash(ACCESS_TOKEN) })],
    [
      'of another key',
      async () => ({ alg: 'EdDSA', htm: 'GET', htu: TRACKING_URL, ath: accessTokenHash(ACCESS_TOKEN) }),
    ],
  ])('refuses a proof %s', async (_name, options) => {
    const deps = { replay: memoryReplay() };
    await expect(
      checkProtectedCall(deps, await call({ dpop: [await proof(await options())] })),
    ).rejects.toMatchObject(refused);
    expect(deps.replay.spent.size).toBe(0);
  });

  it('refuses a bound token with no DPoP header, or two', async () => {
    const deps = { replay: memoryReplay() };
    await expect(checkProtectedCall(deps, await call({ dpop: [] }))).rejects.toMatchObject(refused);
    const twice = await call();
    await expect(
      checkProtectedCall(deps, { ...twice, dpop: [twice.dpop[0] ?? '', twice.dpop[0] ?? ''] }),
    ).rejects.toMatchObject(refused);
  });
});
