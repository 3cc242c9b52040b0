import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authorize } from '../lib/auth/authorizer.ts';
import { readAuthorizerConfig } from '../lib/config.ts';
import { authorizerHandler, authorizerRequest } from '../lib/http/authorizer-handler.ts';
import { authorizerDeps } from '../lib/wiring/authorizer.ts';

const deps = await authorizerDeps(readAuthorizerConfig());

/** REQUEST authorizer in front of every protected route. */
export const handler = authorizerHandler({
  metrics: deps.metrics,
  handle: (event: APIGatewayRequestAuthorizerEvent) => authorize(deps, authorizerRequest(event)),
});
