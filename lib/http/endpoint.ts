/**
 * The middy chain every JSON endpoint shares, its request validation and its success answers.
 *
 * Order of work for a request with a body: size limit and content type, then JSON parsing,
 * then schema validation, then the domain. A request that fails early causes no password
 * hashing and no database access.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import { AppError, type InvalidParam } from '../errors.ts';
import { logger as defaultLogger, type LambdaLogger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { type ProtectedFunction, scopeOf } from '../scopes.ts';
import { type Clock, systemClock } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';
import { guardBody } from './body.ts';
import { authorizedCaller, type EndpointContext } from './caller.ts';
import { header } from './headers.ts';
import { mapErrors } from './problems.ts';
import { BASE_HEADERS, jsonResponse, type Reply } from './responses.ts';

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
  const domain = event.requestContext?.domainName;
  const host = domain !== undefined && HOST.test(domain) ? domain : (header(event.headers, 'host') ?? '');
  if (!HOST.test(host))
    throw new AppError('VALIDATION_FAILED', { detail: 'The Host header is not a host name.' });
  const proto =
    header(event.headers, 'x-forwarded-proto')?.split(',')[0]?.trim() === 'https' ? 'https' : 'http';
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
