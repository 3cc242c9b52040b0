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

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createSessionTokenRevoker, createStatusReader } from '../revocation/dynamodb.ts';
import type { UserStatusReader } from '../revocation/revocation.ts';
import { type Clock, systemClock } from '../time.ts';
import { addPickupAddress, listPickupAddresses } from './dynamodb-customers.ts';
import { accountItems } from './dynamodb-items.ts';
import { createUserStore } from './dynamodb-users.ts';
import type { AccountRepository } from './repository.ts';

/** The authorizer's one read, on its own so that its bundle carries this and not the whole repository. */
export const createDynamoStatusReader = (deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): UserStatusReader => createStatusReader({ ...deps, keyOf: accountItems.userKey });

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
