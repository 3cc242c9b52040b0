/**
 * What issuing and verifying agree on: the two token types and the claim names
 * (docs/tokens-and-sessions.md "Tokens"). Access and refresh tokens differ in `typ` and in
 * audience, so neither stands in for the other.
 */

import type { Scope } from '../scopes.ts';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const REFRESH_TOKEN_TYPE = 'rt+jwt';

/** The customer account of the caller (the auto-login context). */
export const CUSTOMER_CLAIM = 'customer_id';
/** The session id, in both tokens: a session revoked for reuse stops its access tokens too. */
export const SESSION_CLAIM = 'sid';
/** An API client's token: its client id (RFC 9068 section 2.2), also its `sub`. Never in a user's token. */
export const CLIENT_ID_CLAIM = 'client_id';
/** An API client's token: the id of the secret it was granted with, so removing that secret stops it. */
export const SECRET_ID_CLAIM = 'secret_id';
/** RFC 9068 section 2.2.3: a client's token always has one, a user's only when narrowed. */
export const SCOPE_CLAIM = 'scope';

/** Whom a token speaks for. */
export type Subject =
  | { readonly kind: 'user'; readonly username: string }
  | { readonly kind: 'client'; readonly clientId: string };

/** The caller of a protected route: whom its token speaks for, the customer, and what it may do. */
export interface Caller {
  readonly subject: Subject;
  /** Null when the caller has no customer. */
  readonly customerId: string | null;
  readonly scopes: readonly Scope[];
}
