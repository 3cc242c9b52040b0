/**
 * Token signing keys: Ed25519 (JWS `EdDSA`), identified by their RFC 7638 thumbprint as `kid`.
 *
 * A stage has two pieces of key material:
 * - the keyring (private): the `active` key that signs, the `next` key that will sign after
 *   the next rotation, the kids of `retired` keys with when they stopped signing, and the
 *   `counterSecret` that keys the login throttle's username counters;
 * - the key set (public JWKS): active, next and retired keys, what verifiers load.
 *
 * The next key is published one rotation before it signs, so a verifier that loaded the
 * key set at any time since the last rotation already knows it: rotating never makes a
 * fresh token fail at a verifier that has not reloaded yet. A retired key stays published
 * until every token it signed has expired, so rotation does not end sessions either.
 *
 * The private keys never live in the repository or the CloudFormation template. The local
 * stage keeps them in files under the data directory; AWS stages in SSM parameters.
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
import { CLOCK_TOLERANCE_SECONDS } from './tokens.ts';

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

const Timestamp = v.pipe(v.string(), v.isoTimestamp());

const KeyringSchema = v.object({
  active: PrivateJwkSchema,
  next: PrivateJwkSchema,
  retired: v.array(v.object({ kid: v.pipe(v.string(), v.nonEmpty()), retiredAt: Timestamp })),
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
/** Where key material lives: a file (local stage) or an SSM parameter (AWS stages). */
export type KeySource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'ssm'; readonly name: string };

/** Key material and how often a container reads it again. */
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

const generateCounterSecret = () =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

/** A new stage's keys: an active and a next key, nothing retired, a fresh counter secret. */
export async function generateKeyring(now: Date): Promise<Keyring> {
  const [active, next] = await Promise.all([generateSigningJwk(), generateSigningJwk()]);
  return { active, next, retired: [], rotatedAt: now.toISOString(), counterSecret: generateCounterSecret() };
}

/** The secret that keys the login throttle's username counters; a keyring without one is refused. */
export function counterSecretOf(keyring: Keyring): Uint8Array {
  if (keyring.counterSecret === undefined) {
    throw new Error('keyring has no counterSecret: run keys rotate to add one (docs/deploying.md)');
  }
  return Buffer.from(keyring.counterSecret, 'base64url');
}

/**
 * The key set to publish for a keyring: its active and next keys, and each retired key
 * whose public half `previous` (the key set published so far) still holds.
 */
export function publishedKeys(keyring: Keyring, previous?: Jwks): Jwks {
  const retired = keyring.retired.flatMap(
    ({ kid }) => previous?.keys.filter((key) => key.kid === kid).slice(0, 1) ?? [],
  );
  return { keys: [toPublicJwk(keyring.active), toPublicJwk(keyring.next), ...retired] };
}

export interface Rotation {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  /** Kids no longer published: retired longer ago than the retention. */
  readonly dropped: readonly string[];
}

/**
 * Rotates a keyring: the next key becomes active, a new next key is made, the active key
 * retires. Retired keys stay published for `retentionSeconds` after they stopped signing
 * (the longest a token they signed can live, plus the time a container may keep signing
 * with a key it loaded before the rotation); older ones are dropped from the key set.
 */
/**
 * How long a retired key stays published: every token it signed must keep verifying until
 * it expires, including tokens signed by containers that had not yet reloaded the keyring
 * (up to a reload interval after the rotation), with the verifiers' clock tolerance.
 */
export const retentionSeconds = (stage: { tokenLifetimeSeconds: number; reloadIntervalSeconds: number }) =>
  stage.tokenLifetimeSeconds + stage.reloadIntervalSeconds + CLOCK_TOLERANCE_SECONDS;

/**
 * The earliest moment the keyring may rotate again: a reload interval after the last
 * rotation. Before it, a container that has not reloaded since does not know the next key
 * that would become active, and would reject every token it signs.
 */
export const earliestRotation = (keyring: Keyring, reloadIntervalSeconds: number) =>
  new Date(Date.parse(keyring.rotatedAt) + reloadIntervalSeconds * 1000);

