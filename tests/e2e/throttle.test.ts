/**
 * Brute-force throttling over the local stack, with the limits `npm start` takes from
 * LOGIN_FAILURE_LIMIT and IP_FAILURE_LIMIT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { send } from '../support/http.ts';

const PASSWORD = 'a-throttle-test-password';
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ env: { LOGIN_FAILURE_LIMIT: '3', IP_FAILURE_LIMIT: '7' } });
  const passwordHash = await hashPassword(PASSWORD, 4);
  for (const username of ['erin', 'frank']) {
    await stackAccounts(stack).createUser({ username, passwordHash, customerId: null });
  }
});
afterAll(() => stack?.stop());

const login = (username: string, password: string) =>
  send(stack, 'POST', '/login', { body: { username, password } });

describe('brute-force throttling', () => {
  it('locks a username after its failure limit: 429 with Retry-After, even for the right password', async () => {
    for (let i = 0; i < 3; i += 1) expect((await login('erin', 'wrong-password')).status).toBe(401);
    const locked = await login('erin', PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.headers.get('content-type')).toBe('application/problem+json');
    expect(locked.json).toMatchObject({ type: 'urn:parcel-auth:problem:too-many-attempts', status: 429 });
    expect(locked.text).not.toContain('eyJ');
    // Another username from the same address is not locked by it.
    expect((await login('frank', PASSWORD)).status).toBe(200);
  });

  it('locks the source address after its limit across usernames, for every username', async () => {
    // erin's 3 failures count for the address too; 4 more unknown usernames reach 7.
    for (let i = 0; i < 4; i += 1) expect((await login(`nobody-${i}`, 'x-password')).status).toBe(401);
    const locked = await login('frank', PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
