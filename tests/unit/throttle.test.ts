import { describe, expect, it } from 'vitest';
import { createLoginThrottle, lockSeconds, usernameCounterKey } from '../../lib/auth/throttle.ts';
import { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { memoryFailures } from '../helpers/memory-guard.ts';

const POLICY = { limit: 5, windowSeconds: 86_400, baseLockSeconds: 30, maxLockSeconds: 900 };
const OFF = { ...POLICY, limit: 0 };
const T0 = new Date('2026-11-21T10:00:00Z').getTime();

describe('lock durations', () => {
  it('start at the base after the limit, double with each failure and stop at the cap', () => {
    expect([4, 5, 6, 7, 8, 9, 10, 50].map((failures) => lockSeconds(POLICY, failures))).toEqual([
      0, 30, 60, 120, 240, 480, 900, 900,
    ]);
  });

  it('are zero when the counter is off', () => {
    expect(lockSeconds(OFF, 1000)).toBe(0);
  });
});

describe('login throttle', () => {
  const setup = (settings = { username: POLICY, sourceIp: OFF }) => {
    let now = T0;
    const store = memoryFailures();
    const throttle = createLoginThrottle({
      store,
      settings,
      clock: () => new Date(now),
      logger: createLogger('error', () => {}),
    });
    return { store, throttle, advance: (ms: number) => (now += ms) };
  };
  const attempt = { username: 'Carol', sourceIp: '203.0.113.10' };
  const retryAfter = (promise: Promise<unknown>) =>
    promise.then(
      () => 0,
      (error: unknown) => (error as AppError).retryAfterSeconds,
    );

  it('counts case variants of a username on one counter', async () => {
    const { store, throttle } = setup();
    await throttle.failed({ ...attempt, username: 'carol' }, 'bad password');
    await throttle.failed({ ...attempt, username: 'CAROL' }, 'bad password');
    expect(store.all.get(usernameCounterKey('Carol'))?.failures).toBe(2);
  });

  it('tells the remaining wait in whole seconds, rounded up', async () => {
    const { throttle, advance } = setup();
    for (let i = 0; i < 5; i += 1) await throttle.failed(attempt, 'bad password');
    advance(10_500);
    expect(await retryAfter(throttle.check(attempt))).toBe(20);
    advance(19_500);
    expect(await retryAfter(throttle.check(attempt))).toBe(0);
  });

  it('doubles the wait with each failure after a lock ends', async () => {
    const { throttle, advance } = setup();
    for (let i = 0; i < 5; i += 1) await throttle.failed(attempt, 'bad password');
    advance(30_000);
    await throttle.failed(attempt, 'bad password');
    expect(await retryAfter(throttle.check(attempt))).toBe(60);
  });

  it('forgets failures older than the window', async () => {
    const { store, throttle, advance } = setup();
    for (let i = 0; i < 4; i += 1) await throttle.failed(attempt, 'bad password');
    advance(86_400_001);
    await throttle.failed(attempt, 'bad password');
    expect(store.all.get(usernameCounterKey('Carol'))?.failures).toBe(1);
  });

  it('writes nothing for a clean login, and clears an existing counter on success', async () => {
    const { store, throttle } = setup();
    await throttle.succeeded(attempt, await throttle.check(attempt));
    expect(store.all.size).toBe(0);
    await throttle.failed(attempt, 'bad password');
    await throttle.succeeded(attempt, await throttle.check(attempt));
    expect(store.all.size).toBe(0);
  });

  it('counts nothing and locks nothing with both counters off', async () => {
    const { store, throttle } = setup({ username: OFF, sourceIp: OFF });
    for (let i = 0; i < 20; i += 1) await throttle.failed(attempt, 'bad password');
    await expect(throttle.check(attempt)).resolves.toEqual({ usernameFailures: 0 });
    expect(store.all.size).toBe(0);
  });

  it('answers TOO_MANY_ATTEMPTS while the source address is locked, for any username', async () => {
    const { throttle } = setup({ username: OFF, sourceIp: { ...POLICY, limit: 2 } });
    await throttle.failed({ ...attempt, username: 'a' }, 'unknown user');
    await throttle.failed({ ...attempt, username: 'b' }, 'unknown user');
    const error = await throttle.check({ ...attempt, username: 'c' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('TOO_MANY_ATTEMPTS');
  });
});
