// Revocation's cutoff, a token's `iat` and the authorizer's check; how late each takes effect:
// docs/tokens-and-sessions.md, "Sessions: rotation, reuse detection, logout and revocation".
import { expiringCache } from '../cache.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import { type Clock, epochSeconds, systemClock } from '../time.ts';
import type { AccessClaims, ClientGrant } from '../tokens/verify.ts';

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
  revokeSessionTokens(username: string, sessionId: string, until: number): Promise<'listed' | 'cutoff'>;
}

export interface ClientStatus {
  readonly enabled: boolean;
  readonly revokedBefore: number;
  readonly secretIds: ReadonlySet<string>;
  /** The `jti`s of access tokens the client revoked itself (RFC 7009). */
  readonly revokedTokens: ReadonlySet<string>;
}

/** A platform's connection to a customer as the authorizer reads it: which one it is now. */
export interface ConnectionStatus {
  readonly connectionId: string;
}

export interface ConnectionStatusReader {
  findConnectionStatus(
    clientId: string,
    customerId: string,
    options?: StatusReadOptions,
  ): Promise<ConnectionStatus | null>;
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

/** `consistent`: a strongly consistent read, for a state a token issued a moment ago may depend on. */
export interface StatusReadOptions {
  readonly consistent?: boolean;
}

export interface ClientStatusReader {
  findClientStatus(clientId: string, options?: StatusReadOptions): Promise<ClientStatus | null>;
}

export interface UserStatusReader {
  findStatus(username: string, options?: StatusReadOptions): Promise<UserStatus | null>;
}

/**
 * The one rule of a user's revocation, the authorizer's and that of the functions that act on a
 * decision API Gateway cached: a token issued before the user's cutoff, or of a session revoked
 * one by one (a logout, a refresh token reused).
 */
export const isUserTokenRevoked = (
  status: Pick<UserStatus, 'revokedBefore' | 'revokedSessions'>,
  token: { readonly issuedAt: number; readonly sessionId?: string | undefined },
) =>
  token.issuedAt < status.revokedBefore ||
  (token.sessionId !== undefined && status.revokedSessions.has(token.sessionId));

/**
 * A client's: issued before its cutoff, revoked by the client itself, or granted with a secret no
 * longer live. A platform's token of a connection has no secret: its connection is read beside.
 */
export const isClientTokenRevoked = (
  status: ClientStatus,
  token: { readonly issuedAt: number; readonly grant: ClientGrant; readonly jti: string },
) =>
  token.issuedAt < status.revokedBefore ||
  status.revokedTokens.has(token.jti) ||
  ('secretId' in token.grant && !status.secretIds.has(token.grant.secretId));

export interface RevocationCheck {
  /** Rejects if the store cannot be read, so the authorizer fails closed. */
  isRevoked(claims: AccessClaims): Promise<boolean>;
}

export interface RevocationCheckDeps {
  readonly users: UserStatusReader;
  readonly clients: ClientStatusReader;
  /** A platform's connections: a token of one that ended (its item gone, or another's id now) is revoked. */
  readonly connections: ConnectionStatusReader;
  readonly cacheTtlMs: number;
  readonly clock?: Clock;
  /** How a check waits for REREAD_INTERVAL_MS (tests move their clock instead). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly metrics: MetricsRecorder;
}

/** How far an eventually consistent read may lag a write, as the revocation bound counts it (docs/stages.md). */
export const READ_LAG_SECONDS = 1;

/** The least time between two consistent reads of one state for tokens of their second. */
export const REREAD_INTERVAL_MS = 100;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createRevocationCheck(deps: RevocationCheckDeps): RevocationCheck {
  const { metrics } = deps;
  const clock = deps.clock ?? systemClock;
  const sleep = deps.sleep ?? realSleep;
  /** A status, when its read began (epoch ms), and whether it was a read again (below). */
  type Read<TStatus> = { readonly status: TStatus | null; readonly readAt: number; readonly again: boolean };
  const cacheOf = <TStatus>() =>
    expiringCache<string, Read<TStatus>>({
      ttlMs: deps.cacheTtlMs,
      maxEntries: 10_000,
      // A miss may be an eventually consistent read of a user created a moment ago: ask again.
      keep: (read) => read.status !== null,
      clock,
    });
  const users = cacheOf<UserStatus>();
  const clients = cacheOf<ClientStatus>();
  const connections = cacheOf<ConnectionStatus>();
  /**
   * The cached status, unless it refuses a token issued after (or within READ_LAG_SECONDS of)
   * its read: an eventually consistent read may predate the state the token was issued under (a
   * client enabled again, a secret added, a user enabled), so that state is read again, strongly
   * consistent. A token of the second of that read again may still postdate it (the seconds of
   * `iat` tell no more): it is read again once REREAD_INTERVAL_MS have passed since, the check
   * waiting for them if need be, until a read of a later second settles the token. A refused
   * token costs at most 1000 / REREAD_INTERVAL_MS + 2 reads more, however often it is presented,
   * and a token granted just after such a read is never refused for it.
   */
  const revokedBy = async <TStatus>(
    cache: ReturnType<typeof cacheOf<TStatus>>,
    key: string,
    find: (options: StatusReadOptions) => Promise<TStatus | null>,
    issuedAt: number,
    refuses: (status: TStatus | null) => boolean,
  ): Promise<boolean> => {
    // Joining a concurrent check's read counts as a hit.
    let read = false;
    const load = (again: boolean) => async (readAt: number) => {
      read = true;
      return { status: await find(again ? { consistent: true } : {}), readAt, again };
    };
    const pending = cache.get(key, load(false));
    metrics.count({ name: read ? 'RevocationCacheMiss' : 'RevocationCacheHit' });
    const cached = await pending;
    if (!refuses(cached.status)) return false;
    const readSecond = Math.floor(cached.readAt / 1000);
    if (issuedAt < readSecond - (cached.again ? 0 : READ_LAG_SECONDS)) return true;
    const wait = cached.again ? cached.readAt + REREAD_INTERVAL_MS - clock().getTime() : 0;
    if (wait > 0) await sleep(wait);
    return refuses((await cache.get(key, load(true), cached.readAt + 1)).status);
  };
  return {
    isRevoked(claims) {
      if (claims.kind === 'client') {
        const { clientId, grant } = claims;
        const client = revokedBy(
          clients,
          clientId,
          (options) => deps.clients.findClientStatus(clientId, options),
          claims.issuedAt,
          (status) => status === null || !status.enabled || isClientTokenRevoked(status, claims),
        );
        if ('secretId' in grant) return client;
        // A connection's token: its platform's state and the connection's, read side by side.
        const customerId = claims.customerId ?? '';
        const connection = revokedBy(
          connections,
          `${clientId}\n${customerId}`,
          (options) => deps.connections.findConnectionStatus(clientId, customerId, options),
          claims.issuedAt,
          (status) => status?.connectionId !== grant.connectionId,
        );
        return Promise.all([client, connection]).then(([one, other]) => one || other);
      }
      const { username } = claims;
      return revokedBy(
        users,
        username,
        (options) => deps.users.findStatus(username, options),
        claims.issuedAt,
        (status) => status === null || !status.enabled || isUserTokenRevoked(status, claims),
      );
    },
  };
}

/** The next whole second: tokens issued up to `now` have an earlier `iat`; later ones get it as `iat`. */
export const revocationCutoff = (now: Date) => Math.floor(now.getTime() / 1000) + 1;

/** From the read, not the signing, so a login that read the user before a revocation is revoked. */
export const issuedAtFor = (user: { readonly revokedBefore: number }, readAt: Date) =>
  Math.max(epochSeconds(readAt), user.revokedBefore);
