import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import {
  ATTEMPT_MAX_SECONDS,
  createLoginThrottle,
  holdSeconds,
  type LoginAttempt,
  lockSeconds,
  type Reserve,
  refusedUntil,
  sourceIpCounterKey,
  usernameCounterKey,
} from '../../lib/throttle/throttle.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { memoryThrottleStore } from '../support/memory-throttle.ts';

const POLICY = { limit: 5, windowSeconds: 86_400, baseLockSeconds: 30, maxLockSeconds: 900 };
const OFF = { ...POLICY, limit: 0 };
const T0 = new Date('2026-11-21T10:00:00Z').getTime();

describe('lock durations', () => {
  it('start at the base at the limit, double with each failure and stop at the cap', () => {
    expect([4, 5, 6, 7, 8, 9, 10, 50].map((failures) => lockSeconds(POLICY, failures))).toEqual([
      0, 30, 60, 120, 240, 480, 900, 900,
    ]);
  });

  it('are zero when the counter is off', () => {
    expect(lockSeconds(OFF, 1000)).toBe(0);
  });
});

describe('counter keys', () => {
  it('share one counter between case variants of a username, and do not hold the name', () => {
    const key = (name: string) => usernameCounterKey(name, COUNTER_SECRET);
    expect(key('Carol')).toBe(key('CAROL'));
    expect(key('Carol')).not.toContain('carol');
    expect(key('x'.repeat(256))).toHaveLength(key('x').length);
  });

  it('key a username with the secret: no plain hash of the name, another secret another key', () => {
    const folded = createHash('sha256').update('carol').digest('base64url');
    expect(usernameCounterKey('Carol', COUNTER_SECRET)).not.toBe(`USER#${folded}`);
    expect(usernameCounterKey('Carol', COUNTER_SECRET)).toBe(
      `USER#${createHmac('sha256', COUNTER_SECRET).update('carol').digest('base64url')}`,
    );
    expect(usernameCounterKey('Carol', new Uint8Array(32).fill(8))).not.toBe(
      usernameCounterKey('Carol', COUNTER_SECRET),
    );
  });

  it('count an IPv6 client by its /64 network and an IPv4-mapped address as IPv4', () => {
    expect(sourceIpCounterKey('2001:db8:1:2:aaaa::1')).toBe(
      sourceIpCounterKey('2001:0db8:0001:0002:ffff:1:2:3'),
    );
    expect(sourceIpCounterKey('2001:db8:1:2::1')).toBe('IP#2001:0db8:0001:0002::/64');
    expect(sourceIpCounterKey('2001:db8:1:3::1')).not.toBe(sourceIpCounterKey('2001:db8:1:2::1'));
    expect(sourceIpCounterKey('::ffff:203.0.113.10')).toBe(sourceIpCounterKey('203.0.113.10'));
    expect(sourceIpCounterKey('203.0.113.10')).toBe('IP#203.0.113.10');
  });
});

