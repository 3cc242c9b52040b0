/**
 * The keyring's rules as an operator applies them: a new stage's keys, what to publish,
 * rotation (the next key signs, a new next key is published, the active key retires and
 * stays published until every token it signed has expired) and revocation (a leaked key goes
 * at once). The functions only read what these write (lib/tokens/keys.ts).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import * as v from 'valibot';
import {
  type Jwks,
  type Keyring,
  type PrivateJwk,
  PrivateJwkSchema,
  type PublicJwk,
  SIGNING_ALGORITHM,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/tokens.ts';

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

const generateCounterSecret = () =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

/** A new stage's keys: an active and a next key, nothing retired, a fresh counter secret. */
export async function generateKeyring(now: Date): Promise<Keyring> {
  const [active, next] = await Promise.all([generateSigningJwk(), generateSigningJwk()]);
  return { active, next, retired: [], rotatedAt: now.toISOString(), counterSecret: generateCounterSecret() };
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
