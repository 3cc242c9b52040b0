/**
 * Reading the service's answers: a body as text or JSON under a byte cap, and the
 * ParcelApiError of an answer outside 2xx, quoting none of the body.
 */
import { type Operation, ParcelApiError, type Problem } from './errors.ts';
import { retryAfterMs } from './retry-after.ts';

/** Token and error answers are a few hundred bytes; a server sending more is broken or hostile. */
export const MAX_SMALL_ANSWER_BYTES = 64 * 1024;

export async function errorOf(
  operation: Operation,
  response: Response,
  now: number,
): Promise<ParcelApiError> {
  const text = await readText(response, MAX_SMALL_ANSWER_BYTES).catch(() => '');
  let body: unknown;
  try {
    body = text === undefined ? undefined : parseJson(text);
  } catch {
    // Not JSON: the status alone says what happened.
  }
  const retryAfter = retryAfterMs(response.headers.get('retry-after'), now);
  return new ParcelApiError({
    operation,
    status: response.status,
    ...(text === undefined && {
      message: `${operation} failed: ${response.status}, its answer longer than ${MAX_SMALL_ANSWER_BYTES} bytes (not read)`,
    }),
    problem: problemOf(body),
    oauthError: isRecord(body) && typeof body.error === 'string' ? body.error : undefined,
    oauthErrorDescription:
      isRecord(body) && typeof body.error_description === 'string' ? body.error_description : undefined,
    retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
  });
}

function problemOf(body: unknown): Problem | undefined {
  if (!isRecord(body) || typeof body.type !== 'string' || typeof body.title !== 'string') return undefined;
  const invalidParams = Array.isArray(body.invalidParams)
    ? body.invalidParams.flatMap((param: unknown) =>
        isRecord(param) && typeof param.name === 'string' && typeof param.reason === 'string'
          ? [{ name: param.name, reason: param.reason }]
          : [],
      )
    : undefined;
  return {
    type: body.type,
    title: body.title,
    ...(typeof body.status === 'number' && { status: body.status }),
    ...(typeof body.detail === 'string' && { detail: body.detail }),
    ...(invalidParams !== undefined && { invalidParams }),
  };
}

/** The body as JSON (undefined if empty); a ParcelApiError, unread, if longer than `maxBytes`. */
export async function readJson(operation: Operation, response: Response, maxBytes: number): Promise<unknown> {
  const text = await readText(response, maxBytes);
  if (text === undefined)
    throw new ParcelApiError({
      operation,
      status: response.status,
      message: `${operation}: its ${response.status} answer is longer than ${maxBytes} bytes (not read)`,
    });
  return parseJson(text);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text near the fault: it could be part of a token.
    throw new SyntaxError('the answer is not valid JSON');
  }
}

/**
 * The body as text, or undefined when it is longer than `maxBytes`: refused on its
 * Content-Length before any of it is read, else cut where it passes the cap. A hostile server
 * could otherwise send gigabytes for the client to hold.
 */
async function readText(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number.parseInt(response.headers.get('content-length') ?? '', 10);
  if (declared > maxBytes) {
    await discard(response);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** A JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Frees the connection of an answer the caller will not see. */
export const discard = (response: Response) => response.body?.cancel().catch(() => undefined);
