// The accounts table's keys and items: the adapter and the bulk import write exactly these, so a login
// cannot tell an imported user from one added by hand. The layout: lib/accounts/dynamodb.ts.

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isScope, sortScopes } from '../scopes.ts';
import type { Clock } from '../time.ts';
import type { PickupAddress, UserRecord } from './repository.ts';
import { foldUsername } from './username-key.ts';

export interface AccountsTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock: Clock;
}

const USER_SK = 'USER';
/** The accounts table's index of a customer's items by sort key (infra/tables.yml): its clients, its users. */
export const BY_CUSTOMER_INDEX = 'byCustomer';
const COUNTER_SK = 'CUSTOMER';
const ADDRESS_PREFIX = 'ADDRESS#';
const MEMBER_PREFIX = 'MEMBER#';

const userKey = (username: string) => ({ pk: `USER#${foldUsername(username)}`, sk: USER_SK });
const customerPk = (customerId: string) => `CUSTOMER#${customerId}`;
const addressSk = (position: number) => `${ADDRESS_PREFIX}${String(position).padStart(10, '0')}`;
const memberSk = (username: string) => `${MEMBER_PREFIX}${foldUsername(username)}`;

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

export interface UserItem {
  username: string;
  passwordHash: string;
  enabled: boolean;
  customerId?: string;
  depotCode?: string | null;
  revokedBefore?: number;
  /** Absent: every scope. */
  scopes?: string[];
  /** Present (true) only while the user administers its customer. */
  admin?: boolean;
  /** Session id to epoch seconds: sessions revoked for reuse, until their access tokens expire. */
  revokedSessions?: Record<string, number>;
  createdAt: string;
  updatedAt: string;
}

export const toUser = (item: UserItem): UserRecord => ({
  username: item.username,
  passwordHash: item.passwordHash,
  enabled: item.enabled,
  customerId: item.customerId ?? null,
  depotCode: item.depotCode ?? null,
  revokedBefore: item.revokedBefore ?? 0,
  scopes: item.scopes === undefined ? null : sortScopes(item.scopes.filter(isScope)),
  admin: item.admin === true,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

export const toAddress = (item: Record<string, unknown>): PickupAddress => ({
  customerId: String(item.customerId),
  position: Number(item.position),
  depotCode: String(item.depotCode ?? ''),
  createdAt: String(item.createdAt),
});
