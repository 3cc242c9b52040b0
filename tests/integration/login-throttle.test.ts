import { randomUUID } from 'node:crypto';
/**
 * The contract of the login-attempt counters, alone and under concurrency: on each DynamoDB
 * implementation and on the in-memory fake of the unit tests; then the races only a store
 * over a network has, and the throttle on a real DynamoDB under simultaneous logins.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDynamoProxy } from '../../dev/local/dynamodb-proxy.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import type { AppError } from '../../lib/errors.ts';
import { counterPeriod, lockSeconds, usernameCounterKey } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { Reserve, Settle, ThrottleCounter, ThrottleStore } from '../../lib/throttle/throttle.ts';
import { describeEachDynamo, recordSends, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { ADDRESS_POLICY, NAME_POLICY, throttleOn } from '../support/login-throttle.ts';
import { describeStoreContract, THROTTLE_STORES } from '../support/stores.ts';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A TTL past the run: DynamoDB Local's TTL sweep deletes items whose `expiresAt` has passed. */
const KEPT = Math.floor(Date.now() / 1000) + 7 * 86_400;
/** Unsettled attempts at the limit hold a counter this long; it is also an in-flight slot's length. */
const HOLD = 30_000;
/** The period a counter with a one-hour window counts `now` in. */
const periodAt = (now: number) => counterPeriod(now, now - HOUR);
const at = (now: number, limits: Pick<Reserve, 'burst'> & { limit?: number } = {}): Reserve => ({
  now,
  windowStart: now - HOUR,
  limit: limits.limit ?? 5,
  ...(limits.burst !== undefined && { burst: limits.burst }),
  slot: Math.floor(now / HOLD),
  heldSince: now - HOLD,
  expiresAt: KEPT,
  attempt: randomUUID(),
});
/** How the attempt `reserve` counted ended. */
const ending = (reserve: Reserve, failed: boolean, restoreRetry = false): Settle => ({
  attempt: reserve.attempt,
  period: periodAt(reserve.now),
  slot: reserve.slot,
  failed,
  restoreRetry,
});
const counter = (fields: Partial<ThrottleCounter>): ThrottleCounter => ({
  failures: 0,
  attempts: fields.failures ?? 0,
  lastAttemptAt: T0,
  lockedUntil: 0,
  retryAfterLock: false,
  knownSources: new Map(),
  ...fields,
});

