/**
 * The accounts table in bulk, for the import, the export and the listings: BatchGetItem (100
 * keys) and BatchWriteItem (25 items) with unprocessed items and throttling retried with
 * exponential backoff and full jitter, and paginated scans. Items are built by
 * `accountItems` (lib/users/dynamodb.ts), the same shapes the single writes use.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import { AppError } from '../errors.ts';
import type { StoredCustomer, StoredUser } from './bulk.ts';
import { accountItems } from './dynamodb.ts';
import { foldUsername } from './repository.ts';

type Item = Record<string, unknown>;

/** Errors DynamoDB answers when a table or the account is over its throughput. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

export interface BulkAccountStore {
  customerExists(customerId: string): Promise<boolean>;
  /**
   * Each customer's counter and its addresses at positions 1 to `positions` (what a record
   * of that many addresses would write), in one BatchGetItem per 100 keys; a customer
   * without any of those items is absent.
   */
  readCustomers(
    customers: readonly { customerId: string; positions: number }[],
  ): Promise<Map<string, StoredCustomer>>;
  /** Every stored address of a customer, in order (one Query). */
  customerAddresses(customerId: string): Promise<StoredCustomer['addresses']>;
  /**
   * The users stored under these names' folded keys (any letter case), by folded name, with
   * whether the membership of their stored customer is stored: one BatchGetItem per 100 user
   * keys, and one per 100 memberships of the users found.
   */
  readUsers(
    users: readonly { username: string; customerId: string | null }[],
  ): Promise<Map<string, StoredUser>>;
  /** Writes `items` (any number), 25 per BatchWriteItem, until every one is processed. */
  write(items: readonly Item[]): Promise<void>;
  /** Every item of the table, page by page. */
  scan(): AsyncIterable<Item>;
  /** A customer's members' usernames, in key order. */
  members(customerId: string): Promise<string[]>;
}

export interface BulkOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Retries of unprocessed items and throttled calls before giving up (DEPENDENCY_UNAVAILABLE). */
  readonly maxAttempts?: number;
  /** The first backoff; it doubles with each retry, up to 5 s, with full jitter. */
  readonly baseDelayMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * DynamoDB calls in flight at once, whoever makes them (default 4): the bound on what an
   * import asks of the table, however many batches it has under way.
   */
  readonly maxInFlight?: number;
}

/** At most `limit` of the functions given to it run at once; the others wait in order. */
function limiter(limit: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((start) => waiting.push(start));
    else running += 1;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next === undefined) running -= 1;
      else next();
    }
  };
}

/** What an import compares of a stored user. */
const USER_FIELDS = ['pk', 'sk', 'username', 'passwordHash', 'enabled', 'customerId'];

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, index) =>
    items.slice(index * size, (index + 1) * size),
  );

