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

import { type DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/errors.ts';
import { readOwned } from '../aws/owned-items.ts';
import { createSessionTokenRevoker } from '../revocation/dynamodb.ts';
import { isScope, sortScopes } from '../scopes.ts';
import { type Clock, systemClock } from '../time.ts';
import { addPickupAddress, listPickupAddresses } from './dynamodb-customers.ts';
import { accountItems, BY_CUSTOMER_INDEX } from './dynamodb-items.ts';
import { createDynamoStatusReader } from './dynamodb-status.ts';
import { createUserStore } from './dynamodb-users.ts';
import type { AccountRepository, Administrations } from './repository.ts';

/**
 * The self-service API's view of users: its caller's administration and revocation state, read
 * on every call (never the password hash), so an ended administration or a revoked token refuses within a read's
 * consistency, not at the token's expiry; a customer's administrators, from the byCustomer
 * index; and the grant and its end, as the operator's.
 */
export function createDynamoAdministrations(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock?: Clock;
}): Administrations {
  const table = { client: deps.client, tableName: deps.tableName, clock: deps.clock ?? systemClock };
  return {
    async findAdministration(username) {
      const item = await readOwned(
        deps,
        accountItems.userKey(username),
        { attribute: 'username', name: username },
        ['customerId', 'enabled', 'admin', 'revokedBefore', 'revokedSessions', 'scopes', 'adminEndingUntil'],
        // Strongly consistent: an administration ended, or a token revoked, a moment ago counts.
        { consistent: true },
      );
      if (item === undefined) return null;
      return {
        enabled: item.enabled === true,
        customerId: typeof item.customerId === 'string' && item.customerId !== '' ? item.customerId : null,
        admin: item.admin === true,
        revokedBefore: Number(item.revokedBefore ?? 0),
        revokedSessions: new Set(Object.keys((item.revokedSessions ?? {}) as object)),
        scopes: Array.isArray(item.scopes) ? sortScopes(item.scopes.filter(isScope)) : null,
        endingUntil: Number(item.adminEndingUntil ?? 0),
      };
    },

    async listAdministrators(customerId) {
      const pages = paginateQuery(
        { client: deps.client },
        {
          TableName: deps.tableName,
          IndexName: BY_CUSTOMER_INDEX,
          KeyConditionExpression: 'customerId = :customer AND sk = :sk',
          FilterExpression: 'admin = :admin',
          ProjectionExpression: 'username',
          ExpressionAttributeValues: {
            ':customer': customerId,
            ':sk': accountItems.userKey('').sk,
            ':admin': true,
          },
        },
      );
      return dynamo(async () => {
        const usernames: string[] = [];
        for await (const page of pages)
          usernames.push(...(page.Items ?? []).map((item) => String(item.username)));
        return usernames.sort();
      });
    },

    ...pickEnding(createUserStore(table)),
  };
}

const pickEnding = ({
  setAdministrator,
  markEnding,
  endMarked,
  unmark,
}: ReturnType<typeof createUserStore>) => ({ setAdministrator, markEnding, endMarked, unmark });

export function createDynamoAccountRepository(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock?: Clock;
}): AccountRepository {
  const table = { client: deps.client, tableName: deps.tableName, clock: deps.clock ?? systemClock };
  return {
    ...createUserStore(table),
    findStatus: createDynamoStatusReader(deps).findStatus,
    revokeSessionTokens: createSessionTokenRevoker({ ...table, keyOf: accountItems.userKey })
      .revokeSessionTokens,
    addPickupAddress: (customerId, depotCode) => addPickupAddress(table, customerId, depotCode),
    listPickupAddresses: (customerId) => listPickupAddresses(table, customerId),
  };
}
