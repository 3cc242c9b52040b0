/**
 * The business metrics as the real handlers write them: CloudWatch Embedded Metric Format
 * lines on stdout (what Lambda sends to CloudWatch, and what the local stack prints), with
 * the embedded DynamoDB behind the handlers. The alarms and the dashboard
 * (the alarms files of infra/, infra/dashboard.cjs) read exactly these names and dimensions.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import { SERVICE } from '../../lib/stage.ts';
import { authorizerEvent, lambdaContext, loginEvent } from '../fixtures/events.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';
import { captureMetricLines } from '../support/metrics-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'a-long-test-password';
const SOURCE_IP = '203.0.113.10';

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let accounts: Awaited<ReturnType<typeof seedHandlerUsers>>;
let cleanupKeys: () => Promise<void>;
let login: Handler;
let loginExtended: Handler;
let refresh: Handler;
let logout: Handler;
let authorizer: typeof import('../../functions/authorizer.ts')['handler'];

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  // The harness turns the metric lines off to keep other suites' output quiet.
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  accounts = await seedHandlerUsers(dynamo, PASSWORD);
  login = (await import('../../functions/login.ts')).handler as Handler;
  loginExtended = (await import('../../functions/login-extended.ts')).handler as Handler;
  refresh = (await import('../../functions/refresh.ts')).handler as Handler;
  logout = (await import('../../functions/logout.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

captureServiceLogs();
const metrics = captureMetricLines();

const json = (body: unknown) => JSON.stringify(body);
const call = (handler: Handler, body: unknown) => handler(loginEvent(json(body)), lambdaContext());
const tokensOf = (response: APIGatewayProxyResult) =>
  JSON.parse(response.body) as { token: string; refreshToken: string };

describe('login metrics', () => {
  it('writes one LoginSucceeded line for a login, in the service namespace with the stage as dimension', async () => {
    const response = await call(login, { username: 'alice', password: PASSWORD });

    expect(response.statusCode).toBe(200);
    expect(metrics.lines()).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [
            {
              Namespace: SERVICE,
              Dimensions: [['service', 'stage']],
              Metrics: [{ Name: 'LoginSucceeded', Unit: 'Count' }],
            },
          ],
        },
        service: SERVICE,
        stage: 'test',
        LoginSucceeded: 1,
      },
    ]);
  });

  it('counts a login-extended like a login', async () => {
    await call(loginExtended, { username: 'alice', password: PASSWORD });

    expect(metrics.summary()).toEqual(['LoginSucceeded=1']);
  });

  it('writes LoginFailed with reason BadPassword for a wrong password, without the username or the address', async () => {
    const response = await call(login, { username: 'alice', password: 'not-the-password' });

    expect(response.statusCode).toBe(401);
    expect(metrics.summary()).toEqual(['LoginFailed{reason=BadPassword}=1']);
    const [line] = metrics.lines();
    expect(line?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'stage', 'reason']]);
    const text = JSON.stringify(metrics.lines());
    expect(text).not.toContain('alice');
    expect(text).not.toContain(SOURCE_IP);
  });

  it('names the reason of every other failure: unknown user, disabled user', async () => {
    await call(login, { username: 'nobody-of-ours', password: PASSWORD });
    await accounts.setEnabled('solo', false);
    await call(login, { username: 'solo', password: PASSWORD });
    await accounts.setEnabled('solo', true);

    expect(metrics.summary()).toEqual([
      'LoginFailed{reason=UnknownUser}=1',
      'LoginFailed{reason=Disabled}=1',
    ]);
  });

  it('writes LockoutStarted with the failure that locks a username, then LockRefused and LoginFailed Locked', async () => {
    const guess = () => call(login, { username: 'lockout-target', password: 'a-guessed-password' });
    for (let attempt = 0; attempt < 5; attempt++) await guess();
    const refused = await guess();

    expect(refused.statusCode).toBe(429);
    expect(metrics.summary()).toEqual([
      ...Array(4).fill('LoginFailed{reason=UnknownUser}=1'),
      // The fifth failure and the lock it starts: one invocation, one line each.
      'LockoutStarted{counter=Username}=1',
      'LoginFailed{reason=UnknownUser}=1',
      // The refusal: by which counter, and as a failed login.
      'LockRefused{counter=Username}=1',
      'LoginFailed{reason=Locked}=1',
    ]);
  });

  it('writes no line for a request refused before any login is tried', async () => {
    const response = await call(login, { username: 'alice' });

    expect(response.statusCode).toBe(400);
    expect(metrics.lines()).toEqual([]);
  });
});

describe('session metrics', () => {
  it('counts each refresh, the reuse of a refresh token spent two refreshes ago, and a logout', async () => {
    const { refreshToken } = tokensOf(await call(login, { username: 'alice', password: PASSWORD }));
    const refreshed = await call(refresh, { refreshToken });
    const again = await call(refresh, { refreshToken: tokensOf(refreshed).refreshToken });
    // Two generations back: reuse even within the grace window, which covers only the last one.
    const reused = await call(refresh, { refreshToken });
    const loggedOut = await call(logout, { refreshToken: tokensOf(again).refreshToken });

    expect([refreshed, again, reused, loggedOut].map((response) => response.statusCode)).toEqual([
      200, 200, 401, 204,
    ]);
    expect(metrics.summary()).toEqual([
      'LoginSucceeded=1',
      'Refresh=1',
      'Refresh=1',
      'RefreshReuseDetected=1',
      'Logout=1',
    ]);
  });
});

describe('authorizer metrics', () => {
  it('counts an allow with its revocation cache miss, and a deny by reason', async () => {
    const { token } = tokensOf(await call(login, { username: 'alice', password: PASSWORD }));
    await authorizer(authorizerEvent(`Bearer ${token}`), lambdaContext());
    await expect(authorizer(authorizerEvent('Basic YWxpY2U6eA=='), lambdaContext())).rejects.toThrow(
      /^Unauthorized$/,
    );
    await expect(authorizer(authorizerEvent([`Bearer ${token}`, 'junk']), lambdaContext())).rejects.toThrow(
      /^Unauthorized$/,
    );

    expect(metrics.summary()).toEqual([
      'LoginSucceeded=1',
      // The harness runs the authorizer without a revocation cache: every check reads.
      'RevocationCacheMiss=1',
      'AuthorizerAllow=1',
      'AuthorizerDeny{reason=MissingToken}=1',
      'AuthorizerDeny{reason=SeveralTokens}=1',
    ]);
  });
});
