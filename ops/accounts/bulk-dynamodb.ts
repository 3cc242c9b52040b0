/**
 * The accounts table in bulk, for the import, the export, the listings and `user refold`:
 * BatchGetItem (100 keys) and BatchWriteItem (25 items) with unprocessed items and throttling
 * retried with exponential backoff and full jitter, paginated scans, and conditional moves of
 * an item to a new key. Items are built by `accountItems` (lib/accounts/dynamodb-items.ts) and
 * `clientItem` (lib/clients/dynamodb.ts), the same shapes the single writes use.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  type DynamoDBDocumentPaginationConfiguration,
  type Paginator,
  PutCommand,
  paginateQuery,
  paginateScan,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import { isConditionalCheckFailure } from '../../lib/aws/errors.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { AppError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/time.ts';
import type { ExistingCustomer, ExistingUser } from './bulk.ts';

type Item = Record<string, unknown>;

/** An item's key in the accounts table. */
export interface AccountKey {
  readonly pk: string;
  readonly sk: string;
}

/**
 * How a move ended: `moved`; `occupied` (another item holds the new key, nothing was written);
 * `changed` (the item changed or went during the move, which was undone).
 */
export type MoveOutcome = 'moved' | 'occupied' | 'changed';

/** Errors DynamoDB answers when a table or the account is over its throughput. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

export interface BulkAccountStore {
  /**
   * The API clients, which live on the accounts table too: read one by one (an import's
   * clients are a few, not thousands) and scanned for an export by their own repository.
   */
  readonly clients: ClientRepository;
  customerExists(customerId: string): Promise<boolean>;
  /** Whether the table holds no item at all: one strongly consistent Scan of one item. */
  isEmpty(): Promise<boolean>;
  /**
   * Each customer's counter and its addresses at positions 1 to `positions` (what a record
   * of that many addresses would write), in one BatchGetItem per 100 keys; a customer
   * without any of those items is absent.
   */
  readCustomers(
    customers: readonly { customerId: string; positions: number }[],
  ): Promise<Map<string, ExistingCustomer>>;
  /** Every stored address of a customer, in order (one Query). */
  customerAddresses(customerId: string): Promise<ExistingCustomer['addresses']>;
  /**
   * The users stored under these names' folded keys (any letter case), by folded name, with
   * whether the membership of their stored customer is stored: one BatchGetItem per 100 user
   * keys, and one per 100 memberships of the users found.
   */
  readUsers(
    users: readonly { username: string; customerId: string | null }[],
  ): Promise<Map<string, ExistingUser>>;
  /** Writes `items` (any number), 25 per BatchWriteItem, until every one is processed. */
  write(items: readonly Item[]): Promise<void>;
  /** Every item of the table, page by page. */
  scan(): AsyncIterable<Item>;
  /** A customer's members' usernames, in key order. */
  members(customerId: string): Promise<string[]>;
  /**
   * Moves `item` (as scanned) to the key `to`: writes it there if no item is, then deletes it
   * where it was if it is unchanged, else deletes the copy again. With `copied` (an identical
   * copy is at `to` already, an interrupted move) it only deletes it where it was.
   */
  move(item: Item, to: AccountKey, options?: { copied?: boolean }): Promise<MoveOutcome>;
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
  /** The clients' clock (updatedAt, revocation cutoffs); default the system clock. */
  readonly clock?: Clock;
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
const USER_FIELDS = [
  'pk',
  'sk',
  'username',
  'passwordHash',
  'upgradedFromHash',
  'passwordSetAt',
  'enabled',
  'customerId',
];

/** The attributes a user item may lack: a move's item is unchanged only while they stay absent. */
const OPTIONAL_FIELDS = ['customerId', 'depotCode', 'addressesSeen', 'revokedBefore', 'revokedSessions'];