describe('login throttle', () => {
  const setup = (settings = { username: POLICY, sourceIp: OFF }) => {
    let now = T0;
    const store = memoryThrottleStore();
    const throttle = createLoginThrottle({
      metrics: noMetrics,
      store,
      settings,
      counterSecret: COUNTER_SECRET,
      clock: () => new Date(now),
      logger: createLogger('error', () => {}),
    });
    /** One login attempt that fails its password check. */
    const fail = async (attempt: LoginAttempt) =>
      throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
    return { store, throttle, fail, advance: (ms: number) => (now += ms) };
  };
  const attempt = { username: 'Carol', sourceIp: '203.0.113.10' };
  const retryAfter = (promise: Promise<unknown>) =>
    promise.then(
      () => 0,
      (error: unknown) => (error as AppError).retryAfterSeconds,
    );

  it('counts case variants of a username on one counter', async () => {
    const { store, fail } = setup();
    await fail({ ...attempt, username: 'carol' });
    await fail({ ...attempt, username: 'CAROL' });
    expect(store.all.get(usernameCounterKey('Carol', COUNTER_SECRET))?.failures).toBe(2);
  });

  it('refuses attempts past the limit before any password is checked, telling the wait', async () => {
    const { throttle, fail, advance } = setup();
    for (let i = 0; i < 5; i += 1) await fail(attempt);
    advance(10_500);
    expect(await retryAfter(throttle.begin(attempt))).toBe(20);
    advance(19_500);
    expect(await retryAfter(throttle.begin(attempt))).toBe(0);
  });

  it('refuses a username whose attempts died unsettled at the limit no longer than the shortest lock', async () => {
    // Five logins counted, then their functions died (a DynamoDB fault): nothing settled them.
    const { throttle, advance } = setup();
    for (let i = 0; i < 5; i += 1) await throttle.begin(attempt);

    expect(await retryAfter(throttle.begin(attempt))).toBe(30);
    advance(29_000);
    expect(await retryAfter(throttle.begin(attempt))).toBe(1);
    advance(1_001);
    expect(await retryAfter(throttle.begin(attempt))).toBe(0);
  });

  it('holds a counter for unsettled attempts at most as long as an attempt can run', () => {
    expect(holdSeconds(POLICY)).toBe(30);
    expect(holdSeconds({ ...POLICY, baseLockSeconds: 300 })).toBe(ATTEMPT_MAX_SECONDS);
    expect(holdSeconds({ ...POLICY, baseLockSeconds: 2 })).toBe(2);
  });

  it('sees a counter as refusing exactly while a lock or a hold refuses', () => {
    const counter = { failures: 5, lastAttemptAt: T0, lockedUntil: 0, retryAfterLock: false };
    expect(refusedUntil(counter, POLICY, T0 + 1000)).toBe(T0 + 30_000);
    expect(refusedUntil(counter, POLICY, T0 + 30_000)).toBe(0);
    expect(refusedUntil({ ...counter, retryAfterLock: true }, POLICY, T0 + 1000)).toBe(0);
    expect(
      refusedUntil({ ...counter, retryAfterLock: true, lockedUntil: T0 + 60_000 }, POLICY, T0 + 1000),
    ).toBe(T0 + 60_000);
    expect(refusedUntil({ ...counter, failures: 4 }, POLICY, T0 + 1000)).toBe(0);
    expect(refusedUntil(counter, OFF, T0 + 1000)).toBe(0);
  });

  it('gives a burst of parallel attempts no more tries than the limit', async () => {
    const { throttle } = setup();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => throttle.begin(attempt)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(5);
    for (const result of results) {
      if (result.status === 'rejected') expect((result.reason as AppError).code).toBe('TOO_MANY_ATTEMPTS');
    }
  });

  it('lets exactly one attempt try when a lock ends, and doubles the wait if it fails', async () => {
    const { throttle, fail, advance } = setup();
    for (let i = 0; i < 5; i += 1) await fail(attempt);
    advance(30_000);
    const [first, ...rest] = await Promise.allSettled(
      Array.from({ length: 5 }, () => throttle.begin(attempt)),
    );
    expect(first?.status).toBe('fulfilled');
    expect(rest.every((result) => result.status === 'rejected')).toBe(true);
    if (first?.status === 'fulfilled') await throttle.failed(attempt, 'bad password', first.value);
    expect(await retryAfter(throttle.begin(attempt))).toBe(60);
  });

  it('forgets attempts once a whole window-long period passed without one, and not before', async () => {
    const { store, fail, advance } = setup();
    const failures = () => store.all.get(usernameCounterKey('Carol', COUNTER_SECRET))?.failures;
    for (let i = 0; i < 3; i += 1) await fail(attempt);
    // T0 is 10:00 UTC: a day later is the next period, which carries the count on.
    advance(86_400_001);
    await fail(attempt);
    expect(failures()).toBe(4);
    advance(2 * 86_400_000);
    await fail(attempt);
    expect(failures()).toBe(1);
  });

  it('resets the username counter on success and takes the attempt back from the address', async () => {
    const { store, throttle, fail } = setup({ username: POLICY, sourceIp: POLICY });
    await fail(attempt);
    await throttle.succeeded(await throttle.begin(attempt));
    expect(store.all.get(usernameCounterKey('Carol', COUNTER_SECRET))).toMatchObject({
      failures: 0,
      lockedUntil: 0,
    });
    expect(store.all.get(sourceIpCounterKey(attempt.sourceIp))?.failures).toBe(1);
  });

  it('counts nothing and locks nothing with both counters off', async () => {
    const { store, throttle, fail } = setup({ username: OFF, sourceIp: OFF });
    for (let i = 0; i < 20; i += 1) await fail(attempt);
    await expect(throttle.begin(attempt)).resolves.toMatchObject({ counted: [] });
    expect(store.all.size).toBe(0);
  });

  it('gives an undecided attempt back to both counters, so attempts cut short by an outage lock no one', async () => {
    const { store, throttle } = setup({ username: POLICY, sourceIp: POLICY });
    for (let i = 0; i < 6; i += 1) await throttle.undecided(await throttle.begin(attempt));

    expect(store.all.get(usernameCounterKey('Carol', COUNTER_SECRET))?.failures).toBe(0);
    expect(store.all.get(sourceIpCounterKey(attempt.sourceIp))?.failures).toBe(0);
    await expect(throttle.begin(attempt)).resolves.toMatchObject({
      counted: [{ failures: 1 }, { failures: 1 }],
    });
  });

  it('hands back the one attempt a lock allows after it ends when that attempt is undecided', async () => {
    const { throttle, fail, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) await fail(attempt);
    advance(POLICY.baseLockSeconds * 1000);
    // The attempt allowed after the lock meets an outage before the password is checked.
    await throttle.undecided(await throttle.begin(attempt));

    // The user's own retry is still allowed, as if the outage had not taken it.
    await expect(throttle.begin(attempt)).resolves.toMatchObject({
      counted: [{ failures: POLICY.limit + 1 }],
    });
  });

  it('gives the attempt back where it was counted when another counter’s write fails', async () => {
    const memory = memoryThrottleStore();
    const ipKey = sourceIpCounterKey(attempt.sourceIp);
    const store = {
      ...memory,
      reserve: async (key: string, reserve: Reserve) => {
        if (key === ipKey) throw new Error('DynamoDB is down');
        return memory.reserve(key, reserve);
      },
    };
    const throttle = createLoginThrottle({
      metrics: noMetrics,
      store,
      settings: { username: POLICY, sourceIp: POLICY },
      counterSecret: COUNTER_SECRET,
      clock: () => new Date(T0),
      logger: createLogger('error', () => {}),
    });

    await expect(throttle.begin(attempt)).rejects.toThrow('DynamoDB is down');

    expect(memory.all.get(usernameCounterKey('Carol', COUNTER_SECRET))?.failures).toBe(0);
  });

  it('never throws when an undecided attempt cannot be given back: it stays held, as one whose function died', async () => {
    const { store, throttle } = setup();
    const reservation = await throttle.begin(attempt);
    const down = createLoginThrottle({
      metrics: noMetrics,
      store: { ...store, release: () => Promise.reject(new Error('DynamoDB is down')) },
      settings: { username: POLICY, sourceIp: OFF },
      counterSecret: COUNTER_SECRET,
      clock: () => new Date(T0),
      logger: createLogger('error', () => {}),
    });

    await expect(down.undecided(reservation)).resolves.toBeUndefined();
    expect(store.all.get(usernameCounterKey('Carol', COUNTER_SECRET))?.failures).toBe(1);
  });

  it('answers TOO_MANY_ATTEMPTS while the source address is locked, for any username, counting nothing for it', async () => {
    const { store, throttle, fail } = setup({ username: POLICY, sourceIp: { ...POLICY, limit: 2 } });
    await fail({ ...attempt, username: 'a' });
    await fail({ ...attempt, username: 'b' });
    const error = await throttle.begin({ ...attempt, username: 'c' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('TOO_MANY_ATTEMPTS');
    expect(store.all.get(usernameCounterKey('c', COUNTER_SECRET))?.failures).toBe(0);
  });
});
