/**
 * Hostile input over real HTTP, through serverless-offline's API Gateway emulation: raw
 * bytes a fetch() of a JS string cannot send (invalid UTF-8, a raw NUL), bodies far over
 * the limit, deeply nested JSON, and a request with two Authorization headers.
 *
 * Each body must be answered 4xx problem+json, quickly and without a token. That none of
 * them is hashed is proven in process (tests/integration/hostile-input.test.ts); over HTTP
 * only the answer and its time are visible.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';

let stack: LocalStack;
let token: string;
const PARCEL_PATH = '/api/v1/tracking/12345678901234';
const JWT = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\./;

interface RawAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

/** POSTs `body` as bytes, exactly as given. */
async function post(path: string, body: Uint8Array | string): Promise<RawAnswer> {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text,
  };
}

/**
 * Sends `headerLines` as they are, over a socket of its own: fetch() and node:http would
 * merge or refuse a repeated header, this sends each line as written.
 */
function rawGet(path: string, headerLines: readonly string[]): Promise<{ status: number; head: string }> {
  const { hostname, port } = new URL(stack.baseUrl);
  const request = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    ...headerLines,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const response = Buffer.concat(chunks).toString('latin1');
      const head = response.split('\r\n\r\n')[0] ?? '';
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
      if (Number.isNaN(status)) reject(new Error(`no HTTP status line in: ${response.slice(0, 200)}`));
      else resolve({ status, head });
    });
  });
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

function expectProblem(answer: RawAnswer, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.contentType).toBe('application/problem+json');
  expect(answer.text).not.toMatch(JWT);
  const problem = JSON.parse(answer.text) as Record<string, unknown>;
  expect(problem).toMatchObject({ status, type: expect.stringMatching(/^urn:parcel-auth:problem:/) });
  return problem;
}

beforeAll(async () => {
  stack = await startLocalStack();
  // Also warms the login functions, so the timings below measure the request, not a cold start.
  const answer = await post('/login', JSON.stringify(stack.demo));
  token = String((JSON.parse(answer.text) as Record<string, unknown>).token);
  await post('/login-extended', JSON.stringify({ username: 'x', password: 'y' }));
});
afterAll(() => stack?.stop());

describe.each(['/login', '/login-extended'])('POST %s with hostile bodies', (path) => {
  it('answers a 1 MB body 413 problem+json, quickly', async () => {
    const answer = await post(path, JSON.stringify({ username: 'demo', password: 'x'.repeat(1024 * 1024) }));
    expectProblem(answer, 413);
  });

  it.each([
    ['10 000 unclosed [', '['.repeat(10_000)],
    ['8 000 balanced [ ]', `${'['.repeat(8000)}${']'.repeat(8000)}`],
  ])('answers deeply nested JSON (%s) 400 problem+json, quickly', async (_case, body) => {
    const answer = await post(path, body);
    expectProblem(answer, 400);
  });

  it.each([
    ['a top-level __proto__', '{"__proto__":{"admin":true},"username":"demo","password":"x"}'],
    [
      'constructor.prototype',
      '{"constructor":{"prototype":{"admin":true}},"username":"demo","password":"x"}',
    ],
  ])('answers %s 400 malformed-json', async (_case, body) => {
    const problem = expectProblem(await post(path, body), 400);
    expect(problem.type).toBe('urn:parcel-auth:problem:malformed-json');
  });

  it.each([
    [
      'an escaped NUL in the username',
      utf8('{"username":"de\\u0000mo","password":"whatever-password"}'),
      'username',
    ],
    ['an escaped NUL in the password', utf8('{"username":"demo","password":"what\\u0000ever"}'), 'password'],
    [
      'invalid UTF-8 (C3 28) in the password',
      Buffer.concat([utf8('{"username":"demo","password":"pa'), Buffer.from([0xc3, 0x28]), utf8('ss"}')]),
      'password',
    ],
    [
      'invalid UTF-8 (FF) in the password',
      Buffer.concat([utf8('{"username":"demo","password":"pa'), Buffer.from([0xff]), utf8('ss"}')]),
      'password',
    ],
    [
      'invalid UTF-8 (C3 28 and FF) in the username',
      Buffer.concat([utf8('{"username":"de'), Buffer.from([0xc3, 0x28, 0xff]), utf8('mo","password":"x"}')]),
      'username',
    ],
  ])('answers %s 400 naming the field, quickly', async (_case, body, field) => {
    const answer = await post(path, body);
    const problem = expectProblem(answer, 400);
    expect(problem.invalidParams).toContainEqual(expect.objectContaining({ name: field }));
  });

  it('answers a raw NUL byte inside a JSON string 400 malformed-json (JSON forbids it unescaped)', async () => {
    const body = Buffer.concat([utf8('{"username":"de'), Buffer.from([0x00]), utf8('mo","password":"x"}')]);
    expect(expectProblem(await post(path, body), 400).type).toBe('urn:parcel-auth:problem:malformed-json');
  });
});

describe('a request with two Authorization headers', () => {
  it('is allowed with the valid token alone, so the 401s below are for the second header', async () => {
    expect((await rawGet(PARCEL_PATH, [`Authorization: Bearer ${token}`])).status).toBe(404);
  });

  // Node's HTTP parser keeps only the first of repeated `Authorization` headers in
  // `headers`; the REQUEST authorizer reads `multiValueHeaders`, which has them all.
  it('is refused 401 when the valid token comes first and junk second', async () => {
    const answer = await rawGet(PARCEL_PATH, [
      `Authorization: Bearer ${token}`,
      'Authorization: Bearer junk',
    ]);
    expect(answer.status).toBe(401);
  });

  it('is refused 401 when junk comes first and the valid token second', async () => {
    const answer = await rawGet(PARCEL_PATH, [
      'Authorization: Bearer junk',
      `Authorization: Bearer ${token}`,
    ]);
    expect(answer.status).toBe(401);
  });

  it('is refused 401 when both are folded into one header with a comma, as a proxy may do', async () => {
    const answer = await rawGet(PARCEL_PATH, [`Authorization: Bearer ${token}, Bearer junk`]);
    expect(answer.status).toBe(401);
  });
});
