/**
 * The account store on one DynamoDB table (`accounts`), keyed so that login and
 * login-extended need exactly one GetItem:
 *
 * | item            | pk                   | sk                  |
 * |-----------------|----------------------|---------------------|
 * | user            | USER#<folded name>   | USER                |
 * | pickup address  | CUSTOMER#<id>        | ADDRESS#<position>  |
 * | membership      | CUSTOMER#<id>        | MEMBER#<folded name>|
 * | address counter | CUSTOMER#<id>        | CUSTOMER            |
 *
 * The user item carries the derived `depotCode` of its customer. Every write that can
 * change it (adding an address, creating a user) first writes its own item and then reads
 * the customer's partition with a consistent Query, so of two concurrent writers at least
 * one sees the other. Users are updated only with a view that has seen more addresses than
 * the one they hold (`addressesSeen`), so a stale view never overwrites a fresher one.
 * No transactions are needed, which keeps the embedded DynamoDB usable.
 */

import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { AppError } from '../errors.ts';
import {
  createSessionTokenRevoker,
  createStatusReader,
  moveRevocationCutoff,
} from '../revocation/dynamodb.ts';
import { revocationCutoff, type UserStatusReader } from '../revocation/revocation.ts';
import { isScope, sortScopes } from '../scopes.ts';
import { type Clock, systemClock } from '../time.ts';
import {
  type AccountRepository,
  firstDepotCode,
  foldUsername,
  type NewUser,
  type PickupAddress,
  type UserRecord,
} from './repository.ts';

const USER_SK = 'USER';
const COUNTER_SK = 'CUSTOMER';
const ADDRESS_PREFIX = 'ADDRESS#';
const MEMBER_PREFIX = 'MEMBER#';

const userKey = (username: string) => ({ pk: `USER#${foldUsername(username)}`, sk: USER_SK });
const customerPk = (customerId: string) => `CUSTOMER#${customerId}`;
const addressSk = (position: number) => `${ADDRESS_PREFIX}${String(position).padStart(10, '0')}`;
const memberSk = (username: string) => `${MEMBER_PREFIX}${foldUsername(username)}`;

/**
 * The items of the accounts table, built in one place: the single writes below and the bulk
 * import (ops/accounts/bulk-dynamodb.ts) write exactly these shapes, so a login cannot tell an
 * imported user from one added by hand.
 */
export const accountItems = {
  userKey,
  memberKey: (customerId: string, username: string) => ({
    pk: customerPk(customerId),
    sk: memberSk(username),
  }),
  counterKey: (customerId: string) => ({ pk: customerPk(customerId), sk: COUNTER_SK }),
  addressKey: (customerId: string, position: number) => ({
    pk: customerPk(customerId),
    sk: addressSk(position),
  }),
  customerPk,
  addressPrefix: ADDRESS_PREFIX,
  memberPrefix: MEMBER_PREFIX,
  user: (user: {
    username: string;
    passwordHash: string;
    enabled: boolean;
    customerId: string | null;
    /** The customer's first depot code and how many addresses that view saw. */
    depot: { depotCode: string | null; addressesSeen: number };
    revokedBefore: number;
    createdAt: string;
    updatedAt: string;
  }) => ({
    ...userKey(user.username),
    username: user.username,
    passwordHash: user.passwordHash,
    enabled: user.enabled,
    revokedBefore: user.revokedBefore,
    ...(user.customerId !== null && { customerId: user.customerId, ...user.depot }),
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  }),
  member: (customerId: string, username: string) => ({
    pk: customerPk(customerId),
    sk: memberSk(username),
    username,
  }),
  address: (address: PickupAddress) => ({
    pk: customerPk(address.customerId),
    sk: addressSk(address.position),
    ...address,
  }),
  counter: (customerId: string, addressCount: number) => ({
    pk: customerPk(customerId),
    sk: COUNTER_SK,
    addressCount,
  }),
};

interface UserItem {
  username: string;
  passwordHash: string;
  enabled: boolean;
  customerId?: string;
  depotCode?: string | null;
  revokedBefore?: number;
  /** The scopes an operator narrowed the user to; absent: every scope. */
  scopes?: string[];
  /** Session id to epoch seconds: sessions revoked for reuse, until their access tokens expire. */
  revokedSessions?: Record<string, number>;
  createdAt: string;
  updatedAt: string;
}

const noSuchUser = () => new AppError('NOT_FOUND', { detail: 'no such user' });

