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
}

export interface ClientRecord {
  readonly clientId: string;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  readonly enabled: boolean;
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

/** The admin CLI's; throws `AppError` NOT_FOUND, ALREADY_EXISTS or VALIDATION_FAILED. */
export interface ClientRepository extends ClientReader, ClientUseRecorder, ClientStatusReader {
  createClient(client: NewClient): Promise<void>;
  listClients(customerId?: string): Promise<ClientRecord[]>;
  /** Disabling also revokes every token the client holds; enabling revives none. */
  setClientEnabled(clientId: string, enabled: boolean): Promise<void>;
  removeClient(clientId: string): Promise<void>;
  /** Refuses a third live secret. */
  addClientSecret(clientId: string, secret: ClientSecret): Promise<void>;
  /** Tokens granted with that secret stop; refuses to remove the last one. */
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

/** Stands in for a missing secret, so every check compares MAX_LIVE_SECRETS digests. */
const ABSENT = Buffer.alloc(32);

/** The same work whatever the client holds and wherever the digests differ, so timing tells nothing. */
export function matchSecret(presented: string, secrets: readonly ClientSecret[]): string | null {
  const digest = createHash('sha256').update(presented, 'utf8').digest();
  let matched: string | null = null;
  for (let slot = 0; slot < MAX_LIVE_SECRETS; slot++) {
    const secret = secrets[slot];
    const stored = secret === undefined ? ABSENT : Buffer.from(secret.digest, 'base64url');
    const equal = stored.length === digest.length && timingSafeEqual(stored, digest);
    if (equal && secret !== undefined) matched = secret.id;
  }
  return matched;
}

/** A subset of the client's own scopes, or all of them when it asks for none; null if beyond. */
export function grantedScopes(client: ClientRecord, requested: readonly Scope[] | undefined): Scope[] | null {
  if (requested === undefined) return sortScopes(client.scopes);
  const own = new Set(client.scopes);
  return requested.every((scope) => own.has(scope)) ? sortScopes(requested) : null;
}
