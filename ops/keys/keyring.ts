/**
 * The keyring's rules as an operator applies them: a new stage's keys, what to publish,
 * rotation (the next key signs, a new next key is published, the active key retires and
 * stays published until every token it signed has expired) and revocation (a leaked key goes
 * at once, with every key it shared a keyring with). The functions only read what these
 * write (lib/tokens/keys.ts).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import * as v from 'valibot';
import { epochSeconds } from '../../lib/time.ts';
import {
  type Jwks,
  type Keyring,
  type PrivateJwk,
  PrivateJwkSchema,
  type PublicJwk,
  SIGNING_ALGORITHM,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';

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

/**
 * The latest `iat` a key retired at `retiredAt` can have signed: containers keep signing with
 * it until they reload the keyring. Published as the key's `signed_until`.
 */
const signedUntil = (retiredAt: Date, reloadIntervalSeconds: number) =>
  epochSeconds(retiredAt) + reloadIntervalSeconds;

/**
 * Rotates a keyring: the next key becomes active, a new next key is made, the active key
 * retires, recording its successor (the chain `revokeKey` follows) and published with its
 * `signed_until`, as is every retired key of an older key set that lacks one. Retired keys
 * stay published for `retentionSeconds` after they stopped signing (the longest a token they
 * signed can live, plus the time a container may keep signing with a key it loaded before
 * the rotation); older ones are dropped from the key set.
 */
export async function rotateKeyring(input: {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  readonly now: Date;
  readonly retentionSeconds: number;
  readonly reloadIntervalSeconds: number;
}): Promise<Rotation> {
  const { keyring, jwks, now, retentionSeconds, reloadIntervalSeconds } = input;
  const cutoff = now.getTime() - retentionSeconds * 1000;
  const retired = [
    { kid: keyring.active.kid, retiredAt: now.toISOString(), successor: keyring.next.kid },
    ...keyring.retired,
  ];
  const kept = retired.filter(({ retiredAt }) => Date.parse(retiredAt) > cutoff);
  const retirements = new Map(retired.map((key) => [key.kid, new Date(key.retiredAt)]));
  // The retiring key is bounded from now even if a rotation cut short stamped it already.
  const bounded = (key: PublicJwk): PublicJwk => {
    const at = retirements.get(key.kid);
    return at === undefined || (key.signed_until !== undefined && key.kid !== keyring.active.kid)
      ? key
      : { ...key, signed_until: signedUntil(at, reloadIntervalSeconds) };
  };
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
    jwks: publishedKeys(rotated, { keys: [...jwks.keys, toPublicJwk(keyring.active)].map(bounded) }),
    dropped: retired.filter((key) => !kept.includes(key)).map(({ kid }) => kid),
  };
}

export interface Revocation {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  /** The kids no longer published nor kept: the revoked one, and the keys it shared a keyring with. */
  readonly revoked: readonly string[];
  /** Whether the active and next keys were replaced. */
  readonly replaced: boolean;
}

/**
 * The pairs of kids that were together in the keyring at some time: the active and the next
 * key, and each retired key with its successor. A retired entry written before successors were
 * recorded is paired with the key listed before it (the next newer retired key, or the active
 * key for the newest): every true pair is among those, since rotations only prepend.
 */
function sharedKeyrings(keyring: Keyring): [string, string][] {
  const newer = [keyring.active.kid, ...keyring.retired.map(({ kid }) => kid)];
  return [
    [keyring.active.kid, keyring.next.kid],
    ...keyring.retired.map(({ kid, successor }, index): [string, string] => [
      kid,
      successor ?? newer[index] ?? keyring.active.kid,
    ]),
  ];
}

/** Replaces the active and the next key; the counter secret is kept (a new one would clear every lock). */
async function replacePair(keyring: Keyring, retired: Keyring['retired'], now: Date): Promise<Keyring> {
  return {
    ...(await generateKeyring(now)),
    retired,
    counterSecret: keyring.counterSecret ?? generateCounterSecret(),
  };
}

/**
 * Revokes a key at once, for a key that leaked, with every key that shared a keyring with
 * it (its neighbours in the chain: the key it succeeded and the key that succeeded it, or
 * the next key for the active one): a copy of the keyring holds one such pair, so whoever
 * holds `kid` may hold them too. They leave the key set and the keyring with no retention,
 * so every token they signed is refused once verifiers reload. The active and next keys
 * live in one secret: if either is revoked, both are taken as leaked and a fresh active and
 * next key replace them, published together (verifiers that have not reloaded refuse the
 * new tokens until they do; an emergency accepts that). Throws for a kid that is neither in
 * the keyring nor published.
 */
export async function revokeKey(input: {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  readonly kid: string;
  readonly now: Date;
  /** Stamps the kept retired keys that lack a `signed_until`, as a rotation does. */
  readonly reloadIntervalSeconds: number;
}): Promise<Revocation> {
  const { keyring, jwks, kid, now, reloadIntervalSeconds } = input;
  const inKeyring = [keyring.active.kid, keyring.next.kid, ...keyring.retired.map((key) => key.kid)];
  if (!inKeyring.includes(kid) && !jwks.keys.some((key) => key.kid === kid)) {
    throw new Error(`no key ${kid} in the keyring or the key set`);
  }
  const leaked = new Set([kid]);
  for (const pair of sharedKeyrings(keyring)) if (pair.includes(kid)) for (const one of pair) leaked.add(one);
  const replaced = leaked.has(keyring.active.kid) || leaked.has(keyring.next.kid);
  if (replaced) for (const one of [keyring.active.kid, keyring.next.kid]) leaked.add(one);
  const revoked = [...new Set([...inKeyring, kid])].filter((one) => leaked.has(one));
  const kept = keyring.retired.filter((key) => !leaked.has(key.kid));
  const next = replaced ? await replacePair(keyring, kept, now) : { ...keyring, retired: kept };
  const retiredAt = new Map(kept.map((key) => [key.kid, new Date(key.retiredAt)]));
  const bounded = (key: PublicJwk): PublicJwk => {
    const at = retiredAt.get(key.kid);
    return at === undefined || key.signed_until !== undefined
      ? key
      : { ...key, signed_until: signedUntil(at, reloadIntervalSeconds) };
  };
  const previous = { keys: jwks.keys.filter((key) => !leaked.has(key.kid)).map(bounded) };
  return { keyring: next, jwks: publishedKeys(next, previous), revoked, replaced };
}

/**
 * Revokes every key, for a leak whose date is unknown (any past copy of the keyring may be
 * out): a fresh active and next key, nothing retired, and only those two published.
 */
export async function revokeAll(input: {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
  readonly now: Date;
}): Promise<Revocation> {
  const { keyring, jwks, now } = input;
  const known = [keyring.active.kid, keyring.next.kid, ...keyring.retired.map(({ kid }) => kid)];
  const revoked = [...new Set([...known, ...jwks.keys.map(({ kid }) => kid)])];
  const next = await replacePair(keyring, [], now);
  return { keyring: next, jwks: publishedKeys(next), revoked, replaced: true };
}
