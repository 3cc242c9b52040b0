/**
 * The audit trail on a table of its own (`audit`):
 *
 * | item  | customerId (partition key) | eventId (sort key)              |
 * |-------|----------------------------|---------------------------------|
 * | event | <customer id>              | <ISO time>#<16 random hex digits> |
 *
 * A customer's events read newest first with one Query (ScanIndexForward false); the random
 * part keeps two events of one millisecond apart, and a write the SDK sends again lands on
 * the same item. A scheduled expiry's part is a digest of its client, secret and time instead,
 * so that it can be taken back. `expiresAt` is the table's TTL attribute. The OAuth functions
 * may only put.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DeleteCommand, PutCommand, paginateScan, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import {
  AUDIT_EVENT_TYPES,
  type AuditEvent,
  type AuditEventType,
  type AuditTrail,
  decodeAuditCursor,
  encodeAuditCursor,
  type ScheduledExpiry,
} from './audit.ts';

const OPTIONAL = [
  'sourceIp',
  'clientId',
  'secretId',
  'connectionId',
  'passkeyId',
  'username',
  'name',
  'secretExpiresAt',
  'reason',
] as const;

const scheduledId = ({ clientId, secretId, at }: ScheduledExpiry) =>
  `${at}#${createHash('sha256').update(`${clientId}\n${secretId}\n${at}`).digest('hex').slice(0, 16)}`;

/** Above every event id of `until`'s millisecond and below the next's ('$' sorts after '#'). */
const upTo = (until: Date | undefined) => (until === undefined ? '~' : `${until.toISOString()}$`);

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

  /**
   * One page, newest first, from below `before` (an event id, or upTo's bound). Not
   * paginateQuery: each request asks only for the events still missing, and a paginator's
   * Limit is the same on every request.
   */
  async function customerEvents(customerId: string, limit: number, before: string) {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'customerId = :customer AND eventId < :before',
            ExpressionAttributeValues: { ':customer': customerId, ':before': before },
            ScanIndexForward: false,
            Limit: limit - items.length,
            ExclusiveStartKey,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey !== undefined && items.length < limit);
    const last = items.at(-1);
    return {
      items,
      next: ExclusiveStartKey !== undefined && last !== undefined ? String(last.eventId) : undefined,
    };
  }

  /** A Scan of the whole table, keeping the newest `limit`: an operator's read, never a function's. */
  async function everyCustomersEvents(limit: number, before: string) {
    let newest: Record<string, unknown>[] = [];
    // The pages' requests are sent, and fail, in the `for await`.
    await dynamo(async () => {
      for await (const page of paginateScan({ client }, { TableName })) {
        const shown = (page.Items ?? []).filter((item) => String(item.eventId) < before);
        newest = [...newest, ...shown].sort(newestFirst).slice(0, limit);
      }
    });
    return newest;
  }

  return {
    async append(event) {
      const eventId = `${event.at}#${randomBytes(8).toString('hex')}`;
      await dynamo(() => client.send(new PutCommand({ TableName, Item: { ...event, eventId } })));
    },

    async schedule(event) {
      await dynamo(() =>
        client.send(new PutCommand({ TableName, Item: { ...event, eventId: scheduledId(event) } })),
      );
    },

    async unschedule(expiry) {
      await dynamo(() =>
        client.send(
          new DeleteCommand({
            TableName,
            Key: { customerId: expiry.customerId, eventId: scheduledId(expiry) },
          }),
        ),
      );
    },

    async list({ customerId, limit, until, after }) {
      const bound = upTo(until);
      if (customerId === undefined) {
        const items = await everyCustomersEvents(limit, bound);
        return { events: items.flatMap((item) => toEvent(item) ?? []) };
      }
      const from = after === undefined ? bound : decodeAuditCursor(after);
      const { items, next } = await customerEvents(customerId, limit, from < bound ? from : bound);
      return {
        events: items.flatMap((item) => toEvent(item) ?? []),
        ...(next !== undefined && { next: encodeAuditCursor(next) }),
      };
    },
  };
}
