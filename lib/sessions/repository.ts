/**
 * Sessions: one per login, holding which refresh token of the session is
 * current. Each refresh spends the current token and makes its successor current in one
 * conditional write, so of two refreshes with the same token exactly one wins. A token of
 * the session that is not current has been spent: presenting it again is reuse.
 *
 * Only the current and the immediately previous `jti` are kept: every other token of the
 * session is spent by construction, so the session item stays one small item however often
 * it is refreshed. Expiry is decided here by `expiresAt`, never by DynamoDB's TTL deletion,
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
  create(session: NewSession): Promise<void>;
  /**
   * Makes `toJti` current if `fromJti` is current, the session is `username`'s, is live and
   * has not reached `expiresAt` at `now`. Resolves with the session as updated, or null if any of that fails.
   */
  refresh(step: RefreshStep): Promise<Session | null>;
  /** A consistent read; null if there is no such session. */
  get(sessionId: string): Promise<Session | null>;
  /** Revokes a live session; a no-op for a revoked or unknown one. */
  revoke(sessionId: string, reason: RevocationReason, now: Date): Promise<void>;
}