export function createBulkAccountStore(options: BulkOptions): BulkAccountStore {
  const { client, tableName: TableName } = options;
  const maxAttempts = options.maxAttempts ?? 10;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const sleep = options.sleep ?? ((ms: number) => new Promise((done) => setTimeout(done, ms)));
  const backoff = (attempt: number) => sleep(Math.random() * Math.min(5000, baseDelayMs * 2 ** attempt));
  const inFlight = limiter(options.maxInFlight ?? 4);

  /** One call, retried with backoff while DynamoDB throttles; any other failure is a 503. */
  async function send<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await inFlight(call);
      } catch (error) {
        const throttled = error instanceof Error && THROTTLING.has(error.name);
        if (!throttled || attempt + 1 >= maxAttempts)
          throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: error });
        await backoff(attempt);
      }
    }
  }

  async function getAll(keys: readonly Item[], projection?: readonly string[]): Promise<Item[]> {
    const found: Item[] = [];
    // The chunks at once: the limiter bounds the calls in flight.
    await Promise.all(
      chunks(keys, 100).map(async (chunk) => {
        let pending: Item[] | undefined = chunk;
        for (let attempt = 0; pending !== undefined && pending.length > 0; attempt += 1) {
          if (attempt >= maxAttempts)
            throw new AppError('DEPENDENCY_UNAVAILABLE', { detail: 'keys left unprocessed' });
          if (attempt > 0) await backoff(attempt);
          const request: Item[] = pending;
          const answer = await send(() =>
            client.send(
              new BatchGetCommand({
                RequestItems: {
                  [TableName]: {
                    Keys: request,
                    ConsistentRead: true,
                    ...(projection !== undefined && {
                      // Names, not the attributes themselves: some are DynamoDB reserved words.
                      ProjectionExpression: projection.map((_, index) => `#p${index}`).join(', '),
                      ExpressionAttributeNames: Object.fromEntries(
                        projection.map((name, index) => [`#p${index}`, name]),
                      ),
                    }),
                  },
                },
              }),
            ),
          );
          found.push(...(answer.Responses?.[TableName] ?? []));
          pending = answer.UnprocessedKeys?.[TableName]?.Keys as Item[] | undefined;
        }
      }),
    );
    return found;
  }

  async function queryAll(customerId: string, prefix: string, projection?: string): Promise<Item[]> {
    const items: Item[] = [];
    let ExclusiveStartKey: Item | undefined;
    do {
      const page = await send(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': accountItems.customerPk(customerId), ':prefix': prefix },
            ConsistentRead: true,
            ...(projection !== undefined && { ProjectionExpression: projection }),
            ExclusiveStartKey,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items;
  }

  return {
    async customerExists(customerId) {
      const page = await send(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': accountItems.customerPk(customerId) },
            Limit: 1,
            ConsistentRead: true,
          }),
        ),
      );
      return (page.Items?.length ?? 0) > 0;
    },

    async readCustomers(customers) {
      const keys = customers.flatMap(({ customerId, positions }) => [
        accountItems.counterKey(customerId),
        ...Array.from({ length: positions }, (_, index) => accountItems.addressKey(customerId, index + 1)),
      ]);
      const byKey = new Map((await getAll(keys)).map((item) => [`${item.pk} ${item.sk}`, item]));
      const result = new Map<string, StoredCustomer>();
      for (const { customerId, positions } of customers) {
        const counter = accountItems.counterKey(customerId);
        const count = byKey.get(`${counter.pk} ${counter.sk}`)?.addressCount;
        const addresses: { depotCode: string; createdAt: string }[] = [];
        // The stored list from position 1 on, as far as it goes without a gap.
        for (let position = 1; position <= positions; position += 1) {
          const key = accountItems.addressKey(customerId, position);
          const item = byKey.get(`${key.pk} ${key.sk}`);
          if (item === undefined) break;
          addresses.push({ depotCode: String(item.depotCode ?? ''), createdAt: String(item.createdAt) });
        }
        if (addresses.length === 0 && count === undefined) continue;
        result.set(customerId, { addresses, addressCount: count === undefined ? undefined : Number(count) });
      }
      return result;
    },

    async customerAddresses(customerId) {
      // Keys sort by zero-padded position: the list in order.
      return (await queryAll(customerId, accountItems.addressPrefix)).map((item) => ({
        depotCode: String(item.depotCode ?? ''),
        createdAt: String(item.createdAt),
      }));
    },

    async readUsers(requested) {
      // The user items first; the memberships only of users that exist (a fresh import reads
      // one key per user, not two: reads are what an import pays beyond its writes).
      const users = await getAll(
        requested.map(({ username }) => accountItems.userKey(username)),
        USER_FIELDS,
      );
      const memberKeys = users.flatMap((item) =>
        typeof item.customerId === 'string'
          ? [accountItems.memberKey(item.customerId, String(item.username))]
          : [],
      );
      const members = new Set(
        (await getAll(memberKeys, ['pk', 'sk'])).map((item) => `${item.pk} ${item.sk}`),
      );
      const result = new Map<string, StoredUser>();
      for (const item of users) {
        const customerId = typeof item.customerId === 'string' ? item.customerId : null;
        const memberKey =
          customerId === null ? undefined : accountItems.memberKey(customerId, String(item.username));
        result.set(foldUsername(String(item.username)), {
          username: String(item.username),
          passwordHash: String(item.passwordHash),
          enabled: item.enabled === true,
          customerId,
          hasMembership: memberKey !== undefined && members.has(`${memberKey.pk} ${memberKey.sk}`),
        });
      }
      return result;
    },

    async write(items) {
      // The chunks at once: the limiter bounds the calls in flight.
      await Promise.all(
        chunks(items, 25).map(async (chunk) => {
          let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
          for (let attempt = 0; pending.length > 0; attempt += 1) {
            if (attempt >= maxAttempts) {
              throw new AppError('DEPENDENCY_UNAVAILABLE', {
                detail: 'items left unprocessed after retries',
              });
            }
            if (attempt > 0) await backoff(attempt);
            const request = pending;
            const answer = await send(() =>
              client.send(new BatchWriteCommand({ RequestItems: { [TableName]: request } })),
            );
            pending = (answer.UnprocessedItems?.[TableName] ?? []) as typeof pending;
          }
        }),
      );
    },

    async *scan() {
      let ExclusiveStartKey: Item | undefined;
      do {
        const page = await send(() => client.send(new ScanCommand({ TableName, ExclusiveStartKey })));
        yield* page.Items ?? [];
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    },

    async members(customerId) {
      return (await queryAll(customerId, accountItems.memberPrefix, 'username')).map((item) =>
        String(item.username),
      );
    },
  };
}