const toUser = (item: UserItem): UserRecord => ({
  username: item.username,
  passwordHash: item.passwordHash,
  enabled: item.enabled,
  customerId: item.customerId ?? null,
  depotCode: item.depotCode ?? null,
  revokedBefore: item.revokedBefore ?? 0,
  scopes: item.scopes === undefined ? null : sortScopes(item.scopes.filter(isScope)),
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

const toAddress = (item: Record<string, unknown>): PickupAddress => ({
  customerId: String(item.customerId),
  position: Number(item.position),
  depotCode: String(item.depotCode ?? ''),
  createdAt: String(item.createdAt),
});

/** The authorizer's one read, on its own so that its bundle carries this and not the whole repository. */
export const createDynamoStatusReader = (deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): UserStatusReader => createStatusReader({ ...deps, keyOf: userKey });

export function createDynamoAccountRepository(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock?: Clock;
}): AccountRepository {
  const { client, tableName: TableName } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => clock().toISOString();

  /** Every item of a customer's partition, in key order (addresses before members). */
  async function readCustomer(customerId: string) {
    const addresses: PickupAddress[] = [];
    const members: string[] = [];
    let pending = false;
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': customerPk(customerId) },
            ConsistentRead: true,
            ExclusiveStartKey,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        const sk = String(item.sk);
        if (sk.startsWith(ADDRESS_PREFIX)) {
          addresses.push(toAddress(item));
          pending = item.pending === true;
        } else if (sk.startsWith(MEMBER_PREFIX)) members.push(String(item.username));
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    /** `pending`: the last address was written by an address add that has not finished. */
    return { addresses, members, pending };
  }

  /** Brings the derived depot code of the customer's users up to date with a fresh view. */
  async function refreshDepotCode(customerId: string, only?: string) {
    const { addresses, members } = await readCustomer(customerId);
    const depotCode = firstDepotCode(addresses);
    const usernames = only === undefined ? members : [only];
    await Promise.all(
      // A failed condition: the user moved, was removed, or already holds a view at least as fresh.
      usernames.map((username) =>
        conditional(() =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: userKey(username),
              UpdateExpression: 'SET depotCode = :depot, addressesSeen = :seen',
              ConditionExpression:
                'customerId = :customer AND (attribute_not_exists(addressesSeen) OR addressesSeen < :seen)',
              ExpressionAttributeValues: {
                ':depot': depotCode,
                ':seen': addresses.length,
                ':customer': customerId,
              },
            }),
          ),
        ),
      ),
    );
  }

  /** The user's membership of the customer, and its depot code from the customer's addresses. */
  async function joinCustomer(customerId: string, username: string) {
    await dynamo(() =>
      client.send(new PutCommand({ TableName, Item: accountItems.member(customerId, username) })),
    );
    await refreshDepotCode(customerId, username);
  }

  /** Updates a user found by exact username; NOT_FOUND when there is none. */
  async function updateUser(username: string, expression: string, values: Record<string, unknown>) {
    const updated = await conditional(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: userKey(username),
          UpdateExpression: `${expression}, updatedAt = :now`,
          ConditionExpression: 'username = :username',
          ExpressionAttributeValues: { ...values, ':username': username, ':now': now() },
        }),
      ),
    );
    if (updated === undefined) throw noSuchUser();
  }

  const updateAndRevoke = async (
    username: string,
    assignments: string[],
    values: Record<string, unknown>,
  ) => {
    const revoked = await moveRevocationCutoff({
      client,
      tableName: TableName,
      key: userKey(username),
      username,
      assignments: [...assignments, 'updatedAt = :now'],
      values: { ...values, ':now': now() },
      clock,
    });
    if (!revoked) throw noSuchUser();
  };

  return {
    async findByUsername(username) {
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: userKey(username), ConsistentRead: true })),
      );
      const item = Item as UserItem | undefined;
      return item !== undefined && item.username === username ? toUser(item) : null;
    },

    findStatus: createDynamoStatusReader(deps).findStatus,

    revokeSessionTokens: createSessionTokenRevoker({ client, tableName: TableName, keyOf: userKey, clock })
      .revokeSessionTokens,

    async createUser({ username, passwordHash, customerId }: NewUser) {
      const at = now();
      const created = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: accountItems.user({
              username,
              passwordHash,
              enabled: true,
              customerId,
              depot: { depotCode: null, addressesSeen: 0 },
              revokedBefore: revocationCutoff(clock()),
              createdAt: at,
              updatedAt: at,
            }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      if (created === undefined) {
        // A first run whose later writes failed left a user without its membership or depot
        // code; the operator's second run completes them before it is told the user exists.
        const { Item } = await dynamo(() =>
          client.send(new GetCommand({ TableName, Key: userKey(username), ConsistentRead: true })),
        );
        if (Item?.username === username && typeof Item.customerId === 'string') {
          await joinCustomer(Item.customerId, username);
        }
        // Our own write, sent again by the SDK after its answer was lost: the hash's salt is ours.
        if (Item?.username === username && Item.passwordHash === passwordHash) return;
        throw new AppError('ALREADY_EXISTS', { detail: 'a user with this name (in any letter case) exists' });
      }
      if (customerId !== null) await joinCustomer(customerId, username);
    },

    setPasswordHash: (username, passwordHash) =>
      updateAndRevoke(username, ['passwordHash = :hash'], { ':hash': passwordHash }),

    setEnabled: (username, enabled) =>
      enabled
        ? updateUser(username, 'SET enabled = :enabled', { ':enabled': true })
        : updateAndRevoke(username, ['enabled = :enabled'], { ':enabled': false }),

    async upgradePasswordHash(username, currentHash, upgradedHash) {
      // A failed condition: the password changed meanwhile, or the user went. Nothing to do.
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: userKey(username),
            UpdateExpression: 'SET passwordHash = :upgraded',
            ConditionExpression: 'username = :username AND passwordHash = :current',
            ExpressionAttributeValues: {
              ':upgraded': upgradedHash,
              ':current': currentHash,
              ':username': username,
            },
          }),
        ),
      );
    },

    revokeUserTokens: (username) => updateAndRevoke(username, [], {}),

    // Revokes the user's tokens: none keeps scopes it no longer has, or lacks ones it was given.
    setUserScopes: async (username, scopes) => {
      if (scopes !== null) return updateAndRevoke(username, ['scopes = :scopes'], { ':scopes': [...scopes] });
      const revoked = await moveRevocationCutoff({
        client,
        tableName: TableName,
        key: userKey(username),
        username,
        assignments: ['updatedAt = :now'],
        values: { ':now': now() },
        remove: ['scopes'],
        clock,
      });
      if (!revoked) throw noSuchUser();
    },

    async removeUser(username) {
      // The membership first: a run that fails after it leaves the user, and the next run
      // finds it and finishes; the other order would leave a membership nothing can find.
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: userKey(username), ConsistentRead: true })),
      );
      if (Item?.username !== username) throw noSuchUser();
      const customerId = Item.customerId;
      if (typeof customerId === 'string') {
        await dynamo(() =>
          client.send(
            new DeleteCommand({ TableName, Key: { pk: customerPk(customerId), sk: memberSk(username) } }),
          ),
        );
      }
      // A failed condition: the user is gone since the read, by this delete sent again by the
      // SDK after its answer was lost, or by another removal; gone either way.
      await conditional(() =>
        client.send(
          new DeleteCommand({
            TableName,
            Key: userKey(username),
            ConditionExpression: 'username = :username',
            ExpressionAttributeValues: { ':username': username },
          }),
        ),
      );
    },

    async addPickupAddress(customerId, depotCode) {
      // Written as pending, then the users' depot codes, then done: a run cut short after the
      // address was written is finished by the operator's next run of the same command,
      // instead of adding the address twice.
      const view = await readCustomer(customerId);
      const last = view.addresses.at(-1);
      let address: PickupAddress;
      if (view.pending && last !== undefined && last.depotCode === depotCode) {
        address = last;
      } else {
        const counter = await dynamo(() =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: { pk: customerPk(customerId), sk: COUNTER_SK },
              UpdateExpression: 'ADD addressCount :one',
              ExpressionAttributeValues: { ':one': 1 },
              ReturnValues: 'UPDATED_NEW',
            }),
          ),
        );
        address = {
          customerId,
          position: Number(counter.Attributes?.addressCount),
          depotCode,
          createdAt: now(),
        };
        await dynamo(() =>
          client.send(
            new PutCommand({ TableName, Item: { ...accountItems.address(address), pending: true } }),
          ),
        );
      }
      // Read again: a user who joined meanwhile is brought up to date too.
      await refreshDepotCode(customerId);
      // The address is added and its users up to date: a failure to mark it finished loses
      // nothing (a second run of the same command would find it and finish it) and is not
      // the caller's failure.
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: accountItems.addressKey(customerId, address.position),
            UpdateExpression: 'REMOVE pending',
            ConditionExpression: 'attribute_exists(pk)',
          }),
        ),
      ).catch(() => undefined);
      return address;
    },

    async listPickupAddresses(customerId) {
      return (await readCustomer(customerId)).addresses;
    },
  };
}
