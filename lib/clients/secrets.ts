/**
 * A client's secrets and their rules, for every store and caller alike (docs/clients.md,
 * "Secrets"): 256 random bits stored as SHA-256, as a fast hash suffices for a secret nobody
 * chose; at most MAX_LIVE_SECRETS live, so a client rotates without downtime; a roll gives the
 * others an end; the last live secret stays. A store enforces a plan made here on condition that
 * what it read is unchanged.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Refusal } from '../errors.ts';
import type { ClientKey } from './keys.ts';
import { generateSecretText } from './secret-format.ts';

/** The one in use and its successor. */
export const MAX_LIVE_SECRETS = 2;

export interface ClientSecret {
  /** Names the secret in tokens and the CLI; not secret. */
  readonly id: string;
  /** SHA-256 of the secret's UTF-8 bytes, base64url; '' for a key. */
  readonly digest: string;
  /**
   * A public key in the secret's slot (keys.ts, `private_key_jwt`): its id, times and rules are a
   * secret's, and no presented secret matches it.
   */
  readonly key?: ClientKey;
  readonly createdAt: string;
  /** The last grant with it, to within LAST_USE_PRECISION_MS; absent until its first. */
  readonly lastUsedAt?: string;
  /**
   * When it stops (ISO): set when a successor is added with an end for the others. A secret is
   * live while this is absent or later than now (liveSecrets); an expired one matches nothing.
   */
  readonly expiresAt?: string;
}

/** Shown once. Its format lets secret scanners spot a leak (secret-format.ts); 256 random bits make guessing hopeless. */
export function newClientSecret(now: Date): { readonly secret: string; readonly stored: ClientSecret } {
  const secret = generateSecretText();
  return {
    secret,
    stored: {
      id: randomBytes(4).toString('hex'),
      digest: secretDigest(secret),
      createdAt: now.toISOString(),
    },
  };
}

export const secretDigest = (secret: string) =>
  createHash('sha256').update(secret, 'utf8').digest('base64url');

/** Whether `secret` still works at `now`: it has no end, or its end is later. */
export const isLive = (secret: ClientSecret, now: Date) =>
  secret.expiresAt === undefined || Date.parse(secret.expiresAt) > now.getTime();

/** The secrets that still work at `now`, in their order. */
export const liveSecrets = (secrets: readonly ClientSecret[], now: Date): ClientSecret[] =>
  secrets.filter((secret) => isLive(secret, now));

/** Stands in for a missing secret, so every check compares MAX_LIVE_SECRETS digests. */
const ABSENT = Buffer.alloc(32);

/** The id of the secret of `slots` whose digest is `digest`'s, comparing every slot whatever matched. */
function matchDigest(digest: Buffer, secrets: readonly ClientSecret[], slots: number): string | null {
  let matched: string | null = null;
  for (let slot = 0; slot < slots; slot++) {
    const secret = secrets[slot];
    const stored = secret === undefined ? ABSENT : Buffer.from(secret.digest, 'base64url');
    const equal = stored.length === digest.length && timingSafeEqual(stored, digest);
    if (equal && secret !== undefined) matched = secret.id;
  }
  return matched;
}

const presentedDigest = (presented: string) => createHash('sha256').update(presented, 'utf8').digest();

/**
 * The id of the live secret `presented` is, or null. The same work whatever the client holds
 * and wherever the digests differ, so timing tells nothing: always MAX_LIVE_SECRETS slots.
 */
export const matchSecret = (presented: string, secrets: readonly ClientSecret[], now: Date): string | null =>
  matchDigest(presentedDigest(presented), liveSecrets(secrets, now).filter(isSharedSecret), MAX_LIVE_SECRETS);

/** A secret, not a key. */
export const isSharedSecret = (secret: ClientSecret) => secret.key === undefined;

/** The live keys of a client's credentials, in their order. */
export const liveKeys = (secrets: readonly ClientSecret[], now: Date) =>
  liveSecrets(secrets, now).filter(
    (secret): secret is ClientSecret & { key: ClientKey } => !isSharedSecret(secret),
  );

/**
 * The id of the expired secret `presented` is, or null: asked only once matchSecret found none,
 * so the audit trail can say a secret that ended is still in use. The work it adds tells only
 * that the client has expired secrets, which open nothing.
 */
