/**
 * The caller of a protected route, from the authorizer's decision as it reaches the function,
 * and the re-check of that decision: its expiry, its scope, a single Authorization value.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as v from 'valibot';
import { AuthorizerContextSchema } from '../auth/authorizer-context.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { ALL_SCOPES } from '../scopes.ts';
import { type Clock, hasExpired } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';
import { headerValues } from './headers.ts';

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
  if (headerValues(event, 'authorization').length > 1) {
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
export type EndpointContext = Context & { caller?: Caller };

/** Middleware: the caller onto the context, or the request refused (`callerOf`). */
export function authorizedCaller(
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
