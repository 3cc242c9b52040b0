/**
 * Small HTTP helpers for the end-to-end tests. Every answer `send` returns has been checked
 * against docs/openapi.yaml first: an answer the document does not allow fails the test.
 */

import { request } from 'node:http';
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
  options: {
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    /** The caller's address, any 127.x one (sent from it: the functions see it as sourceIp). */
    from?: string;
  } = {},
): Promise<Answer> {
  const hasBody = options.body !== undefined || options.raw !== undefined;
  const url = new URL(`${stack.baseUrl}${path}`);
  const init = {
    method,
    headers: { ...(hasBody && { 'content-type': 'application/json' }), ...options.headers },
    ...(hasBody && { body: options.raw ?? JSON.stringify(options.body) }),
  };
  const response =
    options.from === undefined ? await fetch(url, init) : await fetchFrom(options.from, url, init);
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

/**
 * fetch from `localAddress`, which fetch itself cannot choose: the gateway front connects on
 * from the caller's address (dev/local/gateway.ts), so one test can be callers at many addresses.
 */
function fetchFrom(
  localAddress: string,
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<Response> {
  const length = init.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(init.body)) };
  return new Promise((done, fail) => {
    const sent = request(
      url,
      { method: init.method, headers: { ...init.headers, ...length }, localAddress, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', fail);
        response.once('end', () => {
          const headers = new Headers();
          const raw = response.rawHeaders;
          for (let index = 0; index + 1 < raw.length; index += 2)
            headers.append(raw[index] ?? '', raw[index + 1] ?? '');
          const body = Buffer.concat(chunks);
          done(new Response(body.length === 0 ? null : body, { status: response.statusCode ?? 0, headers }));
        });
      },
    );
    sent.once('error', fail);
    sent.end(init.body);
  });
}

export const bearer = (token: unknown) => ({ authorization: `Bearer ${String(token)}` });
