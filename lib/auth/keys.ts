/**
 * Token signing keys: Ed25519 (JWS `EdDSA`), identified by their RFC 7638 thumbprint as `kid`.
 *
 * The private key never lives in the repository or the CloudFormation template. The local
 * stage keeps it in a file under the data directory (created on first start); AWS stages
 * read it from an SSM SecureString at cold start. Verifiers get only the public key set.
 */
import { readFile } from 'node:fs/promises';
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import * as v from 'valibot';
import type { KeySource } from '../config.ts';

export const SIGNING_ALGORITHM = 'EdDSA';

const Base64Url = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]+$/));

const PublicJwkSchema = v.object({
  kty: v.literal('OKP'),
  crv: v.literal('Ed25519'),
  x: Base64Url,
  kid: v.pipe(v.string(), v.nonEmpty()),
  alg: v.optional(v.literal(SIGNING_ALGORITHM)),
  use: v.optional(v.literal('sig')),
});

const PrivateJwkSchema = v.object({ ...PublicJwkSchema.entries, d: Base64Url });

const JwksSchema = v.object({ keys: v.pipe(v.array(PublicJwkSchema), v.minLength(1)) });

export type PublicJwk = v.InferOutput<typeof PublicJwkSchema>;
export type PrivateJwk = v.InferOutput<typeof PrivateJwkSchema>;
export interface Jwks {
  readonly keys: readonly PublicJwk[];
}

/** An imported key, ready for jose. */
export interface SigningKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

/** The known verification keys by `kid`. A token whose `kid` is not here is rejected, never fetched. */
export type VerificationKeys = ReadonlyMap<string, CryptoKey>;

/** A fresh Ed25519 key pair as a private JWK with its thumbprint as `kid`. */
export async function generateSigningJwk(): Promise<PrivateJwk> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return v.parse(PrivateJwkSchema, { ...jwk, kid, alg: SIGNING_ALGORITHM, use: 'sig' });
}

/** The public half of a private JWK. */
export function toPublicJwk({ d: _private, ...publicPart }: PrivateJwk): PublicJwk {
  return publicPart;
}

/** Reads key material from its source: a file, or an SSM parameter (decrypted). */
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

export const parsePrivateJwk = (text: string): PrivateJwk => parseJson(PrivateJwkSchema, text, 'signing key');
export const parseJwks = (text: string): Jwks => parseJson(JwksSchema, text, 'key set');

/** Imports the signing key. Called once per container, at init. */
export async function importSigningKey(jwk: PrivateJwk): Promise<SigningKey> {
  const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
  if (key instanceof Uint8Array) throw new Error('signing key imported as a symmetric secret');
  return { kid: jwk.kid, key };
}

/** Imports every key of a public key set. Called once per container, at init. */
export async function importVerificationKeys(jwks: Jwks): Promise<VerificationKeys> {
  const entries = await Promise.all(
    jwks.keys.map(async (jwk) => {
      const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
      if (key instanceof Uint8Array) throw new Error('verification key imported as a symmetric secret');
      return [jwk.kid, key] as const;
    }),
  );
  return new Map(entries);
}
