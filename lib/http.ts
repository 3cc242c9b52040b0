/**
 * The only place that knows HTTP: the middy chain every endpoint shares, request
 * validation, success responses and the mapping of error codes to problem+json (RFC 9457).
 *
 * Order of work for a request with a body: size limit and content type, then JSON parsing,
 * then schema validation, then the domain. A request that fails early causes no password
 * hashing and no database access. Every response is `no-store`: they carry tokens or a
 * customer's shipments. Clients get fixed texts; the cause of a failure goes to the log only.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as v from 'valibot';
import { AppError, type ErrorCode, type InvalidParam, isAppError } from './errors.ts';
import limits from './limits.json' with { type: 'json' };
import { logger as defaultLogger, describeError, type LambdaLogger, type Logger } from './log.ts';
import type { FlushingMetrics } from './metrics/powertools.ts';
import { ALL_SCOPES, type ProtectedFunction, scopeOf } from './scopes.ts';
import { type Clock, hasExpired, systemClock } from './time.ts';
import type { Caller } from './tokens/tokens.ts';

/**
 * Request bodies above this many bytes are refused (413) before they are parsed. Declared in
 * limits.json, which serverless.yml reads too: the web ACL refuses the same bodies.
 */
export const MAX_BODY_BYTES: number = limits.maxBodyBytes;

const PROBLEM_TYPE_PREFIX = 'urn:parcel-auth:problem:';

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
  // The same type, title and detail as API Gateway's UNAUTHORIZED answer
  // (infra/gateway-responses.yml), so a client cannot tell which of the two refused it.
  UNAUTHORIZED: {
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid access token is required. Log in again to get one.',
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  },
  TOO_MANY_ATTEMPTS: {
    status: 429,
    slug: 'too-many-attempts',
    title: 'Too many attempts',
    detail: 'Too many failed logins. Try again after the time in Retry-After.',
  },
  // The same type, title and header as API Gateway's ACCESS_DENIED answer (infra/gateway-responses.yml),
  // which a policy without the route gives: the function's re-check and the gateway answer alike.
  INSUFFICIENT_SCOPE: {
    status: 403,
    slug: 'insufficient-scope',
    title: 'Insufficient scope',
    detail: 'The access token does not grant the scope this route needs.',
    headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' },
  },
  // The token endpoint answers these in RFC 6749's shape (OAUTH_ERRORS); as problems for completeness.
  INVALID_CLIENT: {
    status: 401,
    slug: 'invalid-client',
    title: 'Invalid client',
    detail: 'The client id or secret is incorrect.',
  },
  INVALID_SCOPE: { status: 400, slug: 'invalid-scope', title: 'Invalid scope' },
  UNSUPPORTED_GRANT_TYPE: { status: 400, slug: 'unsupported-grant-type', title: 'Unsupported grant type' },
  CONTEXT_MISSING: {
    status: 403,
    slug: 'auto-login-context-missing',
    title: 'Auto-login context missing',
    detail: 'This login is not linked to a customer account.',
  },
  NOT_FOUND: { status: 404, slug: 'not-found', title: 'Not found' },
  ALREADY_EXISTS: { status: 409, slug: 'already-exists', title: 'Already exists' },
  DEPENDENCY_UNAVAILABLE: {
    status: 503,
    slug: 'service-unavailable',
    title: 'Service unavailable',
    detail: 'The service cannot answer right now. Try again later.',
  },
  // No detail: what went wrong is in the log, under the request id, and nowhere else.
  INTERNAL: { status: 500, slug: 'internal-error', title: 'Internal error' },
};

const BASE_HEADERS = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

export interface Reply {
  readonly status: 200 | 201 | 204;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Seconds any cache may keep the answer; without it the answer is `no-store`. */
  readonly publicMaxAge?: number;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
/** A public document (such as the key set) that any cache may keep for `seconds`. */
export const cacheable = (body: unknown, seconds: number): Reply => ({
  status: 200,
  body,
  publicMaxAge: seconds,
});
export const noContent = (): Reply => ({ status: 204, body: undefined });
export const created = (body: unknown, location: string): Reply => ({
  status: 201,
  body,
  headers: { Location: location },
});

const jsonResponse = (statusCode: number, contentType: string, body: unknown, headers = {}) => ({
  statusCode,
  headers: { 'Content-Type': contentType, ...BASE_HEADERS, ...headers },
  body: JSON.stringify(body),
});

/** The problem+json response for an error code. */
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
    },
  );
}

