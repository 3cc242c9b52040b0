/**
 * The accounts table as import records (bulk.ts): every customer with its pickup addresses
 * in order, and every user, streamed from a paginated scan. Password hashes only when asked
 * for. Importing the output into an empty stage reproduces every user, customer and address.
 */
import type { CustomerImportRecord, UserImportRecord } from './bulk.ts';
import type { BulkAccountStore } from './bulk-dynamodb.ts';

export type ExportedUser = Omit<UserImportRecord, 'password' | 'passwordHash'> & { passwordHash?: string };

export async function* exportRecords(
  store: BulkAccountStore,
  options: { readonly includePasswordHashes: boolean },
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

async function addressesOf(store: BulkAccountStore, customerId: string) {
  return (await store.customerAddresses(customerId)).map(({ depotCode, createdAt }) => ({
    depotCode,
    createdAt,
  }));
}
