/**
 * Requests to the self-service API (`customer-api`, docs/administrators.md) as API Gateway hands
 * them to the function: the route's resource as serverless.yml declares it, the path filled in,
 * and the authorizer's decision in the request context.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { loginEvent } from '../fixtures/events.ts';

export const CLIENTS = '/api/v1/customer/clients';
export const CLIENT = '/api/v1/customer/clients/{clientId}';
export const SECRETS = '/api/v1/customer/clients/{clientId}/secrets';
export const SECRET = '/api/v1/customer/clients/{clientId}/secrets/{secretId}';
export const UNLOCK = '/api/v1/customer/clients/{clientId}/unlock';
export const EVENTS = '/api/v1/customer/audit-events';
export const ADMINISTRATORS = '/api/v1/customer/administrators';
export const REVOKE = '/api/v1/customer/administrators/revoke';

/** Who calls: the authorizer's context as API Gateway passes it on, and the caller's address. */
export interface Caller {
  readonly authorizer: Record<string, string | number>;
  readonly sourceIp: string;
}

/** What a request carries besides its route: path parameters, a JSON body, a query string. */
export interface CustomerApiOptions {
  readonly params?: Record<string, string>;
  readonly body?: unknown;
  readonly query?: Record<string, string>;
}

/** The request for the route `resource` (one of the above) with its `{name}` parameters filled from `params`. */
export function customerApiEvent(
  caller: Caller,
  method: string,
  resource: string,
  options: CustomerApiOptions = {},
): APIGatewayProxyEvent {
  const path = resource.replace(/\{(\w+)\}/g, (_, name: string) => options.params?.[name] ?? '');
  const base = loginEvent(null);
  return {
    ...base,
    httpMethod: method,
    resource,
    path,
    pathParameters: options.params ?? null,
    queryStringParameters: options.query ?? null,
    headers: {
      ...base.headers,
      ...(options.body !== undefined && { 'Content-Type': 'application/json' }),
    },
    body: options.body === undefined ? null : JSON.stringify(options.body),
    requestContext: {
      ...base.requestContext,
      authorizer: caller.authorizer,
      identity: { ...base.requestContext.identity, sourceIp: caller.sourceIp },
    },
  };
}