/**
 * Turns anything thrown into a known error: middy's HTTP errors by status; anything else is
 * our defect, 500 (a failed dependency arrives as DEPENDENCY_UNAVAILABLE already: lib/aws).
 */
function classify(error: unknown): AppError {
  if (isAppError(error)) return error;
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  if (statusCode === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', { cause: error });
  // @middy/http-json-body-parser: unparseable JSON, or a `__proto__` / `constructor.prototype` key.
  if (statusCode === 422) return new AppError('MALFORMED_JSON', { cause: error });
  return new AppError('INTERNAL', { cause: error });
}

/** The names of the failing fields with a fixed reason each; never the value that was sent. */
function invalidParams(issues: readonly v.BaseIssue<unknown>[], root: string): InvalidParam[] {
  return issues.map((issue) => {
    const path = v.getDotPath(issue);
    // valibot's own messages ("Invalid type: Expected … but received …") quote the value.
    const reason = issue.message.startsWith('Invalid ')
      ? `must be ${issue.expected ?? 'valid'}`
      : issue.message;
    if (path === null) return { name: root, reason };
    return { name: path, reason: issue.received === 'undefined' ? 'is required' : reason };
  });
}

/** Validates `input` against `schema`, or throws VALIDATION_FAILED naming the failing fields. */
export function validate<TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  root: string,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const params = invalidParams(result.issues, root);
  throw new AppError('VALIDATION_FAILED', {
    detail: `Invalid ${params.map((p) => p.name).join(', ')}.`,
    invalidParams: params,
  });
}

const bodyBytes = (body: string, base64: boolean) =>
  base64 ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, 'utf8');

/** Size limit and a case-insensitive Content-Type, before anything parses the body. */
const guardBody: middy.MiddlewareObj<APIGatewayProxyEvent> = {
  before({ event }) {
    if (typeof event.body === 'string' && bodyBytes(event.body, event.isBase64Encoded) > MAX_BODY_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE');
    }
    const headers = event.headers ?? {};
    const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    event.headers = { ...headers, 'content-type': contentType };
  },
};

/** The problem+json answer for anything thrown; an unexpected failure's cause goes to the log. */
function mapErrors(
  log: Logger,
  respond: (error: AppError) => APIGatewayProxyResult = problemResponse,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError(request) {
      const error = classify(request.error);
      if (error.code === 'DEPENDENCY_UNAVAILABLE') {
        log.error('request failed', { reason: 'dependency unavailable', error: describeError(error) });
      } else if (error.code === 'INTERNAL') {
        log.error('request failed', { reason: 'internal error', error: describeError(error) });
      }
      request.response = respond(error);
      return request.response;
    },
  };
}

/** Epoch seconds, as API Gateway passes them on: stringified (a number is accepted too). */
const EpochSecondsSchema = v.pipe(
  v.union([v.pipe(v.string(), v.regex(/^\d{1,12}$/)), v.pipe(v.number(), v.integer(), v.minValue(0))]),
  v.transform(Number),
);

/**
 * `lib/auth/authorizer.ts` `AuthorizerContext`, as it reaches a protected function: a user's or
 * a client's, never both. A decision cached before scopes existed has no `scope`: it was a
 * user's, whose tokens then allowed every route.
 */
const AuthorizerContextSchema = v.pipe(
  v.object({
    username: v.optional(v.string(), ''),
    clientId: v.optional(v.string(), ''),
    customerId: v.optional(v.string(), ''),
    scope: v.optional(v.string()),
    iat: EpochSecondsSchema,
    exp: EpochSecondsSchema,
  }),
  v.check((context) => (context.username === '') !== (context.clientId === ''), 'one subject'),
  v.check((context) => context.scope !== undefined || context.clientId === '', 'a client has scopes'),
);

/** Every value of the Authorization header, in any letter case. */
export function authorizationHeaders(event: {
  readonly headers?: Readonly<Record<string, string | undefined>> | null;
  readonly multiValueHeaders?: Readonly<Record<string, string[] | undefined>> | null;
}): string[] {
  // Plain loops: this runs on every protected request.
  const values: string[] = [];
  const multi = event.multiValueHeaders ?? {};
  for (const name in multi) {
    if (name.length === 13 && name.toLowerCase() === 'authorization') values.push(...(multi[name] ?? []));
  }
  if (values.length > 0) return values;
  const single = event.headers ?? {};
  for (const name in single) {
    const value = single[name];
    if (name.length === 13 && name.toLowerCase() === 'authorization' && value !== undefined)
      values.push(value);
  }
  return values;
}

