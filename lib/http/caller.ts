/** The caller of a protected route, and the re-check of a possibly cached authorizer decision. */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as v from 'valibot';
import { type AuthorizerContext, AuthorizerContextSchema } from '../auth/authorizer-context.ts';
import { type BindingDeps, checkProtectedCall } from '../dpop/binding.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { DEFAULT_USER_SCOPES, ROUTE_SCOPES } from '../scopes.ts';
import { type Clock, hasExpired } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';
import { headerValues } from './headers.ts';

const whoOf = (context: AuthorizerContext) =>
  context.username === '' ? { clientId: context.clientId } : { username: context.username };

// UNAUTHORIZED when the decision (maybe cached past `exp`) says the token expired or lacks `exp`, or the
// request has two Authorization values (docs/tokens-and-sessions.md, "The authorizer and its cache").
function contextOf(event: APIGatewayProxyEvent, now: Date, log: Logger): AuthorizerContext {
  if (headerValues(event, 'authorization').length > 1) {
    log.info('request refused', { reason: 'several authorization headers' });
    throw new AppError('UNAUTHORIZED');
  }
  const result = v.safeParse(AuthorizerContextSchema, event.requestContext?.authorizer);
  if (!result.success) {
    // A route without the authorizer, or a context without `exp`: a configuration fault, not trusted.
    log.error('request refused', {
      reason: 'authorizer context invalid',
      fields: result.issues.map((issue) => v.getDotPath(issue)),
    });
    throw new AppError('UNAUTHORIZED');
  }
  const context = result.output;
  if (hasExpired(context.exp, now)) {
    log.info('request refused', { reason: 'token expired', ...whoOf(context) });
    throw new AppError('UNAUTHORIZED');
  }
  return context;
}

function callerOf(context: AuthorizerContext, log: Logger, scope: string | undefined): Caller {
  const who = whoOf(context);
  // No `scope`: a user's decision cached before scopes existed, never an administrator's.
  const scopes =
    context.scope === undefined
      ? DEFAULT_USER_SCOPES
      : ROUTE_SCOPES.filter((known) => context.scope?.split(' ').includes(known));
  // Scopes are checked here, not by the authorizer's policy: only here can a 403 name the route's scope.
  if (scope !== undefined && !scopes.includes(scope as (typeof scopes)[number])) {
    log.info('request refused', { reason: 'insufficient scope', ...who });
    throw new AppError('INSUFFICIENT_SCOPE', { requiredScope: scope });
  }
  return {
    subject:
      context.username === ''
        ? { kind: 'client', clientId: context.clientId }
        : { kind: 'user', username: context.username },
    customerId: context.customerId || null,
    scopes,
    issuedAt: context.iat,
    authTime: context.authTime,
    ...(context.sessionId !== undefined && { sessionId: context.sessionId }),
    ...(context.username !== '' && { signInMethod: context.signIn ?? 'password' }),
  };
}

/** A handler gets only event and context, so the caller rides on the context, as middy's `setToContext`. */
export type EndpointContext = Context & { caller?: Caller };

/**
 * The caller, once its token's binding holds for this very request (lib/dpop/binding.ts): a
 * cached decision never saw its DPoP proof. Expiry and binding before the scope: a 401 is about
 * the token, a 403 about a good token's reach.
 */
export function authorizedCaller(
  clock: Clock,
  log: Logger,
  scope: string | undefined,
  dpop: BindingDeps,
  baseUrl: (event: APIGatewayProxyEvent) => string,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext> {
  return {
    async before({ event, context }) {
      const now = clock();
      // Expired first: an expired bound token needs a new token, not a new proof.
      const decision = contextOf(event, now, log);
      try {
        await checkProtectedCall(dpop, {
          authorization: headerValues(event, 'authorization')[0] ?? '',
          dpop: headerValues(event, 'dpop'),
          method: event.httpMethod,
          url: () => `${baseUrl(event)}${event.path}`,
          jkt: decision.jkt,
          now,
        });
      } catch (error) {
        log.info('request refused', {
          reason: 'dpop binding',
          ...whoOf(decision),
          detail: (error as { detail?: unknown }).detail,
        });
        throw error;
      }
      context.caller = callerOf(decision, log, scope);
    },
  };
}
