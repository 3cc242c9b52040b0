/**
 * The rules of revocation: the cutoff a revocation sets, the `iat` a token gets, and the
 * authorizer's check. How late a revocation takes effect: docs/tokens-and-sessions.md.
 */
import { expiringCache } from '../cache.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import { type Clock, epochSeconds } from '../time.ts';
import type { AccessClaims } from '../tokens/verify.ts';

/** What the authorizer needs to honour a revocation: a user's state, by exact username. */
export interface UserStatus {
  readonly enabled: boolean;
  readonly revokedBefore: number;
  /** Sessions revoked for refresh-token reuse: their access tokens are refused too. */
  readonly revokedSessions: ReadonlySet<string>;
}

/** What refresh needs when a refresh token is reused: to stop the session's access tokens. */
export interface SessionTokenRevoker {
  /**
   * Records on the user that every access token of `sessionId` is revoked, until `until`
   * (epoch seconds: when the last of them expires); entries past their `until` are dropped
   * on the way. Idempotent; does nothing for a user that does not exist.
   */
  revokeSessionTokens(username: string, sessionId: string, until: number): Promise<void>;
}

/** What the authorizer needs to honour a disabled or removed client or a removed secret. */
export interface ClientStatus {
  readonly enabled: boolean;
  readonly revokedBefore: number;
  readonly secretIds: ReadonlySet<string>;
}

export interface ClientStatusReader {
  findClientStatus(clientId: string): Promise<ClientStatus | null>;
}

export interface UserStatusReader {
  /** The state of the user whose stored username equals `username` exactly, or null. */
  findStatus(username: string): Promise<UserStatus | null>;
}

export interface RevocationCheck {
  /**
   * True when the user is gone or disabled, revoked tokens issued before a moment later than
   * the token's `iat`, or the token's session was revoked for reuse; for an API client's token,
   * when the client is gone or disabled, was disabled after the token's `iat`, or the secret the
   * token was granted with was removed. Rejects if the store cannot be read (the authorizer
   * fails closed).
   */
  isRevoked(claims: AccessClaims): Promise<boolean>;
}

export interface RevocationCheckDeps {
  readonly users: UserStatusReader;
  readonly clients: ClientStatusReader;
  readonly cacheTtlMs: number;
  readonly clock?: Clock;
  /** Counts cache hits and misses (a miss reads DynamoDB). */
  readonly metrics: MetricsRecorder;
}

export function createRevocationCheck(deps: RevocationCheckDeps): RevocationCheck {
  const { metrics } = deps;
  const cacheOf = <TStatus>() =>
    expiringCache<string, TStatus | null>({
      ttlMs: deps.cacheTtlMs,
      // Bounds the memory a container spends on the cache.
      maxEntries: 10_000,
      // A miss may be an eventually consistent read of a user created a moment ago: ask again.
      keep: (status) => status !== null,
      ...(deps.clock && { clock: deps.clock }),
    });
  const users = cacheOf<UserStatus>();
  const clients = cacheOf<ClientStatus>();
  /** The cached state, or a read of it; counts a hit or a miss. */
  const statusOf = <TStatus>(
    cache: ReturnType<typeof cacheOf<TStatus>>,
    key: string,
    find: () => Promise<TStatus | null>,
  ) => {
    // A hit made no read of its own: a cached state, or one a concurrent check is reading.
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
          !status.secretIds.has(claims.secretId)
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

/**
 * The cutoff for a revocation at `now`: the next whole second, so every token issued up to
 * `now` has an earlier `iat`, and tokens issued later get `iat` = the cutoff (`issuedAtFor`).
 */
export const revocationCutoff = (now: Date) => Math.floor(now.getTime() / 1000) + 1;

/**
 * The `iat` of tokens issued from a user read at `readAt`, or the user's cutoff if later.
 * From the read, not the signing: a login that read the user before a revocation is revoked.
 */
export const issuedAtFor = (user: { readonly revokedBefore: number }, readAt: Date) =>
  Math.max(epochSeconds(readAt), user.revokedBefore);