describeStoreContract('login throttle store', THROTTLE_STORES, (storeOf) => {
  let store: ThrottleStore;
  beforeAll(() => {
    store = storeOf();
  });

  /** The failures a granted attempt found, or 'refused'. */
  const counts = async (key: string, reserve: Reserve) => {
    const { granted, record } = await store.reserve(key, reserve);
    return granted ? record.failures : 'refused';
  };
  /** One attempt counted and failed: the failures after it. */
  const fail = async (key: string, reserve: Reserve) => {
    expect((await store.reserve(key, reserve)).granted).toBe(true);
    return (await store.settle(key, ending(reserve, true)))?.failures;
  };
  const failTimes = async (key: string, times: number, now: number) => {
    for (let i = 0; i < times; i += 1) await fail(key, at(now));
  };
  const read = async (key: string) => (await store.read([key])).get(key);
  const granted = async (reserves: Promise<{ granted: boolean }>[]) =>
    (await Promise.all(reserves)).filter((result) => result.granted).length;

  it('counts failures within the window and starts again after it', async () => {
    const key = 'USER#window';
    expect(await fail(key, at(T0))).toBe(1);
    expect(await fail(key, at(T0 + 1000))).toBe(2);
    expect(await counts(key, at(T0 + 2 * HOUR))).toBe(0);
  });

  it('counts a failure exactly one window after the last one as within the window', async () => {
    const key = 'USER#edge';
    await fail(key, at(T0));

    expect(await fail(key, at(T0 + HOUR))).toBe(2);
  });

  it('refuses a locked counter whose last attempt was exactly one window ago', async () => {
    const key = 'USER#edge-locked';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 2 * HOUR, expiresAt: KEPT });

    expect(await counts(key, at(T0 + HOUR))).toBe('refused');
  });

  it('starts a counter with no attempt in this period or the one before again at no failures, its lock running on', async () => {
    const key = 'USER#stale-lock';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 90 * 60_000, expiresAt: KEPT });

    const reserved = await store.reserve(key, at(T0 + 2 * HOUR));

    expect(reserved).toEqual({
      granted: true,
      // This attempt, in flight.
      record: counter({ attempts: 1, lastAttemptAt: T0 + 2 * HOUR, lockedUntil: T0 + 90 * 60_000 }),
    });
  });

  it('carries failures into the next period, however long ago in the last one they were', async () => {
    // T0 starts a period: failures nearly two windows apart still count together, since only
    // a whole period without an attempt starts a count again.
    const key = 'USER#carried';
    await fail(key, at(T0));

    expect(await fail(key, at(T0 + 2 * HOUR - 1))).toBe(2);
    expect(await counts(key, at(T0 + 4 * HOUR))).toBe(0);
  });

  it('counts a failure of the previous period that lands after the next period began on the newer count', async () => {
    // Found by review: the late write found its period's count gone and started the counter again.
    const key = 'USER#late-write';
    await failTimes(key, 4, T0 + HOUR);
    const late = at(T0 + HOUR - 1);

    expect(await counts(key, late)).toBe(4);
    expect((await store.settle(key, ending(late, true)))?.failures).toBe(5);
    expect(await counts(key, at(T0 + HOUR + 1))).toBe('refused');
  });

  it('lets a lock run its course on a counter that starts again', async () => {
    const key = 'USER#long-lock';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 3 * HOUR, expiresAt: KEPT });

    expect(await counts(key, at(T0 + 3 * HOUR - 1))).toBe('refused');
    expect(await counts(key, at(T0 + 3 * HOUR))).toBe(0);
  });

  it('grants exactly the limit to a burst of concurrent attempts on a new counter, counting none as a failure', async () => {
    const key = 'IP#198.51.100.1';
    const burst = Array.from({ length: 12 }, () => store.reserve(key, at(T0)));

    expect(await granted(burst)).toBe(5);
    expect((await read(key))?.failures).toBe(0);
  });

  it('grants a burst allowed to run in parallel up to its in-flight limit, and as many again once they are taken back', async () => {
    const key = 'USER#fleet';
    const reserves = Array.from({ length: 25 }, () => at(T0, { burst: { inflightLimit: 20 } }));
    const results = await Promise.all(reserves.map((reserve) => store.reserve(key, reserve)));
    const counted = reserves.filter((_, index) => results[index]?.granted === true);
    expect(counted).toHaveLength(20);
    await Promise.all(counted.map((reserve) => store.settle(key, ending(reserve, false))));

    const again = Array.from({ length: 25 }, () =>
      store.reserve(key, at(T0 + 1, { burst: { inflightLimit: 20 } })),
    );

    expect(await granted(again)).toBe(20);
  });

  it('grants a burst past the limit only to a source the counter knows, and only while it knows it', async () => {
    const key = 'USER#known-burst';
    const success = at(T0);
    await store.reserve(key, success);
    await store.settle(key, {
      ...ending(success, false),
      known: { tag: 'home', until: T0 + 10, forget: [], expiresAt: KEPT },
    });
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0 + 1));
    const from = (tag: string, now: number, count: number) =>
      Array.from({ length: count }, () =>
        store.reserve(key, at(now, { burst: { inflightLimit: 8, knownTag: tag } })),
      );

    expect(await granted(from('elsewhere', T0 + 2, 3))).toBe(0);
    expect(await granted(from('home', T0 + 9, 1))).toBe(1);
    expect(await granted(from('home', T0 + 10, 3))).toBe(0);
  });

  it('grants a burst only while its failures stay below the limit', async () => {
    const key = 'USER#burst-failed';
    await failTimes(key, 4, T0);
    const burst = () => at(T0 + 1, { burst: { inflightLimit: 8 } });
    const last = burst();
    expect((await store.reserve(key, last)).granted).toBe(true);
    await store.settle(key, ending(last, true));

    expect(await granted(Array.from({ length: 3 }, () => store.reserve(key, burst())))).toBe(0);
  });

  it('refuses while locked, then grants exactly one attempt when the lock ends', async () => {
    const key = 'USER#locked';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    expect(await counts(key, at(T0 + 29_999))).toBe('refused');

    const after = Array.from({ length: 6 }, () => store.reserve(key, at(T0 + 30_000)));

    expect(await granted(after)).toBe(1);
  });

  it('holds a counter at its limit whose lock was never written until the hold ends, then grants one attempt', async () => {
    // Five failures counted, and the function that counted the fifth died before its lock.
    const key = 'USER#lock-lost';
    await failTimes(key, 5, T0);

    expect(await counts(key, at(T0 + HOLD))).toBe('refused');
    const after = Array.from({ length: 4 }, () => store.reserve(key, at(T0 + HOLD + 1)));

    expect(await granted(after)).toBe(1);
    expect(await read(key)).toMatchObject({ failures: 5, lastAttemptAt: T0 + HOLD + 1 });
  });

  it('holds a counter whose attempts died in flight at the limit until the hold ends, then grants one attempt', async () => {
    // Five attempts counted and never settled: their functions died on a dependency fault.
    const key = 'USER#abandoned';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));

    // None decided: no failure, five attempts, what holds it.
    expect(await read(key)).toMatchObject({ failures: 0, attempts: 5 });
    expect(await counts(key, at(T0 + HOLD))).toBe('refused');
    const after = Array.from({ length: 4 }, () => store.reserve(key, at(T0 + HOLD + 1)));

    expect(await granted(after)).toBe(1);
  });

  it('counts a burst’s attempts in flight per slot: those whose function died stop counting when their slot has passed', async () => {
    const key = 'USER#died-in-flight';
    const burst = (now: number) => at(now, { limit: 2, burst: { inflightLimit: 3 } });
    for (let i = 0; i < 3; i += 1) expect((await store.reserve(key, burst(T0))).granted).toBe(true);

    expect(await counts(key, burst(T0 + HOLD - 1))).toBe('refused');
    expect(await counts(key, burst(T0 + HOLD))).toBe(0);
  });

  it('only lengthens a lock, and does not create a counter to lock', async () => {
    const key = 'USER#lengthen';
    await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 60_000, expiresAt: KEPT });
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    expect(await read(key)).toMatchObject({ lockedUntil: T0 + 60_000, retryAfterLock: true });
    await store.lock('USER#gone', { lockedUntil: T0 + 60_000, expiresAt: KEPT });
    expect((await store.read(['USER#gone'])).size).toBe(0);
  });

  it('takes a success back from a name’s counter and remembers its source in the same write, its failures, its lock’s end and others’ attempts kept', async () => {
    const key = 'USER#success-kept';
    await failTimes(key, 3, T0);
    await store.lock(key, { lockedUntil: T0 + 1000, expiresAt: KEPT });
    // Someone else's attempt in flight, then the success.
    await store.reserve(key, at(T0 + 1000));
    const success = at(T0 + 1000);
    expect((await store.reserve(key, success)).granted).toBe(true);
    const taken = {
      ...ending(success, false),
      known: { tag: 'home', until: T0 + DAY, forget: [], expiresAt: KEPT },
    };

    const after = await store.settle(key, taken);

    const kept = {
      failures: 3,
      attempts: 4,
      lockedUntil: T0 + 1000,
      knownSources: new Map([['home', T0 + DAY]]),
    };
    expect(after).toMatchObject(kept);
    // Sent again after its answer was lost: nothing more.
    expect(await store.settle(key, taken)).toBeUndefined();
    expect(await read(key)).toMatchObject(kept);
  });

  it('applies nothing of a success whose attempt an unlock took back already, its known source neither', async () => {
    const key = 'USER#success-unlocked';
    const success = at(T0);
    await store.reserve(key, success);
    await store.unlock(key);

    const after = await store.settle(key, {
      ...ending(success, false),
      known: { tag: 'home', until: T0 + DAY, forget: [], expiresAt: KEPT },
    });

    expect(after).toBeUndefined();
    expect(await read(key)).toMatchObject({ failures: 0, attempts: 0, knownSources: new Map() });
    expect(await counts(key, at(T0 + 1, { limit: 1 }))).toBe(0);
    expect(await counts(key, at(T0 + 2, { limit: 1 }))).toBe('refused');
  });

  it('resets a known source’s own counter to no failures and no lock, takes its attempt back, and counts on it again', async () => {
    const key = 'USER#reset';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    const success = at(T0 + 30_000);
    expect((await store.reserve(key, success)).granted).toBe(true);

    await store.reset(key, { ...ending(success, false), expiresAt: KEPT });

    expect(await read(key)).toMatchObject({
      failures: 0,
      attempts: 0,
      lockedUntil: 0,
      retryAfterLock: false,
    });
    expect(await counts(key, at(T0 + 30_001, { limit: 1 }))).toBe(0);
    await store.reset('USER#never-counted', { ...ending(at(T0), false), expiresAt: KEPT });
    expect((await store.read(['USER#never-counted'])).size).toBe(0);
  });

  it('counts an attempt in flight once when its write is sent again (its first answer lost)', async () => {
    const key = 'USER#sent-twice';
    const reserve = at(T0, { limit: 2 });
    expect(await counts(key, reserve)).toBe(0);
    expect(await counts(key, reserve)).toBe(0);

    expect(await counts(key, at(T0 + 1, { limit: 2 }))).toBe(0);
    expect(await counts(key, at(T0 + 2, { limit: 2 }))).toBe('refused');
  });

  it('settles an attempt once when its write is sent again', async () => {
    const key = 'IP#198.51.100.3';
    const failed = at(T0);
    const given = at(T0);
    await store.reserve(key, failed);
    await store.reserve(key, given);

    await store.settle(key, ending(failed, true));
    await store.settle(key, ending(failed, true));
    await store.settle(key, ending(given, false));
    await store.settle(key, ending(given, false));

    expect(await read(key)).toMatchObject({ failures: 1, attempts: 1 });
    // The failure stays counted, the other attempt was taken back once: one of three is left.
    const next = Array.from({ length: 3 }, () => store.reserve(key, at(T0 + 1, { limit: 3 })));
    expect(await granted(next)).toBe(2);
  });

  it('takes back no attempt that a success has set the count back from already', async () => {
    const key = 'USER#reset-before-given-back';
    const success = at(T0);
    const given = at(T0);
    await store.reserve(key, success);
    await store.reserve(key, given);
    await store.reset(key, { ...ending(success, false), expiresAt: KEPT });

    await store.settle(key, ending(given, false));

    expect(await read(key)).toMatchObject({ failures: 0, attempts: 0 });
    const next = Array.from({ length: 3 }, () => store.reserve(key, at(T0 + 1, { limit: 2 })));
    expect(await granted(next)).toBe(2);
  });

  it('takes an attempt of the last period back after the next period began', async () => {
    const key = 'IP#198.51.100.5';
    const late = at(T0 + HOUR - 1);
    await store.reserve(key, late);
    await store.reserve(key, at(T0 + HOUR));

    await store.settle(key, ending(late, false));

    expect(await counts(key, at(T0 + HOUR + 1, { limit: 2 }))).toBe(0);
  });

  it('takes back the attempt a lock allowed after it ended, and allows it again', async () => {
    const key = 'USER#retry-handed-back';
    await failTimes(key, 5, T0);
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    const retry = at(T0 + 30_000);
    expect((await store.reserve(key, retry)).granted).toBe(true);
    expect(await read(key)).toMatchObject({ failures: 5, retryAfterLock: false });

    await store.settle(key, ending(retry, false, true));

    expect(await read(key)).toMatchObject({ failures: 5, retryAfterLock: true });
    expect(await counts(key, at(T0 + 30_001))).toBe(5);
  });

  it('counts a settled failure, nothing for an attempt taken back, and settles no counter that does not exist', async () => {
    const key = 'IP#198.51.100.2';
    const first = at(T0);
    const second = at(T0);
    await store.reserve(key, first);
    await store.reserve(key, second);

    // The failure stays among the attempts; the attempt taken back leaves them.
    expect(await store.settle(key, ending(first, true))).toMatchObject({ failures: 1, attempts: 2 });
    expect(await store.settle(key, ending(second, false))).toMatchObject({ failures: 1, attempts: 1 });
    expect(await store.settle('IP#198.51.100.250', ending(at(T0), true))).toBeUndefined();
    expect((await store.read(['IP#198.51.100.250'])).size).toBe(0);
  });

  it('clears a counter', async () => {
    const key = 'IP#198.51.100.4';
    await fail(key, at(T0));

    await store.clear(key);

    expect((await store.read([key])).size).toBe(0);
  });

  it('remembers a known source with a success’s settle, with a reset or on its own, forgetting the ones it is told to, and leaves the count and lock', async () => {
    const key = 'USER#known';
    const first = at(T0);
    await store.reserve(key, first);
    await store.settle(key, {
      ...ending(first, false),
      known: { tag: 'home', until: T0 + DAY, forget: [], expiresAt: KEPT },
    });
    const second = at(T0 + 1);
    await store.reserve(key, second);
    await store.reset(key, {
      ...ending(second, false),
      expiresAt: KEPT,
      known: { tag: 'office', until: T0 + 2 * DAY, forget: ['home'] },
    });
    expect((await read(key))?.knownSources).toEqual(new Map([['office', T0 + 2 * DAY]]));
    await failTimes(key, 5, T0 + 2);
    await store.lock(key, { lockedUntil: T0 + HOUR, expiresAt: KEPT });

    await store.remember(key, { tag: 'phone', until: T0 + 3 * DAY, forget: [], expiresAt: KEPT });

    expect(await read(key)).toMatchObject({
      failures: 5,
      lockedUntil: T0 + HOUR,
      knownSources: new Map([
        ['office', T0 + 2 * DAY],
        ['phone', T0 + 3 * DAY],
      ]),
    });
    await store.remember('USER#never-known', { tag: 'x', until: T0 + DAY, forget: [], expiresAt: KEPT });
    expect((await store.read(['USER#never-known'])).size).toBe(0);
  });

  it('unlocks a name: its failures, attempts in flight and lock go, its known sources stay', async () => {
    const key = 'USER#unlocked';
    const success = at(T0);
    await store.reserve(key, success);
    await store.settle(key, {
      ...ending(success, false),
      known: { tag: 'home', until: T0 + DAY, forget: [], expiresAt: KEPT },
    });
    // Three failures, two attempts whose functions died in flight, and a lock.
    await failTimes(key, 3, T0);
    for (let i = 0; i < 2; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + HOUR, expiresAt: KEPT });

    await store.unlock(key);

    expect(await read(key)).toEqual(
      counter({ lastAttemptAt: T0, knownSources: new Map([['home', T0 + DAY]]) }),
    );
    expect(await counts(key, at(T0 + 1, { limit: 1 }))).toBe(0);
    await store.unlock('USER#never-counted-either');
    expect((await store.read(['USER#never-counted-either'])).size).toBe(0);
  });
});

