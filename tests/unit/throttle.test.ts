import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import {
  ATTEMPT_MAX_SECONDS,
  clientSourceIpCounterKey,
  holdSeconds,
  knownSourceTag,
  lockSeconds,
  quotaPolicies,
  refusedUntil,
  sourceIpCounterKey,
  usernameCounterKey,
} from '../../lib/throttle/counters.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import type { Reservation, Reserve, ThrottleCounter, ThrottleStore } from '../../lib/throttle/throttle.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { ADDRESS_POLICY, OFF, NAME_POLICY as POLICY, T0, throttleOn } from '../support/login-throttle.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { memoryThrottleStore } from '../support/memory-throttle.ts';

const attempt = { username: 'Carol', sourceIp: '203.0.113.10' };
const carolKey = usernameCounterKey('Carol', COUNTER_SECRET);
const retryAfter = (promise: Promise<unknown>) =>
  promise.then(
    () => 0,
    (error: unknown) => (error as AppError).retryAfterSeconds,
  );
/** A memory store and a throttle on it, the name counted alone unless `settings` says otherwise. */
const setup = (settings: Parameters<typeof throttleOn>[1] = {}) => {
  const store = memoryThrottleStore();
  return { store, ...throttleOn(store, settings) };
};

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

  it('count machines’ authentications from an address on a counter of their own, by the same address', () => {
    expect(clientSourceIpCounterKey('203.0.113.10')).toBe('CLIENTIP#203.0.113.10');
    expect(clientSourceIpCounterKey('2001:db8:1:2::1')).toBe('CLIENTIP#2001:0db8:0001:0002::/64');
    expect(clientSourceIpCounterKey('203.0.113.10')).not.toBe(sourceIpCounterKey('203.0.113.10'));
  });
});

