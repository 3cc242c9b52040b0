/** The authorizer's decision on a REQUEST event, taken as functions/authorizer.ts takes it. */
import { type AuthorizerDeps, authorize } from '../../lib/auth/authorizer.ts';
import { authorizerRequest } from '../../lib/http/authorizer-handler.ts';

/** `authorize` on what the handler reads of `event`: its Authorization values and its method ARN. */
export const authorizeEvent = (deps: AuthorizerDeps, event: Parameters<typeof authorizerRequest>[0]) =>
  authorize(deps, authorizerRequest(event));
