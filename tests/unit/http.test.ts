/**
 * lib/http/endpoint.ts and lib/http/caller.ts: what an authorized endpoint lets through; the
 * errors it answers; the published limits on every answer (lib/http/rate-limit.ts).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/errors.ts';
import { AppError } from '../../lib/errors.ts';
import { endpoint } from '../../lib/http/endpoint.ts';
import { oauthEndpoint } from '../../lib/http/oauth-form.ts';
import { rateLimitFields } from '../../lib/http/rate-limit.ts';
import { ok, type Reply } from '../../lib/http/responses.ts';
import { createLogger } from '../../lib/log.ts';
import {
  callerContext,
  createShipmentEvent,
  lambdaContext,
  tokenEvent,
  trackingEvent,
} from '../fixtures/events.ts';
import { memoryReplay } from '../support/memory-replay.ts';

const EXP = 1_795_260_000;
const lines: string[] = [];
const logger = createLogger('debug', (line) => lines.push(line));

const protectedEndpoint = (now: Date) =>
  endpoint({
    authorized: true,
    route: 'createShipment',
    dpop: { replay: memoryReplay() },
    body: v.object({ a: v.number() }),
    logger,
    clock: () => now,
    handle: async ({ caller }) => ok({ caller }),
  });

const eventWith = (authorizer: Record<string, unknown>, body = '{"a":1}'): APIGatewayProxyEvent => ({
  ...trackingEvent(),
  httpMethod: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body,
  requestContext: { ...trackingEvent().requestContext, authorizer },
});

const context = (overrides: Record<string, unknown> = {}) => ({
  ...callerContext('alice', 'C-1001'),
  iat: String(EXP - 3600),
  exp: String(EXP),
  ...overrides,
});

const run = (now: Date, event: APIGatewayProxyEvent) => protectedEndpoint(now)(event, lambdaContext());

describe('authorized endpoint', () => {
  it('lets the caller through strictly before exp, with exp as API Gateway stringifies it or as a number', async () => {
    const before = new Date(EXP * 1000 - 1);
    for (const exp of [String(EXP), EXP]) {
      const response = await run(before, eventWith(context({ exp })));
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body)).toEqual({
        caller: {
          subject: { kind: 'user', username: 'alice' },
          customerId: 'C-1001',
          scopes: ['tracking:read', 'shipments:write'],
          issuedAt: EXP - 3600,
          signInMethod: 'password',
        },
      });
    }
  });

  it('answers 401 invalid_token from exp on, before looking at the body', async () => {
    const response = await run(new Date(EXP * 1000), eventWith(context(), '{not json'));
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({
      'WWW-Authenticate':
        'Bearer error="invalid_token", error_description="The access token is missing, invalid, expired or revoked"',
    });
    expect(JSON.parse(response.body)).toMatchObject({
      type: 'urn:parcel-auth:problem:unauthorized',
      status: 401,
    });
  });

  it.each([
    ['no exp', { exp: undefined }],
    ['an exp that is not a number', { exp: 'tomorrow' }],
    ['a fractional exp', { exp: EXP + 0.5 }],
    ['no iat', { iat: undefined }],
    ['no username', { username: undefined }],
  ])('fails closed with 401 on a context with %s, and logs it as an error', async (_name, overrides) => {
    lines.length = 0;
    const response = await run(new Date(EXP * 1000 - 60_000), eventWith(context(overrides)));
    expect(response.statusCode).toBe(401);
    expect(
      lines.some((line) => line.includes('"level":"ERROR"') && line.includes('authorizer context invalid')),
    ).toBe(true);
  });

  it('answers 401 to a request carrying two Authorization values, in any letter case', async () => {
    const event = eventWith(context());
    const response = await run(new Date(EXP * 1000 - 60_000), {
      ...event,
      multiValueHeaders: { Authorization: ['Bearer a'], authorization: ['Bearer b'] },
    });
    expect(response.statusCode).toBe(401);
  });
});

describe('the caller of an administrator’s route (customer:admin)', () => {
  const adminEndpoint = (now: Date) =>
    endpoint({
      authorized: true,
      route: 'customerListClients',
      dpop: { replay: memoryReplay() },
      logger,
      clock: () => now,
      handle: async ({ caller }) => ok({ caller }),
    });
  const runAdmin = (authorizer: Record<string, unknown>) =>
    adminEndpoint(new Date(EXP * 1000 - 60_000))(
      {
        ...trackingEvent(),
        httpMethod: 'GET',
        requestContext: { ...trackingEvent().requestContext, authorizer },
      },
      lambdaContext(),
    );

  it('gives the handler the scopes named, customer:admin among them, and the login time as a number', async () => {
    const response = await runAdmin(
      context({ scope: 'tracking:read customer:admin', authTime: String(EXP - 3600) }),
    );
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      caller: {
        subject: { kind: 'user', username: 'alice' },
        customerId: 'C-1001',
        scopes: ['tracking:read', 'customer:admin'],
        issuedAt: EXP - 3600,
        authTime: EXP - 3600,
        signInMethod: 'password',
      },
    });
  });

  it('answers 403 insufficient_scope naming customer:admin to a token without it', async () => {
    const response = await runAdmin(context({ authTime: String(EXP - 3600) }));
    expect(response.statusCode).toBe(403);
    expect(response.headers?.['WWW-Authenticate']).toContain('scope="customer:admin"');
  });

  it('takes a decision without scope (cached before scopes) as the default scopes, never customer:admin', async () => {
    const decision = context({ scope: undefined });
    expect((await runAdmin(decision)).statusCode).toBe(403);
    const response = await run(new Date(EXP * 1000 - 60_000), eventWith(decision));
    expect(JSON.parse(response.body).caller).toEqual({
      subject: { kind: 'user', username: 'alice' },
      customerId: 'C-1001',
      scopes: ['tracking:read', 'shipments:write'],
      issuedAt: EXP - 3600,
      signInMethod: 'password',
    });
  });

  it('fails closed with 401 on a login time in a client’s decision, or one that is not epoch seconds', async () => {
    const client = context({
      username: '',
      clientId: 'pcl_0123456789abcdef0123',
      authTime: String(EXP - 60),
    });
    expect((await runAdmin(client)).statusCode).toBe(401);
    expect((await runAdmin(context({ authTime: 'yesterday' }))).statusCode).toBe(401);
  });
});

describe('errors that say what happened', () => {
  const failing = (failure: () => Promise<never>) =>
    endpoint({ logger, handle: async () => failure() })(trackingEvent(), lambdaContext());
  const logged = () =>
    lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'request failed');

  it('answers our own defect 500 with no detail and no Retry-After, and logs it with the request id', async () => {
    lines.length = 0;
    const response = await failing(async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    });
    expect(response.statusCode).toBe(500);
    expect(response.headers).not.toHaveProperty('Retry-After');
    expect(JSON.parse(response.body)).toEqual({
      type: 'urn:parcel-auth:problem:internal-error',
      title: 'Internal error',
      status: 500,
    });
    expect(logged()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        reason: 'internal error',
        function_request_id: lambdaContext().awsRequestId,
        error: expect.objectContaining({ cause: expect.objectContaining({ name: 'TypeError' }) }),
      }),
    ]);
  });

  it('answers a failed dependency 503 with Retry-After, and logs it as one', async () => {
    lines.length = 0;
    const response = await failing(() =>
      dynamo(async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { name: 'TimeoutError' });
      }),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'Retry-After': '1' });
    expect(JSON.parse(response.body)).toMatchObject({ type: 'urn:parcel-auth:problem:service-unavailable' });
    expect(logged()).toEqual([expect.objectContaining({ level: 'ERROR', reason: 'dependency unavailable' })]);
  });
});

describe('the published limits (lib/http/rate-limit.ts)', () => {
  const LOGIN_LIMITS = [
    { name: 'username', quota: 5, windowSeconds: 86_400 },
    { name: 'address', quota: 100, windowSeconds: 3600 },
    { name: 'route', quota: 50, windowSeconds: 1 },
  ];
  const POLICY = '"username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1';
  const left = (policy: string, remaining: number, resetSeconds: number) => ({
    policy,
    remaining,
    resetSeconds,
  });

  it('writes each policy as a String with its quota and window, and what is left as r and t, in the order given', () => {
    const fields = rateLimitFields(LOGIN_LIMITS);
    expect(fields([left('username', 4, 172_740), left('address', 99, 7140)])).toEqual({
      'RateLimit-Policy': POLICY,
      RateLimit: '"username";r=4;t=172740, "address";r=99;t=7140',
    });
  });

  it('sends RateLimit-Policy alone when nothing is known of what is left', () => {
    const fields = rateLimitFields(LOGIN_LIMITS);
    expect(fields()).toEqual({ 'RateLimit-Policy': POLICY });
    expect(fields([])).toEqual({ 'RateLimit-Policy': POLICY });
  });

  it('sends neither field without a policy, whatever is said to be left', () => {
    expect(rateLimitFields([])([left('username', 4, 60)])).toEqual({});
  });

  it('lists only published policies in RateLimit, each once', () => {
    const fields = rateLimitFields([{ name: 'address', quota: 100, windowSeconds: 3600 }]);
    expect(fields([left('username', 4, 60), left('address', 99, 60), left('address', 98, 60)])).toEqual({
      'RateLimit-Policy': '"address";q=100;w=3600',
      RateLimit: '"address";r=99;t=60',
    });
    expect(fields([left('username', 4, 60)])).toEqual({ 'RateLimit-Policy': '"address";q=100;w=3600' });
  });

  it('escapes a quote and a backslash in a name, and refuses a name that is not printable ASCII at start', () => {
    const fields = rateLimitFields([{ name: 'a"b\\c', quota: 1, windowSeconds: 1 }]);
    expect(fields([left('a"b\\c', 0, 1)])).toEqual({
      'RateLimit-Policy': '"a\\"b\\\\c";q=1;w=1',
      RateLimit: '"a\\"b\\\\c";r=0;t=1',
    });
    expect(() => rateLimitFields([{ name: 'adresa-č', quota: 1, windowSeconds: 1 }])).toThrow(
      /printable ASCII/,
    );
    expect(() => rateLimitFields([{ name: 'a\nb', quota: 1, windowSeconds: 1 }])).toThrow(/printable ASCII/);
  });

  it.each([
    [50, 1, 'q=50;w=1'],
    [0.5, 1, 'q=1;w=2'],
    [2.25, 1, 'q=9;w=4'],
    [0.001, 1, 'q=1;w=1000'],
    [1.5, 300, 'q=3;w=600'],
    [0, 1, 'q=0;w=1'],
  ])('publishes a rate of %s per %s s exactly, in whole numbers: %s', (quota, windowSeconds, parameters) => {
    expect(rateLimitFields([{ name: 'route', quota, windowSeconds }])()).toEqual({
      'RateLimit-Policy': `"route";${parameters}`,
    });
  });

  it.each([
    ['a quota with more than 3 decimals', { quota: 0.0005, windowSeconds: 1 }],
    ['a negative quota', { quota: -1, windowSeconds: 1 }],
    ['a quota that is not a number', { quota: Number.NaN, windowSeconds: 1 }],
    ['a quota past the largest Integer', { quota: 1e15, windowSeconds: 1 }],
    ['a window of 0', { quota: 1, windowSeconds: 0 }],
    ['a fractional window', { quota: 1, windowSeconds: 1.5 }],
  ])('refuses %s when the endpoint is built, not at a request', (_case, policy) => {
    expect(() => rateLimitFields([{ name: 'route', ...policy }])).toThrow(/policy route/);
  });

  it('refuses a policy published twice', () => {
    const route = { name: 'route', quota: 50, windowSeconds: 1 };
    expect(() => rateLimitFields([route, route])).toThrow(/published twice/);
  });

  it('writes what is left as Integers: remaining rounded down, reset rounded up, never below 0', () => {
    const fields = rateLimitFields(LOGIN_LIMITS);
    expect(fields([left('username', 3.7, 0.2), left('address', -2, -5)]).RateLimit).toBe(
      '"username";r=3;t=1, "address";r=0;t=0',
    );
    expect(fields([left('username', Number.NaN, 1), left('address', 1, 1)]).RateLimit).toBe(
      '"address";r=1;t=1',
    );
  });
});

describe('the published limits on every answer of an endpoint', () => {
  const limits = [
    { name: 'username', quota: 5, windowSeconds: 86_400 },
    { name: 'route', quota: 50, windowSeconds: 1 },
  ];
  const POLICY = '"username";q=5;w=86400, "route";q=50;w=1';
  const quota = [{ policy: 'username', remaining: 2, resetSeconds: 90 }];
  const limited = (handle: () => Promise<Reply>) =>
    endpoint({ logger, limits, body: v.object({ a: v.number() }), handle });

  it('gives a reply’s quota as RateLimit beside RateLimit-Policy', async () => {
    const response = await limited(async () => ok({ done: true }, quota))(
      createShipmentEvent('{"a":1}'),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Cache-Control': 'no-store',
      'RateLimit-Policy': POLICY,
      RateLimit: '"username";r=2;t=90',
    });
  });

  it('gives an error’s quota with its problem, keeping Retry-After on a 429', async () => {
    const response = await limited(async () => {
      throw new AppError('TOO_MANY_ATTEMPTS', {
        retryAfterSeconds: 90,
        quota: [{ policy: 'username', remaining: 0, resetSeconds: 90 }],
      });
    })(createShipmentEvent('{"a":1}'), lambdaContext());
    expect(response.statusCode).toBe(429);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/problem+json',
      'Retry-After': '90',
      'RateLimit-Policy': POLICY,
      RateLimit: '"username";r=0;t=90',
    });
  });

  it('publishes the policies on answers refused before the handler ran, and on a failed dependency', async () => {
    const never = async (): Promise<Reply> => {
      throw new Error('not reached');
    };
    const malformed = await limited(never)(createShipmentEvent('{not json'), lambdaContext());
    const invalid = await limited(never)(createShipmentEvent('{"a":"x"}'), lambdaContext());
    const down = await limited(() =>
      dynamo(async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { name: 'TimeoutError' });
      }),
    )(createShipmentEvent('{"a":1}'), lambdaContext());
    for (const [response, status] of [
      [malformed, 400],
      [invalid, 400],
      [down, 503],
    ] as const) {
      expect(response.statusCode).toBe(status);
      expect(response.headers?.['RateLimit-Policy']).toBe(POLICY);
      expect(response.headers).not.toHaveProperty('RateLimit');
    }
    expect(down.headers).toMatchObject({ 'Retry-After': '1' });
  });

  it('publishes nothing on an endpoint without limits', async () => {
    const response = await endpoint({ logger, handle: async () => ok({}, quota) })(
      trackingEvent(),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers).not.toHaveProperty('RateLimit-Policy');
    expect(response.headers).not.toHaveProperty('RateLimit');
  });

  it('publishes the limits on the OAuth endpoints’ answers and RFC 6749 errors', async () => {
    const token = (handle: () => Promise<Reply>) =>
      oauthEndpoint({ logger, limits, handle })(
        tokenEvent({ grant_type: 'client_credentials' }),
        lambdaContext(),
      );
    const granted = await token(async () => ok({ access_token: 'x' }, quota));
    const refused = await token(async () => {
      throw new AppError('INVALID_CLIENT', {
        quota: [{ policy: 'username', remaining: 1, resetSeconds: 7 }],
      });
    });
    expect(granted.headers).toMatchObject({ 'RateLimit-Policy': POLICY, RateLimit: '"username";r=2;t=90' });
    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_client' });
    expect(refused.headers).toMatchObject({ 'RateLimit-Policy': POLICY, RateLimit: '"username";r=1;t=7' });
  });
});
