// API clients: secrets are 256 random bits stored as SHA-256, as a fast hash suffices for a secret
// nobody chose (docs/clients.md, "Secrets"); two live ones allow rotation without downtime.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import type { ClientStatusReader } from '../revocation/revocation.ts';
import { type Scope, sortScopes } from '../scopes.ts';

/** The one in use and its successor. */
export const MAX_LIVE_SECRETS = 2;

export interface ClientSecret {
  /** Names the secret in tokens and the CLI; not secret. */
  readonly id: string;
  /** SHA-256 of the secret's UTF-8 bytes, base64url. */
  readonly digest: string;
  readonly createdAt: string;
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

/** The admin CLI's; throws `AppError` NOT_FOUND, ALREADY_EXISTS or VALIDATION_FAILED. */
export interface ClientRepository extends ClientReader, ClientStatusReader {
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
export const CLIENT_SECRET_PREFIX = 'pcs_';

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

/** Shown once. The prefix lets secret scanners spot a leak; 32 random bytes make guessing hopeless. */
export function newClientSecret(now: Date): { readonly secret: string; readonly stored: ClientSecret } {
  const secret = `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
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
