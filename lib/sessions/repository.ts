/** Only the current and previous `jti` are kept. Expiry is `expiresAt`, never DynamoDB's lagging TTL. */
export interface Session {
  readonly sessionId: string;
  readonly username: string;
  /** Epoch seconds: the login that started the session. */
  readonly createdAt: number;
  /** Epoch seconds: the session's absolute end; no token of it lives longer. */
  readonly expiresAt: number;
  readonly currentJti: string;
  /** Spent last, for the grace window; null before the first refresh. */
  readonly previousJti: string | null;
  /** Epoch milliseconds when `previousJti` was spent. */
  readonly previousSpentAt: number | null;
  readonly generation: number;
  /** Epoch milliseconds; null while the session is live. */
  readonly revokedAt: number | null;
  readonly revokedReason: RevocationReason | null;
}

export type RevocationReason = 'logout' | 'reuse' | 'ended';

export interface NewSession {
  readonly sessionId: string;
  readonly username: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly currentJti: string;
}

export interface RefreshStep {
  readonly sessionId: string;
  /** Must own the session. */
  readonly username: string;
  readonly fromJti: string;
  readonly toJti: string;
  readonly now: Date;
  /** Epoch seconds: the session's new end (a connection's idle lifetime); absent: it stays. */
  readonly extendTo?: number;
}

export interface SessionStore {
  /** The same session again (a write sent twice) is no error; another with its id is. */
  create(session: NewSession): Promise<void>;
  /** One conditional write, so of two refreshes with one token exactly one wins; null if it lost. */
  refresh(step: RefreshStep): Promise<Session | null>;
  /** A consistent read. */
  get(sessionId: string): Promise<Session | null>;
  /** A no-op for a revoked or unknown session. */
  revoke(sessionId: string, reason: RevocationReason, now: Date): Promise<void>;
}
