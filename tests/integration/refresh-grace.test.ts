/**
 * The refresh grace window as each stage of serverless.yml configures it, through the real
 * login, refresh and authorizer handlers on dynalite: a retry of a refresh whose answer was
 * lost keeps the session; every older token is still reuse. Clock-driven edges of the
 * window (its end, that it never grows): tests/integration/sessions.test.ts.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import { functionEnvironment } from '../../infra/function-env.ts';
import { readRefreshConfig } from '../../lib/config.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import type { SessionStore } from '../../lib/sessions/repository.ts';
import { authorizerEvent, lambdaContext, loginEvent } from '../fixtures/events.ts';
import { startTestDynamo } from '../support/dynamo.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'a-long-test-password';

describe('the grace window of every stage', () => {
  it.each(['local', 'dev', 'prod', 'another'])('is on and at most 60 s on %s', (stage) => {
    const grace = readRefreshConfig(functionEnvironment('refresh', stage, {})).sessions.reuseGraceSeconds;
    expect(grace).toBeGreaterThan(0);
    expect(grace).toBeLessThanOrEqual(60);
  });
});

describe('refresh handlers with the default stage’s grace window', () => {
  let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
  let cleanupKeys: () => Promise<void>;
  let login: Handler;
  let refresh: Handler;
  let authorizer: typeof import('../../functions/authorizer.ts')['handler'];
  let sessions: SessionStore;

  beforeAll(async () => {
    dynamo = await startTestDynamo();
    // The window is the stage's own: functionEnv takes it from serverless.yml's default block.
    const { env, cleanup } = await functionEnv(dynamo);
    cleanupKeys = cleanup;
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    await seedHandlerUsers(dynamo, PASSWORD);
    sessions = createDynamoSessionStore({ client: dynamo.documentClient, tableName: dynamo.tables.sessions });
    login = (await import('../../functions/login.ts')).handler as Handler;
    refresh = (await import('../../functions/refresh.ts')).handler as Handler;
    authorizer = (await import('../../functions/authorizer.ts')).handler;
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    await dynamo?.close();
    await cleanupKeys?.();
  });

  const call = (handler: Handler, body: unknown) =>
    handler(loginEvent(JSON.stringify(body)), lambdaContext());
  const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as Record<string, string>;
  const loggedIn = async () => bodyOf(await call(login, { username: 'alice', password: PASSWORD }));
  const refreshWith = (refreshToken: string) => call(refresh, { refreshToken });
  const sessionOf = (token: string) => sessions.get(String(decodeJwt(token).sid));
  const jtiOf = (token: string) => decodeJwt(token).jti;
  const allowed = async (accessToken: string) => {
    try {
      await authorizer(authorizerEvent(`Bearer ${accessToken}`));
      return true;
    } catch {
      return false;
    }
  };

  it('answers a retry with the token just spent (its answer lost) with the session’s current refresh token, and the session goes on', async () => {
    const first = await loggedIn();
    const lost = await refreshWith(first.refreshToken ?? '');
    expect(lost.statusCode).toBe(200);
    const current = bodyOf(lost).refreshToken ?? '';

    const retry = await refreshWith(first.refreshToken ?? '');

    expect(retry.statusCode).toBe(200);
    const retried = bodyOf(retry);
    // No second rotation: the same generation, under the id of the token the lost answer held.
    expect(jtiOf(retried.refreshToken ?? '')).toBe(jtiOf(current));
    expect(await sessionOf(current)).toMatchObject({ generation: 2, revokedAt: null });
    expect(await allowed(retried.token ?? '')).toBe(true);
    // Either copy of the current token rotates the session, once.
    const next = await refreshWith(retried.refreshToken ?? '');
    expect(next.statusCode).toBe(200);
    expect(await sessionOf(current)).toMatchObject({ generation: 3, revokedAt: null });
  });

  it('answers concurrent refreshes with one token alike: one rotation, every answer the same generation', async () => {
    const { refreshToken } = await loggedIn();

    const answers = await Promise.all(Array.from({ length: 4 }, () => refreshWith(refreshToken ?? '')));

    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
    const ids = new Set(answers.map((answer) => jtiOf(bodyOf(answer).refreshToken ?? '')));
    expect(ids.size).toBe(1);
    expect(await sessionOf(refreshToken ?? '')).toMatchObject({ generation: 2, revokedAt: null });
  });

  it('still revokes the whole session, its newest tokens included, for a token two generations back within the window', async () => {
    const first = await loggedIn();
    const second = bodyOf(await refreshWith(first.refreshToken ?? ''));
    const third = bodyOf(await refreshWith(second.refreshToken ?? ''));
    expect(await allowed(third.token ?? '')).toBe(true);

    expect((await refreshWith(first.refreshToken ?? '')).statusCode).toBe(401);

    expect(await sessionOf(third.refreshToken ?? '')).toMatchObject({ revokedReason: 'reuse' });
    expect((await refreshWith(third.refreshToken ?? '')).statusCode).toBe(401);
    expect((await refreshWith(second.refreshToken ?? '')).statusCode).toBe(401);
    expect(await allowed(third.token ?? '')).toBe(false);
  });
});
