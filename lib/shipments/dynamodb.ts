/** The body is kept as a JSON string: returned as sent, free of DynamoDB's nesting and number limits. */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import type { ShipmentRepository } from './shipments.ts';

export function createDynamoShipmentRepository(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): ShipmentRepository {
  const { client, tableName: TableName } = deps;
  return {
    async insert({ shipment, ...record }) {
      const item = { ...record, payload: JSON.stringify(shipment) };
      const stored = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: item,
            ConditionExpression: 'attribute_not_exists(parcelNumber)',
          }),
        ),
      );
      if (stored !== undefined) return true;
      // Taken by another shipment, or by this one, resent by the SDK after its answer was lost.
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({ TableName, Key: { parcelNumber: record.parcelNumber }, ConsistentRead: true }),
        ),
      );
      return Object.entries(item).every(([name, value]) => Item?.[name] === value);
    },

    async get(parcelNumber) {
      const { Item } = await dynamo(() => client.send(new GetCommand({ TableName, Key: { parcelNumber } })));
      if (Item === undefined) return null;
      return {
        parcelNumber: String(Item.parcelNumber),
        customerId: String(Item.customerId),
        createdBy: String(Item.createdBy),
        ...(Item.createdByKind === 'client' && { createdByKind: 'client' as const }),
        createdAt: String(Item.createdAt),
        status: 'registered',
        shipment: JSON.parse(String(Item.payload)) as Record<string, unknown>,
      };
    },
  };
}
