// The one place error codes become HTTP: problem+json (RFC 9457), or RFC 6749's JSON at the OAuth
// endpoints. Clients get fixed texts; a failure's cause goes to the log only.
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ASSERTION_ALGORITHMS } from '../clients/algorithms.ts';
import { AppError, type ErrorCode, isAppError, RECENT_LOGIN_SECONDS } from '../errors.ts';
import { describeError, type Logger } from '../log.ts';
import { PASSKEY_ACR } from '../tokens/claims.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { type RateLimitFields, rateLimitFields } from './rate-limit.ts';
import { jsonResponse } from './responses.ts';

const PROBLEM_TYPE_PREFIX = 'urn:parcel-auth:problem:';

/** RFC 6750 section 3.1, word for word API Gateway's UNAUTHORIZED (infra/gateway-responses.yml). */
export const BEARER_INVALID_TOKEN =
  'Bearer error="invalid_token", error_description="The access token is missing, invalid, expired or revoked"';

/** RFC 9449 section 7.1: the DPoP scheme's challenge, with the algorithms a proof may be signed with. */
const dpopChallenge = (error: string) => `DPoP error="${error}", algs="${ASSERTION_ALGORITHMS.join(' ')}"`;

interface ProblemDefinition {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
  readonly detail?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Error code → HTTP. Adding a code to `ErrorCode` without a row here does not compile. */
const PROBLEMS: Record<ErrorCode, ProblemDefinition> = {
  VALIDATION_FAILED: { status: 400, slug: 'validation-failed', title: 'Invalid request' },
  MALFORMED_JSON: {
    status: 400,
    slug: 'malformed-json',
    title: 'Malformed JSON',
    detail: 'The request body is not a valid JSON document.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    slug: 'unsupported-media-type',
    title: 'Unsupported media type',
    detail: 'Send the request body as application/json.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    slug: 'payload-too-large',
    title: 'Payload too large',
    detail: `The request body exceeds ${MAX_BODY_BYTES} bytes.`,
  },
  INVALID_CREDENTIALS: {
    status: 401,
    slug: 'invalid-credentials',
    title: 'Invalid credentials',
    detail: 'The username or password is incorrect.',
  },
  // The status, type and title of a failed login: to a client both mean "log in again".
  INVALID_REFRESH_TOKEN: {
    status: 401,
    slug: 'invalid-credentials',
    title: 'Invalid credentials',
    detail: 'The refresh token is invalid, expired or revoked. Log in again to get a new one.',
  },
  // The OAuth token endpoint's alone, which answers it in RFC 6749's shape; as a problem for completeness.
  INVALID_GRANT: {
    status: 400,
    slug: 'invalid-grant',
    title: 'Invalid grant',
    detail: 'The authorization code or refresh token is invalid, expired or spent.',
  },
  // As API Gateway's UNAUTHORIZED (infra/gateway-responses.yml): a client cannot tell which refused it.
  UNAUTHORIZED: {
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid access token is required. Log in again to get one.',
    headers: { 'WWW-Authenticate': BEARER_INVALID_TOKEN },
  },
  TOO_MANY_ATTEMPTS: {
    status: 429,
    slug: 'too-many-attempts',
    title: 'Too many attempts',
    detail: 'Too many failed logins. Try again after the time in Retry-After.',
  },
  // RFC 6750 section 3.1, with the route's scope (problemResponse): the functions check scopes, not the policy.
  INSUFFICIENT_SCOPE: {
    status: 403,
    slug: 'insufficient-scope',
    title: 'Insufficient scope',
    detail: 'The access token does not grant the scope this route needs.',
    headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' },
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    slug: 'method-not-allowed',
    title: 'Method not allowed',
    detail: 'This endpoint accepts POST only.',
    headers: { Allow: 'POST' },
  },
  // The OAuth endpoints answer these in RFC 6749's shape (OAUTH_ERRORS); as problems for completeness.
  INVALID_CLIENT: {
    status: 401,
    slug: 'invalid-client',
    title: 'Invalid client',
    detail: 'The client id or secret is incorrect.',
  },
  INVALID_SCOPE: { status: 400, slug: 'invalid-scope', title: 'Invalid scope' },
  UNSUPPORTED_GRANT_TYPE: { status: 400, slug: 'unsupported-grant-type', title: 'Unsupported grant type' },
  UNAUTHORIZED_CLIENT: { status: 400, slug: 'unauthorized-client', title: 'Unauthorized client' },
  CONTEXT_MISSING: {
    status: 403,
    slug: 'auto-login-context-missing',
    title: 'Auto-login context missing',
    detail: 'This login is not linked to a customer account.',
  },
  NOT_FOUND: { status: 404, slug: 'not-found', title: 'Not found' },
  ALREADY_EXISTS: { status: 409, slug: 'already-exists', title: 'Already exists' },
  CONFLICT: { status: 409, slug: 'conflict', title: 'Conflict' },
  // GitHub's sudo mode, with RFC 9470's challenge: a client library that knows step-up reads `max_age`.
  RECENT_LOGIN_REQUIRED: {
    status: 403,
    slug: 'recent-login-required',
    title: 'Recent login required',
    detail: `This action needs a recent login: log in again (within the last ${RECENT_LOGIN_SECONDS / 60} minutes) and retry.`,
    headers: {
      'WWW-Authenticate': `Bearer error="insufficient_user_authentication", error_description="A login within the last ${RECENT_LOGIN_SECONDS} seconds is required", max_age=${RECENT_LOGIN_SECONDS}`,
    },
  },
  // RFC 9470's step-up: the token is valid, its authentication too weak; `acr_values` names the
  // passkey's (lib/tokens/claims.ts). 401, as the RFC says: the client gets a new token.
  PASSKEY_REQUIRED: {
    status: 401,
    slug: 'passkey-required',
    title: 'Passkey required',
    detail:
      'Your customer requires its administrators to sign in with a passkey: sign in with yours and retry.',
    headers: {
      'WWW-Authenticate': `Bearer error="insufficient_user_authentication", error_description="A sign-in with a passkey is required", acr_values="${PASSKEY_ACR}"`,
    },
  },
  // RFC 9449 section 7.1: the DPoP scheme's challenge, with the algorithms a proof may use.
  INVALID_DPOP_PROOF: {
    status: 401,
    slug: 'invalid-dpop-proof',
    title: 'Invalid DPoP proof',
    detail: 'The DPoP proof is missing, malformed, stale, spent, or not for this request and token.',
    headers: { 'WWW-Authenticate': dpopChallenge('invalid_dpop_proof') },
  },
  // The token is good but sent by the other scheme: the DPoP challenge, so a client learns to prove its key.
  INVALID_BOUND_TOKEN: {
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    headers: { 'WWW-Authenticate': dpopChallenge('invalid_token') },
  },
  DEPENDENCY_UNAVAILABLE: {
    status: 503,
    slug: 'service-unavailable',
    title: 'Service unavailable',
    detail: 'The service cannot answer right now. Try again later.',
  },
  // No detail: what went wrong is in the log, under the request id, and nowhere else.
  INTERNAL: { status: 500, slug: 'internal-error', title: 'Internal error' },
};

/** The status, title and detail a code answers with: for an answer in another shape (the authorization page's HTML). */
export const problemOf = (error: AppError) => {
  const problem = PROBLEMS[error.code];
  return { status: problem.status, title: problem.title, detail: error.detail ?? problem.detail };
};

export function problemResponse(error: AppError): APIGatewayProxyResult {
  const problem = PROBLEMS[error.code];
  return jsonResponse(
    problem.status,
    'application/problem+json',
    {
      type: `${PROBLEM_TYPE_PREFIX}${problem.slug}`,
      title: problem.title,
      status: problem.status,
      ...((error.detail ?? problem.detail) !== undefined && { detail: error.detail ?? problem.detail }),
      ...(error.invalidParams !== undefined && { invalidParams: error.invalidParams }),
    },
    {
      ...problem.headers,
      ...((problem.status === 503 || error.retryAfterSeconds !== undefined) && {
        'Retry-After': String(error.retryAfterSeconds ?? 1),
      }),
      ...(error.requiredScope !== undefined && {
        'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${error.requiredScope}"`,
      }),
    },
  );
}

interface OAuthErrorDefinition {
  readonly status: number;
  readonly error: string;
  readonly description?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const INVALID_REQUEST = { status: 400, error: 'invalid_request' } as const;
// Section 5.2: 401 and a WWW-Authenticate challenge for the Basic scheme, however the client authenticated.
const INVALID_CLIENT: OAuthErrorDefinition = {
  status: 401,
  error: 'invalid_client',
  description: 'Client authentication failed.',
  headers: { 'WWW-Authenticate': 'Basic realm="parcel-auth", charset="UTF-8"' },
};

/** Error code → RFC 6749 section 5.2 answer: OAuth client libraries read `error`, so every code has one. */
const OAUTH_ERRORS: Record<ErrorCode, OAuthErrorDefinition> = {
  VALIDATION_FAILED: INVALID_REQUEST,
  MALFORMED_JSON: INVALID_REQUEST,
  UNSUPPORTED_MEDIA_TYPE: {
    ...INVALID_REQUEST,
    description: 'Send the parameters as application/x-www-form-urlencoded.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    error: 'invalid_request',
    description: `The request body exceeds ${MAX_BODY_BYTES} bytes.`,
  },
  INVALID_CLIENT,
  INVALID_CREDENTIALS: INVALID_CLIENT,
  UNAUTHORIZED: INVALID_CLIENT,
  INVALID_REFRESH_TOKEN: { status: 400, error: 'invalid_grant' },
  INVALID_GRANT: { status: 400, error: 'invalid_grant' },
  INVALID_SCOPE: {
    status: 400,
    error: 'invalid_scope',
    description: "The requested scope is unknown, malformed, or beyond the client's.",
  },
  // An authenticated client without the endpoint's own scope (introspection's): 401 would tell it
  // to fix credentials that are right. 403 and section 5.2's code for an authenticated client
  // not allowed this use; the description names the scope (docs/clients.md).
  INSUFFICIENT_SCOPE: {
    status: 403,
    error: 'unauthorized_client',
    description: 'The client does not hold the scope this endpoint needs.',
  },
  UNSUPPORTED_GRANT_TYPE: {
    status: 400,
    error: 'unsupported_grant_type',
    description: 'This endpoint grants client_credentials, authorization_code and refresh_token.',
  },
  // Section 5.2's code for a client not allowed the grant type: a platform asking for client credentials.
  UNAUTHORIZED_CLIENT: {
    status: 400,
    error: 'unauthorized_client',
    description: 'A platform acts only for the customers that approve it, never for itself.',
  },
  // RFC 6749 section 3.2 allows POST only; clients expect its error JSON on a 405 too.
  METHOD_NOT_ALLOWED: {
    status: 405,
    error: 'invalid_request',
    description: 'This endpoint accepts POST only.',
    headers: { Allow: 'POST' },
  },
  // RFC 6749 has none for a throttled client; libraries retry `temporarily_unavailable` (4.1.2.1).
  TOO_MANY_ATTEMPTS: {
    status: 429,
    error: 'temporarily_unavailable',
    description: 'Too many failed client authentications. Try again after the time in Retry-After.',
  },
  CONTEXT_MISSING: INVALID_REQUEST,
  NOT_FOUND: INVALID_REQUEST,
  ALREADY_EXISTS: INVALID_REQUEST,
  CONFLICT: INVALID_REQUEST,
  RECENT_LOGIN_REQUIRED: INVALID_REQUEST,
  PASSKEY_REQUIRED: INVALID_REQUEST,
  // RFC 9449 section 5: the token endpoint's own error for a refused proof.
  INVALID_DPOP_PROOF: { status: 400, error: 'invalid_dpop_proof' },
  // No OAuth endpoint takes an access token as its credential; as invalid_request for completeness.
  INVALID_BOUND_TOKEN: INVALID_REQUEST,
  DEPENDENCY_UNAVAILABLE: {
    status: 503,
    error: 'temporarily_unavailable',
    description: 'The service cannot answer right now. Try again later.',
  },
  INTERNAL: { status: 500, error: 'server_error' },
};

/** The codes whose own detail, where the domain gives one, says more than the code's description. */
const DETAILED_OAUTH_ERRORS: readonly ErrorCode[] = [
  'INVALID_GRANT',
  'INVALID_SCOPE',
  'UNAUTHORIZED_CLIENT',
  'INVALID_DPOP_PROOF',
];

export function oauthErrorResponse(error: AppError): APIGatewayProxyResult {
  const definition = OAUTH_ERRORS[error.code];
  // A validation failure names the parameter, never its value (lib/clients/token-request.ts).
  const description =
    error.code === 'VALIDATION_FAILED' ||
    (DETAILED_OAUTH_ERRORS.includes(error.code) && error.detail !== undefined)
      ? error.detail
      : error.requiredScope !== undefined
        ? `The client does not hold the scope ${error.requiredScope}, which this endpoint needs.`
        : definition.description;
  return jsonResponse(
    definition.status,
    'application/json',
    { error: definition.error, ...(description !== undefined && { error_description: description }) },
    {
      ...definition.headers,
      ...((definition.status === 503 || error.retryAfterSeconds !== undefined) && {
        'Retry-After': String(error.retryAfterSeconds ?? 1),
      }),
    },
  );
}

/** middy's HTTP errors by status; anything else is our defect (lib/aws maps failed dependencies). */
function classify(error: unknown): AppError {
  if (isAppError(error)) return error;
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  if (statusCode === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', { cause: error });
  // @middy/http-json-body-parser: unparseable JSON, or a `__proto__` / `constructor.prototype` key.
  if (statusCode === 422) return new AppError('MALFORMED_JSON', { cause: error });
  return new AppError('INTERNAL', { cause: error });
}

const NO_LIMITS = rateLimitFields([]);

/**
 * Answers every error of the chain, with the endpoint's published limits (`limits`) and what
 * the error says is left of them. The limits are added here, not by a middleware of their own:
 * this `onError` returns the answer, which ends middy's error chain, so one used before it
 * never runs and one used after it runs before there is an answer.
 */
export function mapErrors(
  log: Logger,
  respond: (error: AppError) => APIGatewayProxyResult = problemResponse,
  limits: RateLimitFields = NO_LIMITS,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError(request) {
      const error = classify(request.error);
      if (error.code === 'DEPENDENCY_UNAVAILABLE') {
        log.error('request failed', { reason: 'dependency unavailable', error: describeError(error) });
      } else if (error.code === 'INTERNAL') {
        log.error('request failed', { reason: 'internal error', error: describeError(error) });
      }
      const response = respond(error);
      request.response = { ...response, headers: { ...response.headers, ...limits(error.quota) } };
      return request.response;
    },
  };
}