/**
 * The caller of a protected route, from its authorizer decision, which API Gateway may have
 * taken from its cache (up to `authorizerCacheTtl` old, whatever the token's `exp`). Refused
 * with UNAUTHORIZED, the gateway's own 401, when:
 * - the decision says the token has expired: `expireAt` is exact, cache or not;
 * - the decision has no (or a malformed) `exp`: fail closed;
 * - the request carries more than one Authorization value: the cache key is one header
 *   value, so a cached decision may never have seen the others (SECURITY.md).
 */
function callerOf(event: APIGatewayProxyEvent, now: Date, log: Logger, scope: string | undefined): Caller {
  if (authorizationHeaders(event).length > 1) {
    log.info('request refused', { reason: 'several authorization headers' });
    throw new AppError('UNAUTHORIZED');
  }
  const result = v.safeParse(AuthorizerContextSchema, event.requestContext?.authorizer);
  if (!result.success) {
    // A route deployed without the authorizer, or an authorizer that does not say when the
    // token expires: a configuration fault, refused rather than trusted.
    log.error('request refused', {
      reason: 'authorizer context invalid',
      fields: result.issues.map((issue) => v.getDotPath(issue)),
    });
    throw new AppError('UNAUTHORIZED');
  }
  const context = result.output;
  const who = context.username === '' ? { clientId: context.clientId } : { username: context.username };
  if (hasExpired(context.exp, now)) {
    log.info('request refused', { reason: 'token expired', ...who });
    throw new AppError('UNAUTHORIZED');
  }
  const scopes =
    context.scope === undefined
      ? ALL_SCOPES
      : ALL_SCOPES.filter((known) => context.scope?.split(' ').includes(known));
  // Behind a decision API Gateway cached for another route: the policy should have refused it already.
  if (scope !== undefined && !scopes.includes(scope as (typeof scopes)[number])) {
    log.info('request refused', { reason: 'insufficient scope', ...who });
    throw new AppError('INSUFFICIENT_SCOPE');
  }
  return {
    subject:
      context.username === ''
        ? { kind: 'client', clientId: context.clientId }
        : { kind: 'user', username: context.username },
    customerId: context.customerId || null,
    scopes,
  };
}

/**
 * The invocation's context, carrying the caller `authorizedCaller` found. The handler gets
 * only the event and the context, not middy's `request.internal`, so the caller rides on the
 * context, as middy's own `setToContext` middlewares do.
 */
type EndpointContext = Context & { caller?: Caller };

function authorizedCaller(
  clock: Clock,
  log: Logger,
  scope: string | undefined,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext> {
  return {
    before({ event, context }) {
      context.caller = callerOf(event, clock(), log, scope);
    },
  };
}

export interface EndpointInput<TBody, TParams, TCaller> {
  readonly body: TBody;
  readonly params: TParams;
  readonly caller: TCaller;
  /** The client's address as API Gateway saw it (empty if unknown). */
  readonly sourceIp: string;
  /** Where the caller reached the API: scheme, host and stage or base path (`publicBaseUrl`). */
  readonly baseUrl: string;
}

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/;

/**
 * The URL the caller reached the API under, for documents that name our own endpoints: the
 * domain API Gateway says it was invoked on (`requestContext.domainName`, which a caller cannot
 * choose), else the Host header (the local stack's), checked and never echoed otherwise; API
 * Gateway's X-Forwarded-Proto; and the stage or custom domain base path, which
 * `requestContext.path` has before the route's own path.
 */
export function publicBaseUrl(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'path' | 'requestContext'>,
): string {
  const header = (wanted: string) =>
    Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === wanted)?.[1];
  const domain = event.requestContext?.domainName;
  const host = domain !== undefined && HOST.test(domain) ? domain : (header('host') ?? '');
  if (!HOST.test(host))
    throw new AppError('VALIDATION_FAILED', { detail: 'The Host header is not a host name.' });
  const proto = header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https' ? 'https' : 'http';
  const fullPath = event.requestContext?.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${proto}://${host}${/^(\/[A-Za-z0-9._~-]+)*$/.test(prefix) ? prefix : ''}`;
}

type Output<TSchema> = TSchema extends v.GenericSchema ? v.InferOutput<TSchema> : undefined;

export interface EndpointSpec<
  TBody extends v.GenericSchema | undefined,
  TParams extends v.GenericSchema | undefined,
  TAuthorized extends boolean,
