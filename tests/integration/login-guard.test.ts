/** The failed-login counters on each DynamoDB implementation. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FailureStore } from '../../lib/auth/throttle.ts';
import { createDynamoFailureStore } from '../../lib/guard/dynamodb.ts';
import { describeEachDynamo, startTestDynamo, type TestDynamo } from '../helpers/dynamo.ts';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const HOUR = 3_600_000;

describeEachDynamo('login guard store', (kind) => {
  let dynamo: TestDynamo;
  let store: FailureStore;

  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
    store = createDynamoFailureStore({ client: dynamo.documentClient, tableName: dynamo.tables.loginGuard });
  });
  afterAll(() => dynamo?.close());

  it('counts failures within the window and starts again after it', async () => {
    const key = 'USER#window';
    expect((await store.recordFailure(key, T0, T0 - HOUR, 0)).failures).toBe(1);
    expect((await store.recordFailure(key, T0 + 1000, T0 + 1000 - HOUR, 0)).failures).toBe(2);
    expect((await store.recordFailure(key, T0 + 2 * HOUR, T0 + HOUR, 0)).failures).toBe(1);
  });

  it('counts every one of concurrent failures', async () => {
    const key = 'IP#203.0.113.99';
    await store.recordFailure(key, T0, T0 - HOUR, 0);
    await Promise.all(Array.from({ length: 8 }, () => store.recordFailure(key, T0 + 1, T0 - HOUR, 0)));
    expect((await store.read([key])).get(key)?.failures).toBe(9);
  });

  it('reads several counters at once, leaving out those that do not exist', async () => {
    await store.recordFailure('USER#a', T0, T0 - HOUR, 0);
    await store.lock('USER#a', T0 + 30_000, 0);
    const records = await store.read(['USER#a', 'USER#missing']);
    expect([...records.keys()]).toEqual(['USER#a']);
    expect(records.get('USER#a')).toEqual({ failures: 1, lastFailureAt: T0, lockedUntil: T0 + 30_000 });
  });

  it('clears a counter', async () => {
    await store.recordFailure('USER#cleared', T0, T0 - HOUR, 0);
    await store.clear('USER#cleared');
    expect((await store.read(['USER#cleared'])).size).toBe(0);
  });
});
