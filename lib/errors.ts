import type { QuotaState } from './quota.ts';

/** The one error vocabulary: domain code throws `AppError`; only `lib/http/problems.ts` maps codes to HTTP. */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'MALFORMED_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'PAYLOAD_TOO_LARGE'
  /** Any failed login, whatever the reason: the client cannot tell them apart. */
  | 'INVALID_CREDENTIALS'
  /** Any refused refresh token: answered like INVALID_CREDENTIALS, with a detail. */
  | 'INVALID_REFRESH_TOKEN'
  | 'TOO_MANY_ATTEMPTS'
  /** Let through on a (cached) decision: token expired, context malformed, or two Authorization values. */
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_SCOPE'
  /** Any failed client authentication: unknown client, wrong secret, disabled. */
  | 'INVALID_CLIENT'
  | 'INVALID_SCOPE'
  | 'UNSUPPORTED_GRANT_TYPE'
  /** A platform's authorization code or refresh token refused: unknown, expired, spent, another's. */
  | 'INVALID_GRANT'
  /** An authenticated client that may not use the grant it asked for (a platform's client credentials). */
  | 'UNAUTHORIZED_CLIENT'
  /** An OAuth endpoint called with another method than POST. */
  | 'METHOD_NOT_ALLOWED'
  /** The user has no customer (auto-login context). */
  | 'CONTEXT_MISSING'
  /** Also when it belongs to someone else. */
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  /** The change would break a rule of what exists: a third live secret, removing the last one. */
  | 'CONFLICT'
  /** The action shows a secret: it needs a login within the last RECENT_LOGIN_SECONDS. */
  | 'RECENT_LOGIN_REQUIRED'
  /** The customer requires its administrators' sessions to begin with a passkey (RFC 9470 step-up). */
  | 'PASSKEY_REQUIRED'
  /**
   * A DPoP proof refused (RFC 9449): malformed, of another key, method or URL, stale or spent, or
   * missing where the token or the client needs one. The detail names the check.
   */
  | 'INVALID_DPOP_PROOF'
  /** A DPoP-bound access token sent as `Bearer`, or an unbound one as `DPoP` (RFC 9449 section 7.1). */
  | 'INVALID_BOUND_TOKEN'
  /** A dependency failed or timed out: worth a retry. */
  | 'DEPENDENCY_UNAVAILABLE'
  /** Our own defect: a retry will not help. */
  | 'INTERNAL';

/** How recent a login must be for an action that shows a secret (GitHub's sudo mode). */
export const RECENT_LOGIN_SECONDS = 15 * 60;

/**
 * What a store refused, for its caller to say in its own words: a reason to switch on, never
 * text to match (as jose's errors carry a `code`). The code says how HTTP answers it.
 */
export type Refusal =
  /** NOT_FOUND: no client of that id (or of another spelling of it). */
  | 'no-such-client'
  /** NOT_FOUND: the client has no live secret of that id. */
  | 'no-such-secret'
  /** NOT_FOUND: no user of exactly that name (or not of the customer the change names). */
  | 'no-such-user'
  /** ALREADY_EXISTS: a client of that id, a secret of that id, a user of that name in any case. */
  | 'client-exists'
  | 'secret-exists'
  | 'user-exists'
  /** CONFLICT: the client has MAX_LIVE_SECRETS live secrets already. */
  | 'secrets-full'
  /** CONFLICT: a secret for a client of keys (private_key_jwt), or a key for a client of secrets. */
  | 'other-credential-kind'
  /** CONFLICT: removing it would leave the client no live secret. */
  | 'last-live-secret'
  /** CONFLICT: removing it would leave the client only secrets that expire (lib/clients/secrets.ts). */
  | 'last-lasting-secret'
  /** NOT_FOUND: the platform has no such redirect URI. */
  | 'no-such-redirect-uri'
  /** CONFLICT: the platform has MAX_REDIRECT_URIS already; removing it would leave none. */
  | 'redirect-uris-full'
  | 'last-redirect-uri'
  /** VALIDATION_FAILED: a grant of administration to a user without a customer. */
  | 'no-customer';

/** Named by its path; never carries the value. */
export interface InvalidParam {
  readonly name: string;
  readonly reason: string;
}

export interface AppErrorOptions {
  /** Safe, client-facing detail. Never a value the client sent, never an internal message. */
  readonly detail?: string;
  readonly invalidParams?: readonly InvalidParam[];
  readonly retryAfterSeconds?: number;
  /** INSUFFICIENT_SCOPE: the scope the route needs (RFC 6750 section 3's `scope` attribute). */
  readonly requiredScope?: string;
  /** What is left of the published limits (the RateLimit field) after this attempt. */
  readonly quota?: readonly QuotaState[];
  /** A store's refusal (above): what its caller turns into its own answer. */
  readonly reason?: Refusal;
  /** Internal cause: logged, never sent. */
  readonly cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  readonly invalidParams: readonly InvalidParam[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly requiredScope: string | undefined;
  readonly quota: readonly QuotaState[] | undefined;
  readonly reason: Refusal | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(code, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.detail = options.detail;
    this.invalidParams = options.invalidParams;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.requiredScope = options.requiredScope;
    this.quota = options.quota;
    this.reason = options.reason;
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
