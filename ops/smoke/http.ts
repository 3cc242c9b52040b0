/**
 * One HTTP request of the smoke test: a time limit per request (the body included), no
 * redirects followed (a redirected POST would lose its body, or carry the password
 * elsewhere), and every failure turned into a message instead of an exception.
 */
import { performance } from 'node:perf_hooks';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** An answer, or the reason there was none; `ms` is the time until the whole body or the failure. */
export type Outcome =
  | { readonly kind: 'answer'; readonly answer: Answer; readonly ms: number }
  | { readonly kind: 'error'; readonly message: string; readonly ms: number };

export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly body?: unknown;
  readonly bearer?: string;
}

export type Requester = (spec: RequestSpec) => Promise<Outcome>;

export function createRequester(deps: {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
}): Requester {
  return async ({ method, url, body, bearer }) => {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const response = await deps.fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          'user-agent': 'parcel-auth-smoke',
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(bearer !== undefined && { authorization: `Bearer ${bearer}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.timeoutMs),
      });
      const text = await response.text();
      return {
        kind: 'answer',
        answer: { status: response.status, headers: response.headers, text },
        ms: ms(),
      };
    } catch (error) {
      return { kind: 'error', message: describeNetworkError(error, deps.timeoutMs), ms: ms() };
    }
  };
}

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:3000`, following the chain of causes. */
export function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms (timeout)`;
  }
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && parts.length < 4) {
    if (current instanceof AggregateError && current.errors.length > 0) {
      parts.push(
        [...new Set(current.errors.map((inner) => describeNetworkError(inner, timeoutMs)))].join(', '),
      );
      break;
    }
    const code = 'code' in current && typeof current.code === 'string' ? current.code : '';
    parts.push(current.message !== '' ? current.message : code !== '' ? code : current.name);
    current = current.cause;
  }
  if (parts.length === 0) parts.push(String(error));
  return `network error: ${parts.join(': ')}`.replace(/^network error: network error: /, 'network error: ');
}

/** The media type of an answer, lower case, without parameters. */
export const mediaType = (answer: Answer) =>
  (answer.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** The answer's body as a JSON object, or why it is not one. */
export function jsonObject(answer: Answer): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(answer.text);
  } catch {
    const type = answer.headers.get('content-type') ?? 'no content-type';
    const snippet =
      answer.text.trim() === '' ? 'empty' : `${answer.text.length} bytes: ${answer.text.slice(0, 80)}`;
    return `the answer is not JSON (${type}; ${snippet})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the answer is JSON but not an object';
  }
  return value as Record<string, unknown>;
}

/** A short account of an error answer: the problem type and detail, or a message, or a snippet. */
export function summarize(answer: Answer): string {
  const body = jsonObject(answer);
  const retryAfter = answer.headers.get('retry-after');
  const location = answer.status >= 300 && answer.status < 400 ? answer.headers.get('location') : null;
  const parts: string[] = [];
  if (typeof body === 'string') parts.push(body);
  else {
    const text = (key: string) => (typeof body[key] === 'string' ? String(body[key]) : undefined);
    const type = text('type')?.replace(/^urn:parcel-auth:problem:/, '');
    const said = text('detail') ?? text('title') ?? text('message') ?? text('Message');
    parts.push([type, said].filter((part) => part !== undefined).join(': ') || 'a JSON body without detail');
  }
  if (retryAfter !== null) parts.push(`Retry-After ${retryAfter} s`);
  if (location !== null) parts.push(`Location ${location}`);
  return parts.join(', ');
}
