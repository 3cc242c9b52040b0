/** The REQUEST authorizer's invocation, and what its decision reads of the event. */
import type { APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import type { AuthorizerRequest } from '../auth/authorizer.ts';
import { logger as defaultLogger, type LambdaLogger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import { headerValues } from './headers.ts';

export const authorizerRequest = (
  event: Pick<APIGatewayRequestAuthorizerEvent, 'headers' | 'multiValueHeaders' | 'methodArn'>,
): AuthorizerRequest => ({ authorization: headerValues(event, 'authorization'), methodArn: event.methodArn });

/** What middy gives a request without a context (tests, the bench): every field of the log's context unset. */
const NO_CONTEXT = Object.freeze({}) as Context;

/**
 * It runs on every protected call, so Powertools' own calls rather than a middy chain: the
 * invocation's context on the logger, and the EMF line flushed when it answers or throws, as
 * `injectLambdaContext` and `logMetrics` do, without middy's per-call timer and abort signal
 * (docs/performance-design.md). Nothing maps errors: `Unauthorized` must reach API Gateway as
 * thrown, and anything else fails closed.
 */
export function authorizerHandler<TEvent, TResult>(spec: {
  readonly logger?: LambdaLogger;
  readonly metrics: Pick<FlushingMetrics, 'flush'>;
  readonly handle: (event: TEvent) => Promise<TResult>;
}): (event: TEvent, context?: Context) => Promise<TResult> {
  const log = (spec.logger ?? defaultLogger).powertools;
  const { metrics, handle } = spec;
  return async (event, context = NO_CONTEXT) => {
    // Every call: the request id is the invocation's, on each line it writes.
    log.addContext(context);
    try {
      return await handle(event);
    } finally {
      metrics.flush();
    }
  };
}
