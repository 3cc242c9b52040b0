/** An in-memory UserReader for domain unit tests: exact-match lookup, like the real store. */
import { hashPassword } from '../../lib/auth/passwords.ts';
import type { PasswordHashUpgrader, UserReader, UserRecord } from '../../lib/users/repository.ts';

export const TEST_COST = 4;

export async function memoryUsers(
  users: {
    username: string;
    password: string;
    enabled?: boolean;
    customerId?: string | null;
    depotCode?: string | null;
    cost?: number;
  }[],
): Promise<UserReader & PasswordHashUpgrader & { readonly records: Map<string, UserRecord> }> {
  const records = new Map<string, UserRecord>();
  for (const user of users) {
    records.set(user.username, {
      username: user.username,
      passwordHash: await hashPassword(user.password, user.cost ?? TEST_COST),
      enabled: user.enabled ?? true,
      customerId: user.customerId ?? null,
      depotCode: user.depotCode ?? null,
      revokedBefore: 0,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
    });
  }
  return {
    records,
    findByUsername: async (username) => records.get(username) ?? null,
    async upgradePasswordHash(username, currentHash, upgradedHash) {
      const user = records.get(username);
      if (user?.passwordHash === currentHash) records.set(username, { ...user, passwordHash: upgradedHash });
    },
  };
}