export function matchExpiredSecret(
  presented: string,
  secrets: readonly ClientSecret[],
  now: Date,
): string | null {
  const expired = secrets.filter((secret) => !isLive(secret, now) && isSharedSecret(secret));
  return matchDigest(presentedDigest(presented), expired, expired.length);
}

/** What adding a secret does to the others, or why it may not. */
export type SecretAddition =
  | { readonly refused: Extract<Refusal, 'secrets-full' | 'other-credential-kind' | 'secret-exists'> }
  | {
      readonly refused?: undefined;
      /** The live secrets kept, each with its end after the roll-over (if one was asked). */
      readonly kept: readonly ClientSecret[];
      /** Those of `kept` whose end the roll-over moved. */
      readonly ended: readonly ClientSecret[];
      /** The expired secrets, which leave the item in the same write. */
      readonly pruned: readonly ClientSecret[];
    };

/** The earlier of a secret's end and the roll-over's, as ISO; the roll-over's when it has none. */
const endBy = (expiresAt: string | undefined, by: Date) =>
  expiresAt !== undefined && Date.parse(expiresAt) <= by.getTime() ? expiresAt : by.toISOString();

/**
 * Adding a secret beside `secrets` at `now`: refused beside MAX_LIVE_SECRETS live ones (an
 * expired one no longer counts, and goes); with `expireOthersAt`, a roll-over, the others stop
 * then or earlier if they stop earlier already.
 */
export function planSecretAddition(
  secrets: readonly ClientSecret[],
  now: Date,
  expireOthersAt?: Date,
  adding?: ClientSecret,
): SecretAddition {
  const live = liveSecrets(secrets, now);
  // A client of keys holds no secret, and one of secrets no key: one way to authenticate.
  if (adding !== undefined && live.some((stored) => isSharedSecret(stored) !== isSharedSecret(adding)))
    return { refused: 'other-credential-kind' };
  // A key's kid names one key: its assertions say which.
  if (adding?.key !== undefined && live.some((stored) => stored.key?.kid === adding.key?.kid))
    return { refused: 'secret-exists' };
  if (live.length >= MAX_LIVE_SECRETS) return { refused: 'secrets-full' };
  const kept = live.map((stored) =>
    expireOthersAt === undefined ? stored : { ...stored, expiresAt: endBy(stored.expiresAt, expireOthersAt) },
  );
  return {
    kept,
    ended: kept.filter((stored, index) => stored.expiresAt !== live[index]?.expiresAt),
    pruned: secrets.filter((stored) => !isLive(stored, now)),
  };
}

/**
 * Why removing `secretId` from `secrets` at `now` may not be done, or undefined: it must be
 * live, and not the last live one. With `keepLasting` (the self-service API's rule), not the last
 * that does not expire while others do either, once it has got a token: a client runs on it, and
 * would stop by itself when the others end. One never used runs nothing, and goes: the one a roll
 * whose answer was lost left, which nobody saw (docs/FAULTS.md, invariant 11).
 */
export function secretRemovalRefusal(
  secrets: readonly ClientSecret[],
  secretId: string,
  now: Date,
  options: { readonly keepLasting?: boolean } = {},
): Extract<Refusal, 'no-such-secret' | 'last-live-secret' | 'last-lasting-secret'> | undefined {
  const live = liveSecrets(secrets, now);
  if (!live.some((secret) => secret.id === secretId)) return 'no-such-secret';
  const staying = live.filter((secret) => secret.id !== secretId);
  if (staying.length === 0) return 'last-live-secret';
  const used = live.some((secret) => secret.id === secretId && secret.lastUsedAt !== undefined);
  if (options.keepLasting === true && used && staying.every((secret) => secret.expiresAt !== undefined))
    return 'last-lasting-secret';
  return undefined;
}

/**
 * A secret's last use is written at most once per LAST_USE_PRECISION_MS (lucia's pattern for
 * sessions): the grant knows from the client item it read whether the stored time is that old,
 * so the grants in between cost no write.
 */
export const LAST_USE_PRECISION_MS = 60 * 60 * 1000;

/** Whether a grant at `now` with a secret last used at `lastUsedAt` records its use. */
export const lastUseDue = (lastUsedAt: string | undefined, now: Date) =>
  lastUsedAt === undefined || now.getTime() - Date.parse(lastUsedAt) >= LAST_USE_PRECISION_MS;
