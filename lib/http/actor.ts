/**
 * Who the authorized caller acts as, resolved once per request before the handler runs: the check
 * a function's every route shares (the self-service API's administrator, read on every call) as
 * one middleware, where each route would repeat it.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { AppError } from '../errors.ts';
import type { Caller } from '../tokens/claims.ts';
import type { EndpointContext } from './caller.ts';

/** The caller and who it acts as ride on the context, as middy's `setToContext`. */
export type ActorContext<TActor> = EndpointContext & { actor?: TActor };

export function resolvedActor<TActor>(
  resolve: (caller: Caller, sourceIp: string) => Promise<TActor>,
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ActorContext<TActor>> {
  return {
    async before({ event, context }) {
      // After authorizedCaller, which refuses first: an endpoint with an actor is an authorized one.
      if (context.caller === undefined) throw new AppError('UNAUTHORIZED');
      context.actor = await resolve(context.caller, event.requestContext?.identity?.sourceIp ?? '');
    },
  };
}
