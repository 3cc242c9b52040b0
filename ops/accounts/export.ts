/**
 * The accounts table as import records (bulk.ts): every customer with its pickup addresses
 * in order, every user, streamed from a paginated scan, then every API client. Password
 * hashes and client secret digests only when asked for. Importing the output (with them) into
 * an empty stage reproduces every user, customer, address and client.
 */
import type { ClientRecord } from '../../lib/clients/clients.ts';
import { liveSecrets } from '../../lib/clients/secrets.ts';
import { type Clock, systemClock } from '../../lib/time.ts';
import type { ClientImportRecord, CustomerImportRecord, UserImportRecord } from './bulk.ts';
import type { BulkAccountStore } from './bulk-dynamodb.ts';

export type ExportedUser = Omit<UserImportRecord, 'password' | 'passwordHash'> & { passwordHash?: string };

/** Without the credentials option, a client's secrets are listed by id, age and end only. */
export type ExportedClient = Omit<ClientImportRecord, 'secrets'> & {
  secrets: {
    id: string;
    digest?: string;
    /** A key's: public, so exported whatever the options. */
    kid?: string;
    jwk?: object;
    createdAt: string;
    expiresAt?: string;
  }[];
};

export interface ExportOptions {
  /** Users' bcrypt hashes and clients' secret digests: what makes an export a credential store. */
  readonly includePasswordHashes: boolean;
  /** Whose now decides which secrets are live: an expired one is not exported. */
  readonly clock?: Clock;
}

export async function* exportRecords(
  store: BulkAccountStore,
  options: ExportOptions,
): AsyncGenerator<CustomerImportRecord | ExportedUser | ExportedClient> {
  yield* accountRecords(store, options);
  const now = (options.clock ?? systemClock)();
  for (const client of await store.clients.exportClients()) yield clientRecord(client, options, now);
}

/** The customers and users alone, from one scan. */
export async function* accountRecords(
  store: BulkAccountStore,
  options: ExportOptions,
): AsyncGenerator<CustomerImportRecord | ExportedUser> {
  // Customer ids seen: a customer is known by its counter, an address or a member item.
  const customers = new Set<string>();
  for await (const item of store.scan()) {
    const pk = String(item.pk);
    if (pk.startsWith('CUSTOMER#')) {
      const customerId = String(item.customerId ?? pk.slice('CUSTOMER#'.length));
      if (customers.has(customerId)) continue;
      customers.add(customerId);
      yield { type: 'customer', customerId, pickupAddresses: await addressesOf(store, customerId) };
      continue;
    }
    if (item.sk !== 'USER') continue;
    yield {
      type: 'user',
      username: String(item.username),
      customerId: typeof item.customerId === 'string' ? item.customerId : null,
      enabled: item.enabled === true,
      createdAt: String(item.createdAt),
      ...(options.includePasswordHashes && { passwordHash: String(item.passwordHash) }),
    };
  }
}

/**
 * Built field by field, as the import reads it: `revokedBefore` and `updatedAt` stay behind, and
 * so do expired secrets, which work nowhere and would take a place of the import's two.
 */
const clientRecord = (client: ClientRecord, options: ExportOptions, now: Date): ExportedClient => ({
  type: 'client',
  clientId: client.clientId,
  ...(client.platform === undefined
    ? { customerId: client.customerId }
    : { redirectUris: [...client.platform.redirectUris] }),
  ...(client.name !== undefined && { name: client.name }),
  scopes: [...client.scopes],
  enabled: client.enabled,
  secrets: liveSecrets(client.secrets, now).map(({ id, digest, key, createdAt, expiresAt }) => ({
    id,
    ...(key === undefined
      ? options.includePasswordHashes && { digest }
      : { kid: key.kid, jwk: { ...key.jwk } }),
    createdAt,
    ...(expiresAt !== undefined && { expiresAt }),
  })),
  createdAt: client.createdAt,
});

async function addressesOf(store: BulkAccountStore, customerId: string) {
  return (await store.customerAddresses(customerId)).map(({ depotCode, createdAt }) => ({
    depotCode,
    createdAt,
  }));
}
