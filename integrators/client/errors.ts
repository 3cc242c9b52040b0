/**
 * What a refused or failed call rejects with. It holds what the service said and never a
 * token, password or secret; network failures, aborts and timeouts are not these.
 */

/** An RFC 9457 problem, as the service answers its errors. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status?: number;
  readonly detail?: string;
  readonly invalidParams?: readonly { readonly name: string; readonly reason: string }[];
}

export type Operation = 'login' | 'refresh' | 'client-credentials' | 'logout' | 'request';

export interface ParcelApiErrorInit {
  readonly operation: Operation;
  readonly status: number;
  readonly problem?: Problem | undefined;
  readonly oauthError?: string | undefined;
  readonly oauthErrorDescription?: string | undefined;
  readonly retryAfterSeconds?: number | undefined;
  /** Instead of the message made from the above. */
  readonly message?: string;
}

/**
 * A refused or failed call. It holds what the service said (status, problem, the token
 * endpoint's RFC 6749 `error`) and never a token, password or secret. Network failures,
 * aborts and timeouts are not this: fetch's own errors and the signal's reason pass through.
 */
export class ParcelApiError extends Error {
  override readonly name: string = 'ParcelApiError';
  readonly operation: Operation;
  readonly status: number;
  readonly problem: Problem | undefined;
  /** The token endpoint's RFC 6749 error code: `invalid_client`, `invalid_scope`, ... */
  readonly oauthError: string | undefined;
  readonly oauthErrorDescription: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ParcelApiErrorInit, options?: ErrorOptions) {
    super(init.message ?? `${init.operation} failed: ${answerOf(init)}`, options);
    this.operation = init.operation;
    this.status = init.status;
    this.problem = init.problem;
    this.oauthError = init.oauthError;
    this.oauthErrorDescription = init.oauthErrorDescription;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * The service refused the client's credentials: a login answered 401 `invalid-credentials`,
 * or the token endpoint `invalid_client`. The client then sends them no more: each further
 * try would count as another failure, locking the user or client for longer. Every later
 * call that needs them rejects with this at once, without a request, its `cause` the refusal
 * the service answered, until `setCredentials`. Its fields are those of that refusal.
 */
export class CredentialsRefusedError extends ParcelApiError {
  override readonly name: string = 'CredentialsRefusedError';

  /** `refusal` as the service answered it; with `again`, a call stopped because of it. */
  constructor(refusal: ParcelApiError, options: { readonly again?: boolean } = {}) {
    const { operation } = refusal;
    super(
      {
        operation,
        status: refusal.status,
        problem: refusal.problem,
        oauthError: refusal.oauthError,
        oauthErrorDescription: refusal.oauthErrorDescription,
        retryAfterSeconds: refusal.retryAfterSeconds,
        message:
          options.again === true
            ? `${operation} not sent: the credentials were refused (${answerOf(refusal)}); setCredentials to send credentials again`
            : refusal.message,
      },
      options.again === true ? { cause: refusal } : undefined,
    );
  }
}

/** A status and what the service said with it: `401 Invalid credentials`, `401 invalid_client`. */
function answerOf(error: Pick<ParcelApiErrorInit, 'status' | 'problem' | 'oauthError'>): string {
  const said = error.problem?.title ?? error.oauthError;
  return `${error.status}${said === undefined ? '' : ` ${said}`}`;
}

/** The problem type of a refused login (docs/behaviour.md); a refused refresh has it too. */
const INVALID_CREDENTIALS = 'urn:parcel-auth:problem:invalid-credentials';

/**
 * Whether the service refused the credentials themselves: a login's `invalid-credentials`, the
 * token endpoint's `invalid_client` (401, or 400 as RFC 6749 section 5.2 allows). Not a 429,
 * a lock or throttle that passes, and not a refused refresh: its session ended, the
 * credentials may log in again.
 */
export function refusesCredentials(error: ParcelApiError): boolean {
  if (error.operation === 'login') return error.status === 401 && error.problem?.type === INVALID_CREDENTIALS;
  return (
    error.operation === 'client-credentials' &&
    (error.status === 401 || error.status === 400) &&
    error.oauthError === 'invalid_client'
  );
}
