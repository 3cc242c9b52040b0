// API clients: secrets are 256 random bits stored as SHA-256, as a fast hash suffices for a secret
// nobody chose (docs/clients.md, "Secrets"); two live ones allow rotation without downtime.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import type { ClientStatusReader } from '../revocation/revocation.ts';
import { type Scope, sortScopes } from '../scopes.ts';
import { generateSecretText } from './secret-format.ts';

/** The one in use and its successor. */
export const MAX_LIVE_SECRETS = 2;

export interface ClientSecret {
  /** Names the secret in tokens and the CLI; not secret. */
  readonly id: string;
  /** SHA-256 of the secret's UTF-8 bytes, base64url. */
  readonly digest: string;
  readonly createdAt: string;
  /** The last grant with it, to within LAST_USE_PRECISION_MS; absent until its first. */
  readonly lastUsedAt?: string;
  /**
   * When it stops (ISO): set when a successor is added with an end for the others. A secret is
   * live while this is absent or later than now (liveSecrets); an expired one matches nothing.
   */
  readonly expiresAt?: string;
}

export interface ClientRecord {
  readonly clientId: string;
  readonly customerId: string;
  /** What its administrators call it (ClientNameSchema); absent for a client made without one. */
  readonly name?: string;
  readonly scopes: readonly Scope[];
  readonly enabled: boolean;
  /** Oldest first; an expired one stays until the next secret's write prunes it: liveSecrets gives those that work. */
  readonly secrets: readonly ClientSecret[];
  /** Epoch seconds: tokens with an earlier `iat` are revoked (moved on disabling). */
  readonly revokedBefore: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The latest of its secrets' `lastUsedAt`, a removed secret's included; absent until its first grant. */
  readonly lastUsedAt?: string;
}

export interface NewClient {
  readonly clientId: string;
  readonly customerId: string;
  readonly name?: string;
  readonly scopes: readonly Scope[];
  readonly secret: ClientSecret;
}

export interface ClientReader {
  findClient(clientId: string): Promise<ClientRecord | null>;
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

export interface ClientUseRecorder {
  /**
   * Sets the secret's and the client's `lastUsedAt` to `at`, in one conditional write: only
   * while the secret is live and its stored time is absent or LAST_USE_PRECISION_MS before `at`,
   * so of parallel grants one writes. False when it wrote nothing (another grant did, or the
   * secret or client is gone); rejects when the store cannot be reached.
   */
  recordUse(clientId: string, secretId: string, at: Date): Promise<boolean>;
}

export interface AddSecretOptions {
  /** Every other live secret stops then, or earlier if it stops earlier already: a roll-over. */
  readonly expireOthersAt?: Date;
}

/** The client just before a change to its secrets, and just after. */
export interface SecretChange {
  readonly before: ClientRecord;
  readonly after: ClientRecord;
}

/**
 * The admin CLI's and the customer API's; throws `AppError` NOT_FOUND, ALREADY_EXISTS or
 * CONFLICT (a rule of the secrets: a third live one, removing the last live one).
 */
export interface ClientRepository extends ClientReader, ClientUseRecorder, ClientStatusReader {
  /** The client as written (or as found, for a write the SDK sent again after its answer was lost). */
  createClient(client: NewClient): Promise<ClientRecord>;
  /**
   * A customer's clients, or every client without one; ordered by client id. A customer's
   * come from an index, so a client created or changed a moment ago may be missing or stale.
   */
  listClients(customerId?: string): Promise<ClientRecord[]>;
  /** Disabling also revokes every token the client holds; enabling revives none. */
  setClientEnabled(clientId: string, enabled: boolean): Promise<void>;
  renameClient(clientId: string, name: string): Promise<void>;
  removeClient(clientId: string): Promise<void>;
  /**
   * Adds `secret`, refusing it (CONFLICT) beside MAX_LIVE_SECRETS live ones; the expired ones
   * leave the item in the same write.
   */
  addClientSecret(clientId: string, secret: ClientSecret, options?: AddSecretOptions): Promise<SecretChange>;
  /** Tokens granted with that secret stop; NOT_FOUND unless it is live; refuses (CONFLICT) the last live one. */
  removeClientSecret(clientId: string, secretId: string): Promise<void>;
  exportClients(): Promise<ClientRecord[]>;
}

export const CLIENT_ID_PREFIX = 'pcl_';

/** Generated, never chosen; URL-safe, so the same in a Basic header, a form body and a token. */
export const ClientIdSchema = v.pipe(
  v.string(),
  v.regex(/^pcl_[0-9a-f]{20}$/, 'must be a client id (pcl_ and 20 hex digits)'),
);
export const SecretIdSchema = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{8}$/, 'must be a secret id (8 hex digits)'),
);

/**
 * A client's name as its administrators give it: one line a person reads, so no control or
 * format character, no line break and nothing invisible (a zero-width space, a soft hyphen)
 * that would let two names look alike, as usernames refuse them; and no leading or trailing space.
 */
export const ClientNameSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'must be at most 100 characters'),
  // Bidirectional controls would let a name display as another's (Trojan Source, CVE-2021-42574).
  v.regex(/^[^\u202A-\u202E\u2066-\u2069]*$/u, 'must not hold a bidirectional control character'),
  // \p{C}: control, format, surrogate, private-use and unassigned; Zl, Zp: line and paragraph separators.
  v.regex(
    /^[^\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]*$/u,
    'must not hold a control, format or invisible character',
  ),
  v.check((name) => name.trim() === name, 'must not begin or end with a space'),
);

export const newClientId = () => `${CLIENT_ID_PREFIX}${randomBytes(10).toString('hex')}`;

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
  matchDigest(presentedDigest(presented), liveSecrets(secrets, now), MAX_LIVE_SECRETS);

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
  const expired = secrets.filter((secret) => !isLive(secret, now));
  return matchDigest(presentedDigest(presented), expired, expired.length);
}

/** A subset of the client's own scopes, or all of them when it asks for none; null if beyond. */
export function grantedScopes(client: ClientRecord, requested: readonly Scope[] | undefined): Scope[] | null {
  if (requested === undefined) return sortScopes(client.scopes);
  const own = new Set(client.scopes);
  return requested.every((scope) => own.has(scope)) ? sortScopes(requested) : null;
}
