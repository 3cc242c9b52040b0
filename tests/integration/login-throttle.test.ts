import { randomUUID } from 'node:crypto';
/**
 * The contract of the login-attempt counters, alone and under concurrency: on each DynamoDB
 * implementation and on the in-memory fake of the unit tests; then the races only a store
 * over a network has.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDynamoProxy } from '../../dev/local/dynamodb-proxy.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { createLogger } from '../../lib/log.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import {
  counterPeriod,
  createLoginThrottle,
  type Reserve,
  type ThrottleCounter,
  type ThrottleStore,
} from '../../lib/throttle/throttle.ts';
import { describeEachDynamo, recordSends, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { describeStoreContract, THROTTLE_STORES } from '../support/stores.ts';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const HOUR = 3_600_000;
/** A TTL past the run: DynamoDB Local's TTL sweep deletes items whose `expiresAt` has passed. */
const KEPT = Math.floor(Date.now() / 1000) + 7 * 86_400;
/** Unsettled attempts hold a counter this long (a login function that died before settling). */
const HOLD = 30_000;
/** The username counter's rule on every stage (docs/behaviour.md). */
const POLICY = { limit: 5, windowSeconds: 86_400, baseLockSeconds: 30, maxLockSeconds: 900 };
/** The period a counter with a one-hour window counts `now` in. */
const periodAt = (now: number) => counterPeriod(now, now - HOUR);
const at = (now: number, limit = 5): Reserve => ({
  now,
  windowStart: now - HOUR,
  limit,
  heldSince: now - HOLD,
  expiresAt: KEPT,
  attempt: randomUUID(),
});

