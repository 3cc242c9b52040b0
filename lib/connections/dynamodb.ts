/**
 * Connections on the accounts table, a partition per platform:
 *
 * | item       | pk                     | sk                        |
 * |------------|------------------------|---------------------------|
 * | connection | CONNECTION#<client id> | CONNECTION#<customer id>  |
 *
 * Beside the platform's item (CLIENT#), not in it: IAM conditions a request on the partition key
 * alone, so a role that writes connections is kept off every client item. A platform's
 * connections are one Query of its partition; a connection carries `customerId`, so a customer's
 * are one Query of the `byCustomer` index (range key `sk`, one value for all of a customer's).
 */
import { DeleteCommand, GetCommand, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BY_CUSTOMER_INDEX } from '../accounts/dynamodb-items.ts';
import { conditional, dynamo } from '../aws/errors.ts';
import { readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { LAST_USE_PRECISION_MS } from '../clients/secrets.ts';
import type { ConnectionStatusReader } from '../revocation/revocation.ts';
import { isScope, type Scope, sortScopes } from '../scopes.ts';
import { type Connection, type ConnectionStore, newConnectionId } from './connections.ts';

const CONNECTION_PREFIX = 'CONNECTION#';

export const connectionKey = (clientId: string, customerId: string) => ({
  pk: `${CONNECTION_PREFIX}${clientId}`,
  sk: `${CONNECTION_PREFIX}${customerId}`,
});

/** Every attribute a connection item holds: what the customer API's index Query names, and its role allows. */
export const CONNECTION_ATTRIBUTES = [
  'pk',
  'sk',
  'connectionId',
  'clientId',
  'customerId',
  'scopes',
  'approvedBy',
  'approvedAt',
  'lastUsedAt',
] as const;

const owner = (clientId: string) => ({ attribute: 'clientId', name: clientId }) as const;

function toConnection(item: Record<string, unknown>): Connection {
  const scopes = Array.isArray(item.scopes) ? item.scopes.filter((s): s is Scope => isScope(String(s))) : [];
  return {
    connectionId: String(item.connectionId),
    clientId: String(item.clientId),
    customerId: String(item.customerId),
    scopes: sortScopes(scopes),
    approvedBy: String(item.approvedBy),
    approvedAt: String(item.approvedAt),
    ...(typeof item.lastUsedAt === 'string' && { lastUsedAt: item.lastUsedAt }),
  };
}

export function createDynamoConnectionStore(deps: Table): ConnectionStore {
  const { client, tableName: TableName } = deps;
  return {
    async approve({ clientId, customerId, scopes, approvedBy, at }) {
      // One write, repeatable: the SDK's resend of a lost answer writes the same again, and the id stays.
      const { Attributes } = await dynamo(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: connectionKey(clientId, customerId),
            UpdateExpression:
              'SET connectionId = if_not_exists(connectionId, :id), clientId = :client, ' +
              'customerId = :customer, scopes = :scopes, approvedBy = :by, approvedAt = :at',
            ExpressionAttributeValues: {
              ':id': newConnectionId(),
              ':client': clientId,
              ':customer': customerId,
              ':scopes': [...scopes],
              ':by': approvedBy,
              ':at': at.toISOString(),
            },
            // Every attribute is set, so the updated ones are the whole connection (lastUsedAt aside).
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      return toConnection(Attributes ?? {});
    },

    async find(clientId, customerId) {
      const item = await readOwned(
        deps,
        connectionKey(clientId, customerId),
        owner(clientId),
        // readOwned names the owner's attribute itself.
        CONNECTION_ATTRIBUTES.filter((name) => name !== 'clientId'),
        { consistent: true },
      );
      return item === undefined || item.customerId !== customerId ? null : toConnection(item);
    },

    listByCustomer: (customerId) =>
      dynamo(async () => {
        const connections: Connection[] = [];
        const pages = paginateQuery(
          { client },
          {
            TableName,
            IndexName: BY_CUSTOMER_INDEX,
            KeyConditionExpression: 'customerId = :customer AND sk = :sk',
            ExpressionAttributeValues: { ':customer': customerId, ':sk': connectionKey('', customerId).sk },
            // Named, so the self-service API's role can be held to a connection's attributes.
            ProjectionExpression: CONNECTION_ATTRIBUTES.map((name) => `#${name}`).join(', '),
            ExpressionAttributeNames: Object.fromEntries(
              CONNECTION_ATTRIBUTES.map((name) => [`#${name}`, name]),
            ),
          },
        );
        for await (const page of pages) connections.push(...(page.Items ?? []).map(toConnection));
        return connections.sort((a, b) => a.approvedAt.localeCompare(b.approvedAt));
      }),

    async remove({ clientId, customerId, connectionId }) {
      const removed = await conditional(() =>
        client.send(
          new DeleteCommand({
            TableName,
            Key: connectionKey(clientId, customerId),
            // That connection, not a later approval's (a new id) nor another platform's.
            ConditionExpression: 'clientId = :client AND connectionId = :id',
            ExpressionAttributeValues: { ':client': clientId, ':id': connectionId },
          }),
        ),
      );
      if (removed !== undefined) return true;
      // Our own delete, resent by the SDK after its answer was lost, finds the item gone: removed.
      // Another approval's item (a new id) stays, and is not this connection's.
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({ TableName, Key: connectionKey(clientId, customerId), ConsistentRead: true }),
        ),
      );
      return Item === undefined;
    },

    async recordUse({ clientId, customerId, connectionId }, at) {
      await updateOwned(deps, connectionKey(clientId, customerId), owner(clientId), {
        expression: 'SET lastUsedAt = :at',
        condition: 'connectionId = :id AND (attribute_not_exists(lastUsedAt) OR lastUsedAt <= :due)',
        values: {
          ':id': connectionId,
          ':at': at.toISOString(),
          ':due': new Date(at.getTime() - LAST_USE_PRECISION_MS).toISOString(),
        },
      });
    },
  };
}

/**
 * The authorizer's read of a connection (revocation.ts), eventually consistent unless asked:
 * which connection the platform has to the customer now, if any.
 */
export function createDynamoConnectionStatusReader(deps: Table): ConnectionStatusReader {
  return {
    async findConnectionStatus(clientId, customerId, options = {}) {
      const item = await readOwned(
        deps,
        connectionKey(clientId, customerId),
        owner(clientId),
        ['connectionId', 'customerId'],
        options,
      );
      return item === undefined || item.customerId !== customerId
        ? null
        : { connectionId: String(item.connectionId) };
    },
  };
}
