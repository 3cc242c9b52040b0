/** One item per session, `expiresAt` its TTL attribute; every state change is one conditional write. */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import type { RevocationReason, Session, SessionStore } from './repository.ts';

const LIVE = 'attribute_not_exists(revokedAt) AND expiresAt > :nowSeconds';

const toSession = (item: Record<string, unknown>): Session => ({
  sessionId: String(item.sessionId),
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

export function createDynamoSessionStore(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): SessionStore {
  const { client, tableName: TableName } = deps;

  const update = async (
    sessionId: string,
    UpdateExpression: string,
    ConditionExpression: string,
    values: Record<string, unknown>,
  ) => {
    const result = await conditional(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: { sessionId },
          UpdateExpression,
          ConditionExpression,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes === undefined ? null : toSession(result.Attributes);
  };

  return {
    async create(session) {
      const created = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: { ...session, generation: 1 },
            ConditionExpression: 'attribute_not_exists(sessionId)',
          }),
        ),
      );
      if (created !== undefined) return;
      // Our own write resent by the SDK after its answer was lost, or (a random UUID: never) another's.
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({ TableName, Key: { sessionId: session.sessionId }, ConsistentRead: true }),
        ),
      );
      if (Item?.currentJti !== session.currentJti || Item.username !== session.username) {
        throw new Error(`session ${session.sessionId} exists already`);
      }
    },

    refresh: ({ sessionId, username, fromJti, toJti, now, extendTo }) =>
      update(
        sessionId,
        `SET currentJti = :to, previousJti = :from, previousSpentAt = :nowMs${
          extendTo === undefined ? '' : ', expiresAt = :extendTo'
        } ADD generation :one`,
        `currentJti = :from AND username = :username AND ${LIVE}`,
        {
          ':username': username,
          ':to': toJti,
          ':from': fromJti,
          ':nowMs': now.getTime(),
          ':nowSeconds': nowSeconds(now),
          ':one': 1,
          ...(extendTo !== undefined && { ':extendTo': extendTo }),
        },
      ),

    async get(sessionId) {
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: { sessionId }, ConsistentRead: true })),
      );
      return Item === undefined ? null : toSession(Item);
    },

    async revoke(sessionId, reason, now) {
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { sessionId },
            UpdateExpression: 'SET revokedAt = :now, revokedReason = :reason',
            ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(revokedAt)',
            ExpressionAttributeValues: { ':now': now.getTime(), ':reason': reason },
          }),
        ),
      );
    },
  };
}
