/**
 * Hostile input at the real handlers, in process, against the embedded DynamoDB: thousands
 * of generated login bodies and Authorization headers, and the bodies an attacker tries
 * first (huge, deeply nested, prototype keys, NUL bytes, invalid UTF-8).
 *
 * What every answer must be: a 4xx problem+json, never a 5xx, never a token; a body that
 * fails before the domain (400, 413, 415) costs no bcrypt compare, and a failed login
 * costs exactly one.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import { authorizerEvent, lambdaContext, loginEvent } from '../fixtures/events.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'a-long-test-password';
const PROBLEM_KEYS = ['detail', 'invalidParams', 'status', 'title', 'type'];
const JWT = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\./;

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let cleanupKeys: () => Promise<void>;
let login: Handler;
let loginExtended: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
/** A genuine access token of alice, from the login handler. */
let validToken: string;

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  await seedHandlerUsers(dynamo, PASSWORD);
  login = (await import('../../functions/login.ts')).handler as Handler;
  loginExtended = (await import('../../functions/login-extended.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
  const answer = await call(login, loginEvent(JSON.stringify({ username: 'alice', password: PASSWORD })));
  validToken = String((JSON.parse(answer.body) as Record<string, unknown>).token);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo?.close();
  await cleanupKeys?.();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

let compare: MockInstance<typeof bcrypt.compare> | undefined;
const spyOnCompare = () => {
  compare = vi.spyOn(bcrypt, 'compare');
  return compare;
};
afterEach(() => {
  compare?.mockRestore();
  compare = undefined;
});

const call = (handler: Handler, event: APIGatewayProxyEvent) => handler(event, lambdaContext());
const json = (body: unknown) => JSON.stringify(body);
const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as Record<string, unknown>;

/** A 4xx problem+json of `status` that carries no token. */
function expectProblem(response: APIGatewayProxyResult, status: number) {
  expect(response.statusCode).toBe(status);
  expect(response.headers?.['Content-Type']).toBe('application/problem+json');
  expect(response.body).not.toMatch(JWT);
  const problem = bodyOf(response);
  expect(problem).toMatchObject({ status, type: expect.stringMatching(/^urn:parcel-auth:problem:/) });
  return problem;
}

/** Runs `request` and tells how long it took and how many bcrypt compares it caused. */
async function measured(request: () => Promise<APIGatewayProxyResult>) {
  const spy = compare ?? spyOnCompare();
  const comparesBefore = spy.mock.calls.length;
  const response = await request();
  return { response, compares: spy.mock.calls.length - comparesBefore };
}

const LOGINS: [string, () => Handler][] = [
  ['login', () => login],
  ['login-extended', () => loginExtended],
];

const base64Event = (bytes: Buffer, headers: Record<string, string> = {}) => ({
  ...loginEvent(bytes.toString('base64'), headers),
  isBase64Encoded: true,
});

// Generated logins lock usernames and addresses: their `lockout started` lines stay here.
captureServiceLogs();

describe.each(LOGINS)('%s with hostile bodies', (_name, handler) => {
  it('answers a 1 MB body 413, quickly, before any password hashing', async () => {
    const huge = json({ username: 'alice', password: 'x'.repeat(1024 * 1024) });
    const { response, compares } = await measured(() => call(handler(), loginEvent(huge)));
    expectProblem(response, 413);
    expect(compares).toBe(0);
  });

  it('answers a 1 MB base64-encoded body 413 before any password hashing', async () => {
    const huge = Buffer.from(json({ username: 'alice', password: 'x'.repeat(1024 * 1024) }));
    const { response, compares } = await measured(() => call(handler(), base64Event(huge)));
    expectProblem(response, 413);
    expect(compares).toBe(0);
  });

  it.each([
    ['10 000 unclosed [', '['.repeat(10_000)],
    ['8 000 balanced [ ] (just under the size limit)', `${'['.repeat(8000)}${']'.repeat(8000)}`],
    ['2 500 nested objects', `${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`],
    [
      'a password nested 5 000 arrays deep',
      `{"username":"alice","password":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    ],
  ])('answers deeply nested JSON (%s) 400, quickly, before any password hashing', async (_case, body) => {
    const { response, compares } = await measured(() => call(handler(), loginEvent(body)));
    expectProblem(response, 400);
    expect(compares).toBe(0);
  });

  it.each([
    ['a top-level __proto__', `{"__proto__":{"admin":true},"username":"alice","password":"${PASSWORD}"}`],
    ['a nested __proto__', `{"username":"alice","password":"${PASSWORD}","x":{"__proto__":{"admin":true}}}`],
    [
      'constructor.prototype',
      `{"constructor":{"prototype":{"admin":true}},"username":"alice","password":"p"}`,
    ],
    ['__proto__ as the username', `{"username":{"__proto__":"alice"},"password":"${PASSWORD}"}`],
  ])('answers %s 400 malformed-json before any hashing, touching no prototype', async (_case, body) => {
    const { response, compares } = await measured(() => call(handler(), loginEvent(body)));
    expect(expectProblem(response, 400).type).toBe('urn:parcel-auth:problem:malformed-json');
    expect(compares).toBe(0);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
  });

  it.each([
    ['a NUL byte in the username', { username: 'ali\u0000ce', password: PASSWORD }, 'username'],
    ['a NUL byte in the password', { username: 'alice', password: `${PASSWORD}\u0000` }, 'password'],
    ['a lone NUL as the password', { username: 'alice', password: '\u0000' }, 'password'],
    ['U+FFFD in the username', { username: 'al\uFFFDice', password: PASSWORD }, 'username'],
    ['U+FFFD in the password', { username: 'alice', password: `pa\uFFFDss` }, 'password'],
    ['a C1 control character in the password', { username: 'alice', password: 'pa\u0085ss' }, 'password'],
    ['DEL in the username', { username: 'alice\u007f', password: PASSWORD }, 'username'],
  ])('answers %s 400 naming the field, before any hashing', async (_case, body, field) => {
    const { response, compares } = await measured(() => call(handler(), loginEvent(json(body))));
    const problem = expectProblem(response, 400);
    expect(problem.invalidParams).toContainEqual(expect.objectContaining({ name: field }));
    expect(compares).toBe(0);
  });

  it.each([
    ['C3 28 (a broken two-byte sequence)', [0xc3, 0x28], 'password'],
    ['FF (never valid in UTF-8)', [0xff], 'password'],
    ['C3 28 and FF together', [0xc3, 0x28, 0x61, 0xff], 'password'],
    ['ED A0 80 (an encoded surrogate)', [0xed, 0xa0, 0x80], 'password'],
  ])(
    'answers an isBase64Encoded body with invalid UTF-8 %s in the password 400 before any hashing',
    async (_case, bytes, field) => {
      const body = Buffer.concat([
        Buffer.from('{"username":"alice","password":"pass'),
        Buffer.from(bytes),
        Buffer.from('word"}'),
      ]);
      const { response, compares } = await measured(() => call(handler(), base64Event(body)));
      const problem = expectProblem(response, 400);
      expect(problem.invalidParams).toContainEqual(expect.objectContaining({ name: field }));
      expect(compares).toBe(0);
    },
  );

  it('answers an isBase64Encoded body with invalid UTF-8 in the username 400 before any hashing', async () => {
    const body = Buffer.concat([
      Buffer.from('{"username":"ali'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`ce","password":"${PASSWORD}"}`),
    ]);
    const { response, compares } = await measured(() => call(handler(), base64Event(body)));
    expect(expectProblem(response, 400).invalidParams).toContainEqual(
      expect.objectContaining({ name: 'username' }),
    );
    expect(compares).toBe(0);
  });

  it('never echoes a refused body in the problem, not even a body that is a bare JSON string', async () => {
    const secret = 'correct horse battery staple';
    const response = await call(handler(), loginEvent(json(secret)));
    expectProblem(response, 400);
    expect(response.body).not.toContain('horse');
  });
});

/** Generators for login bodies, from plausible to absurd. */
function bodies() {
  const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
  const text = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary-ascii' }),
    fc
      .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 3 }), loneSurrogate))
      .map((parts) => parts.join('')),
  );
  const huge = fc
    .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.integer({ min: 100, max: 6000 }))
    .map(([unit, times]) => unit.repeat(times));
  const username = fc.oneof(
    fc.constantFrom('alice', 'solo', 'Alice', 'ALICE', 'nobody', ' alice', 'alice\u200b', 'ａｌｉｃｅ'),
    text,
    huge,
  );
  const password = fc
    .oneof(text, huge, fc.constantFrom(PASSWORD.toUpperCase(), `${PASSWORD} `))
    .filter((candidate) => candidate !== PASSWORD);
  const credentials = fc.record({ username, password });
  /** Well-formed credentials of unknown users or wrong passwords: these reach bcrypt. */
  const plausible = fc.record({
    username: fc.oneof(
      { arbitrary: fc.constantFrom('alice', 'solo'), weight: 1 },
      { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), weight: 5 },
    ),
    password: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 100 }),
  });
  const extraKeys = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue(), { maxKeys: 4 });
  const quoted = (value: unknown) => JSON.stringify(value);
  const prototypeKeys = fc
    .tuple(
      fc.constantFrom('__proto__', 'constructor', 'prototype'),
      fc.jsonValue(),
      credentials,
      fc.boolean(),
    )
    .map(([key, value, { username: user, password: pass }, nested]) => {
      const hostile = `${quoted(key)}:${nested ? `{"prototype":${quoted(value)}}` : quoted(value)}`;
      return `{${hostile},"username":${quoted(user)},"password":${quoted(pass)}}`;
    });
  return fc.oneof(
    { arbitrary: plausible.map(quoted), weight: 6 },
    { arbitrary: credentials.map(quoted), weight: 6 },
    {
      arbitrary: fc.tuple(extraKeys, credentials).map(([extra, c]) => quoted({ ...extra, ...c })),
      weight: 2,
    },
    {
      arbitrary: fc
        .record({ username: fc.jsonValue(), password: fc.jsonValue() }, { requiredKeys: [] })
        .map(quoted),
      weight: 2,
    },
    { arbitrary: prototypeKeys, weight: 2 },
    { arbitrary: fc.json({ stringUnit: 'binary' }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary' }), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary-ascii' }), weight: 1 },
  );
}

