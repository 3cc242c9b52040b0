/** The REQUEST authorizer's middy chain, and what its decision reads of the event. */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import type { AuthorizerRequest } from '../auth/authorizer.ts';
import { logger as defaultLogger, type LambdaLogger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { headerValues } from './headers.ts';

export const authorizerRequest = (
  event: Pick<APIGatewayRequestAuthorizerEvent, 'headers' | 'multiValueHeaders' | 'methodArn'>,
): AuthorizerRequest => ({ authorization: headerValues(event, 'authorization'), methodArn: event.methodArn });

// Nothing maps errors here: `Unauthorized` must reach API Gateway as thrown, and anything else fails closed.
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
