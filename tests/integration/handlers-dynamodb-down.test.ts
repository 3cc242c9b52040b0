import { readFile } from 'node:fs/promises';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { tableNames } from '../../lib/stage.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import { importSigningKey, parseKeyring } from '../../lib/tokens/keys.ts';
import { authorizerEvent, lambdaContext, loginEvent } from '../fixtures/events.ts';
import { tokenRequest } from '../support/keys.ts';
import { freePort } from '../support/ports.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let login: Handler;
let loginExtended: Handler;
let refresh: Handler;
let logout: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
let keyringFile: string;
const stderr: string[] = [];
let cleanupKeys: () => Promise<void>;

beforeAll(async () => {
  // Nothing listens on this port: every DynamoDB call fails to connect, as in an outage.
  const { env, cleanup } = await functionEnv({
    endpoint: `http://127.0.0.1:${await freePort()}`,
    tables: tableNames('down'),
  });
  cleanupKeys = cleanup;
  keyringFile = env.SIGNING_KEYRING?.slice('file:'.length) ?? '';
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr.push(String(chunk));
    return true;
  });
  login = (await import('../../functions/login.ts')).handler as Handler;
  loginExtended = (await import('../../functions/login-extended.ts')).handler as Handler;
  refresh = (await import('../../functions/refresh.ts')).handler as Handler;
  logout = (await import('../../functions/logout.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
});

/** Tokens signed with the stage's own key, as a login before the outage would have issued. */
async function tokensBeforeOutage() {
  const keyring = parseKeyring(await readFile(keyringFile, 'utf8'));
  const issuer = createTokenIssuer({
    signingKey: async () => importSigningKey(keyring.active),
    settings: {
      issuer: process.env.TOKEN_ISSUER ?? '',
      audience: process.env.TOKEN_AUDIENCE ?? '',
      accessTtlSeconds: 3600,
      refreshTtlSeconds: 86_400,
    },
  });
  return issuer.issue(tokenRequest({ username: 'alice', customerId: 'C-1' }, new Date()));
}
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
      'RateLimit-Policy': '"username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1',
    });
    // Nothing was counted: the attempt was never decided.
    expect(response.headers).not.toHaveProperty('RateLimit');
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

describe('sessions while DynamoDB is unreachable', () => {
  it('answers a refresh 503 with no token', async () => {
    const { refreshToken } = await tokensBeforeOutage();
    const response = await refresh(loginEvent(JSON.stringify({ refreshToken })), lambdaContext());
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'RateLimit-Policy': '"route";q=50;w=1' });
    expect(response.body).not.toContain('eyJ');
  });

  it('answers a logout 503, not 204: the session could not be ended', async () => {
    const { refreshToken } = await tokensBeforeOutage();
    const response = await logout(loginEvent(JSON.stringify({ refreshToken })), lambdaContext());
    expect(response.statusCode).toBe(503);
  });

  it('fails the authorizer closed, and not with a 401, for a valid access token', async () => {
    const { accessToken } = await tokensBeforeOutage();
    const error = await authorizer(authorizerEvent(`Bearer ${accessToken}`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('revocation check unavailable');
  });
});