/** A whole request: body, how it is encoded, its content type, and where it comes from. */
function requests() {
  return fc.record({
    body: fc.option(bodies(), { nil: null, freq: 30 }),
    base64: fc.oneof(
      { arbitrary: fc.constant(false), weight: 5 },
      { arbitrary: fc.constant(true), weight: 1 },
    ),
    // Mostly the fixture's application/json; sometimes no JSON content type at all.
    randomBytes: fc.oneof(
      { arbitrary: fc.constant(null), weight: 9 },
      { arbitrary: fc.uint8Array({ maxLength: 300 }), weight: 1 },
    ),
    contentType: fc.oneof(
      { arbitrary: fc.constant(null), weight: 9 },
      {
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'APPLICATION/JSON; charset=latin1',
          '',
        ),
        weight: 1,
      },
    ),
    // A source address of its own for most requests, so the address throttle does not
    // answer every later request 429 without getting to the password.
    sourceIp: fc.oneof(fc.ipV4(), fc.ipV6()),
  });
}

type GeneratedRequest = ReturnType<typeof requests> extends fc.Arbitrary<infer T> ? T : never;

function eventOf(request: GeneratedRequest): APIGatewayProxyEvent {
  const headers: Record<string, string> =
    request.contentType === null ? {} : { 'Content-Type': request.contentType };
  const base =
    request.randomBytes !== null
      ? base64Event(Buffer.from(request.randomBytes), headers)
      : request.base64 && request.body !== null
        ? base64Event(Buffer.from(request.body), headers)
        : loginEvent(request.body, headers);
  return {
    ...base,
    requestContext: {
      ...base.requestContext,
      identity: { ...base.requestContext.identity, sourceIp: request.sourceIp },
    },
  };
}

