/** Captured API Gateway events, copied per test so a test can change its own copy. */
import { readFileSync } from 'node:fs';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';

const load = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./fixtures-json/${name}`, import.meta.url), 'utf8'));

export const loginEvent = (
  body: string | null,
  headers: Record<string, string> = {},
): APIGatewayProxyEvent => {
  const event = load('login-event.json') as APIGatewayProxyEvent;
  return { ...event, body, headers: { ...event.headers, ...headers } };
};

/**
 * `requestContext.authorizer` as API Gateway hands an authorizer's decision to the function
 * behind it (fresh or from its cache): the principal, every context value stringified, and
 * the authorizer's latency.
 */
export const gatewayAuthorizerContext = (
  decision: Pick<APIGatewayAuthorizerResult, 'principalId' | 'context'>,
): Record<string, string | number> => ({
  principalId: decision.principalId,
  ...Object.fromEntries(Object.entries(decision.context ?? {}).map(([key, value]) => [key, String(value)])),
  integrationLatency: 12,
});

/** The decision of the authorizer for `username`'s token issued a minute ago, valid for an hour. */
export const callerContext = (username: string, customerId: string) => {
  const now = Math.floor(Date.now() / 1000);
  return gatewayAuthorizerContext({
    principalId: username,
    context: { username, customerId, iat: now - 60, exp: now + 3600 },
  });
};

/** The captured tracking request, its caller's token (alice, C-1001) still valid now. */
export const trackingEvent = (overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent => {
  const event = load('tracking-event.json') as APIGatewayProxyEvent;
  return {
    ...event,
    requestContext: { ...event.requestContext, authorizer: callerContext('alice', 'C-1001') },
    ...overrides,
  };
};

/** POST /api/v1/shipments with `body`, as the tracking event's caller (its authorizer context). */
export const createShipmentEvent = (body: string): APIGatewayProxyEvent => ({
  ...trackingEvent(),
  httpMethod: 'POST',
  resource: '/api/v1/shipments',
  path: '/api/v1/shipments',
  pathParameters: null,
  headers: { 'Content-Type': 'application/json' },
  body,
});

/**
 * A REQUEST authorizer event carrying `authorization` as its Authorization header; several
 * values stand for the header sent several times.
 */
export const authorizerEvent = (
  authorization: string | readonly string[],
): APIGatewayRequestAuthorizerEvent => {
  const event = load('authorizer-event.json') as APIGatewayRequestAuthorizerEvent;
  const values = typeof authorization === 'string' ? [authorization] : [...authorization];
  return {
    ...event,
    headers: { ...event.headers, Authorization: values.at(-1) ?? '' },
    multiValueHeaders: { ...event.multiValueHeaders, Authorization: values },
  };
};

/** The Lambda context fields the handlers read. */
export const lambdaContext = () =>
  ({
    awsRequestId: '5d8a2c3e-0f1b-4e7a-9c6d-2b4f8e1a7c90',
    functionName: 'parcel-auth-test',
    getRemainingTimeInMillis: () => 10_000,
  }) as unknown as import('aws-lambda').Context;
