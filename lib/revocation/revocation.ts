// Revocation's cutoff, a token's `iat` and the authorizer's check; how late each takes effect:
// docs/tokens-and-sessions.md, "Sessions: rotation, reuse detection, logout and revocation".
import { expiringCache } from '../cache.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import { type Clock, epochSeconds } from '../time.ts';
import type { AccessClaims } from '../tokens/verify.ts';

export interface UserStatus {
  readonly enabled: boolean;
  readonly revokedBefore: number;
  /** Sessions revoked for refresh-token reuse: their access tokens are refused too. */
  readonly revokedSessions: ReadonlySet<string>;
}

/**
 * A user lists this many sessions revoked one by one whose access tokens have not expired; past
 * it, the user's cutoff moves instead: its item stays small for the authorizer's read.
 */
export const MAX_REVOKED_SESSIONS = 1000;

export interface SessionTokenRevoker {
  /**
   * Until `until` (epoch seconds, when the last expires); idempotent, a no-op for an unknown
   * user. Beside MAX_REVOKED_SESSIONS listed ones, moves the user's cutoff instead, which ends
   * every earlier token and session of the user and empties the list.
   */
  revokeSessionTokens(username: string, sessionId: string, until: number): Promise<void>;
}

export interface ClientStatus {
  readonly enabled: boolean;
  readonly revokedBefore: number;
  readonly secretIds: ReadonlySet<string>;
  /** The `jti`s of access tokens the client revoked itself (RFC 7009). */
  readonly revokedTokens: ReadonlySet<string>;
}

/** A client may list this many revoked tokens that have not expired: its item stays small for the authorizer's read. */
export const MAX_REVOKED_TOKENS = 1000;

export interface ClientTokenRevoker {
  /**
   * Lists `jti` on the client until `until` (epoch seconds, the token's `exp`); idempotent, and
   * a no-op for an unknown client. `full`: the client already lists MAX_REVOKED_TOKENS live ones.
   */
  revokeClientToken(clientId: string, jti: string, until: number): Promise<'revoked' | 'full'>;
}

export interface ClientStatusReader {
  findClientStatus(clientId: string): Promise<ClientStatus | null>;
}

export interface UserStatusReader {
  findStatus(username: string): Promise<UserStatus | null>;
}

export interface RevocationCheck {
  /** Rejects if the store cannot be read, so the authorizer fails closed. */
  isRevoked(claims: AccessClaims): Promise<boolean>;
}

export interface RevocationCheckDeps {
  readonly users: UserStatusReader;
  readonly clients: ClientStatusReader;
  readonly cacheTtlMs: number;
  readonly clock?: Clock;
  readonly metrics: MetricsRecorder;
}

export function createRevocationCheck(deps: RevocationCheckDeps): RevocationCheck {
  const { metrics } = deps;
  const cacheOf = <TStatus>() =>
    expiringCache<string, TStatus | null>({
      ttlMs: deps.cacheTtlMs,
      maxEntries: 10_000,
      // A miss may be an eventually consistent read of a user created a moment ago: ask again.
      keep: (status) => status !== null,
      ...(deps.clock && { clock: deps.clock }),
    });
  const users = cacheOf<UserStatus>();
  const clients = cacheOf<ClientStatus>();
  const statusOf = <TStatus>(
    cache: ReturnType<typeof cacheOf<TStatus>>,
    key: string,
    find: () => Promise<TStatus | null>,
  ) => {
    // Joining a concurrent check's read counts as a hit.
    let read = false;
    const pending = cache.get(key, () => {
      read = true;
      return find();
    });
    metrics.count({ name: read ? 'RevocationCacheMiss' : 'RevocationCacheHit' });
    return pending;
  };
  return {
    async isRevoked(claims) {
      if (claims.kind === 'client') {
        const status = await statusOf(clients, claims.clientId, () =>
          deps.clients.findClientStatus(claims.clientId),
        );
        return (
          status === null ||
          !status.enabled ||
          claims.issuedAt < status.revokedBefore ||
          !status.secretIds.has(claims.secretId) ||
          status.revokedTokens.has(claims.jti)
        );
      }
      const { username, issuedAt, sessionId } = claims;
      const status = await statusOf(users, username, () => deps.users.findStatus(username));
      return (
        status === null ||
        !status.enabled ||
        issuedAt < status.revokedBefore ||
        (sessionId !== undefined && status.revokedSessions.has(sessionId))
      );
    },
  };
}

/** The next whole second: tokens issued up to `now` have an earlier `iat`; later ones get it as `iat`. */
export const revocationCutoff = (now: Date) => Math.floor(now.getTime() / 1000) + 1;

/** From the read, not the signing, so a login that read the user before a revocation is revoked. */
export const issuedAtFor = (user: { readonly revokedBefore: number }, readAt: Date) =>
  Math.max(epochSeconds(readAt), user.revokedBefore);
