/**
 * Reads and writes of one user's or client's item, conditioned on the item holding exactly that
 * name: a key alone also finds another spelling of a folded username.
 */
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from './errors.ts';

export interface Table {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export type ItemKey = Record<string, string>;

/** Whose an item is: the attribute holding its exact name, and that name. */
export interface Owner {
  readonly attribute: 'username' | 'clientId';
  readonly name: string;
}

export interface OwnedUpdate {
  readonly expression: string;
  /** Conditions besides the owner's. */
  readonly condition?: string;
  readonly values?: Record<string, unknown>;
  readonly names?: Record<string, string>;
  readonly returnValues?: 'UPDATED_NEW';
}

const ownerCondition = (owner: Owner, condition?: string) =>
  `${owner.attribute} = :owner${condition === undefined ? '' : ` AND ${condition}`}`;

/** One UpdateItem of `owner`'s item; undefined when the item is not theirs or `condition` failed. */
export const updateOwned = (table: Table, key: ItemKey, owner: Owner, update: OwnedUpdate) =>
  conditional(() =>
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: update.expression,
        ConditionExpression: ownerCondition(owner, update.condition),
        ExpressionAttributeValues: { ...update.values, ':owner': owner.name },
        ...(update.names !== undefined && { ExpressionAttributeNames: update.names }),
        ...(update.returnValues !== undefined && { ReturnValues: update.returnValues }),
      }),
    ),
  );

/** Deletes `owner`'s item; undefined when there is none (gone already, or another's). */
export const deleteOwned = (table: Table, key: ItemKey, owner: Owner) =>
  conditional(() =>
    table.client.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: key,
        ConditionExpression: ownerCondition(owner),
        ExpressionAttributeValues: { ':owner': owner.name },
      }),
    ),
  );

/**
 * `projection` of `owner`'s item, eventually consistent (half the cost; the authorizer's reads,
 * within the revocation bound) unless `consistent`; undefined when the key holds no item of theirs.
 */
export async function readOwned(
  table: Table,
  key: ItemKey,
  owner: Owner,
  projection: readonly string[],
  options: { readonly consistent?: boolean } = {},
) {
  const { Item } = await dynamo(() =>
    table.client.send(
      new GetCommand({
        TableName: table.tableName,
        Key: key,
        ProjectionExpression: [owner.attribute, ...projection].join(', '),
        ...(options.consistent === true && { ConsistentRead: true }),
      }),
    ),
  );
  return Item !== undefined && Item[owner.attribute] === owner.name ? Item : undefined;
}