> {
  /** Schema of the JSON body; without one the body is ignored. */
  readonly body?: TBody;
  /** Schema of the path parameters. */
  readonly params?: TParams;
  /** True for a route behind the authorizer: the handler gets its caller. */
  readonly authorized?: TAuthorized;
  /**
   * The function's name in serverless.yml when its route is behind the authorizer: the caller
   * must hold the scope lib/scopes.json declares for it (INSUFFICIENT_SCOPE otherwise).
   */
  readonly route?: ProtectedFunction;
  readonly logger?: LambdaLogger;
  /** What `now` is when an authorized request's token expiry is checked. */
  readonly clock?: Clock;
  /** The function's business metrics, written at the end of every invocation. */
  readonly metrics?: Pick<FlushingMetrics, 'powertools'>;
  readonly handle: (
    input: EndpointInput<Output<TBody>, Output<TParams>, TAuthorized extends true ? Caller : null>,
  ) => Promise<Reply>;
  /** True when `handle` reads `baseUrl`: only then is the Host header read (and checked). */
  readonly needsBaseUrl?: boolean;
}

/** Builds a Lambda handler for an API Gateway (REST, proxy) route. */
export function endpoint<
  TBody extends v.GenericSchema | undefined = undefined,
  TParams extends v.GenericSchema | undefined = undefined,
  TAuthorized extends boolean = false,
>(spec: EndpointSpec<TBody, TParams, TAuthorized>) {
  type Input = Parameters<typeof spec.handle>[0];
  // Every route behind the authorizer has a declared scope, and checks it.
  if (spec.authorized === true && spec.route === undefined)
    throw new Error('an authorized endpoint names its route');
  const log = spec.logger ?? defaultLogger;
  const clock = spec.clock ?? systemClock;
  // First, so every line of the request, the failure in mapErrors included, has its request id.
  // `logEvent: false` whatever POWERTOOLS_LOGGER_LOG_EVENT says: events carry passwords and tokens.
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext>()
    .use(injectLambdaContext(log.powertools, { logEvent: false }))
    .use(mapErrors(log));
  // After mapErrors in the chain, so its `onError` runs first (middy runs them last to first):
  // the metrics of a failed request are written before mapErrors answers it.
  if (spec.metrics !== undefined) chain.use(logMetrics(spec.metrics.powertools));
  // The caller before the body: an expired token gets its 401, not a verdict on the body.
  if (spec.authorized === true)
    chain.use(authorizedCaller(clock, log, spec.route === undefined ? undefined : scopeOf(spec.route)));
  if (spec.body !== undefined) chain.use(guardBody).use(httpJsonBodyParser());
  return chain.handler(async (event, context) => {
    // Each part is validated against its schema; the cast only restates the generic shape.
    const caller = spec.authorized === true ? (context.caller ?? null) : null;
    const input = {
      body: spec.body === undefined ? undefined : validate(spec.body, event.body, 'body'),
      params:
        spec.params === undefined ? undefined : validate(spec.params, event.pathParameters ?? {}, 'path'),
      caller,
      sourceIp: event.requestContext?.identity?.sourceIp ?? '',
      baseUrl: spec.needsBaseUrl === true ? publicBaseUrl(event) : '',
    } as Input;
    const reply = await spec.handle(input);
    if (reply.status === 204) return { statusCode: 204, headers: { ...BASE_HEADERS }, body: '' };
    const response = jsonResponse(reply.status, 'application/json', reply.body, reply.headers);
    if (reply.publicMaxAge === undefined) return response;
    const { Pragma: _noCache, ...headers } = response.headers;
    return { ...response, headers: { ...headers, 'Cache-Control': `public, max-age=${reply.publicMaxAge}` } };
  });
}

/** An RFC 6749 section 5.2 error: the token endpoint's only error shape. */
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

