/**
 * Login-attempt counters on the `login-throttle` table: one item per username (hashed) or
 * source address, with `expiresAt` (epoch seconds) as the table's TTL attribute so idle
 * counters disappear. Every change is one conditional write, so concurrent logins count
 * exactly; periods and locks are decided by the code, TTL deletion is only clean-up.
 */
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { counterPeriod, type ThrottleCounter, type ThrottleStore } from './throttle.ts';

/** The attribute holding a counter's attempts in `period`: a period of no attempts starts it again. */
const countIn = (period: number) => `failures${period}`;

const toRecord = (item: Record<string, unknown>): ThrottleCounter => ({
  failures: Number(item[countIn(Number(item.period))] ?? 0),
  lastAttemptAt: Number(item.lastAttemptAt ?? 0),
  lockedUntil: Number(item.lockedUntil ?? 0),
  retryAfterLock: item.retryAfterLock === 1,
});

/** A counter that changes under concurrent logins is counted again this many times before giving up. */
const ROUNDS = 3;

export function createDynamoThrottleStore(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): ThrottleStore {
  const { client, tableName: TableName } = deps;

  const get = async (counterKey: string) => {
    const { Item } = await dynamo(() =>
      client.send(new GetCommand({ TableName, Key: { counterKey }, ConsistentRead: true })),
    );
    return Item;
  };

  return {
    async read(keys) {
      const items = await Promise.all(keys.map(async (key) => [key, await get(key)] as const));
      return new Map(
        items.flatMap(([key, item]) => (item === undefined ? [] : [[key, toRecord(item)] as const])),
      );
    },

    async reserve(counterKey, { now, windowStart, limit, heldSince, expiresAt, attempt }) {
      let period = counterPeriod(now, windowStart);
      for (let round = 0; round < ROUNDS; round += 1) {
        // One write whether the counter is new, counted on within its window or idle past it:
        // the count is kept in its period's attribute and carried to the next period's, so a
        // counter with neither (no attempt this period or the last) starts again through
        // if_not_exists, and a probe's latency tells nothing of when the name was last tried.
        const counted = await conditional(() =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: { counterKey },
              UpdateExpression:
                'SET #count = if_not_exists(#count, :zero) + :one, #next = if_not_exists(#count, :zero) + :one, ' +
                'period = :period, lastAttemptAt = :now, expiresAt = :expiresAt, ' +
                'lockedUntil = if_not_exists(lockedUntil, :zero), retryAfterLock = :zero, attempt = :attempt ' +
                'REMOVE #previous',
              // `attempt`: the SDK sends a write again when its answer was lost; it must not count twice.
              ConditionExpression:
                '(attribute_not_exists(lockedUntil) OR lockedUntil <= :now) ' +
                'AND (attribute_not_exists(#count) OR #count < :limit OR retryAfterLock = :one ' +
                'OR lastAttemptAt < :heldSince) ' +
                'AND (attribute_not_exists(attempt) OR attempt <> :attempt) ' +
                // A write of an earlier period landing late would find its count gone and start
                // the counter again: it counts in the newer period instead (below).
                'AND (attribute_not_exists(period) OR period <= :period)',
              ExpressionAttributeNames: {
                '#count': countIn(period),
                '#next': countIn(period + 1),
                '#previous': countIn(period - 1),
              },
              ExpressionAttributeValues: {
                ':now': now,
                ':expiresAt': expiresAt,
                ':zero': 0,
                ':one': 1,
                ':period': period,
                ':limit': limit,
                ':heldSince': heldSince,
                ':attempt': attempt,
              },
              ReturnValues: 'ALL_NEW',
            }),
          ),
        );
        if (counted?.Attributes !== undefined) return { granted: true, record: toRecord(counted.Attributes) };
        const item = await get(counterKey);
        // Deleted since the write (an operator's unlock): count again.
        if (item === undefined) continue;
        const record = toRecord(item);
        // Counted already: this write's first sending was applied and its answer lost.
        if (item.attempt === attempt) return { granted: true, record };
        if (typeof item.period === 'number' && item.period > period) {
          period = item.period;
          continue;
        }
        const count = item[countIn(period)];
        const refused =
          record.lockedUntil > now ||
          (count !== undefined &&
            Number(count) >= limit &&
            !record.retryAfterLock &&
            record.lastAttemptAt >= heldSince);
        if (refused) return { granted: false, record };
        // The counter changed (a concurrent login settled) since the write: count again.
      }
      throw new Error(`login counter ${counterKey} kept changing under concurrent logins`);
    },

    async release(counterKey, attempt, period, restoreRetry) {
      // Only within the attempt's period: a later period's attempt has moved the count on.
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: `SET released = :attempt${restoreRetry ? ', retryAfterLock = :one' : ''} ADD #count :minusOne, #next :minusOne`,
            ConditionExpression:
              'period = :period AND #count > :zero AND (attribute_not_exists(released) OR released <> :attempt)',
            ExpressionAttributeNames: { '#count': countIn(period), '#next': countIn(period + 1) },
            ExpressionAttributeValues: {
              ':minusOne': -1,
              ':zero': 0,
              ':attempt': attempt,
              ':period': period,
              ...(restoreRetry && { ':one': 1 }),
            },
          }),
        ),
      );
    },

    async lock(counterKey, { lockedUntil, expiresAt }) {
      // Only lengthens a lock, and only on a counter that exists (a success may have cleared it).
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: 'SET lockedUntil = :until, retryAfterLock = :one, expiresAt = :expiresAt',
            ConditionExpression: 'attribute_exists(counterKey) AND lockedUntil < :until',
            ExpressionAttributeValues: { ':until': lockedUntil, ':one': 1, ':expiresAt': expiresAt },
          }),
        ),
      );
    },

    async reset(counterKey, period) {
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression:
              'SET #count = :zero, #next = :zero, lockedUntil = :zero, retryAfterLock = :zero',
            ConditionExpression: 'attribute_exists(counterKey)',
            ExpressionAttributeNames: { '#count': countIn(period), '#next': countIn(period + 1) },
            ExpressionAttributeValues: { ':zero': 0 },
          }),
        ),
      );
    },

    async clear(counterKey) {
      await dynamo(() => client.send(new DeleteCommand({ TableName, Key: { counterKey } })));
    },
  };
}
