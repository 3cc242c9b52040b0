// OAuth clients: a customer's API clients (client credentials) and the platforms that act for
// customers (authorization code, docs/platforms.md); their records, ids, names and scopes, and
// the store's port. Their secrets and the rules of them: secrets.ts.
import { randomBytes } from 'node:crypto';
import * as v from 'valibot';
import type { ClientStatusReader } from '../revocation/revocation.ts';
import { type Scope, sortScopes } from '../scopes.ts';
import type { ClientSecret } from './secrets.ts';

interface ClientFields {
  readonly clientId: string;
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
  /**
   * RFC 9449 section 5.2's `dpop_bound_access_tokens`: true, and every token request must carry a
   * DPoP proof (lib/dpop/binding.ts); absent or false, a proof is the client's choice.
   */
  readonly dpopBoundAccessTokens?: boolean;
}

/** A customer's API client: the client credentials grant, for the customer and its scopes. */
export interface CustomerClient extends ClientFields {
  readonly customerId: string;
  readonly platform?: undefined;
}

/**
 * A platform (docs/platforms.md): registered by the carrier's operator, of no customer; it acts for
 * the customers whose administrators approved it (connections), never for itself.
 */
export interface PlatformClient extends ClientFields {
  readonly customerId?: undefined;
  /** Shown to the customer's administrator on the authorization page. */
  readonly name: string;
  readonly platform: {
    /** Matched exactly (lib/platforms/redirect-uris.ts). */
    readonly redirectUris: readonly string[];
  };
}

export type ClientRecord = CustomerClient | PlatformClient;

export const isPlatform = (client: ClientRecord): client is PlatformClient => client.platform !== undefined;

/** A new client's credential: one secret, or its public keys (lib/clients/keys.ts) and no secret. */
export type NewCredentials =
  | { readonly secret: ClientSecret; readonly keys?: undefined }
  | { readonly keys: readonly ClientSecret[]; readonly secret?: undefined };

export type NewClient = NewCredentials & {
  readonly clientId: string;
  readonly customerId: string;
  readonly name?: string;
  readonly scopes: readonly Scope[];
  readonly dpopBoundAccessTokens?: boolean;
};

export type NewPlatform = NewCredentials & {
  readonly clientId: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly redirectUris: readonly string[];
  readonly dpopBoundAccessTokens?: boolean;
};

export interface ClientReader {
  findClient(clientId: string): Promise<ClientRecord | null>;
}

export interface ClientUseRecorder {
  /**
   * Sets the secret's and the client's `lastUsedAt` to `at`, in one conditional write: only
   * while the secret is live and its stored time is absent or LAST_USE_PRECISION_MS before `at`,
   * so of parallel grants one writes. False when it wrote nothing (another grant did, or the
   * secret or client is gone); rejects when the store cannot be reached.
   */
  recordUse(clientId: string, secretId: string, at: Date): Promise<boolean>;
}

export type RedirectUriChange = { readonly add: string } | { readonly remove: string };

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
 * The admin CLI's and the customer API's. A refusal is an `AppError` with a typed `reason`
 * (lib/errors.ts Refusal): `no-such-client` (NOT_FOUND) from every change; the rules of the
 * secrets (secrets.ts) as `no-such-secret`, `secrets-full`, `last-live-secret`,
 * `last-lasting-secret`; `client-exists`, `secret-exists` (ALREADY_EXISTS).
 */
export interface ClientRepository extends ClientReader, ClientUseRecorder, ClientStatusReader {
  /** The client as written (or as found, for a write the SDK sent again after its answer was lost). */
  createClient(client: NewClient): Promise<CustomerClient>;
  /** As createClient; refused `client-exists` as it. */
  createPlatform(platform: NewPlatform): Promise<PlatformClient>;
  /**
   * A customer's clients, or every client without one; ordered by client id. A customer's
   * come from an index, so a client created or changed a moment ago may be missing or stale.
   */
  listClients(customerId?: string): Promise<CustomerClient[]>;
  /** Every platform, ordered by client id. */
  listPlatforms(): Promise<PlatformClient[]>;
  /**
   * Adds or removes one of a platform's redirect URIs, on condition that the platform is as read
   * (`no-such-client` for a customer's client too): refused `no-such-redirect-uri`, `redirect-uris-full`
   * (MAX_REDIRECT_URIS) and `last-redirect-uri`; adding one it has changes nothing. Answers the platform.
   */
  changeRedirectUris(clientId: string, change: RedirectUriChange): Promise<PlatformClient>;
  /** Disabling also revokes every token the client holds; enabling revives none. */
  setClientEnabled(clientId: string, enabled: boolean): Promise<void>;
  renameClient(clientId: string, name: string): Promise<void>;
  removeClient(clientId: string): Promise<void>;
  /** Adds `secret` by planSecretAddition's rule; the expired ones leave the item in the same write. */
  addClientSecret(clientId: string, secret: ClientSecret, options?: AddSecretOptions): Promise<SecretChange>;
  /** Tokens granted with that secret stop; by secretRemovalRefusal's rule (`keepLasting` its option). */
  removeClientSecret(
    clientId: string,
    secretId: string,
    options?: { readonly keepLasting?: boolean },
  ): Promise<void>;
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
  // Blank or space-like but for the space itself: a no-break or wide space, the Braille blank, U+FFFC.
  v.regex(
    /^[^\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u2800\uFFFC]*$/u,
    'must not hold a space other than U+0020, or a blank character',
  ),
  v.check((name) => name.trim() === name, 'must not begin or end with a space'),
);

/** What every new client and platform starts with: enabled, its one secret (or its keys), no earlier token to revoke. */
const fresh = (
  scopes: readonly Scope[],
  credentials: NewCredentials & { readonly dpopBoundAccessTokens?: boolean },
  at: string,
) => ({
  scopes: sortScopes(scopes),
  enabled: true,
  secrets: credentials.keys === undefined ? [credentials.secret] : [...credentials.keys],
  revokedBefore: 0,
  createdAt: at,
  updatedAt: at,
  ...(credentials.dpopBoundAccessTokens === true && { dpopBoundAccessTokens: true }),
});

export const newCustomerClient = (client: NewClient, at: string): CustomerClient => ({
  clientId: client.clientId,
  customerId: client.customerId,
  ...(client.name !== undefined && { name: client.name }),
  ...fresh(client.scopes, client, at),
});

export const newPlatformClient = (platform: NewPlatform, at: string): PlatformClient => ({
  clientId: platform.clientId,
  name: platform.name,
  platform: { redirectUris: [...platform.redirectUris] },
  ...fresh(platform.scopes, platform, at),
});

export const newClientId = () => `${CLIENT_ID_PREFIX}${randomBytes(10).toString('hex')}`;

/** A subset of the client's own scopes, or all of them when it asks for none; null if beyond. */
export function grantedScopes(client: ClientRecord, requested: readonly Scope[] | undefined): Scope[] | null {
  if (requested === undefined) return sortScopes(client.scopes);
  const own = new Set(client.scopes);
  return requested.every((scope) => own.has(scope)) ? sortScopes(requested) : null;
}
