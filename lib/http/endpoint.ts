// The JSON endpoints' middy chain: size and content type, JSON parsing, schema validation, then the
// domain, so a request that fails early costs no password hashing and no database access.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import type { BindingDeps } from '../dpop/binding.ts';
import { AppError, type InvalidParam } from '../errors.ts';
import { logger as defaultLogger, type LambdaLogger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import type { QuotaPolicy } from '../quota.ts';
import { type ProtectedFunction, scopeOf } from '../scopes.ts';
import { type Clock, systemClock } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';
import { type ActorContext, resolvedActor } from './actor.ts';
import { publicBaseUrl } from './base-url.ts';
import { absentBodyAsEmpty, guardBody } from './body.ts';
import { authorizedCaller } from './caller.ts';
import { mapErrors, problemResponse } from './problems.ts';
import { rateLimitFields } from './rate-limit.ts';
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

export interface EndpointInput<TBody, TParams, TCaller, TQuery = undefined, TActor = undefined> {
  readonly body: TBody;
  readonly params: TParams;
  readonly query: TQuery;
  readonly caller: TCaller;
  /** Who acts, as the spec's `actor` resolved the caller (undefined without one). */
  readonly actor: TActor;
  /** The client's address as API Gateway saw it (empty if unknown). */
  readonly sourceIp: string;
  readonly baseUrl: string;
}

type Output<TSchema> = TSchema extends v.GenericSchema ? v.InferOutput<TSchema> : undefined;

export interface EndpointSpec<
  TBody extends v.GenericSchema | undefined,
  TParams extends v.GenericSchema | undefined,
  TAuthorized extends boolean,
  TQuery extends v.GenericSchema | undefined = undefined,
  TActor = undefined,
> {
  /** Without one the body is ignored. */
  readonly body?: TBody;
  /** A request without a body (and without a Content-Type) is validated as `{}`. */
  readonly bodyOptional?: boolean;
  readonly params?: TParams;
  /** The query string's parameters; without it they are ignored. */
  readonly query?: TQuery;
  readonly authorized?: TAuthorized;
  /** The serverless.yml function name: the caller must hold the scope lib/scopes.json declares for it. */
  readonly route?: ProtectedFunction;
  /** Where an authorized endpoint spends the DPoP proofs of bound tokens (lib/dpop/binding.ts). */
  readonly dpop?: BindingDeps;
  /**
   * Who the authorized caller acts as, resolved once before the body is read (lib/http/actor.ts):
   * a check every route of a function shares, in one place. Its refusal is the answer.
   */
  readonly actor?: (caller: Caller, sourceIp: string) => Promise<TActor>;
  readonly logger?: LambdaLogger;
  readonly clock?: Clock;
  readonly metrics?: Pick<FlushingMetrics, 'powertools'>;
  /** The limits every answer publishes (RateLimit-Policy); what is left rides on the Reply or the AppError. */
  readonly limits?: readonly QuotaPolicy[];
  readonly handle: (
    input: EndpointInput<
      Output<TBody>,
      Output<TParams>,
      TAuthorized extends true ? Caller : null,
      Output<TQuery>,
      TActor
    >,
  ) => Promise<Reply>;
  /** True when `handle` reads `baseUrl`: only then is the Host header read (and checked). */
  readonly needsBaseUrl?: boolean;
}

export function endpoint<
  TBody extends v.GenericSchema | undefined = undefined,
  TParams extends v.GenericSchema | undefined = undefined,
  TAuthorized extends boolean = false,
  TQuery extends v.GenericSchema | undefined = undefined,
  TActor = undefined,
>(spec: EndpointSpec<TBody, TParams, TAuthorized, TQuery, TActor>) {
  type Input = Parameters<typeof spec.handle>[0];
  if (spec.authorized === true && (spec.route === undefined || spec.dpop === undefined))
    throw new Error('an authorized endpoint names its route and where it spends DPoP proofs');
  const log = spec.logger ?? defaultLogger;
  const clock = spec.clock ?? systemClock;
  const limits = rateLimitFields(spec.limits ?? []);
  // First, so every line (mapErrors' too) has the request id. Never log events: they carry passwords, tokens.
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ActorContext<TActor>>()
    .use(injectLambdaContext(log.powertools, { logEvent: false }))
    .use(mapErrors(log, problemResponse, limits));
  // After mapErrors: middy runs `onError`s last to first, so a failed request's metrics are written too.
  if (spec.metrics !== undefined) chain.use(logMetrics(spec.metrics.powertools));
  // The caller before the body: an expired token gets its 401, not a verdict on the body.
  if (spec.authorized === true && spec.route !== undefined && spec.dpop !== undefined)
    chain.use(authorizedCaller(clock, log, scopeOf(spec.route), spec.dpop, publicBaseUrl));
  if (spec.actor !== undefined) chain.use(resolvedActor(spec.actor));
  if (spec.body !== undefined) {
    if (spec.bodyOptional === true) chain.use(absentBodyAsEmpty);
    chain.use(guardBody).use(httpJsonBodyParser());
  }
  return chain.handler(async (event, context) => {
    const caller = spec.authorized === true ? (context.caller ?? null) : null;
    const input = {
      actor: context.actor,
      body: spec.body === undefined ? undefined : validate(spec.body, event.body, 'body'),
      params:
        spec.params === undefined ? undefined : validate(spec.params, event.pathParameters ?? {}, 'path'),
      query:
        spec.query === undefined
          ? undefined
          : validate(spec.query, event.queryStringParameters ?? {}, 'query'),
      caller,
      sourceIp: event.requestContext?.identity?.sourceIp ?? '',
      baseUrl: spec.needsBaseUrl === true ? publicBaseUrl(event) : '',
    } as Input;
    const reply = await spec.handle(input);
    const fields = limits(reply.quota);
    if (reply.status === 204) return { statusCode: 204, headers: { ...BASE_HEADERS, ...fields }, body: '' };
    const response = jsonResponse(reply.status, 'application/json', reply.body, {
      ...reply.headers,
      ...fields,
    });
    if (reply.publicMaxAge === undefined) return response;
    const { Pragma: _noCache, ...headers } = response.headers;
    return { ...response, headers: { ...headers, 'Cache-Control': `public, max-age=${reply.publicMaxAge}` } };
  });
}