/** A condition that holds while the item at a key is `item`: every attribute as it was, none added. */
function unchanged(item: Item) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const terms: string[] = [];
  const name = (text: string) => {
    const id = `#n${Object.keys(names).length}`;
    names[id] = text;
    return id;
  };
  const value = (given: unknown) => {
    const id = `:v${Object.keys(values).length}`;
    values[id] = given;
    return id;
  };
  // A map compares entry by entry: DynamoDB compares maps with `=`, the embedded one does not.
  const same = (path: string, stored: unknown) => {
    if (stored === null) terms.push(`attribute_type(${path}, ${value('NULL')})`);
    else if (typeof stored === 'object' && Object.getPrototypeOf(stored) === Object.prototype) {
      const entries = Object.entries(stored);
      terms.push(`attribute_type(${path}, ${value('M')})`, `size(${path}) = ${value(entries.length)}`);
      for (const [key, entry] of entries) same(`${path}.${name(key)}`, entry);
    } else terms.push(`${path} = ${value(stored)}`);
  };
  for (const [attribute, stored] of Object.entries(item))
    if (attribute !== 'pk' && attribute !== 'sk') same(name(attribute), stored);
  for (const attribute of OPTIONAL_FIELDS)
    if (!Object.hasOwn(item, attribute)) terms.push(`attribute_not_exists(${name(attribute)})`);
  return {
    ConditionExpression: terms.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

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
        if (isConditionalCheckFailure(error)) throw error;
        const throttled = error instanceof Error && THROTTLING.has(error.name);
        if (!throttled || attempt + 1 >= maxAttempts)
          throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: error });
        await backoff(attempt);
      }
    }
  }

  /** One conditional write: false when its condition failed. */
  async function written(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await send(call);
      return true;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw error;
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

  /**
   * The pages of a paginated Query or Scan, each page's request sent as `send` sends a call.
   * A paginator whose request failed is done: a retry asks a new one for the same page, from
   * the last page's LastEvaluatedKey.
   */
  async function* pagesOf<Page extends { LastEvaluatedKey?: Item }>(
    paginate: (config: DynamoDBDocumentPaginationConfiguration) => Paginator<Page>,
  ): AsyncGenerator<Page> {
    let startingToken: Item | undefined;
    let pages = paginate({ client, startingToken });
    for (;;) {
      const next = await send(async () => {
        try {
          return await pages.next();
        } catch (error) {
          pages = paginate({ client, startingToken });
          throw error;
        }
      });
      if (next.done) return;
      startingToken = next.value.LastEvaluatedKey;
      yield next.value;
    }
  }

  async function queryAll(customerId: string, prefix: string, projection?: string): Promise<Item[]> {
    const items: Item[] = [];
    const pages = pagesOf((config) =>
      paginateQuery(config, {
        TableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': accountItems.customerPk(customerId), ':prefix': prefix },
        ConsistentRead: true,
        ...(projection !== undefined && { ProjectionExpression: projection }),
      }),
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  }

  return {
    clients: createDynamoClientRepository({
      client,
      tableName: TableName,
      ...(options.clock && { clock: options.clock }),
    }),

    async isEmpty() {
      const page = await send(() =>
        client.send(
          new ScanCommand({ TableName, Limit: 1, ConsistentRead: true, ProjectionExpression: 'pk' }),
        ),
      );
      return (page.Items?.length ?? 0) === 0 && page.LastEvaluatedKey === undefined;
    },

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
      const result = new Map<string, ExistingCustomer>();
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
      const result = new Map<string, ExistingUser>();
      for (const item of users) {
        const customerId = typeof item.customerId === 'string' ? item.customerId : null;
        const memberKey =
          customerId === null ? undefined : accountItems.memberKey(customerId, String(item.username));
        result.set(foldUsername(String(item.username)), {
          username: String(item.username),
          passwordHash: String(item.passwordHash),
          upgradedFromHash: typeof item.upgradedFromHash === 'string' ? item.upgradedFromHash : null,
          passwordSet: typeof item.passwordSetAt === 'string',
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
      for await (const page of pagesOf((config) => paginateScan(config, { TableName })))
        yield* page.Items ?? [];
    },

    async members(customerId) {
      return (await queryAll(customerId, accountItems.memberPrefix, 'username')).map((item) =>
        String(item.username),
      );
    },

    async move(item, to, options = {}) {
      const from = { pk: item.pk, sk: item.sk };
      const copy = { ...item, pk: to.pk, sk: to.sk };
      if (options.copied !== true) {
        const put = () =>
          client.send(
            new PutCommand({ TableName, Item: copy, ConditionExpression: 'attribute_not_exists(pk)' }),
          );
        if (!(await written(put))) return 'occupied';
      }
      const remove = (Key: Item) => () =>
        client.send(new DeleteCommand({ TableName, Key, ...unchanged(item) }));
      if (await written(remove(from))) return 'moved';
      // Changed or removed meanwhile: the copy goes too (unless it changed as well: then both
      // stay, and the next run reports them).
      if (options.copied !== true) await written(remove({ pk: to.pk, sk: to.sk }));
      return 'changed';
    },
  };
}
