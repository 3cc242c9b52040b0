/** The authorization requests in progress and the codes they end in: the store's port. */
import type { Scope } from '../scopes.ts';
import type { AuthorizationRequest } from './request.ts';

/** An authorization request between its push (or first page) and its decision. */
export interface PendingAuthorization {
  /** Random, 256 bits: also the `request_uri`'s tail and the page's form field. */
  readonly id: string;
  readonly request: AuthorizationRequest;
  /** The platform's name as registered when the request came: what the page shows. */
  readonly platformName: string;
  /** Epoch seconds: a pushed request must be opened by then, an opened one decided. */
  readonly expiresAt: number;
  /** The digest of the cookie of the one browser it was opened in; absent until then. */
  readonly browser?: string;
  /** The customer's administrator signed in on the page; absent until then. */
  readonly signedIn?: SignedIn;
  /** Epoch milliseconds of its one decision (approve or deny); absent until then. */
  readonly decidedAt?: number;
}

/** Who signed in on the page, for which customer, when (epoch seconds, `issuedAtFor`) and how. */
export interface SignedIn {
  readonly username: string;
  readonly customerId: string;
  /** A revocation of the user after it (a new password, sign out everywhere) ends the sign-in. */
  readonly at: number;
  /** How it signed in: under the customer's passkey policy only a passkey's sign-in approves. */
  readonly method: 'password' | 'passkey';
}

/** What a code was issued for, all of which its exchange must present. */
export interface CodeBinding {
  readonly clientId: string;
  readonly redirectUri: string;
  /** The challenge the exchange's verifier makes (`challengeOf`). */
  readonly codeChallenge: string;
}

/** What a code stands for: the approval, for the platform that asked and the redirect URI it named. */
export interface AuthorizationCode {
  /** SHA-256 of the code: the code itself is never stored. */
  readonly digest: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly connectionId: string;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  /** Epoch seconds of the approval: the `auth_time` of the connection's session. */
  readonly approvedAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

export type Redemption =
  | { readonly outcome: 'redeemed'; readonly code: AuthorizationCode }
  /** Redeemed before, by another request: whatever that one issued must end (RFC 6749 section 4.1.2). */
  | { readonly outcome: 'replayed'; readonly code: AuthorizationCode }
  | { readonly outcome: 'unknown' };

export interface AuthorizationStore {
  /** Stores a new request; the same one again (a write resent) is no error. */
  push(pending: PendingAuthorization): Promise<void>;
  /** A consistent read; null when there is none, or it has expired at `now`. */
  get(id: string, now: Date): Promise<PendingAuthorization | null>;
  /** Binds the request to `browser` until `expiresAt`, once; false when it was opened by another. */
  open(id: string, browser: string, expiresAt: number, now: Date): Promise<boolean>;
  /**
   * Records who signed in, while undecided and in that browser, and binds the request to the
   * browser's new cookie (`nextBrowser`): a cookie planted before the sign-in decides nothing.
   */
  signIn(id: string, browser: string, nextBrowser: string, who: SignedIn, now: Date): Promise<boolean>;
  /** The request's one decision, in that browser, after a sign-in; false when it had one. */
  decide(id: string, browser: string, now: Date): Promise<boolean>;
  /** Stores a new code (by its digest); the same one again is no error. */
  createCode(code: AuthorizationCode): Promise<void>;
  /**
   * Spends the code, once, for an exchange that presents all it was issued for (another client,
   * redirect URI or verifier spends nothing, so a stolen code cannot be burnt to end the
   * connection, RFC 9700 section 4.5): `redemptionId` names this exchange, so the SDK's resend
   * of our own write is recognised as ours and not taken for a replay.
   */
  redeemCode(digest: string, binding: CodeBinding, redemptionId: string, now: Date): Promise<Redemption>;
}
