/**
 * The audit trail on a table of its own (`audit`):
 *
 * | item  | customerId (partition key) | eventId (sort key)              |
 * |-------|----------------------------|---------------------------------|
 * | event | <customer id>              | <ISO time>#<16 random hex digits> |
 *
 * A customer's events read newest first with one Query (ScanIndexForward false); the random
 * part keeps two events of one millisecond apart, and a write the SDK sends again lands on
 * the same item. `expiresAt` is the table's TTL attribute. The OAuth functions may only put.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import { AUDIT_EVENT_TYPES, type AuditEvent, type AuditEventType, type AuditTrail } from './audit.ts';

const OPTIONAL = ['sourceIp', 'clientId', 'secretId', 'username', 'reason'] as const;

const isEventType = (value: unknown): value is AuditEventType =>
  AUDIT_EVENT_TYPES.includes(value as AuditEventType);

function toEvent(item: Record<string, unknown>): AuditEvent | undefined {
  if (!isEventType(item.type)) return undefined;
  const optional = Object.fromEntries(
    OPTIONAL.filter((name) => typeof item[name] === 'string').map((name) => [name, String(item[name])]),
  );
  return {
    customerId: String(item.customerId),
    type: item.type,
    at: String(item.at),
    actor: String(item.actor),
    source: item.source === 'api' ? 'api' : 'operator',
    ...optional,
    expiresAt: Number(item.expiresAt),
  };
}

/** Newest first; the random part orders events of the same millisecond, as the Query does. */
const newestFirst = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(b.eventId).localeCompare(String(a.eventId));

export function createDynamoAuditTrail(deps: Table): AuditTrail {
  const { client, tableName: TableName } = deps;

  async function customerEvents(customerId: string, limit: number) {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'customerId = :customer',
            ExpressionAttributeValues: { ':customer': customerId },
            ScanIndexForward: false,
            Limit: limit - items.length,
            ExclusiveStartKey,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey !== undefined && items.length < limit);
    return items;
  }

  /** A Scan of the whole table, keeping the newest `limit`: an operator's read, never a function's. */
  async function everyCustomersEvents(limit: number) {
    let newest: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo(() => client.send(new ScanCommand({ TableName, ExclusiveStartKey })));
      newest = [...newest, ...(page.Items ?? [])].sort(newestFirst).slice(0, limit);
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey !== undefined);
    return newest;
  }

  return {
    async append(event) {
      const eventId = `${event.at}#${randomBytes(8).toString('hex')}`;
      await dynamo(() => client.send(new PutCommand({ TableName, Item: { ...event, eventId } })));
    },

    async list({ customerId, limit }) {
      const items =
        customerId === undefined
          ? await everyCustomersEvents(limit)
          : await customerEvents(customerId, limit);
      return items.flatMap((item) => toEvent(item) ?? []);
    },
  };
}
