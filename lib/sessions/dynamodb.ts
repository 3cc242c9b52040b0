/**
 * Token families on the `sessions` table: one item per family, keyed by `familyId`, with
 * `expiresAt` (epoch seconds) as the table's TTL attribute so DynamoDB clears dead
 * families eventually. Every state change is one conditional UpdateItem.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import type { Family, FamilyStore, RevocationReason } from './repository.ts';

const LIVE = 'attribute_not_exists(revokedAt) AND expiresAt > :nowSeconds';

const toFamily = (item: Record<string, unknown>): Family => ({
  familyId: String(item.familyId),
  username: String(item.username),
  createdAt: Number(item.createdAt),
  expiresAt: Number(item.expiresAt),
  currentJti: String(item.currentJti),
  previousJti: typeof item.previousJti === 'string' ? item.previousJti : null,
  previousSpentAt: typeof item.previousSpentAt === 'number' ? item.previousSpentAt : null,
  generation: Number(item.generation),
  revokedAt: typeof item.revokedAt === 'number' ? item.revokedAt : null,
  revokedReason: (item.revokedReason as RevocationReason | undefined) ?? null,
});

const nowSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

export function createDynamoFamilyStore(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): FamilyStore {
  const { client, tableName: TableName } = deps;

  const update = async (
    familyId: string,
    UpdateExpression: string,
    ConditionExpression: string,
    values: Record<string, unknown>,
  ) => {
    const result = await conditional(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: { familyId },
          UpdateExpression,
          ConditionExpression,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes === undefined ? null : toFamily(result.Attributes);
  };

  return {
    async create(family) {
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: { ...family, generation: 1 },
            ConditionExpression: 'attribute_not_exists(familyId)',
          }),
        ),
      );
    },

    rotate: ({ familyId, username, fromJti, toJti, now }) =>
      update(
        familyId,
        'SET currentJti = :to, previousJti = :from, previousSpentAt = :nowMs ADD generation :one',
        `currentJti = :from AND username = :username AND ${LIVE}`,
        {
          ':username': username,
          ':to': toJti,
          ':from': fromJti,
          ':nowMs': now.getTime(),
          ':nowSeconds': nowSeconds(now),
          ':one': 1,
        },
      ),

    async get(familyId) {
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: { familyId }, ConsistentRead: true })),
      );
      return Item === undefined ? null : toFamily(Item);
    },

    async revoke(familyId, reason, now) {
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { familyId },
            UpdateExpression: 'SET revokedAt = :now, revokedReason = :reason',
            ConditionExpression: 'attribute_exists(familyId) AND attribute_not_exists(revokedAt)',
            ExpressionAttributeValues: { ':now': now.getTime(), ':reason': reason },
          }),
        ),
      );
    },
  };
}