/**
 * Error code → the token endpoint's answer (RFC 6749 section 5.2), beside PROBLEMS: the one
 * place that maps codes to HTTP. OAuth client libraries read `error`, so every code has one.
 */
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
  INVALID_SCOPE: {
    status: 400,
    error: 'invalid_scope',
    description: "The requested scope is unknown, malformed, or beyond the client's.",
  },
  INSUFFICIENT_SCOPE: { status: 400, error: 'invalid_scope' },
  UNSUPPORTED_GRANT_TYPE: {
    status: 400,
    error: 'unsupported_grant_type',
    description: 'This endpoint grants client_credentials only.',
  },
  // RFC 6749 names no error for a throttled client; `temporarily_unavailable` (section 4.1.2.1)
  // is what libraries treat as "try again", and Retry-After says when.
  TOO_MANY_ATTEMPTS: {
    status: 429,
    error: 'temporarily_unavailable',
    description: 'Too many failed client authentications. Try again after the time in Retry-After.',
  },
  CONTEXT_MISSING: INVALID_REQUEST,
  NOT_FOUND: INVALID_REQUEST,
  ALREADY_EXISTS: INVALID_REQUEST,
  DEPENDENCY_UNAVAILABLE: {
    status: 503,
    error: 'temporarily_unavailable',
    description: 'The service cannot answer right now. Try again later.',
  },
  INTERNAL: { status: 500, error: 'server_error' },
};

/** The token endpoint's error answer: RFC 6749's JSON, never a stack trace or a token. */
export function oauthErrorResponse(error: AppError): APIGatewayProxyResult {
  const definition = OAUTH_ERRORS[error.code];
  // A validation failure names the parameter, never its value (lib/clients/token-request.ts).
  const description = error.code === 'VALIDATION_FAILED' ? error.detail : definition.description;
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

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * An `application/x-www-form-urlencoded` body (RFC 6749 section 3.2), as its parameters: a
 * parameter sent twice is refused (section 3.2), as is any other media type.
 */
export function formParameters(
  event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded' | 'headers'>,
): Record<string, string> {
  const contentType = Object.entries(event.headers ?? {}).find(
    ([name]) => name.toLowerCase() === 'content-type',
  )?.[1];
  if (contentType?.split(';')[0]?.trim().toLowerCase() !== FORM_MEDIA_TYPE)
    throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  const text = event.isBase64Encoded
    ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
    : (event.body ?? '');
  const parameters: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(parameters, name))
      throw new AppError('VALIDATION_FAILED', {
        detail: `The parameter ${safeName(name)} is sent more than once.`,
      });
    parameters[name] = value;
  }
  return parameters;
}

/** A parameter's name in a description: the names RFC 6749 defines are quoted, any other is not. */
const safeName = (name: string) => (/^[a-z_]{1,32}$/.test(name) ? name : 'a parameter');

export interface OAuthInput {
  readonly form: Record<string, string>;
  /** Every value of the Authorization header (a client's Basic credentials). */
  readonly authorization: string[];
  readonly sourceIp: string;
}

/**
 * Builds the token endpoint's handler (RFC 6749 section 3.2): a form body, its errors in RFC
 * 6749's shape (OAUTH_ERRORS), and every answer `no-store` (section 5.1).
 */
export function oauthEndpoint(spec: {
  readonly logger?: LambdaLogger;
  readonly metrics?: Pick<FlushingMetrics, 'powertools'>;
  readonly handle: (input: OAuthInput) => Promise<Reply>;
}) {
  const log = spec.logger ?? defaultLogger;
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(injectLambdaContext(log.powertools, { logEvent: false }))
    .use(mapErrors(log, oauthErrorResponse));
  if (spec.metrics !== undefined) chain.use(logMetrics(spec.metrics.powertools));
  chain.use(guardBody);
  return chain.handler(async (event) => {
    const reply = await spec.handle({
      form: formParameters(event),
      authorization: authorizationHeaders(event),
      sourceIp: event.requestContext?.identity?.sourceIp ?? '',
    });
    return jsonResponse(reply.status, 'application/json', reply.body, reply.headers);
  });
}

/**
 * Builds the Lambda handler of the REQUEST authorizer: its lines carry the invocation's request
 * id and its metrics are written at the end of every invocation, as an endpoint's are, but
 * nothing maps its errors: what `handle` throws (exactly `Unauthorized` for a denial) reaches
 * API Gateway as it was thrown, and anything else fails closed.
 */
export function authorizerHandler<TEvent, TResult>(spec: {
  readonly logger?: LambdaLogger;
  readonly metrics: Pick<FlushingMetrics, 'powertools'>;
  readonly handle: (event: TEvent) => Promise<TResult>;
}): (event: TEvent, context?: Context) => Promise<TResult> {
  const log = spec.logger ?? defaultLogger;
  const chain = middy<TEvent, TResult, Error, Context>()
    .use(injectLambdaContext(log.powertools, { logEvent: false }))
    .use(logMetrics(spec.metrics.powertools))
    .handler((event) => spec.handle(event));
  // Without a context (tests, the bench), middy gives the request an empty one.
  return (event, context) => chain(event, context as Context);
}