// Races only a store over a network has: another login's write lands between two of this
// one's requests. The test makes that write itself, just before the store's read.
describeEachDynamo('login throttle store on DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  /** The raw counter item, as another login wrote it in the period of its last attempt. */
  const putCounter = (counterKey: string, fields: Partial<ThrottleCounter>) => {
    const { failures, lastAttemptAt, lockedUntil, retryAfterLock } = counter(fields);
    const period = periodAt(lastAttemptAt);
    return putItem({
      counterKey,
      expiresAt: KEPT,
      period,
      [`failures${period}`]: failures,
      [`failures${period + 1}`]: failures,
      [`attempts${period}`]: failures,
      [`attempts${period + 1}`]: failures,
      lastAttemptAt,
      lockedUntil,
      retryAfterLock: retryAfterLock ? 1 : 0,
    });
  };
  const putItem = (Item: Record<string, unknown>) =>
    dynamo.documentClient.send(new PutCommand({ TableName: dynamo.tables.loginThrottle, Item }));
  const rawItem = async (counterKey: string) =>
    (
      await dynamo.documentClient.send(
        new GetCommand({ TableName: dynamo.tables.loginThrottle, Key: { counterKey }, ConsistentRead: true }),
      )
    ).Item ?? {};
  /** The item's attempts in flight, by slot. */
  const inflightOf = (item: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(item).filter(([name]) => name.startsWith('inflight')));

  /** A store whose requests are written down by command name, running `beforeRead` ahead of its first Get. */
  const storeWith = (beforeRead: () => Promise<unknown> = async () => undefined) => {
    const { sent, client } = recordSends(dynamo.documentClient, async (command, sentSoFar) => {
      if (command instanceof GetCommand && !sentSoFar.includes('GetCommand')) await beforeRead();
    });
    return { sent, store: createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle }) };
  };

  it('counts a first attempt with one write, as it counts one on an existing counter', async () => {
    // The time a probe takes must not tell whether the name was tried within the window.
    const existing = 'USER#tried-before';
    await putCounter(existing, { failures: 1 });
    const first = storeWith();
    const again = storeWith();

    const created = await first.store.reserve('USER#never-tried', at(T0 + 1000));
    const counted = await again.store.reserve(existing, at(T0 + 1000));

    expect(created).toEqual({ granted: true, record: counter({ attempts: 1, lastAttemptAt: T0 + 1000 }) });
    expect(counted.record.failures).toBe(1);
    expect(first.sent).toEqual(['UpdateCommand']);
    expect(again.sent).toEqual(['UpdateCommand']);
  });

  it('counts and settles a probe with the same requests at the wire whether its name was never seen, tried within the window or idle past it', async () => {
    // A probe must not tell from its latency which names were tried a window or more ago.
    const exchanges: string[] = [];
    const proxy = await startDynamoProxy(dynamo.endpoint, {
      onExchange: ({ action }) => exchanges.push(action),
    });
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: proxy.endpoint });
    // From the real time: DynamoDB Local's TTL sweep would remove counters whose expiresAt passed.
    const { fail, advance } = throttleOn(
      createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle }),
      {},
      Date.now(),
    );
    const probe = async (username: string) => {
      exchanges.length = 0;
      await fail({ username, sourceIp: '198.51.100.7' });
      return [...exchanges];
    };
    try {
      // Two failures each, below the limit: no lock write in any of the three probes.
      for (const name of ['active', 'idle']) for (let i = 0; i < 2; i += 1) await probe(name);
      advance((NAME_POLICY.windowSeconds - 60) * 1000);
      await probe('active');
      advance(120_000);

      const requests = {
        neverSeen: await probe('never-seen'),
        active: await probe('active'),
        idle: await probe('idle'),
      };

      const countAndSettle = ['UpdateItem', 'UpdateItem'];
      expect(requests).toEqual({ neverSeen: countAndSettle, active: countAndSettle, idle: countAndSettle });
    } finally {
      client.destroy();
      await proxy.close();
    }
  });

  it('counts on a counter a concurrent success reset after this login found it held', async () => {
    const key = 'USER#reset-meanwhile';
    await putCounter(key, { failures: 5 });
    const { store } = storeWith(() => putCounter(key, { failures: 0 }));

    const reserved = await store.reserve(key, at(T0 + 1000));

    expect(reserved).toEqual({ granted: true, record: counter({ attempts: 1, lastAttemptAt: T0 + 1000 }) });
  });

  it('counts again on a counter an operator cleared after this login found it locked', async () => {
    const key = 'USER#cleared-meanwhile';
    await putCounter(key, { failures: 5, lockedUntil: T0 + HOUR, retryAfterLock: true });
    const { sent, store } = storeWith(() =>
      dynamo.documentClient.send(
        new DeleteCommand({ TableName: dynamo.tables.loginThrottle, Key: { counterKey: key } }),
      ),
    );

    const reserved = await store.reserve(key, at(T0 + 1000));

    expect(reserved.record).toEqual(counter({ attempts: 1, lastAttemptAt: T0 + 1000 }));
    expect(sent).toEqual(['UpdateCommand', 'GetCommand', 'UpdateCommand']);
  });

  it('gives up after three rounds on a counter it can neither count on nor start again', async () => {
    // A lockedUntil that is no number fails the update's condition, and refuses nothing either.
    const key = 'USER#malformed';
    await putItem({ counterKey: key, expiresAt: KEPT, lastAttemptAt: T0, lockedUntil: 'never' });
    const { sent, store } = storeWith();

    const reserving = store.reserve(key, at(T0 + 1000));

    await expect(reserving).rejects.toThrow(`login counter ${key} kept changing under concurrent logins`);
    expect(sent.filter((name) => name === 'UpdateCommand')).toHaveLength(3);
  });

  it('removes a slot’s count of attempts in flight two slots later, and keeps the last slot’s', async () => {
    const key = 'USER#slots';
    const { store } = storeWith();
    const slot = T0 / HOLD;
    for (let i = 0; i < 2; i += 1) await store.reserve(key, at(T0));
    await store.reserve(key, at(T0 + HOLD));
    expect(inflightOf(await rawItem(key))).toEqual({ [`inflight${slot}`]: 2, [`inflight${slot + 1}`]: 1 });

    await store.reserve(key, at(T0 + 2 * HOLD));

    expect(inflightOf(await rawItem(key))).toEqual({
      [`inflight${slot + 1}`]: 1,
      [`inflight${slot + 2}`]: 1,
    });
  });

  it('settles a failure once when its answer is lost and the SDK sends it again', async () => {
    const key = 'USER#settle-lost';
    let lost = 0;
    const proxy = await startDynamoProxy(dynamo.endpoint);
    proxy.decide(({ action, body }) => {
      const settle = action === 'UpdateItem' && String(body.UpdateExpression).startsWith('SET settled');
      if (!settle || lost > 0) return 'forward';
      lost += 1;
      return 'lose-answer';
    });
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: proxy.endpoint });
    try {
      const store = createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle });
      const reserve = at(T0);
      await store.reserve(key, reserve);

      await store.settle(key, ending(reserve, true));

      expect(lost).toBe(1);
      const item = await rawItem(key);
      expect(item[`failures${periodAt(T0)}`]).toBe(1);
      expect(inflightOf(item)).toEqual({ [`inflight${reserve.slot}`]: 0 });
    } finally {
      client.destroy();
      await proxy.close();
    }
  });
});

