/**
 * A client's public keys, for `private_key_jwt` (RFC 7523 section 2.2, OpenID Connect Core
 * section 9; docs/clients.md, "Keys instead of secrets"): a client registered with a JWK Set
 * holds no secret, and authenticates with a JWT it signs itself. A key is a credential of the
 * client as a secret is (secrets.ts; the JWK Set's rules: jwks.ts), in the same slots: at
 * most MAX_LIVE_SECRETS live, its own id and last use, its tokens revoked when it goes. Only public keys of EdDSA (Ed25519), ES256
 * (P-256) and PS256 (RSA of 2048 bits or more) are taken, as node-oidc-provider's FAPI 2.0
 * profile allows; a private member (`d`, the primes) is refused, never stored.
 */
import { createPublicKey } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import * as v from 'valibot';
import { ASSERTION_ALGORITHMS, type AssertionAlgorithm } from './algorithms.ts';

/** RFC 7523 section 2.2. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** How far ahead an assertion's `exp` may be: its `jti` is kept that long, no longer. */
export const MAX_ASSERTION_SECONDS = 300;

/** Longer than any assertion of one key's signature (a PS256 one of a 4096-bit key is ~1 KB). */
export const MAX_ASSERTION_LENGTH = 4096;

const Base64Url = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/, 'must be base64url'), v.minLength(min), v.maxLength(max));
const KidSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64, 'must be at most 64 characters'),
  v.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
);
/** The members any key may carry besides its own: a signing key's, as WebCrypto and other tools export them. */
const use = {
  use: v.optional(v.literal('sig')),
  kid: v.optional(KidSchema),
  key_ops: v.optional(v.array(v.literal('verify'))),
  ext: v.optional(v.boolean()),
};

/**
 * Whether node's crypto takes the JWK as the public key it says it is: a point on its curve, an
 * RSA modulus of 2048 bits or more (its length in characters alone lets a leading zero byte
 * through) and an odd public exponent of 65537 or more (an exponent of 1 makes every message
 * its own signature).
 */
function isSoundPublicKey(jwk: { readonly kty: string }): boolean {
  try {
    const key = createPublicKey({ key: { ...jwk }, format: 'jwk' });
    if (key.type !== 'public') return false;
    if (jwk.kty !== 'RSA') return true;
    const { modulusLength, publicExponent } = key.asymmetricKeyDetails ?? {};
    return (
      (modulusLength ?? 0) >= 2048 &&
      publicExponent !== undefined &&
      publicExponent >= 65537n &&
      publicExponent % 2n === 1n
    );
  } catch {
    return false;
  }
}

/** One public key of a client's JWK Set; the members of no key type (a private one's) are refused. */
const JwkShapeSchema = v.variant('kty', [
  v.strictObject({
    kty: v.literal('OKP'),
    crv: v.literal('Ed25519'),
    x: Base64Url(43, 43),
    alg: v.optional(v.picklist(['EdDSA', 'Ed25519'])),
    ...use,
  }),
  v.strictObject({
    kty: v.literal('EC'),
    crv: v.literal('P-256'),
    x: Base64Url(43, 43),
    y: Base64Url(43, 43),
    alg: v.optional(v.literal('ES256')),
    ...use,
  }),
  v.strictObject({
    kty: v.literal('RSA'),
    // 2048 to 8192 bits.
    n: Base64Url(342, 1366),
    e: Base64Url(1, 8),
    alg: v.optional(v.literal('PS256')),
    ...use,
  }),
]);
export const ClientJwkSchema = v.pipe(
  JwkShapeSchema,
  v.check(
    (jwk: v.InferOutput<typeof JwkShapeSchema>) => isSoundPublicKey(jwk),
    'must be a sound public key: a point on its curve, or RSA of 2048 bits or more with an odd exponent of 65537 or more',
  ),
);
export type ClientJwk = v.InferOutput<typeof ClientJwkSchema>;

/** A key as a client holds it: the JWK, and the `kid` it is known by (its RFC 7638 thumbprint where it had none). */
export interface ClientKey {
  readonly kid: string;
  readonly jwk: ClientJwk;
}

/** The algorithms a key signs with. */
export function algorithmsOf(jwk: ClientJwk): readonly AssertionAlgorithm[] {
  // A stored key is read as written (lib/clients/dynamodb-items.ts): any other type signs nothing.
  switch (jwk.kty) {
    case 'OKP':
      return ['EdDSA', 'Ed25519'];
    case 'EC':
      return ['ES256'];
    case 'RSA':
      return ['PS256'];
    default:
      return [];
  }
}

/** The key as stored: its `kid` given, or its thumbprint. */
export async function clientKeyOf(jwk: ClientJwk): Promise<ClientKey> {
  const kid = jwk.kid ?? (await calculateJwkThumbprint(jwk as JWK, 'sha256'));
  return { kid, jwk: { ...jwk, kid } };
}

/** What a verified assertion says: the key that signed it, its `jti` and when it expires. */
export interface VerifiedAssertion {
  readonly kid: string;
  readonly jti: string;
  /** Epoch seconds: its `jti` is kept spent until then, past the last moment it could be taken. */
  readonly keepUntil: number;
}

export type AssertionCheck =
  | { readonly ok: true; readonly assertion: VerifiedAssertion }
  | { readonly ok: false; readonly reason: string };

/** How far a clock may be off: an assertion is taken until its `exp` and this many seconds. */
export const ASSERTION_CLOCK_TOLERANCE_SECONDS = 5;

/**
 * Whether `assertion` is a JWT one of `keys` signed for `clientId` (`iss` and `sub`), for this
 * server (`aud` the issuer alone, a string or a one-element array: rfc7523bis and FAPI 2.0
 * section 5.3.2.1, so an assertion a client made for another server naming our token endpoint,
 * or several audiences, is refused: the audience injection of CVE-2025-27370), expiring within
 * MAX_ASSERTION_SECONDS of `now`, with a `jti`. The key is the one its header's `kid` names; without a `kid`, each key of the
 * header's algorithm in turn (two at most). The `jti`'s single use is the caller's.
 */
export async function verifyAssertion(
  assertion: string,
  keys: readonly ClientKey[],
  expected: { readonly clientId: string; readonly issuer: string; readonly now: Date },
): Promise<AssertionCheck> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    return { ok: false, reason: 'assertion not a JWT' };
  }
  if (!(ASSERTION_ALGORITHMS as readonly unknown[]).includes(header.alg))
    return { ok: false, reason: 'assertion algorithm not allowed' };
  const candidates = keys.filter(
    (key) =>
      algorithmsOf(key.jwk).includes(header.alg as AssertionAlgorithm) &&
      (header.kid === undefined || key.kid === header.kid),
  );
  if (candidates.length === 0) return { ok: false, reason: 'no key of the assertion' };
  const nowSeconds = Math.floor(expected.now.getTime() / 1000);
  let reason = 'assertion signature invalid';
  for (const key of candidates) {
    try {
      const { payload } = await jwtVerify(assertion, await importJWK(key.jwk as JWK, header.alg), {
        algorithms: [header.alg as string],
        issuer: expected.clientId,
        subject: expected.clientId,
        audience: expected.issuer,
        requiredClaims: ['exp', 'jti'],
        currentDate: expected.now,
        clockTolerance: ASSERTION_CLOCK_TOLERANCE_SECONDS,
      });
      const { exp, jti, aud } = payload;
      // jose takes an array that holds the issuer among others: one audience only.
      if (Array.isArray(aud) && aud.length !== 1)
        return { ok: false, reason: 'assertion audience not ours alone' };
      if (typeof exp !== 'number' || exp > nowSeconds + MAX_ASSERTION_SECONDS)
        return { ok: false, reason: 'assertion expires too late' };
      if (typeof jti !== 'string' || jti === '' || jti.length > 256)
        return { ok: false, reason: 'assertion jti invalid' };
      return {
        ok: true,
        assertion: { kid: key.kid, jti, keepUntil: exp + ASSERTION_CLOCK_TOLERANCE_SECONDS + 60 },
      };
    } catch (error) {
      reason = `assertion refused: ${(error as { code?: string }).code ?? 'invalid'}`;
    }
  }
  return { ok: false, reason };
}
