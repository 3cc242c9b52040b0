/**
 * Login-attempt counters on the `login-throttle` table: one item per username (hashed) or
 * source address, with `expiresAt` (epoch seconds) as the table's TTL attribute so idle
 * counters disappear. Every change is one conditional write, so concurrent logins count
 * exactly; windows and locks are decided by the code, TTL deletion is only clean-up.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import type { ThrottleCounter, ThrottleStore } from './throttle.ts';

const toRecord = (item: Record<string, unknown>): ThrottleCounter => ({
  failures: Number(item.failures ?? 0),
  lastAttemptAt: Number(item.lastAttemptAt ?? 0),
  lockedUntil: Number(item.lockedUntil ?? 0),
  lockedAt: Number(item.lockedAt ?? 0),
});

/** A fresh counter or a stale one is started again this many times before giving up. */
const RESTARTS = 3;

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
      for (let round = 0; round < RESTARTS; round += 1) {
        // One write whether the counter exists or not (if_not_exists), so the time a first
        // attempt takes does not tell whether the name was tried within the window.
        const counted = await conditional(() =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: { counterKey },
              UpdateExpression:
                'SET lastAttemptAt = :now, expiresAt = :expiresAt, lockedUntil = if_not_exists(lockedUntil, :zero), ' +
                'lockedAt = if_not_exists(lockedAt, :zero), attempt = :attempt ADD failures :one',
              // `attempt`: the SDK sends a write again when its answer was lost; it must not count twice.
              ConditionExpression:
                '(attribute_not_exists(counterKey) OR (lastAttemptAt >= :windowStart AND lockedUntil <= :now ' +
                'AND (failures < :limit OR failures = lockedAt OR lastAttemptAt < :heldSince))) ' +
                'AND (attribute_not_exists(attempt) OR attempt <> :attempt)',
              ExpressionAttributeValues: {
                ':now': now,
                ':expiresAt': expiresAt,
                ':zero': 0,
                ':one': 1,
                ':windowStart': windowStart,
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
        if (record.lastAttemptAt >= windowStart) {
          const refused =
            record.lockedUntil > now ||
            (record.failures >= limit &&
              record.failures !== record.lockedAt &&
              record.lastAttemptAt >= heldSince);
          if (refused) return { granted: false, record };
          // The counter changed (a concurrent login settled) since the write: count again.
          continue;
        }
        // Idle since before the window: start it again at one, unless a concurrent login did
        // so first (then count on the counter it made).
        const fresh: ThrottleCounter = { failures: 1, lastAttemptAt: now, lockedUntil: 0, lockedAt: 0 };
        const started = await conditional(() =>
          client.send(
            new PutCommand({
              TableName,
              Item: { counterKey, ...fresh, expiresAt, attempt },
              ConditionExpression: 'lastAttemptAt < :windowStart',
              ExpressionAttributeValues: { ':windowStart': windowStart },
            }),
          ),
        );
        if (started !== undefined) return { granted: true, record: fresh };
      }
      throw new Error(`login counter ${counterKey} kept changing under concurrent logins`);
    },

    async release(counterKey, attempt) {
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: 'SET released = :attempt ADD failures :minusOne',
            ConditionExpression:
              'failures > :zero AND (attribute_not_exists(released) OR released <> :attempt)',
            ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0, ':attempt': attempt },
          }),
        ),
      );
    },

    async lock(counterKey, { lockedUntil, lockedAt, expiresAt }) {
      // Only lengthens a lock, and only on a counter that exists (a success may have cleared it).
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: 'SET lockedUntil = :until, lockedAt = :at, expiresAt = :expiresAt',
            ConditionExpression: 'attribute_exists(counterKey) AND lockedUntil < :until',
            ExpressionAttributeValues: { ':until': lockedUntil, ':at': lockedAt, ':expiresAt': expiresAt },
          }),
        ),
      );
    },

    async reset(counterKey) {
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: 'SET failures = :zero, lockedUntil = :zero, lockedAt = :zero',
            ConditionExpression: 'attribute_exists(counterKey)',
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
