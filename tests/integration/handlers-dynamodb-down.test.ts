import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tableNames } from '../../lib/stage.ts';
import { lambdaContext, loginEvent } from '../helpers/fixtures.ts';
import { functionEnv } from '../helpers/function-env.ts';
import { freePort } from '../helpers/ports.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let login: Handler;
let loginExtended: Handler;
const stderr: string[] = [];
let cleanupKeys: () => Promise<void>;

beforeAll(async () => {
  // Nothing listens on this port: every DynamoDB call fails to connect, as in an outage.
  const { env, cleanup } = await functionEnv({
    endpoint: `http://127.0.0.1:${await freePort()}`,
    tables: tableNames('down'),
  });
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr.push(String(chunk));
    return true;
  });
  login = (await import('../../functions/login.ts')).handler as Handler;
  loginExtended = (await import('../../functions/login-extended.ts')).handler as Handler;
});
afterAll(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await cleanupKeys();
});

describe('login while DynamoDB is unreachable', () => {
  it.each([
    ['login', () => login],
    ['login-extended', () => loginExtended],
  ])('%s answers 503 problem+json with Retry-After and no token', async (_name, handler) => {
    const response = await handler()(
      loginEvent(JSON.stringify({ username: 'alice', password: 'secret-password-1' })),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/problem+json',
      'Retry-After': '1',
    });
    expect(JSON.parse(response.body)).toEqual({
      type: 'urn:parcel-auth:problem:service-unavailable',
      title: 'Service unavailable',
      status: 503,
      detail: 'The service cannot answer right now. Try again later.',
    });
  });

  it('logs the cause for operators without the password', () => {
    const logged = stderr.join('');
    expect(logged).toContain('"event":"request failed"');
    expect(logged).toContain('DEPENDENCY_UNAVAILABLE');
    expect(logged).not.toContain('secret-password-1');
  });
});