describe('login throttle', () => {
  it('counts case variants of a username on one counter', async () => {
    const { store, fail } = setup();
    await fail({ ...attempt, username: 'carol' });
    await fail({ ...attempt, username: 'CAROL' });
    expect(store.all.get(carolKey)?.failures).toBe(2);
  });

  it('counts an attempt as a failure only once its password check failed', async () => {
    const { store, throttle } = setup();
    const first = await throttle.begin(attempt);
    await throttle.begin(attempt);
    expect(store.all.get(carolKey)?.failures).toBe(0);

    await throttle.failed(attempt, 'bad password', first);

    expect(store.all.get(carolKey)?.failures).toBe(1);
  });

  it('gives attempts in sequence exactly the limit of tries, refusing the next before any password is checked', async () => {
    const { throttle, fail, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) await fail(attempt);
    advance(10_500);
    expect(await retryAfter(throttle.begin(attempt))).toBe(20);
    advance(19_500);
    expect(await retryAfter(throttle.begin(attempt))).toBe(0);
  });

  it('holds a counter at its limit whose lock was not written no longer than the shortest lock', async () => {
    // Five failures counted, the lock of the fifth lost (its function died after the count).
    const { store, throttle, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) {
      const { attempt: id, counted } = await throttle.begin(attempt);
      const { period = 0, slot = 0 } = counted[0] ?? {};
      await store.settle(carolKey, { attempt: id, period, slot, failed: true, restoreRetry: false });
    }
    expect(store.all.get(carolKey)).toMatchObject({ failures: 5, lockedUntil: 0 });

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

  it('sees a counter as refusing exactly while a lock or a hold refuses, a hold by failures or by attempts not yet decided', () => {
    const counter: ThrottleCounter = {
      failures: 5,
      attempts: 5,
      lastAttemptAt: T0,
      lockedUntil: 0,
      retryAfterLock: false,
      knownSources: new Map(),
    };
    expect(refusedUntil(counter, POLICY, T0 + 1000)).toBe(T0 + 30_000);
    expect(refusedUntil(counter, POLICY, T0 + 30_000)).toBe(0);
    expect(refusedUntil({ ...counter, retryAfterLock: true }, POLICY, T0 + 1000)).toBe(0);
    expect(
      refusedUntil({ ...counter, retryAfterLock: true, lockedUntil: T0 + 60_000 }, POLICY, T0 + 1000),
    ).toBe(T0 + 60_000);
    expect(refusedUntil({ ...counter, failures: 4, attempts: 4 }, POLICY, T0 + 1000)).toBe(0);
    // Four failures and an attempt not decided (in flight, or cut short by a fault): held alike.
    expect(refusedUntil({ ...counter, failures: 4 }, POLICY, T0 + 1000)).toBe(T0 + 30_000);
    expect(refusedUntil(counter, OFF, T0 + 1000)).toBe(0);
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

  it('forgets failures once a whole window-long period passed without an attempt, and not before', async () => {
    const { store, fail, advance } = setup();
    const failures = () => store.all.get(carolKey)?.failures;
    for (let i = 0; i < 3; i += 1) await fail(attempt);
    // T0 is 10:00 UTC: a day later is the next period, which carries the count on.
    advance(86_400_001);
    await fail(attempt);
    expect(failures()).toBe(4);
    advance(2 * 86_400_000);
    await fail(attempt);
    expect(failures()).toBe(1);
  });

  it('keeps the name’s and the address’s failures through a success, taking only its own attempt back', async () => {
    // Neither counter tells whose its failures were: a success sets back none of them.
    const { store, fail, succeed } = setup({ sourceIp: ADDRESS_POLICY });
    await fail(attempt);
    await succeed(attempt);
    expect(store.all.get(carolKey)).toMatchObject({ failures: 1, attempts: 1 });
    expect(store.all.get(sourceIpCounterKey(attempt.sourceIp))).toMatchObject({ failures: 1, attempts: 1 });
  });

  it('hands a lock’s retry that a success took back to the name, so the next failure doubles the lock', async () => {
    const { store, throttle, fail, succeed, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) await fail(attempt);
    advance(POLICY.baseLockSeconds * 1000);

    // The owner's right password is the one attempt the lock allows when it ends.
    await succeed(attempt);
    await fail(attempt);

    expect(store.all.get(carolKey)?.failures).toBe(POLICY.limit + 1);
    expect(await retryAfter(throttle.begin(attempt))).toBe(lockSeconds(POLICY, POLICY.limit + 1));
  });

  it('remembers the source of a success whose attempt an operator’s unlock took back meanwhile, counting nothing below zero', async () => {
    const { store, throttle } = setup({ knownSourceSeconds: 30 * 86_400 });
    const reservation = await throttle.begin(attempt);
    await store.unlock(carolKey);

    await throttle.succeeded(reservation);

    const counter = store.all.get(carolKey);
    expect(counter?.knownSources.has(knownSourceTag(carolKey, attempt.sourceIp, COUNTER_SECRET))).toBe(true);
    expect(counter).toMatchObject({ failures: 0, attempts: 0 });
  });

  it('counts nothing and locks nothing with every counter off', async () => {
    const { store, throttle, fail } = setup({ username: OFF, sourceIp: OFF, clientSourceIp: OFF });
    for (let i = 0; i < 20; i += 1) await fail(attempt);
    for (let i = 0; i < 20; i += 1) await fail({ ...attempt, client: true });
    await expect(throttle.begin(attempt)).resolves.toMatchObject({ counted: [] });
    expect(store.all.size).toBe(0);
  });

  it('gives an undecided attempt back to both counters, so attempts cut short by an outage lock and hold no one', async () => {
    const { store, throttle } = setup({ sourceIp: { ...ADDRESS_POLICY, limit: POLICY.limit } });
    for (let i = 0; i < 6; i += 1) await throttle.undecided(await throttle.begin(attempt));

    expect(store.all.get(carolKey)?.failures).toBe(0);
    expect(store.all.get(sourceIpCounterKey(attempt.sourceIp))?.failures).toBe(0);
    // Both counters count from nothing again: the limit's worth of attempts at once, no more.
    await Promise.all(Array.from({ length: POLICY.limit }, () => throttle.begin(attempt)));
    expect(await retryAfter(throttle.begin(attempt))).toBe(holdSeconds(POLICY));
  });

  it('hands back the one attempt a lock allows after it ends when that attempt is undecided', async () => {
    const { throttle, fail, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) await fail(attempt);
    advance(POLICY.baseLockSeconds * 1000);
    // The attempt allowed after the lock meets an outage before the password is checked.
    await throttle.undecided(await throttle.begin(attempt));

    // The user's own retry is still allowed, as if the outage had not taken it, and only it.
    await expect(throttle.begin(attempt)).resolves.toMatchObject({ counted: [{ failures: POLICY.limit }] });
    expect(await retryAfter(throttle.begin(attempt))).toBeGreaterThan(0);
  });

  it('gives the attempt back where it was counted when another counter’s write fails', async () => {
    const memory = memoryThrottleStore();
    const ipKey = sourceIpCounterKey(attempt.sourceIp);
    const store: ThrottleStore = {
      ...memory,
      reserve: async (key: string, reserve: Reserve) => {
        if (key === ipKey) throw new Error('DynamoDB is down');
        return memory.reserve(key, reserve);
      },
    };
    const settings = { username: { ...POLICY, limit: 1 }, sourceIp: ADDRESS_POLICY };
    const down = throttleOn(store, settings);

    await expect(down.throttle.begin(attempt)).rejects.toThrow('DynamoDB is down');

    // The name's one attempt was given back: an attempt from elsewhere gets it.
    const { throttle } = throttleOn(memory, settings);
    await expect(throttle.begin({ ...attempt, sourceIp: '198.51.100.7' })).resolves.toBeDefined();
  });

  it('never throws when an undecided attempt cannot be given back: it holds the name as one whose function died does', async () => {
    const { store, throttle, advance } = setup({ username: { ...POLICY, limit: 1 } });
    const reservation = await throttle.begin(attempt);
    const down = createLoginThrottle({
      metrics: noMetrics,
      store: { ...store, settle: () => Promise.reject(new Error('DynamoDB is down')) },
      settings: { username: POLICY, sourceIp: OFF, clientSourceIp: OFF, knownSourceSeconds: 0 },
      counterSecret: COUNTER_SECRET,
      clock: () => new Date(T0),
      logger: createLogger('error', () => {}),
    });

    await expect(down.undecided(reservation)).resolves.toBeUndefined();

    expect(await retryAfter(throttle.begin(attempt))).toBeGreaterThan(0);
    advance(holdSeconds(POLICY) * 1000 + 1);
    expect(await retryAfter(throttle.begin(attempt))).toBe(0);
    expect(store.all.get(carolKey)?.failures).toBe(0);
  });

  it('answers TOO_MANY_ATTEMPTS while the source address is locked, for any username, holding nothing of it', async () => {
    const { throttle, fail } = setup({
      username: { ...POLICY, limit: 1 },
      sourceIp: { ...ADDRESS_POLICY, limit: 2 },
    });
    await fail({ ...attempt, username: 'a' });
    await fail({ ...attempt, username: 'b' });
    const error = await throttle.begin({ ...attempt, username: 'c' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('TOO_MANY_ATTEMPTS');
    // c's one attempt was given back.
    await expect(
      throttle.begin({ ...attempt, username: 'c', sourceIp: '198.51.100.7' }),
    ).resolves.toBeDefined();
  });
});

describe('attempts in flight', () => {
  const KNOWN = { sourceIp: ADDRESS_POLICY, knownSourceSeconds: 30 * 86_400 };
  const stranger = { ...attempt, sourceIp: '198.51.100.66' };
  const outcomes = async (begun: Promise<Reservation>[]) => {
    const results = await Promise.allSettled(begun);
    const refused = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as AppError] : [],
    );
    expect(
      // Held by attempts not yet decided: told to come back when the hold ends at the latest.
      refused.every(
        ({ code, retryAfterSeconds }) =>
          code === 'TOO_MANY_ATTEMPTS' && retryAfterSeconds === holdSeconds(POLICY),
      ),
    ).toBe(true);
    return results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  };

  it('gives a parallel burst from a source the name does not know no more tries than the limit, then locks the name', async () => {
    const { throttle, succeed } = setup(KNOWN);
    await succeed(attempt);

    const granted = await outcomes(Array.from({ length: 30 }, () => throttle.begin(stranger)));
    await Promise.all(granted.map((reservation) => throttle.failed(stranger, 'bad password', reservation)));

    expect(granted).toHaveLength(POLICY.limit);
    expect(await retryAfter(throttle.begin(stranger))).toBe(lockSeconds(POLICY, POLICY.limit));
  });

  it.each([12, 20])(
    'lets %i simultaneous right-password logins of one username from a source it knows all try',
    async (count) => {
      const { store, throttle, succeed } = setup(KNOWN);
      await succeed(attempt);

      const reservations = await Promise.all(Array.from({ length: count }, () => throttle.begin(attempt)));
      await Promise.all(reservations.map((reservation) => throttle.succeeded(reservation)));

      expect(reservations.every(({ spared }) => !spared)).toBe(true);
      expect(store.all.get(carolKey)).toMatchObject({ failures: 0, lockedUntil: 0 });
    },
  );

  it('lets a new source’s first burst of right passwords try up to the failure limit, the rest told to come back when the hold ends, and all of the next', async () => {
    const { throttle } = setup(KNOWN);

    const first = await outcomes(Array.from({ length: 20 }, () => throttle.begin(attempt)));
    await Promise.all(first.map((reservation) => throttle.succeeded(reservation)));
    const next = await outcomes(Array.from({ length: 20 }, () => throttle.begin(attempt)));

    expect(first).toHaveLength(POLICY.limit);
    expect(next).toHaveLength(20);
  });

  it('gives a parallel burst of wrong passwords from a known source at most the in-flight limit of checks, then locks the name', async () => {
    const { throttle, succeed } = setup({ ...KNOWN, username: { ...POLICY, inflightLimit: 8 } });
    await succeed(attempt);

    const granted = await outcomes(Array.from({ length: 30 }, () => throttle.begin(attempt)));
    await Promise.all(granted.map((reservation) => throttle.failed(attempt, 'bad password', reservation)));

    expect(granted).toHaveLength(8);
    expect(await retryAfter(throttle.begin(stranger))).toBe(lockSeconds(POLICY, 8));
  });

  it('holds a name whose attempts died unsettled at the limit no longer than an attempt can run', async () => {
    // Five logins counted, then their functions died (a DynamoDB fault): nothing settled them.
    const { throttle, advance } = setup();
    for (let i = 0; i < POLICY.limit; i += 1) await throttle.begin(attempt);

    expect(await retryAfter(throttle.begin(attempt))).toBe(holdSeconds(POLICY));
    advance(holdSeconds(POLICY) * 1000);
    expect(await retryAfter(throttle.begin(attempt))).toBeGreaterThan(0);
    advance(1);
    expect(await retryAfter(throttle.begin(attempt))).toBe(0);
  });
});

describe('people and machines apart', () => {
  const address = '203.0.113.77';
  const person = (username: string) => ({ username, sourceIp: address });
  const machine = (clientId: string) => ({ username: clientId, sourceIp: address, client: true });
  const settings = {
    sourceIp: { ...ADDRESS_POLICY, limit: 4 },
    clientSourceIp: { ...ADDRESS_POLICY, limit: 2 },
  };

  it('counts client authentications from an address apart from people’s logins, each to its own limit', async () => {
    const { store, fail, refusal, metrics } = setup(settings);
    await fail(machine('pcl_1'));
    expect(await refusal(machine('pcl_2'))).toBe('granted');
    await fail(machine('pcl_2'));

    expect(await refusal(machine('pcl_3'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(await refusal(person('carol'))).toBe('granted');
    expect(store.all.get(clientSourceIpCounterKey(address))?.failures).toBe(2);
    expect(store.all.get(sourceIpCounterKey(address))?.failures).toBe(0);
    expect(metrics.names()).toContain('LockoutStarted{counter=ClientSourceAddress}');
  });

  it('counts people’s failed logins from an address apart from client authentications, each to its own limit', async () => {
    const { store, fail, refusal, metrics } = setup(settings);
    for (const name of ['a', 'b', 'c']) await fail(person(name));
    expect(await refusal(person('d'))).toBe('granted');
    await fail(person('d'));

    expect(await refusal(person('e'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(await refusal(machine('pcl_1'))).toBe('granted');
    expect(store.all.get(clientSourceIpCounterKey(address))?.failures).toBe(0);
    expect(metrics.names()).toContain('LockoutStarted{counter=SourceAddress}');
    expect(metrics.names()).not.toContain('LockoutStarted{counter=ClientSourceAddress}');
  });
});

describe('quota', () => {
  const settings = { sourceIp: ADDRESS_POLICY };
  /** Known sources on: the name's quota is told to the sources it knows only. */
  const known = { ...settings, knownSourceSeconds: 30 * 86_400 };
  const stranger = { ...attempt, sourceIp: '198.51.100.66' };
  // T0 is 10:00 UTC: the name's period ends at midnight, the next one a day later (38 h);
  // the address's hour-long period ends at 11:00, the next at 12:00.
  const NAME_WHOLE = 38 * 3_600;
  const ADDRESS_WHOLE = 2 * 3_600;

  it('tells a source the name knows after a failure what is left of each counter and when it is whole again', async () => {
    const { fail, succeed, advance } = setup(known);
    await succeed(attempt);
    expect(await fail(attempt)).toEqual([
      { policy: 'username', remaining: 4, resetSeconds: NAME_WHOLE },
      { policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE },
    ]);
    advance(60_000);
    expect(await fail(attempt)).toEqual([
      { policy: 'username', remaining: 3, resetSeconds: NAME_WHOLE - 60 },
      { policy: 'address', remaining: 98, resetSeconds: ADDRESS_WHOLE - 60 },
    ]);
  });

  it('tells a source the name does not know after a failure what is left of its address only, for a name in use as for a made-up one', async () => {
    const { fail, succeed } = setup(known);
    await succeed(attempt);
    expect(await fail(stranger)).toEqual([{ policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE }]);
    expect(await fail({ ...stranger, username: 'nobody-at-all' })).toEqual([
      { policy: 'address', remaining: 98, resetSeconds: ADDRESS_WHOLE },
    ]);
  });

  it('tells no source the name’s quota when known sources are off, since none is known', async () => {
    const { fail, succeed } = setup(settings);
    expect(await fail(attempt)).toEqual([{ policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE }]);
    expect(await succeed(attempt)).toEqual([
      { policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE },
    ]);
  });

  it('tells of a counter its failure locked that nothing is left until the lock ends', async () => {
    const { fail, succeed } = setup(known);
    await succeed(attempt);
    for (let i = 1; i < POLICY.limit; i += 1) await fail(attempt);
    expect(await fail(attempt)).toEqual([
      { policy: 'username', remaining: 0, resetSeconds: 30 },
      { policy: 'address', remaining: 95, resetSeconds: ADDRESS_WHOLE },
    ]);
  });

  it('tells after a success what is left of the name, whose failures stay, and of the address, whose failures still count', async () => {
    const { fail, succeed } = setup(known);
    await fail(stranger);
    await fail(attempt);
    // The success makes its source known: from now on it is told the name's quota.
    expect(await succeed(attempt)).toEqual([
      { policy: 'username', remaining: 3, resetSeconds: NAME_WHOLE },
      { policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE },
    ]);
    expect(await succeed({ ...attempt, sourceIp: '198.51.100.7' })).toEqual([
      { policy: 'username', remaining: 3, resetSeconds: NAME_WHOLE },
      { policy: 'address', remaining: 100, resetSeconds: 0 },
    ]);
    expect(await succeed({ ...attempt, username: 'Dave' })).toEqual([
      { policy: 'username', remaining: 5, resetSeconds: 0 },
      { policy: 'address', remaining: 99, resetSeconds: ADDRESS_WHOLE },
    ]);
  });

  it('carries in TOO_MANY_ATTEMPTS the quota of the counter that refused: nothing left until Retry-After', async () => {
    const { throttle, fail, advance } = setup(settings);
    for (let i = 0; i < POLICY.limit; i += 1) await fail(attempt);
    advance(10_000);
    const error = (await throttle.begin(attempt).catch((e: unknown) => e)) as AppError;
    expect(error.retryAfterSeconds).toBe(20);
    expect(error.quota).toEqual([{ policy: 'username', remaining: 0, resetSeconds: 20 }]);
  });

  it('tells a refused attempt that nothing is left of a name its attempts in flight fill, until the hold ends', async () => {
    const { throttle } = setup(settings);
    for (let i = 0; i < POLICY.limit; i += 1) await throttle.begin(attempt);

    const error = (await throttle.begin(attempt).catch((e: unknown) => e)) as AppError;

    expect(error.quota).toEqual([{ policy: 'username', remaining: 0, resetSeconds: holdSeconds(POLICY) }]);
  });

  it('names a client’s quota after the client', async () => {
    const { fail, succeed } = setup({ ...known, clientSourceIp: { ...ADDRESS_POLICY, limit: 50 } });
    const client = { username: 'pcl_1', sourceIp: attempt.sourceIp, client: true };
    await succeed(client);
    expect(await fail(client)).toEqual([
      { policy: 'client', remaining: 4, resetSeconds: NAME_WHOLE },
      { policy: 'address', remaining: 49, resetSeconds: ADDRESS_WHOLE },
    ]);
  });

  it('publishes the name’s and the address’s policies of a login and of a client authentication, leaving out a counter that is off', () => {
    const all = {
      username: POLICY,
      sourceIp: ADDRESS_POLICY,
      clientSourceIp: { ...ADDRESS_POLICY, limit: 50 },
      knownSourceSeconds: 0,
    };
    expect(quotaPolicies(all, false)).toEqual([
      { name: 'username', quota: 5, windowSeconds: 86_400 },
      { name: 'address', quota: 100, windowSeconds: 3_600 },
    ]);
    expect(quotaPolicies(all, true)).toEqual([
      { name: 'client', quota: 5, windowSeconds: 86_400 },
      { name: 'address', quota: 50, windowSeconds: 3_600 },
    ]);
    expect(quotaPolicies({ ...all, sourceIp: OFF }, false)).toEqual([
      { name: 'username', quota: 5, windowSeconds: 86_400 },
    ]);
    expect(quotaPolicies({ ...all, username: OFF }, true)).toEqual([
      { name: 'address', quota: 50, windowSeconds: 3_600 },
    ]);
  });
});