describe.each(LOGINS)('%s with generated requests', (_name, handler) => {
  it('answers 500 generated requests with a 4xx problem and no token; only a failed login costs a compare', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requests(), async (request) => {
        const { response, compares } = await measured(() => call(handler(), eventOf(request)));
        seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1);
        expect([400, 401, 413, 415, 429]).toContain(response.statusCode);
        expect(response.headers?.['Content-Type']).toBe('application/problem+json');
        expect(response.body).not.toMatch(JWT);
        const problem = bodyOf(response);
        expect(PROBLEM_KEYS).toEqual(expect.arrayContaining(Object.keys(problem)));
        expect(problem.status).toBe(response.statusCode);
        for (const param of (problem.invalidParams as unknown[] | undefined) ?? []) {
          expect(Object.keys(param as object).sort()).toEqual(['name', 'reason']);
        }
        // A request refused before the domain hashes nothing; a failed login hashes once.
        expect(compares).toBe(response.statusCode === 401 ? 1 : 0);
      }),
      { numRuns: 500 },
    );
    // Both the early refusals and the bcrypt path were reached.
    expect(seen.get(400)).toBeGreaterThan(0);
    expect(seen.get(401)).toBeGreaterThan(0);
  });
});

describe('authorizer handler with generated Authorization headers', () => {
  it('throws exactly Unauthorized for 1500 generated headers, and allows the genuine token', async () => {
    const [header64, payload64, signature64] = validToken.split('.');
    const token = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.base64String({ maxLength: 600 }),
      fc
        .tuple(fc.nat({ max: validToken.length - 1 }), fc.constantFrom(...'AQgw-_.+/= '))
        .map(([at, char]) => `${validToken.slice(0, at)}${char}${validToken.slice(at + 1)}`),
      fc
        .array(fc.constantFrom(header64, payload64, signature64, '', 'eyJhbGciOiJub25lIn0'), { maxLength: 5 })
        .map((parts) => parts.join('.')),
    );
    const header = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc
        .tuple(fc.constantFrom('Bearer ', 'bearer ', 'Basic ', 'Bearer', ''), token)
        .map(([s, t]) => `${s}${t}`),
    );
    await fc.assert(
      fc.asyncProperty(header, async (authorization) => {
        const result = await authorizer(authorizerEvent(authorization)).then(
          (policy) => ({ allowed: true as const, policy }),
          (error: unknown) => ({ allowed: false as const, error }),
        );
        if (result.allowed) {
          // Only the genuine token, byte for byte in its signed part.
          const presented = /^bearer +(.*)$/is.exec(authorization)?.[1] ?? '';
          expect(presented.split('.').slice(0, 2)).toEqual([header64, payload64]);
          expect(result.policy.principalId).toBe('alice');
        } else {
          expect(result.error).toBeInstanceOf(Error);
          expect((result.error as Error).message).toBe('Unauthorized');
        }
      }),
      { numRuns: 1500 },
    );
    await expect(authorizer(authorizerEvent(`bearer ${validToken}`))).resolves.toMatchObject({
      principalId: 'alice',
    });
  });
});
