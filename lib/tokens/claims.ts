/** What issuing and verifying share: token types and claim names (docs/tokens-and-sessions.md, "Tokens"). */

import type { Scope } from '../scopes.ts';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const REFRESH_TOKEN_TYPE = 'rt+jwt';

export const CUSTOMER_CLAIM = 'customer_id';
/** The session id, in both tokens: a session revoked for reuse stops its access tokens too. */
export const SESSION_CLAIM = 'sid';
/** RFC 9068 section 2.2: whom the token was issued to. An API client's token: its id, also its `sub`. */
export const CLIENT_ID_CLAIM = 'client_id';
/**
 * The `client_id` of a user's token: the password login, which no API client id (`pcl_…`) can
 * equal. Users and clients are told apart by it (docs/tokens-and-sessions.md, "Tokens").
 */
export const LOGIN_CLIENT_ID = 'login';
/** The secret a client's token was granted with, so removing that secret stops it. */
export const SECRET_ID_CLAIM = 'secret_id';
/**
 * A platform's token of a connection (docs/platforms.md): the connection it acts through, in
 * place of `secret_id`; ending the connection stops it. Its refresh token's `sub`.
 */
export const CONNECTION_CLAIM = 'connection_id';
/**
 * RFC 9449 section 6.1 (RFC 7800): a client's access token bound to a key holds `{ jkt }`, the
 * key's SHA-256 thumbprint, and is taken only with a DPoP proof of that key (lib/dpop/).
 */
export const CONFIRMATION_CLAIM = 'cnf';
/** RFC 9068 section 2.2.3, in every token; a user's signed before it was (until they expire) means the default scopes. */
export const SCOPE_CLAIM = 'scope';
/**
 * RFC 9068 section 2.2.1: the epoch seconds of the login that started the session, in a user's
 * refresh and access tokens alike (a refresh keeps it), so an action can ask for a recent login.
 */
export const AUTH_TIME_CLAIM = 'auth_time';
/**
 * How the session's user signed in, in a user's refresh and access tokens alike: RFC 8176's
 * `amr` (`pwd` for a password; `pop` and `mfa` for a passkey, a key's proof of possession after
 * the authenticator verified its user) and, for a passkey, `acr` `phr` (phishing-resistant,
 * OpenID's Extended Authentication Profile), the value an RFC 9470 step-up asks for.
 */
export const AMR_CLAIM = 'amr';
export const ACR_CLAIM = 'acr';
export type SignInMethod = 'password' | 'passkey';
export const SIGN_IN_CLAIMS = {
  password: { [AMR_CLAIM]: ['pwd'] },
  passkey: { [AMR_CLAIM]: ['pop', 'mfa'], [ACR_CLAIM]: 'phr' },
} as const satisfies Record<SignInMethod, Record<string, unknown>>;
/** The `acr` of a passkey's session: what a step-up to one asks for (`acr_values`). */
export const PASSKEY_ACR = SIGN_IN_CLAIMS.passkey[ACR_CLAIM];

export type Subject =
  | { readonly kind: 'user'; readonly username: string }
  | { readonly kind: 'client'; readonly clientId: string };

export interface Caller {
  readonly subject: Subject;
  /** Null when the caller has no customer. */
  readonly customerId: string | null;
  readonly scopes: readonly Scope[];
  /** A user's: epoch seconds of the login that started the session (`auth_time`); absent for a client. */
  readonly authTime?: number;
  /** Epoch seconds: the token's `iat`, for a revocation the (cached) decision predates. */
  readonly issuedAt?: number;
  /** A user's session (`sid`), when the token names one. */
  readonly sessionId?: string;
  /** A user's: how the session's user signed in; absent for a client. */
  readonly signInMethod?: SignInMethod;
}
