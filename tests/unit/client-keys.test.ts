/**
 * A client's public keys and the `private_key_jwt` assertions they verify (lib/clients/keys.ts),
 * with keys and signatures made by jose and WebCrypto, never mocked.
 */
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ClientJwksSchema } from '../../lib/clients/jwks.ts';
import { type ClientKey, clientKeyOf, verifyAssertion } from '../../lib/clients/keys.ts';

const CLIENT = 'pcl_0123456789abcdef0123';
const ISSUER = 'https://auth.example/prod';
const NOW = new Date('2026-12-02T12:00:00Z');
const expected = { clientId: CLIENT, issuer: ISSUER, now: NOW };
const at = (seconds: number) => Math.floor(NOW.getTime() / 1000) + seconds;

async function keyPair(alg: 'EdDSA' | 'ES256' | 'PS256', kid?: string) {
  const pair = await generateKeyPair(alg);
  const jwk = v.parse(ClientJwksSchema, { keys: [{ ...(await exportJWK(pair.publicKey)), kid }] }).keys[0];
  if (jwk === undefined) throw new Error('no key');
  return { ...pair, key: await clientKeyOf(jwk) };
}

const sign = (
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'],
  header: { alg: string; kid?: string },
  claims: { aud?: string | string[]; exp?: number; jti?: string | undefined; iss?: string } = {},
) =>
  new SignJWT({
    ...('jti' in claims ? (claims.jti === undefined ? {} : { jti: claims.jti }) : { jti: 'a-1' }),
  })
    .setProtectedHeader(header)
    .setIssuer(claims.iss ?? CLIENT)
    .setSubject(CLIENT)
    .setAudience(claims.aud ?? ISSUER)
    .setExpirationTime(claims.exp ?? at(60))
    .sign(privateKey);

describe('a client’s JWK Set', () => {
  it('names a key without a kid by its RFC 7638 thumbprint', async () => {
    const { publicKey } = await generateKeyPair('EdDSA');
    const jwk = await exportJWK(publicKey);
    const [parsed] = v.parse(ClientJwksSchema, { keys: [jwk] }).keys;
    if (parsed === undefined) throw new Error('no key');
    expect((await clientKeyOf(parsed)).kid).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it('refuses a private key, a third key, two keys of one kid, a curve it does not take, a point off its curve, and RSA with exponent 1 or a short modulus', async () => {
    const ed = await generateKeyPair('EdDSA', { extractable: true });
    const pub = await exportJWK(ed.publicKey);
    const p384 = await exportJWK((await generateKeyPair('ES384')).publicKey);
    const p256 = await exportJWK((await generateKeyPair('ES256')).publicKey);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    // 2048 bits' worth of characters, its first byte zero: a 2040-bit modulus.
    const short = Buffer.from(String(rsa.n), 'base64url');
    short[0] = 0;
    for (const keys of [
      [{ ...p256, y: p256.x }],
      [{ ...rsa, e: 'AQ' }],
      [{ ...rsa, n: short.toString('base64url') }],
      [await exportJWK(ed.privateKey)],
      [
        { ...pub, kid: 'a' },
        { ...pub, kid: 'b' },
        { ...pub, kid: 'c' },
      ],
      [
        { ...pub, kid: 'a' },
        { ...pub, kid: 'a' },
      ],
      [p384],
      [],
    ])
      expect(v.is(ClientJwksSchema, { keys }), JSON.stringify(keys)).toBe(false);
  });
});

describe('an assertion', () => {
  it('is verified by the key its kid names, of each algorithm taken, for the issuer as a string or a one-element array', async () => {
    for (const alg of ['EdDSA', 'ES256', 'PS256'] as const) {
      const { privateKey, key } = await keyPair(alg, `k-${alg}`);
      for (const aud of [ISSUER, [ISSUER]]) {
        const signed = await sign(privateKey, { alg, kid: key.kid }, { aud });
        expect(await verifyAssertion(signed, [key], expected), `${alg} ${JSON.stringify(aud)}`).toEqual({
          ok: true,
          // Kept spent past the last moment it could be taken: its exp and the clock's tolerance.
          assertion: { kid: key.kid, jti: 'a-1', keepUntil: at(60) + 5 + 60 },
        });
      }
    }
  });

  it('is refused for the token endpoint’s URL, or for several audiences the issuer among them (audience injection)', async () => {
    const { privateKey, key } = await keyPair('EdDSA', 'k1');
    for (const aud of [`${ISSUER}/api/v1/oauth/token`, ['https://evil.example', ISSUER], [ISSUER, ISSUER]]) {
      const signed = await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { aud });
      expect((await verifyAssertion(signed, [key], expected)).ok, JSON.stringify(aud)).toBe(false);
    }
  });

  it('is refused when signed with HMAC under the public key’s own bytes', async () => {
    const { key } = await keyPair('EdDSA', 'k1');
    const forged = await new SignJWT({ jti: 'x' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(CLIENT)
      .setSubject(CLIENT)
      .setAudience(ISSUER)
      .setExpirationTime(at(60))
      .sign(new TextEncoder().encode(JSON.stringify(key.jwk)));
    expect((await verifyAssertion(forged, [key], expected)).ok).toBe(false);
  });

  it('without a kid, is tried against each of the client’s keys of its algorithm', async () => {
    const first = await keyPair('EdDSA', 'one');
    const second = await keyPair('EdDSA', 'two');
    const checked = await verifyAssertion(
      await sign(second.privateKey, { alg: 'EdDSA' }),
      [first.key, second.key],
      expected,
    );
    expect(checked).toMatchObject({ ok: true, assertion: { kid: 'two' } });
  });

  it('is refused unsigned, of HS256, of a key not the client’s, for another audience or client, past five minutes, or without a jti', async () => {
    const { privateKey, key } = await keyPair('EdDSA', 'k1');
    const stranger = await keyPair('EdDSA', 'k1');
    const keys: ClientKey[] = [key];
    const refused = [
      new UnsecuredJWT({ jti: 'x' })
        .setIssuer(CLIENT)
        .setSubject(CLIENT)
        .setAudience(ISSUER)
        .setExpirationTime(at(60))
        .encode(),
      await new SignJWT({ jti: 'x' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setIssuer(CLIENT)
        .setSubject(CLIENT)
        .setAudience(ISSUER)
        .setExpirationTime(at(60))
        .sign(new Uint8Array(32)),
      await sign(stranger.privateKey, { alg: 'EdDSA', kid: 'k1' }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { aud: 'https://elsewhere.example' }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { iss: 'pcl_ffffffffffffffffffff' }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { exp: at(301) }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { exp: at(-60) }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'k1' }, { jti: undefined }),
      await sign(privateKey, { alg: 'EdDSA', kid: 'other' }),
      'not.a.jwt',
    ];
    for (const [index, assertion] of refused.entries())
      expect((await verifyAssertion(assertion, keys, expected)).ok, `refusal ${index}`).toBe(false);
  });
});
