/**
 * Revocation's writes and its one read, on the accounts table's user items (whose keys the
 * account store gives as `keyOf`): the user's cutoff (`revokedBefore`), the sessions revoked
 * for reuse (`revokedSessions`), and the authorizer's read of both with `enabled`.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { type Clock, epochSeconds } from '../time.ts';
import { revocationCutoff, type SessionTokenRevoker, type UserStatusReader } from './revocation.ts';

type ItemKey = Record<string, string>;

interface Table {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export function createStatusReader(
  deps: Table & { readonly keyOf: (username: string) => ItemKey },
): UserStatusReader {
  const { client, tableName: TableName, keyOf } = deps;
  return {
    async findStatus(username) {
      // Eventually consistent: half the cost, and the revocation window allows for it.
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({
            TableName,
            Key: keyOf(username),
            ProjectionExpression: 'username, enabled, revokedBefore, revokedSessions',
          }),
        ),
      );
      if (Item === undefined || Item.username !== username) return null;
      return {
        enabled: Item.enabled === true,
        revokedBefore: Number(Item.revokedBefore ?? 0),
        revokedSessions: new Set(Object.keys(Item.revokedSessions ?? {})),
      };
    },
  };
}

/**
 * Applies `assignments` to the user item and moves its revocation cutoff forward: to the next
 * whole second, or one second past the current cutoff when that is not earlier. It never
 * stays put: a login after an earlier revocation in the same second got `iat` = that cutoff
 * (`issuedAtFor`), and this revocation must reach its tokens too. False when there is no
 * user of exactly that name.
 */
export async function moveRevocationCutoff(
  input: Table & {
    readonly key: ItemKey;
    /** The name the item must hold: a username, or with `ownerAttribute` 'clientId' a client id. */
    readonly username: string;
    readonly ownerAttribute?: 'username' | 'clientId';
    readonly assignments: readonly string[];
    readonly values: Record<string, unknown>;
    /** Attributes the same write removes. */
    readonly remove?: readonly string[];
    readonly clock: Clock;
  },
): Promise<boolean> {
  const { client, tableName: TableName, key, username, assignments, values } = input;
  const cutoff = revocationCutoff(input.clock());
  const update = (newCutoff: string, condition: string, extra: Record<string, unknown>) =>
    conditional(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: key,
          UpdateExpression: `SET ${[...assignments, `revokedBefore = ${newCutoff}`].join(', ')}${
            input.remove === undefined || input.remove.length === 0
              ? ''
              : ` REMOVE ${input.remove.join(', ')}`
          }`,
          ConditionExpression: `${input.ownerAttribute ?? 'username'} = :username AND ${condition}`,
          ExpressionAttributeValues: { ...values, ...extra, ':username': username, ':cutoff': cutoff },
        }),
      ),
    );
  const moved =
    (await update(':cutoff', '(attribute_not_exists(revokedBefore) OR revokedBefore < :cutoff)', {})) ??
    // The cutoff only grows, so once this condition holds it holds until the write.
    (await update('revokedBefore + :one', 'revokedBefore >= :cutoff', { ':one': 1 }));
  return moved !== undefined;
}

export function createSessionTokenRevoker(
  deps: Table & { readonly keyOf: (username: string) => ItemKey; readonly clock: Clock },
): SessionTokenRevoker {
  const { client, tableName: TableName, keyOf, clock } = deps;
  return {
    async revokeSessionTokens(username, sessionId, until) {
      // Two writes, since DynamoDB cannot set a key of a map that may not exist yet: make
      // the map, then set this session's entry and drop the entries whose tokens expired.
      const made = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: keyOf(username),
            UpdateExpression: 'SET revokedSessions = if_not_exists(revokedSessions, :empty)',
            ConditionExpression: 'username = :username',
            ExpressionAttributeValues: { ':empty': {}, ':username': username },
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      if (made === undefined) return;
      const revoked = (made.Attributes?.revokedSessions ?? {}) as Record<string, number>;
      const nowSeconds = epochSeconds(clock());
      const expired = Object.keys(revoked).filter(
        (id) => id !== sessionId && Number(revoked[id]) < nowSeconds,
      );
      const names = Object.fromEntries([sessionId, ...expired].map((id, index) => [`#s${index}`, id]));
      // A user removed between the two writes has nothing left to revoke.
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: keyOf(username),
            UpdateExpression: [
              'SET revokedSessions.#s0 = :until',
              ...(expired.length === 0
                ? []
                : [`REMOVE ${expired.map((_, i) => `revokedSessions.#s${i + 1}`).join(', ')}`]),
            ].join(' '),
            ConditionExpression: 'username = :username',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':until': until, ':username': username },
          }),
        ),
      );
    },
  };
}
