/**
 * One function for several routes (the self-service API's): each route's own endpoint, picked by
 * the route API Gateway matched (`resource`, the path as serverless.yml declares it) and the method.
 * The routes are lib/scopes.json's, the same declaration serverless.yml and the authorizer read.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AppError } from '../errors.ts';
import { logger } from '../log.ts';
import { PROTECTED_ROUTES, type ProtectedFunction } from '../scopes.ts';
import { problemResponse } from './problems.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const routeKey = (method: string, resource: string) => `${method.toUpperCase()} ${resource}`;

export function routes(handlers: Readonly<Partial<Record<ProtectedFunction, Handler>>>): Handler {
  const byRoute = new Map<string, Handler>();
  for (const [name, handler] of Object.entries(handlers) as [ProtectedFunction, Handler][]) {
    const route = PROTECTED_ROUTES[name];
    byRoute.set(routeKey(route.method, `/${route.path}`), handler);
  }
  return async (event, context) => {
    const handler = byRoute.get(routeKey(event.httpMethod, event.resource));
    if (handler !== undefined) return handler(event, context);
    // API Gateway sends only the routes serverless.yml gives this function: any other is our defect.
    logger.error('request failed', { reason: 'no handler for the route', resource: event.resource });
    return problemResponse(new AppError('INTERNAL'));
  };
}
