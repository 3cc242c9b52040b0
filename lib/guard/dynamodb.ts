/**
 * Failed-login counters on the `login-guard` table: one item per username or source
 * address (`guardKey` = `USER#<folded name>` or `IP#<address>`), with `expiresAt` (epoch
 * seconds) as the table's TTL attribute so idle counters disappear. Expiry and windows are
 * decided by the code; TTL deletion is only clean-up.
 */
import {
  BatchGetCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { FailureRecord, FailureStore } from '../auth/throttle.ts';
import { conditional, dynamo } from '../aws/errors.ts';

const toRecord = (item: Record<string, unknown>): FailureRecord => ({
  failures: Number(item.failures ?? 0),
  lastFailureAt: Number(item.lastFailureAt ?? 0),
  lockedUntil: Number(item.lockedUntil ?? 0),
});

export function createDynamoFailureStore(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): FailureStore {
  const { client, tableName: TableName } = deps;
  return {
    async read(keys) {
      const records = new Map<string, FailureRecord>();
      let pending: Record<string, unknown>[] = keys.map((guardKey) => ({ guardKey }));
      // BatchGetItem may leave keys unprocessed under load: ask again for those.
      for (let round = 0; pending.length > 0 && round < 3; round += 1) {
        const result = await dynamo(() =>
          client.send(
            new BatchGetCommand({ RequestItems: { [TableName]: { Keys: pending, ConsistentRead: true } } }),
          ),
        );
        for (const item of result.Responses?.[TableName] ?? [])
          records.set(String(item.guardKey), toRecord(item));
        pending = result.UnprocessedKeys?.[TableName]?.Keys ?? [];
      }
      return records;
    },

    async recordFailure(guardKey, now, windowStart, expiresAt) {
      const counted = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { guardKey },
            UpdateExpression: 'SET lastFailureAt = :now, expiresAt = :expiresAt ADD failures :one',
            ConditionExpression: 'lastFailureAt >= :windowStart',
            ExpressionAttributeValues: {
              ':now': now,
              ':expiresAt': expiresAt,
              ':one': 1,
              ':windowStart': windowStart,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (counted?.Attributes !== undefined) return toRecord(counted.Attributes);
      // No counter, or one whose last failure is outside the window: start again at one.
      const fresh: FailureRecord = { failures: 1, lastFailureAt: now, lockedUntil: 0 };
      await dynamo(() => client.send(new PutCommand({ TableName, Item: { guardKey, ...fresh, expiresAt } })));
      return fresh;
    },

    async lock(guardKey, lockedUntil, expiresAt) {
      await dynamo(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { guardKey },
            UpdateExpression: 'SET lockedUntil = :until, expiresAt = :expiresAt',
            ExpressionAttributeValues: { ':until': lockedUntil, ':expiresAt': expiresAt },
          }),
        ),
      );
    },

    async clear(guardKey) {
      await dynamo(() => client.send(new DeleteCommand({ TableName, Key: { guardKey } })));
    },
  };
}
