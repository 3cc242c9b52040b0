/**
 * A client's item on the accounts table, beside the users (lib/accounts/dynamodb.ts):
 *
 * | item   | pk                 | sk     |
 * |--------|--------------------|--------|
 * | client | CLIENT#<client id> | CLIENT |
 *
 * A platform's item is a client's without `customerId` (so it is in no customer's index) and with
 * its `redirectUris`.
 *
 * One item per client, its secrets (or keys, for `private_key_jwt`: keys.ts) in a map by secret id (each with its own `lastUsedAt`, so a
 * removal racing a grant cannot move the write onto another secret), the client's last use beside
 * the map, and the tokens it revoked itself in `revokedTokens` (jti → exp): the token endpoint and
 * the authorizer each read exactly one item. A secret with an `expiresAt` passed stays in the map
 * until the next secret's write prunes it. The keys and the item as stored, both ways: also what
 * an import writes (ops/accounts).
 */

import type { Owner } from '../aws/owned-items.ts';
import { isScope, type Scope, sortScopes } from '../scopes.ts';
import type { ClientRecord } from './clients.ts';
import type { ClientJwk } from './keys.ts';
import type { ClientSecret } from './secrets.ts';

export const CLIENT_SK = 'CLIENT';
const CLIENT_PREFIX = 'CLIENT#';

export const clientKey = (clientId: string) => ({ pk: `${CLIENT_PREFIX}${clientId}`, sk: CLIENT_SK });

/**
 * Every attribute a customer's client item may hold (clientItem's, and the revocation endpoint's
 * map): what a customer's index Query names, and its role allows. A platform's item also holds
 * `redirectUris`, and is in no customer's index.
 */
export const CLIENT_ATTRIBUTES = [
  'pk',
  'sk',
  'clientId',
  'customerId',
  'name',
  'scopes',
  'enabled',
  'secrets',
  'revokedBefore',
  'revokedTokens',
  'createdAt',
  'updatedAt',
  'lastUsedAt',
  'dpopBoundAccessTokens',
] as const;

export const clientOwner = (clientId: string): Owner => ({ attribute: 'clientId', name: clientId });

/** The client item as stored: also what an import writes (ops/accounts). */
export function clientItem(record: ClientRecord): Record<string, unknown> {
  return {
    ...clientKey(record.clientId),
    clientId: record.clientId,
    ...(record.platform === undefined
      ? { customerId: record.customerId }
      : { redirectUris: [...record.platform.redirectUris] }),
    ...(record.name !== undefined && { name: record.name }),
    scopes: [...record.scopes],
    enabled: record.enabled,
    secrets: Object.fromEntries(record.secrets.map((secret) => [secret.id, secretEntry(secret)])),
    revokedBefore: record.revokedBefore,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.lastUsedAt !== undefined && { lastUsedAt: record.lastUsedAt }),
    ...(record.dpopBoundAccessTokens === true && { dpopBoundAccessTokens: true }),
  };
}

/** A secret's entry in the item's map; a key's holds its JWK (public) instead of a digest. */
export function secretEntry({ digest, key, createdAt, lastUsedAt, expiresAt }: ClientSecret) {
  return {
    ...(key === undefined ? { digest } : { kid: key.kid, jwk: key.jwk }),
    createdAt,
    ...(lastUsedAt !== undefined && { lastUsedAt }),
    ...(expiresAt !== undefined && { expiresAt }),
  };
}

/** Oldest first, as the CLI lists them: the one in use, then its successor. */
export const byAge = (a: ClientSecret, b: ClientSecret) =>
  a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

type SecretMap = Record<
  string,
  {
    digest?: unknown;
    kid?: unknown;
    jwk?: unknown;
    createdAt?: unknown;
    lastUsedAt?: unknown;
    expiresAt?: unknown;
  }
>;

/** A text as stored, if there is one: an ISO time (items written before last use have none), a name. */
const timeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

export const secretsOf = (map: unknown): ClientSecret[] =>
  Object.entries((map ?? {}) as SecretMap)
    .map(([id, secret]) => {
      const lastUsedAt = timeOf(secret.lastUsedAt);
      const expiresAt = timeOf(secret.expiresAt);
      // A key's JWK was checked when it was registered (ClientJwkSchema); the authorizer reads
      // client items too, and carries no schema of keys.
      return {
        id,
        ...(typeof secret.kid === 'string' && typeof secret.jwk === 'object' && secret.jwk !== null
          ? { digest: '', key: { kid: secret.kid, jwk: secret.jwk as ClientJwk } }
          : { digest: String(secret.digest) }),
        createdAt: String(secret.createdAt),
        ...(lastUsedAt !== undefined && { lastUsedAt }),
        ...(expiresAt !== undefined && { expiresAt }),
      };
    })
    .sort(byAge);

/** The latest of ISO times of one format (toISOString's), which order as text. */
const latest = (times: readonly (string | undefined)[]) =>
  times.reduce<string | undefined>(
    (found, time) => (time !== undefined && (found === undefined || time > found) ? time : found),
    undefined,
  );

export function toClient(item: Record<string, unknown>): ClientRecord {
  const secrets = secretsOf(item.secrets);
  // Two secrets' writes may land out of order: the client's is the latest of all it stores.
  const lastUsedAt = latest([timeOf(item.lastUsedAt), ...secrets.map((secret) => secret.lastUsedAt)]);
  const name = timeOf(item.name);
  const fields = {
    clientId: String(item.clientId),
    scopes: sortScopes(((item.scopes ?? []) as string[]).filter(isScope) as Scope[]),
    enabled: item.enabled === true,
    secrets,
    revokedBefore: Number(item.revokedBefore ?? 0),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...(lastUsedAt !== undefined && { lastUsedAt }),
    ...(item.dpopBoundAccessTokens === true && { dpopBoundAccessTokens: true }),
  };
  if (Array.isArray(item.redirectUris))
    return {
      ...fields,
      name: name ?? String(item.clientId),
      platform: { redirectUris: item.redirectUris.map(String) },
    };
  return { ...fields, customerId: String(item.customerId), ...(name !== undefined && { name }) };
}