/** Whether the key set holds the next key: if not, tokens it signs once active would not verify. */
export const nextKeyPublished = (keyring: Keyring, jwks: Jwks) =>
  jwks.keys.some(({ kid }) => kid === keyring.next.kid);

export async function rotateKeyring(input: {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  readonly now: Date;
  readonly retentionSeconds: number;
}): Promise<Rotation> {
  const { keyring, jwks, now, retentionSeconds } = input;
  const cutoff = now.getTime() - retentionSeconds * 1000;
  const retired = [{ kid: keyring.active.kid, retiredAt: now.toISOString() }, ...keyring.retired];
  const kept = retired.filter(({ retiredAt }) => Date.parse(retiredAt) > cutoff);
  const rotated: Keyring = {
    active: keyring.next,
    next: await generateSigningJwk(),
    retired: kept,
    rotatedAt: now.toISOString(),
    // Kept: a new secret would start every username's failed-login count again.
    counterSecret: keyring.counterSecret ?? generateCounterSecret(),
  };
  return {
    keyring: rotated,
    jwks: publishedKeys(rotated, { keys: [...jwks.keys, toPublicJwk(keyring.active)] }),
    dropped: retired.filter((key) => !kept.includes(key)).map(({ kid }) => kid),
  };
}

export interface Revocation {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  /** The kids no longer published nor kept: the revoked one, and its keyring companion. */
  readonly revoked: readonly string[];
  /** Whether the active and next keys were replaced. */
  readonly replaced: boolean;
}

/**
 * Revokes a key at once, for a key that leaked: it leaves the key set and the keyring with
 * no retention, so every token it signed is refused once verifiers reload. The active and
 * next keys live in one secret: if either is revoked, both are taken as leaked and a fresh
 * active and next key replace them, published together (verifiers that have not reloaded
 * refuse the new tokens until they do; an emergency accepts that). A retired key's private
 * half is no longer kept, so revoking one replaces nothing. Throws for a kid that is
 * neither in the keyring nor published.
 */
export async function revokeKey(input: {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  readonly kid: string;
  readonly now: Date;
}): Promise<Revocation> {
  const { keyring, jwks, kid, now } = input;
  const inKeyring = [keyring.active.kid, keyring.next.kid, ...keyring.retired.map((key) => key.kid)];
  if (!inKeyring.includes(kid) && !jwks.keys.some((key) => key.kid === kid)) {
    throw new Error(`no key ${kid} in the keyring or the key set`);
  }
  const replaced = kid === keyring.active.kid || kid === keyring.next.kid;
  const revoked = replaced ? [keyring.active.kid, keyring.next.kid] : [kid];
  const kept = keyring.retired.filter((key) => !revoked.includes(key.kid));
  const next: Keyring = replaced
    ? {
        ...(await generateKeyring(now)),
        retired: kept,
        counterSecret: keyring.counterSecret ?? generateCounterSecret(),
      }
    : { ...keyring, retired: kept };
  const previous = { keys: jwks.keys.filter((key) => !revoked.includes(key.kid)) };
  return { keyring: next, jwks: publishedKeys(next, previous), revoked, replaced };
}

/** Imports the signing key. Called once per container, at init. */
export async function importSigningKey(jwk: PrivateJwk): Promise<SigningKey> {
  const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
  if (key instanceof Uint8Array) throw new Error('signing key imported as a symmetric secret');
  // Warms WebCrypto's Ed25519 path during init, so the first login does not pay for it.
  await crypto.subtle.sign('Ed25519', key, new Uint8Array(0));
  return { kid: jwk.kid, key };
}

/** Imports every key of a public key set. Called once per container, at init. */
export async function importVerificationKeys(jwks: Jwks): Promise<VerificationKeys> {
  const entries = await Promise.all(
    jwks.keys.map(async (jwk) => {
      const key = await importJWK(jwk as JWK, SIGNING_ALGORITHM);
      if (key instanceof Uint8Array) throw new Error('verification key imported as a symmetric secret');
      // Warms WebCrypto's Ed25519 path and the key's handle during init (the all-zero
      // signature never verifies), so the first request does not pay for either.
      await crypto.subtle.verify('Ed25519', key, new Uint8Array(64), new Uint8Array(0));
      return [jwk.kid, key] as const;
    }),
  );
  return new Map(entries);
}
