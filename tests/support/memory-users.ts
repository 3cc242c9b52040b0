/**
 * An in-memory AccountRepository for domain unit tests, with the behaviour of the DynamoDB
 * one (tests/integration/accounts-repository.test.ts runs the same contract suite on both):
 * exact-match lookup, usernames unique ignoring letter case, a revocation cutoff that only
 * moves forward, and each user's depot code derived from its customer's pickup addresses.
 */

import {
  type AccountRepository,
  firstDepotCode,
  type PickupAddress,
  type UserRecord,
} from '../../lib/accounts/repository.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { AppError } from '../../lib/errors.ts';
import { MAX_REVOKED_SESSIONS, revocationCutoff } from '../../lib/revocation/revocation.ts';
import { type Clock, epochSeconds, systemClock } from '../../lib/time.ts';

export const TEST_COST = 4;

export interface MemoryAccounts extends AccountRepository {
  /** Every user by its exact username; tests may read and seed it. */
  readonly records: Map<string, UserRecord>;
  /** A repository over the same users and addresses whose clock is `clock`. */
  withClock(clock: Clock): MemoryAccounts;
}

interface Customer {
  addressCount: number;
  readonly addresses: PickupAddress[];
  /** Exact usernames. */
  readonly members: Set<string>;
}

interface State {
  readonly records: Map<string, UserRecord>;
  readonly customers: Map<string, Customer>;
  /** By exact username: session id to the epoch second its access tokens expire. */
  readonly revokedSessions: Map<string, Map<string, number>>;
}

const noSuchUser = () => new AppError('NOT_FOUND', { reason: 'no-such-user' });

/** An empty account store whose clock is `clock`. */
export function memoryAccounts(clock: Clock = systemClock): MemoryAccounts {
  return accountsOn({ records: new Map(), customers: new Map(), revokedSessions: new Map() }, clock);
}

function accountsOn(state: State, clock: Clock): MemoryAccounts {
  const { records, customers } = state;
  const now = () => clock().toISOString();

  const customer = (customerId: string) => {
    let found = customers.get(customerId);
    if (found === undefined) {
      found = { addressCount: 0, addresses: [], members: new Set() };
      customers.set(customerId, found);
    }
    return found;
  };

  const existing = (username: string) => {
    const user = records.get(username);
    if (user === undefined) throw noSuchUser();
    return user;
  };

  /** Applies `change` and moves the revocation cutoff forward, as the DynamoDB store does. */
  const revoke = (username: string, change: Partial<UserRecord> = {}) => {
    const user = existing(username);
    const cutoff = revocationCutoff(clock());
    const revokedBefore = user.revokedBefore < cutoff ? cutoff : user.revokedBefore + 1;
    records.set(username, { ...user, ...change, revokedBefore, updatedAt: now() });
  };

  return {
    records,
    withClock: (other) => accountsOn(state, other),

    async findByUsername(username) {
      return records.get(username) ?? null;
    },

    async findStatus(username) {
      const user = records.get(username);
      if (user === undefined) return null;
      const revoked = state.revokedSessions.get(username) ?? new Map<string, number>();
      return {
        enabled: user.enabled,
        revokedBefore: user.revokedBefore,
        revokedSessions: new Set(revoked.keys()),
      };
    },

    async revokeSessionTokens(username, sessionId, until) {
      if (!records.has(username)) return 'listed';
      const revoked = state.revokedSessions.get(username) ?? new Map<string, number>();
      const nowSeconds = epochSeconds(clock());
      for (const [id, expires] of revoked) if (expires < nowSeconds) revoked.delete(id);
      // Full, as the DynamoDB store: the cutoff moves instead and the list goes.
      if (!revoked.has(sessionId) && revoked.size >= MAX_REVOKED_SESSIONS) {
        revoke(username);
        state.revokedSessions.delete(username);
        return 'cutoff';
      }
      state.revokedSessions.set(username, revoked.set(sessionId, until));
      return 'listed';
    },

    async createUser({ username, passwordHash, customerId }) {
      const folded = foldUsername(username);
      if ([...records.keys()].some((name) => foldUsername(name) === folded)) {
        throw new AppError('ALREADY_EXISTS', { reason: 'user-exists' });
      }
      const at = now();
      state.revokedSessions.delete(username);
      records.set(username, {
        username,
        passwordHash,
        enabled: true,
        customerId,
        depotCode: customerId === null ? null : firstDepotCode(customer(customerId).addresses),
        revokedBefore: revocationCutoff(clock()),
        scopes: null,
        admin: false,
        createdAt: at,
        updatedAt: at,
      });
      if (customerId !== null) customer(customerId).members.add(username);
    },

    async setPasswordHash(username, passwordHash) {
      revoke(username, { passwordHash });
    },

    async setEnabled(username, enabled) {
      if (!enabled) return revoke(username, { enabled });
      records.set(username, { ...existing(username), enabled, updatedAt: now() });
    },

    async upgradePasswordHash(username, currentHash, upgradedHash) {
      const user = records.get(username);
      if (user?.passwordHash === currentHash) records.set(username, { ...user, passwordHash: upgradedHash });
    },

    async revokeUserTokens(username) {
      revoke(username);
    },

    async setUserScopes(username, scopes) {
      revoke(username, { scopes: scopes === null ? null : [...scopes] });
    },

    async setAdministrator(username, admin, customerId) {
      const user = existing(username);
      if (customerId !== undefined && user.customerId !== customerId)
        throw new AppError('NOT_FOUND', { reason: 'no-such-user' });
      if (!admin) return revoke(username, { admin: false });
      if (user.customerId === null) throw new AppError('VALIDATION_FAILED', { reason: 'no-customer' });
      records.set(username, { ...user, admin: true, updatedAt: now() });
    },

    async removeUser(username) {
      const { customerId } = existing(username);
      records.delete(username);
      state.revokedSessions.delete(username);
      if (customerId !== null) customers.get(customerId)?.members.delete(username);
    },

    async addPickupAddress(customerId, depotCode) {
      const entry = customer(customerId);
      entry.addressCount += 1;
      const address: PickupAddress = {
        customerId,
        position: entry.addressCount,
        depotCode,
        createdAt: now(),
      };
      entry.addresses.push(address);
      const derived = firstDepotCode(entry.addresses);
      for (const member of entry.members) {
        const user = records.get(member);
        if (user !== undefined) records.set(member, { ...user, depotCode: derived });
      }
      return address;
    },

    async listPickupAddresses(customerId) {
      return [...(customers.get(customerId)?.addresses ?? [])];
    },
  };
}

/**
 * An account store holding `users`, as a login sees them: seeded directly, so a test
 * chooses each user's depot code and bcrypt cost.
 */
export async function memoryUsers(
  users: {
    username: string;
    password: string;
    enabled?: boolean;
    customerId?: string | null;
    depotCode?: string | null;
    cost?: number;
  }[],
): Promise<MemoryAccounts> {
  const accounts = memoryAccounts();
  for (const user of users) {
    accounts.records.set(user.username, {
      username: user.username,
      passwordHash: await hashPassword(user.password, user.cost ?? TEST_COST),
      enabled: user.enabled ?? true,
      customerId: user.customerId ?? null,
      depotCode: user.depotCode ?? null,
      revokedBefore: 0,
      scopes: null,
      admin: false,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
    });
  }
  return accounts;
}
