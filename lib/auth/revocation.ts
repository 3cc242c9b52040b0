/**
 * The authorizer's revocation check: an access token is refused when its user no longer
 * exists, is disabled, or revoked every token issued before a moment later than the
 * token's `iat` (password change, disabling, `user logout`).
 *
 * It costs one GetItem per user per container per `cacheTtlMs`, which bounds how late a
 * revocation takes effect here; API Gateway's authorizer cache adds its own TTL on top.
 */
import { expiringCache, type Now } from '../cache.ts';
import type { UserStatus, UserStatusReader } from '../users/repository.ts';
import type { AccessClaims } from './tokens.ts';

export interface RevocationCheck {
  /** True when the token must be refused. Rejects if the user store cannot be read. */
  isRevoked(claims: AccessClaims): Promise<boolean>;
}

export function createRevocationCheck(deps: {
  readonly users: UserStatusReader;
  readonly cacheTtlMs: number;
  /** Bounds the memory a container spends on the cache. */
  readonly maxEntries?: number;
  readonly now?: Now;
}): RevocationCheck {
  const cache = expiringCache<string, UserStatus | null>({
    ttlMs: deps.cacheTtlMs,
    maxEntries: deps.maxEntries ?? 10_000,
    // A miss may be an eventually consistent read of a user created a moment ago: ask again.
    keep: (status) => status !== null,
    ...(deps.now && { now: deps.now }),
  });
  return {
    async isRevoked({ username, issuedAt }) {
      const status = await cache.get(username, () => deps.users.findStatus(username));
      return status === null || !status.enabled || issuedAt < status.revokedBefore;
    },
  };
}
