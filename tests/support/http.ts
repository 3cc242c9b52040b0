/**
 * Small HTTP helpers for the end-to-end tests. Every answer `send` returns has been checked
 * against docs/openapi.yaml first: an answer the document does not allow fails the test.
 */

import type { LocalStack } from '../../dev/local/stack.ts';
import { assertDocumented, isBearerRoute, type ObservedResponse } from './openapi.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export async function send(
  stack: LocalStack,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const hasBody = options.body !== undefined || options.raw !== undefined;
  const url = new URL(`${stack.baseUrl}${path}`);
  const response = await fetch(url, {
    method,
    headers: { ...(hasBody && { 'content-type': 'application/json' }), ...options.headers },
    ...(hasBody && { body: options.raw ?? JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  let body: unknown = text === '' ? undefined : text;
  try {
    json = JSON.parse(text);
    body = json;
  } catch {
    // Not JSON: tests that care look at `text`; the contract check sees the raw text.
  }
  const observed: ObservedResponse = {
    method,
    path: url.pathname,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body,
    headers: response.headers,
  };
  assertDocumented(observed, { statusOnly: isLocalAuthorizerAnswer(observed) });
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * The one exception to checking answers in full. serverless-offline does not emulate API
 * Gateway's gateway responses (infra/gateway-responses.yml): when the authorizer refuses a
 * request, the local stack answers with serverless-offline's own body
 * (`{"statusCode":401,"error":"Unauthorized","message":…}`, application/json, no
 * WWW-Authenticate), where AWS answers the problem+json that docs/openapi.yaml documents.
 * Such an answer, on a route behind the authorizer and in serverless-offline's shape, is
 * held to the document by its status only. A function's own 401 or 403 is problem+json and
 * is checked in full.
 */
function isLocalAuthorizerAnswer({ method, path, status, contentType, body }: ObservedResponse): boolean {
  return (
    (status === 401 || status === 403) &&
    isBearerRoute(method, path) &&
    contentType?.startsWith('application/json') === true &&
    typeof body === 'object' &&
    body !== null &&
    'statusCode' in body &&
    body.statusCode === status
  );
}

export const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });
