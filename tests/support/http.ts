/**
 * Small HTTP helpers for the end-to-end tests. Every answer `send` returns has been checked
 * against docs/openapi.yaml first: an answer the document does not allow fails the test.
 */

import type { LocalStack } from '../../dev/local/stack.ts';
import { assertDocumented, type ObservedResponse } from './openapi.ts';

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
  assertDocumented(observed);
  return { status: response.status, headers: response.headers, text, json };
}

export const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });
