/** Reading and importing the private keyring and the public key set; rotation: ops/keys/keyring.ts. */
import { readFile } from 'node:fs/promises';
import { type CryptoKey, importJWK, type JWK } from 'jose';
import * as v from 'valibot';

export const SIGNING_ALGORITHM = 'EdDSA';

const Base64Url = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/));

const Kid = v.pipe(v.string(), v.nonEmpty());

const Ed25519Jwk = {
  kty: v.literal('OKP'),
  crv: v.literal('Ed25519'),
  x: Base64Url,
  kid: Kid,
  alg: v.optional(v.literal(SIGNING_ALGORITHM)),
  use: v.optional(v.literal('sig')),
};

const PublicJwkSchema = v.object({
  ...Ed25519Jwk,
  /** Retired keys: the latest `iat` (epoch s) it signed. Unregistered: others ignore it (RFC 7517 §4). */
  signed_until: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});

export const PrivateJwkSchema = v.object({ ...Ed25519Jwk, d: Base64Url });

const JwksSchema = v.object({ keys: v.pipe(v.array(PublicJwkSchema), v.minLength(1)) });

const Timestamp = v.pipe(v.string(), v.isoTimestamp());

const KeyringSchema = v.object({
  active: PrivateJwkSchema,
  next: PrivateJwkSchema,
  retired: v.array(
    v.object({
      kid: Kid,
      retiredAt: Timestamp,
      // The next key, active from this one's retirement: the two shared every keyring copy in between.
      successor: v.optional(Kid),
    }),
  ),
  rotatedAt: Timestamp,
  // Optional only for keyrings written before it existed: keys rotate adds it.
  counterSecret: v.optional(v.pipe(Base64Url, v.minLength(43))),
});

export type PublicJwk = v.InferOutput<typeof PublicJwkSchema>;
export type PrivateJwk = v.InferOutput<typeof PrivateJwkSchema>;
export interface Jwks {
  readonly keys: readonly PublicJwk[];
}
export type Keyring = v.InferOutput<typeof KeyringSchema>;

export interface SigningKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

/** By `kid`: any other `kid` is rejected, never fetched. `signedUntil`: retired keys' `signed_until`. */
export interface VerificationKeys extends ReadonlyMap<string, CryptoKey> {
  readonly signedUntil: ReadonlyMap<string, number>;
}

export type KeySource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'ssm'; readonly name: string };

export interface KeySettings<TSources> {
  readonly sources: TSources;
  readonly reloadMs: number;
}

export async function readKeyMaterial(source: KeySource, region: string): Promise<string> {
  if (source.kind === 'file') return readFile(source.path, 'utf8');
  const { readParameter } = await import('../aws/ssm.ts');
  return readParameter(region, source.name);
}

function parseJson<TSchema extends v.GenericSchema>(schema: TSchema, text: string, what: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
  const result = v.safeParse(schema, json);
  // The issue messages name fields only; the key material itself is never echoed.
  if (!result.success)
    throw new Error(`${what} is not valid: ${result.issues.map((i) => v.getDotPath(i)).join(', ')}`);
  return result.output as v.InferOutput<TSchema>;
}

export const parseKeyring = (text: string): Keyring => parseJson(KeyringSchema, text, 'keyring');
export const parseJwks = (text: string): Jwks => parseJson(JwksSchema, text, 'key set');

/** The key of the login throttle's username counters' HMAC. */
export function counterSecretOf(keyring: Keyring): Uint8Array {
  if (keyring.counterSecret === undefined) {
    throw new Error('keyring has no counterSecret: run keys rotate to add one (docs/deploying.md)');
  }
  return Buffer.from(keyring.counterSecret, 'base64url');
}

export async function importSigningKey(jwk: PrivateJwk): Promise<SigningKey> {
  const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
  if (key instanceof Uint8Array) throw new Error('signing key imported as a symmetric secret');
  // Warms WebCrypto's Ed25519 path at load, so the first login does not pay for it.
  await crypto.subtle.sign('Ed25519', key, new Uint8Array(0));
  return { kid: jwk.kid, key };
}

export async function importVerificationKeys(jwks: Jwks): Promise<VerificationKeys> {
  const entries = await Promise.all(
    jwks.keys.map(async (jwk) => {
      const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
      if (key instanceof Uint8Array) throw new Error('verification key imported as a symmetric secret');
      // Warms WebCrypto's Ed25519 path and the key's handle at load (an all-zero signature never verifies).
      await crypto.subtle.verify('Ed25519', key, new Uint8Array(64), new Uint8Array(0));
      return [jwk.kid, key] as const;
    }),
  );
  const signedUntil = jwks.keys.flatMap(({ kid, signed_until }) =>
    signed_until === undefined ? [] : [[kid, signed_until] as const],
  );
  return Object.assign(new Map(entries), { signedUntil: new Map(signedUntil) });
}
