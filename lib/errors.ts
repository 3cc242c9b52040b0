/** The one error vocabulary: domain code throws `AppError`; only `lib/http/problems.ts` maps codes to HTTP. */
export type ErrorCode =
  /** The request body or a parameter failed validation. */
  | 'VALIDATION_FAILED'
  /** The body is not parseable JSON. */
  | 'MALFORMED_JSON'
  /** The body is not declared as JSON. */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** The body is larger than the service accepts. */
  | 'PAYLOAD_TOO_LARGE'
  /** Any failed login: unknown user, wrong password, wrong username case, disabled user. */
  | 'INVALID_CREDENTIALS'
  /** Any refused refresh token, for any reason: answered like INVALID_CREDENTIALS, with a detail. */
  | 'INVALID_REFRESH_TOKEN'
  /** Too many failed logins for this username or from this address: try again later. */
  | 'TOO_MANY_ATTEMPTS'
  /**
   * A protected request API Gateway let through on a (cached) decision that says the token
   * expired, or is malformed, or beside a second Authorization value.
   */
  | 'UNAUTHORIZED'
  /** The token is valid but its scopes do not include the route's (RFC 6750 insufficient_scope). */
  | 'INSUFFICIENT_SCOPE'
  /** Any failed client authentication at the token endpoint: unknown client, wrong secret, disabled. */
  | 'INVALID_CLIENT'
  /** The token endpoint was asked for a scope beyond the client's. */
  | 'INVALID_SCOPE'
  /** The token endpoint was asked for a grant other than client_credentials. */
  | 'UNSUPPORTED_GRANT_TYPE'
  /** The user is valid but has no customer (auto-login context) linked. */
  | 'CONTEXT_MISSING'
  /** The resource does not exist, or exists but belongs to someone else. */
  | 'NOT_FOUND'
  /** The resource to create exists already (admin operations). */
  | 'ALREADY_EXISTS'
  /** A dependency (DynamoDB, the key store) failed or timed out: worth a retry. */
  | 'DEPENDENCY_UNAVAILABLE'
  /** Our own defect (anything unexpected): not the caller's fault, and a retry will not help. */
  | 'INTERNAL';

/** A field that failed validation, named by its path in the body. Never carries the value. */
export interface InvalidParam {
  readonly name: string;
  readonly reason: string;
}

export interface AppErrorOptions {
  /** Safe, client-facing detail. Never a value the client sent, never an internal message. */
  readonly detail?: string;
  readonly invalidParams?: readonly InvalidParam[];
  /** Seconds after which a retry may succeed (429, 503). */
  readonly retryAfterSeconds?: number;
  /** Internal cause: logged, never sent. */
  readonly cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  readonly invalidParams: readonly InvalidParam[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(code, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.detail = options.detail;
    this.invalidParams = options.invalidParams;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
