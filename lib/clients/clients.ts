/**
 * API clients: machine credentials for an integrator's systems (docs/clients.md). A client acts
 * for one customer with a fixed set of scopes and proves itself with one of at most two live
 * secrets, so a secret can be replaced without downtime. Secrets are 256 random bits, stored as
 * their SHA-256 only: a fast hash suffices for a secret nobody chose (docs/clients.md "Secrets").
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import type { ClientStatusReader } from '../revocation/revocation.ts';
import { type Scope, sortScopes } from '../scopes.ts';

/** Live secrets a client may hold at once: the one in use and its successor. */
export const MAX_LIVE_SECRETS = 2;

/** One live secret, as stored: never the secret itself. */
export interface ClientSecret {
  /** Names the secret in tokens, lists and `client secret remove`; not secret. */
  readonly id: string;
  /** SHA-256 of the secret's UTF-8 bytes, base64url. */
  readonly digest: string;
  readonly createdAt: string;
}

export interface ClientRecord {
  readonly clientId: string;
  /** The customer the client acts for: its tokens' `customer_id`, tracking's tenant. */
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  readonly enabled: boolean;
  readonly secrets: readonly ClientSecret[];
  /** Epoch seconds: tokens with an earlier `iat` are revoked (0 for a new id, which has none; moved on disabling). */
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

/** What the token endpoint needs: one read by client id. */
export interface ClientReader {
  findClient(clientId: string): Promise<ClientRecord | null>;
}

/** What operators need (the admin CLI). Every method throws `AppError` NOT_FOUND, ALREADY_EXISTS or VALIDATION_FAILED. */
export interface ClientRepository extends ClientReader, ClientStatusReader {
  createClient(client: NewClient): Promise<void>;
  /** Every client, or a customer's, ordered by client id. */
  listClients(customerId?: string): Promise<ClientRecord[]>;
  /** Disabling also revokes every token the client holds; enabling revives none. */
  setClientEnabled(clientId: string, enabled: boolean): Promise<void>;
  /** The client's tokens stop verifying with it. */
  removeClient(clientId: string): Promise<void>;
  /** Refuses a third live secret (VALIDATION_FAILED). */
  addClientSecret(clientId: string, secret: ClientSecret): Promise<void>;
  /** Tokens granted with that secret stop; refuses to remove the last one (VALIDATION_FAILED). */
  removeClientSecret(clientId: string, secretId: string): Promise<void>;
  /** Every client as stored, for an export. */
  exportClients(): Promise<ClientRecord[]>;
}

export const CLIENT_ID_PREFIX = 'pcl_';
export const CLIENT_SECRET_PREFIX = 'pcs_';

/**
 * Client ids: a prefix and 20 hex digits, generated, never chosen. Only URL-safe characters, so
 * the id is the same in a Basic header, a form body and a token.
 */
export const ClientIdSchema = v.pipe(
  v.string(),
  v.regex(/^pcl_[0-9a-f]{20}$/, 'must be a client id (pcl_ and 20 hex digits)'),
);
export const SecretIdSchema = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{8}$/, 'must be a secret id (8 hex digits)'),
);

export const newClientId = () => `${CLIENT_ID_PREFIX}${randomBytes(10).toString('hex')}`;

/**
 * A new secret: its text, shown once to the operator, and what is stored of it. The prefix makes
 * a leaked secret recognisable to secret scanners; 32 random bytes make guessing hopeless.
 */
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

/**
 * The id of the live secret `presented` is, or null; the same work whatever the client holds
 * (none, one or two secrets) and wherever the digests differ, so timing tells nothing.
 */
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

/** The scopes a client asks for in a grant: a subset of its own, or its own when it asks for none. */
export function grantedScopes(client: ClientRecord, requested: readonly Scope[] | undefined): Scope[] | null {
  if (requested === undefined) return sortScopes(client.scopes);
  const own = new Set(client.scopes);
  return requested.every((scope) => own.has(scope)) ? sortScopes(requested) : null;
}