describeStoreContract('login throttle store', THROTTLE_STORES, (storeOf) => {
  let store: ThrottleStore;
  beforeAll(() => {
    store = storeOf();
  });

  const counts = async (key: string, reserve: Reserve) => {
    const { granted, record } = await store.reserve(key, reserve);
    return granted ? record.failures : 'refused';
  };

  it('counts attempts within the window and starts again after it', async () => {
    const key = 'USER#window';
    expect(await counts(key, at(T0))).toBe(1);
    expect(await counts(key, at(T0 + 1000))).toBe(2);
    expect(await counts(key, at(T0 + 2 * HOUR))).toBe(1);
  });

  it('counts an attempt exactly one window after the last one as within the window', async () => {
    const key = 'USER#edge';
    await store.reserve(key, at(T0));

    const failures = await counts(key, at(T0 + HOUR));

    expect(failures).toBe(2);
  });

  it('refuses a locked counter whose last attempt was exactly one window ago', async () => {
    const key = 'USER#edge-locked';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 2 * HOUR, expiresAt: KEPT });

    const failures = await counts(key, at(T0 + HOUR));

    expect(failures).toBe('refused');
  });

  it('starts a counter with no attempt in this period or the one before again at one attempt', async () => {
    const key = 'USER#stale-lock';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 90 * 60_000, expiresAt: KEPT });

    const reserved = await store.reserve(key, at(T0 + 2 * HOUR));

    expect(reserved).toEqual({
      granted: true,
      record: {
        failures: 1,
        lastAttemptAt: T0 + 2 * HOUR,
        lockedUntil: T0 + 90 * 60_000,
        retryAfterLock: false,
      },
    });
  });

  it('carries a count into the next period, however long ago in the last one its attempt was', async () => {
    // T0 starts a period: attempts nearly two windows apart still count together, since only
    // a whole period without an attempt starts a count again.
    const key = 'USER#carried';
    await store.reserve(key, at(T0));

    expect(await counts(key, at(T0 + 2 * HOUR - 1))).toBe(2);
    expect(await counts(key, at(T0 + 4 * HOUR))).toBe(1);
  });

  it('counts a write of the previous period that lands after the next period began on, not from one', async () => {
    // Found by review: the late write found its period's count gone and started the counter again.
    const key = 'USER#late-write';
    for (let i = 0; i < 4; i += 1) await store.reserve(key, at(T0 + HOUR));

    expect(await counts(key, at(T0 + HOUR - 1))).toBe(5);
    expect(await counts(key, at(T0 + HOUR + 1))).toBe('refused');
  });

  it('lets a lock run its course on a counter that starts again', async () => {
    const key = 'USER#long-lock';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 3 * HOUR, expiresAt: KEPT });

    expect(await counts(key, at(T0 + 3 * HOUR - 1))).toBe('refused');
    expect(await counts(key, at(T0 + 3 * HOUR))).toBe(1);
  });

  it('grants exactly the limit to a burst of concurrent attempts on a new counter', async () => {
    const key = 'IP#198.51.100.1';
    const results = await Promise.all(Array.from({ length: 12 }, () => store.reserve(key, at(T0))));
    expect(results.filter(({ granted }) => granted)).toHaveLength(5);
    expect((await store.read([key])).get(key)?.failures).toBe(5);
  });

  it('refuses while locked, then grants exactly one attempt when the lock ends', async () => {
    const key = 'USER#locked';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    expect(await counts(key, at(T0 + 29_999))).toBe('refused');
    const after = await Promise.all(Array.from({ length: 6 }, () => store.reserve(key, at(T0 + 30_000))));
    expect(after.filter(({ granted }) => granted)).toHaveLength(1);
  });

  it('holds a counter at its limit with unsettled attempts until the hold ends, then grants one attempt', async () => {
    // Five attempts counted and never settled: their functions died on a dependency fault.
    const key = 'USER#abandoned';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));

    expect(await counts(key, at(T0 + HOLD))).toBe('refused');
    const after = await Promise.all(Array.from({ length: 4 }, () => store.reserve(key, at(T0 + HOLD + 1))));

    expect(after.filter(({ granted }) => granted)).toHaveLength(1);
    expect((await store.read([key])).get(key)).toMatchObject({ failures: 6, lastAttemptAt: T0 + HOLD + 1 });
  });

  it('only lengthens a lock, and does not create a counter to lock', async () => {
    const key = 'USER#lengthen';
    await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 60_000, expiresAt: KEPT });
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    expect((await store.read([key])).get(key)).toMatchObject({
      lockedUntil: T0 + 60_000,
      retryAfterLock: true,
    });
    await store.lock('USER#gone', { lockedUntil: T0 + 60_000, expiresAt: KEPT });
    expect((await store.read(['USER#gone'])).size).toBe(0);
  });

  it('resets a counter to no attempts and no lock, and counts on it again', async () => {
    const key = 'USER#reset';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, at(T0));
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    await store.reset(key, periodAt(T0));
    expect((await store.read([key])).get(key)).toMatchObject({
      failures: 0,
      lockedUntil: 0,
      retryAfterLock: false,
    });
    expect(await counts(key, at(T0 + 1))).toBe(1);
    await store.reset('USER#never-counted', periodAt(T0));
    expect((await store.read(['USER#never-counted'])).size).toBe(0);
  });

  it('counts an attempt once when its write is sent again (its first answer lost)', async () => {
    const key = 'USER#sent-twice';
    const reserve = at(T0);
    expect(await counts(key, reserve)).toBe(1);
    expect(await counts(key, reserve)).toBe(1);
    expect(await counts(key, at(T0 + 1))).toBe(2);
    const restart = at(T0 + 3 * HOUR);
    expect(await counts(key, restart)).toBe(1);
    expect(await counts(key, restart)).toBe(1);
  });

  it('takes an attempt back once when its write is sent again', async () => {
    const key = 'IP#198.51.100.3';
    await store.reserve(key, at(T0));
    await store.reserve(key, at(T0 + 1));
    await store.release(key, 'attempt-1', periodAt(T0), false);
    await store.release(key, 'attempt-1', periodAt(T0), false);
    expect((await store.read([key])).get(key)?.failures).toBe(1);
  });

  it('takes back the attempt a lock allowed after it ended, and allows it again', async () => {
    const key = 'USER#retry-handed-back';
    for (let i = 0; i < 5; i += 1) await store.reserve(key, { ...at(T0), attempt: `attempt-${i}` });
    await store.lock(key, { lockedUntil: T0 + 30_000, expiresAt: KEPT });
    const after = { ...at(T0 + 30_000), attempt: 'the-retry' };
    expect((await store.reserve(key, after)).granted).toBe(true);
    expect((await store.read([key])).get(key)).toMatchObject({ failures: 6, retryAfterLock: false });

    await store.release(key, 'the-retry', periodAt(T0 + 30_000), true);

    expect((await store.read([key])).get(key)).toMatchObject({ failures: 5, retryAfterLock: true });
    expect((await store.reserve(key, { ...at(T0 + 30_001), attempt: 'again' })).granted).toBe(true);
  });

  it('takes an attempt back, never below zero, and clears a counter', async () => {
    const key = 'IP#198.51.100.2';
    await store.reserve(key, at(T0));
    await store.release(key, 'attempt-1', periodAt(T0), false);
    await store.release(key, 'attempt-2', periodAt(T0), false);
    expect((await store.read([key])).get(key)?.failures).toBe(0);
    await store.clear(key);
    expect((await store.read([key])).size).toBe(0);
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
  const putCounter = (counterKey: string, counter: ThrottleCounter) => {
    const period = periodAt(counter.lastAttemptAt);
    return putItem({
      counterKey,
      expiresAt: KEPT,
      period,
      [`failures${period}`]: counter.failures,
      [`failures${period + 1}`]: counter.failures,
      lastAttemptAt: counter.lastAttemptAt,
      lockedUntil: counter.lockedUntil,
      retryAfterLock: counter.retryAfterLock ? 1 : 0,
    });
  };
  const putItem = (Item: Record<string, unknown>) =>
    dynamo.documentClient.send(new PutCommand({ TableName: dynamo.tables.loginThrottle, Item }));

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
    await putCounter(existing, { failures: 1, lastAttemptAt: T0, lockedUntil: 0, retryAfterLock: false });
    const first = storeWith();
    const again = storeWith();

    const created = await first.store.reserve('USER#never-tried', at(T0 + 1000));
    const counted = await again.store.reserve(existing, at(T0 + 1000));

    expect(created).toEqual({
      granted: true,
      record: { failures: 1, lastAttemptAt: T0 + 1000, lockedUntil: 0, retryAfterLock: false },
    });
    expect(counted.record.failures).toBe(2);
    expect(first.sent).toEqual(['UpdateCommand']);
    expect(again.sent).toEqual(['UpdateCommand']);
  });

  it('counts a probe with one request at the wire whether its name was never seen, tried within the window or idle past it', async () => {
    // A probe must not tell from its latency which names were tried a window or more ago.
    const exchanges: string[] = [];
    const proxy = await startDynamoProxy(dynamo.endpoint, {
      onExchange: ({ action }) => exchanges.push(action),
    });
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: proxy.endpoint });
    // From the real time: DynamoDB Local's TTL sweep would remove counters whose expiresAt passed.
    let now = Date.now();
    const throttle = createLoginThrottle({
      store: createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle }),
      settings: { username: POLICY, sourceIp: { ...POLICY, limit: 0 } },
      counterSecret: COUNTER_SECRET,
      clock: () => new Date(now),
      logger: createLogger('error', () => {}),
      metrics: noMetrics,
    });
    const probe = async (username: string) => {
      const attempt = { username, sourceIp: '198.51.100.7' };
      exchanges.length = 0;
      await throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
      return [...exchanges];
    };
    try {
      // Two failures each, below the limit: no lock write in any of the three probes.
      for (const name of ['active', 'idle']) for (let i = 0; i < 2; i += 1) await probe(name);
      now += (POLICY.windowSeconds - 60) * 1000;
      await probe('active');
      now += 120_000;

      const requests = {
        neverSeen: await probe('never-seen'),
        active: await probe('active'),
        idle: await probe('idle'),
      };

      expect(requests).toEqual({ neverSeen: ['UpdateItem'], active: ['UpdateItem'], idle: ['UpdateItem'] });
    } finally {
      client.destroy();
      await proxy.close();
    }
  });

  it('counts on a counter a concurrent success reset after this login found it held', async () => {
    const key = 'USER#reset-meanwhile';
    await putCounter(key, { failures: 5, lastAttemptAt: T0, lockedUntil: 0, retryAfterLock: false });
    const { store } = storeWith(() =>
      putCounter(key, { failures: 0, lastAttemptAt: T0, lockedUntil: 0, retryAfterLock: false }),
    );

    const reserved = await store.reserve(key, at(T0 + 1000));

    expect(reserved).toEqual({
      granted: true,
      record: { failures: 1, lastAttemptAt: T0 + 1000, lockedUntil: 0, retryAfterLock: false },
    });
  });

  it('counts again on a counter an operator cleared after this login found it locked', async () => {
    const key = 'USER#cleared-meanwhile';
    await putCounter(key, { failures: 5, lastAttemptAt: T0, lockedUntil: T0 + HOUR, retryAfterLock: true });
    const { sent, store } = storeWith(() =>
      dynamo.documentClient.send(
        new DeleteCommand({ TableName: dynamo.tables.loginThrottle, Key: { counterKey: key } }),
      ),
    );

    const reserved = await store.reserve(key, at(T0 + 1000));

    expect(reserved.record).toEqual({
      failures: 1,
      lastAttemptAt: T0 + 1000,
      lockedUntil: 0,
      retryAfterLock: false,
    });
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
});
