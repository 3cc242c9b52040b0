/** lib/http/endpoint.ts and lib/http/caller.ts: what an authorized endpoint lets through. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/errors.ts';
import { endpoint } from '../../lib/http/endpoint.ts';
import { ok } from '../../lib/http/responses.ts';
import { createLogger } from '../../lib/log.ts';
import { callerContext, lambdaContext, trackingEvent } from '../fixtures/events.ts';

const EXP = 1_795_260_000;
const lines: string[] = [];
const logger = createLogger('debug', (line) => lines.push(line));

const protectedEndpoint = (now: Date) =>
  endpoint({
    authorized: true,
    route: 'createShipment',
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
