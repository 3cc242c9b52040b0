/**
 * Token families (sessions): one per login, holding which refresh token of the family is
 * current. Each refresh spends the current token and makes its successor current in one
 * conditional write, so of two refreshes with the same token exactly one wins. A token of
 * the family that is not current has been spent: presenting it again is reuse.
 *
 * Only the current and the immediately previous `jti` are kept: every other token of the
 * family is spent by construction, so the family item stays one small item however often
 * it is refreshed. Expiry is decided here by `expiresAt`, never by DynamoDB's TTL deletion,
 * which may lag by days.
 */
export interface Family {
  readonly familyId: string;
  readonly username: string;
  /** Epoch seconds: the login that started the family. */
  readonly createdAt: number;
  /** Epoch seconds: the family's absolute end; no token of it lives longer. */
  readonly expiresAt: number;
  readonly currentJti: string;
  /** The refresh token spent last, for the grace window; null before the first refresh. */
  readonly previousJti: string | null;
  /** Epoch milliseconds when `previousJti` was spent. */
  readonly previousSpentAt: number | null;
  /** How many refresh tokens the family has issued. */
  readonly generation: number;
  /** Epoch milliseconds; null while the family is live. */
  readonly revokedAt: number | null;
  readonly revokedReason: RevocationReason | null;
}

export type RevocationReason = 'logout' | 'reuse';

export interface NewFamily {
  readonly familyId: string;
  readonly username: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly currentJti: string;
}

export interface Rotation {
  readonly familyId: string;
  /** The user the presented token speaks for: it must own the family. */
  readonly username: string;
  /** The presented refresh token. */
  readonly fromJti: string;
  /** Its successor. */
  readonly toJti: string;
  readonly now: Date;
}

export interface FamilyStore {
  create(family: NewFamily): Promise<void>;
  /**
   * Makes `toJti` current if `fromJti` is current, the family is `username`'s, is live and
   * has not reached `expiresAt` at `now`. Resolves with the family as updated, or null if any of that fails.
   */
  rotate(rotation: Rotation): Promise<Family | null>;
  /** A consistent read; null if there is no such family. */
  get(familyId: string): Promise<Family | null>;
  /** Revokes a live family; a no-op for a revoked or unknown one. */
  revoke(familyId: string, reason: RevocationReason, now: Date): Promise<void>;
}