// The throttle on a real DynamoDB, under simultaneous logins of one name.
describeEachDynamo('login throttle on DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  const throttleWith = (username = NAME_POLICY) =>
    // From the real time: DynamoDB Local's TTL sweep would remove counters whose expiresAt passed.
    throttleOn(
      createDynamoThrottleStore({ client: dynamo.documentClient, tableName: dynamo.tables.loginThrottle }),
      { username, sourceIp: ADDRESS_POLICY, knownSourceSeconds: 30 * 86_400 },
      Date.now(),
    );
  const itemOf = async (username: string) =>
    (
      await dynamo.documentClient.send(
        new GetCommand({
          TableName: dynamo.tables.loginThrottle,
          Key: { counterKey: usernameCounterKey(username, COUNTER_SECRET) },
          ConsistentRead: true,
        }),
      )
    ).Item ?? {};

  it.each([12, 20])(
    'lets %i simultaneous right-password logins of one username from a source it knows all try, leaving none in flight',
    async (count) => {
      const { throttle, succeed } = throttleWith();
      const attempt = { username: `fleet-${count}`, sourceIp: '198.51.100.20' };
      await succeed(attempt);

      const reservations = await Promise.all(Array.from({ length: count }, () => throttle.begin(attempt)));
      await Promise.all(reservations.map((reservation) => throttle.succeeded(reservation)));

      const item = await itemOf(attempt.username);
      const inflight = Object.entries(item).filter(([name]) => name.startsWith('inflight'));
      expect(inflight.length).toBeGreaterThan(0);
      expect(inflight.every(([, value]) => value === 0)).toBe(true);
      expect(item).toMatchObject({ lockedUntil: 0 });
    },
  );

  it('gives a parallel burst of wrong passwords from a source the name does not know exactly the limit of checks, then locks the name', async () => {
    const { throttle, succeed } = throttleWith();
    await succeed({ username: 'guessed', sourceIp: '203.0.113.10' });
    const attempt = { username: 'guessed', sourceIp: '198.51.100.21' };

    const begun = await Promise.allSettled(Array.from({ length: 30 }, () => throttle.begin(attempt)));
    const granted = begun.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refused = begun.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as AppError] : [],
    );
    await Promise.all(granted.map((reservation) => throttle.failed(attempt, 'bad password', reservation)));

    expect(granted).toHaveLength(NAME_POLICY.limit);
    expect(refused.every(({ code }) => code === 'TOO_MANY_ATTEMPTS')).toBe(true);
    const error = (await throttle.begin(attempt).catch((e: unknown) => e)) as AppError;
    expect(error.code).toBe('TOO_MANY_ATTEMPTS');
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(lockSeconds(NAME_POLICY, NAME_POLICY.limit) - 1);
  });
});
