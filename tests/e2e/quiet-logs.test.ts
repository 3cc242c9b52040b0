/**
 * What a developer sees in the terminal of `npm start` while using the service as the README
 * shows: ordinary traffic, refusals included, prints no stack trace, no warning and no error
 * line of the functions. Everything the local stack printed, from start to stop, is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { type Answer, bearer, send } from '../support/http.ts';

/** A stack frame, as Node.js prints one under an error's first line. */
const STACK_FRAME = /^\s+at \S/;
/** A warning: the functions' JSON lines (Powertools) and Node.js's process warnings. */
const WARNING = /"level":"WARN"|\(node:\d+\) \w*Warning|^\W{0,2}\s*warn(ing)?\b/i;
const FUNCTION_ERROR = /"level":"(ERROR|CRITICAL)"/;
let stack: LocalStack;
let output = '';

/** Waits until the stack has printed nothing for a second: the functions print from worker threads. */
async function settled(of: LocalStack) {
  const deadline = Date.now() + 10_000;
  let seen = of.output().length;
  let quietSince = Date.now();
  while (Date.now() < deadline && Date.now() - quietSince < 1000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (of.output().length !== seen) {
      seen = of.output().length;
      quietSince = Date.now();
    }
  }
}

beforeAll(async () => {
  stack = await startLocalStack();
  const expectStatus = (answer: Answer, status: number) => {
    expect(answer.status, answer.text).toBe(status);
    return answer.json;
  };
  const { demo } = stack;

  const { token, refreshToken } = expectStatus(await send(stack, 'POST', '/login', { body: demo }), 200);
  expectStatus(await send(stack, 'POST', '/login-extended', { body: demo }), 200);
  const shipment = { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.5 }] };
  const created = expectStatus(
    await send(stack, 'POST', '/shipments', { body: shipment, headers: bearer(token) }),
    201,
  );
  const tracking = `/tracking/${created.parcelNumber}`;
  expectStatus(await send(stack, 'GET', tracking, { headers: bearer(token) }), 200);
  expectStatus(await send(stack, 'GET', tracking), 401);
  expectStatus(await send(stack, 'GET', tracking, { headers: bearer('expired-or-tampered') }), 401);
  expectStatus(await send(stack, 'GET', tracking, { headers: bearer(refreshToken) }), 401);
  expectStatus(
    await send(stack, 'POST', '/login', { body: { username: demo.username, password: 'not-the-password' } }),
    401,
  );
  expectStatus(await send(stack, 'POST', '/login', { body: { username: demo.username } }), 400);
  expectStatus(await send(stack, 'POST', '/token/refresh', { body: { refreshToken: 'not-a-token' } }), 401);
  expectStatus(await send(stack, 'POST', '/logout', { body: { refreshToken } }), 204);

  await settled(stack);
  await stack.stop();
  output = stack.output();
});
afterAll(() => stack?.stop());

const linesMatching = (pattern: RegExp) => output.split('\n').filter((line) => pattern.test(line));

describe('the terminal of npm start, after the README walk-through with its refusals', () => {
  it('shows no stack trace', () => {
    expect(output).toContain('ready http://127.0.0.1:');
    expect(linesMatching(STACK_FRAME)).toEqual([]);
  });

  it('shows no warning', () => {
    expect(linesMatching(WARNING)).toEqual([]);
  });

  it('shows no error line of the functions', () => {
    expect(linesMatching(FUNCTION_ERROR)).toEqual([]);
  });

  it('reports no unhandled exception: npm start drops serverless-offline’s report of the authorizer’s refusal', () => {
    // The authorizer must throw exactly `Unauthorized` for API Gateway's 401; serverless-offline
    // reports any throw as an unhandled exception, which dev/start.ts leaves out.
    expect(output).not.toContain('Unhandled exception');
    expect(output).not.toContain('[Error: Unauthorized]');
  });
});
