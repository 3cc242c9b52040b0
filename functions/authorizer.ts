import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authorize } from '../lib/auth/authorizer.ts';
import { readAuthorizerConfig } from '../lib/config.ts';
import { withLambdaContext } from '../lib/log.ts';
import { flushingAfter } from '../lib/metrics/powertools.ts';
import { authorizerDeps } from '../lib/wiring.ts';

const deps = await authorizerDeps(readAuthorizerConfig());

/** REQUEST authorizer in front of every protected route. */
export const handler = withLambdaContext(
  flushingAfter(deps.metrics, (event: APIGatewayRequestAuthorizerEvent) => authorize(deps, event)),
);
