/**
 * A short access-token TTL on the local stack: the token works until expireAt and is
 * refused from that instant on, through serverless-offline and the real authorizer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { bearer, send } from '../support/http.ts';

/** Long enough for the call before expireAt on a loaded machine, short enough to wait out. */
const TTL_SECONDS = 6;

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ env: { ACCESS_TOKEN_TTL: `${TTL_SECONDS}s` } });
});
afterAll(() => stack?.stop());

const sleepUntil = (epochMs: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())));

describe('access token expiry', () => {
  it('accepts the token before expireAt and refuses it within one second after expireAt', async () => {
    // Warm the login, the authorizer and the tracking function first: a cold start of each
    // must not eat the token's short life.
    const warm = await send(stack, 'POST', '/login-extended', { body: stack.demo });
    await send(stack, 'GET', '/tracking/12345678901234', { headers: bearer(warm.json.token) });

    const answer = await send(stack, 'POST', '/login-extended', { body: stack.demo });
    expect(answer.status).toBe(200);
    const expireAt = Date.parse(String(answer.json.expireAt));
    expect(expireAt - Date.now()).toBeLessThanOrEqual(TTL_SECONDS * 1000);

    const before = await send(stack, 'GET', '/tracking/12345678901234', {
      headers: bearer(answer.json.token),
    });
    expect(before.status).toBe(404);

    await sleepUntil(expireAt);
    const after = await send(stack, 'GET', '/tracking/12345678901234', {
      headers: bearer(answer.json.token),
    });
    expect(after.status).toBe(401);
  });
});
