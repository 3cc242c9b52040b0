/**
 * A session keeps only its current and previous `jti`: every older token is spent by
 * construction, so the item stays small. Expiry is `expiresAt`, never DynamoDB's TTL deletion,
 * which may lag by days.
 */
export interface Session {
  readonly sessionId: string;
  readonly username: string;
  /** Epoch seconds: the login that started the session. */
  readonly createdAt: number;
  /** Epoch seconds: the session's absolute end; no token of it lives longer. */
  readonly expiresAt: number;
  readonly currentJti: string;
  /** The refresh token spent last, for the grace window; null before the first refresh. */
  readonly previousJti: string | null;
  /** Epoch milliseconds when `previousJti` was spent. */
  readonly previousSpentAt: number | null;
  /** How many refresh tokens the session has issued. */
  readonly generation: number;
  /** Epoch milliseconds; null while the session is live. */
  readonly revokedAt: number | null;
  readonly revokedReason: RevocationReason | null;
}

export type RevocationReason = 'logout' | 'reuse';

export interface NewSession {
  readonly sessionId: string;
  readonly username: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly currentJti: string;
}

export interface RefreshStep {
  readonly sessionId: string;
  /** The user the presented token speaks for: it must own the session. */
  readonly username: string;
  /** The presented refresh token. */
  readonly fromJti: string;
  /** Its successor. */
  readonly toJti: string;
  readonly now: Date;
}

export interface SessionStore {
  /** Stores a new session; the same session again (a write sent twice) is no error, another with its id is. */
  create(session: NewSession): Promise<void>;
  /**
   * In one conditional write, so of two refreshes with one token exactly one wins: makes
   * `toJti` current if `fromJti` is, and the session is `username`'s, live and unexpired at
   * `now`. Resolves with the session as updated, or null.
   */
  refresh(step: RefreshStep): Promise<Session | null>;
  /** A consistent read; null if there is no such session. */
  get(sessionId: string): Promise<Session | null>;
  /** Revokes a live session; a no-op for a revoked or unknown one. */
  revoke(sessionId: string, reason: RevocationReason, now: Date): Promise<void>;
}
