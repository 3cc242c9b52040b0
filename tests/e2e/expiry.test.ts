/** A short access-token TTL on the local stack: the token works until exp, then the authorizer says 401. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/auth/tokens.ts';
import { bearer, send } from '../helpers/http.ts';
import { type LocalStack, startLocalStack } from '../helpers/stack.ts';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ env: { ACCESS_TOKEN_TTL: '2s' } });
});
afterAll(() => stack?.stop());

describe('access token expiry', () => {
  it('accepts the token before expireAt and answers 401 once it has expired', async () => {
    const answer = await send(stack, 'POST', '/login-extended', { body: stack.demo });
    expect(answer.status).toBe(200);
    const expireAt = Date.parse(String(answer.json.expireAt));
    expect(expireAt - Date.now()).toBeLessThanOrEqual(2000);

    const before = await send(stack, 'GET', '/tracking/12345678901234', {
      headers: bearer(answer.json.token),
    });
    expect(before.status).toBe(404);

    const waitMs = expireAt + (CLOCK_TOLERANCE_SECONDS + 1) * 1000 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs)));
    const after = await send(stack, 'GET', '/tracking/12345678901234', {
      headers: bearer(answer.json.token),
    });
    expect(after.status).toBe(401);
  });
});
