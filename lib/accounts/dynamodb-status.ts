/**
 * The authorizer's one read of a user and logout's one write, in a module of their own: a
 * function bundles the modules it imports whole, side effects and all, so these import only the
 * user item's key, never the repository (lib/accounts/dynamodb.ts) and the username rule.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createSessionTokenRevoker, createStatusReader } from '../revocation/dynamodb.ts';
import type { SessionTokenRevoker, UserStatusReader } from '../revocation/revocation.ts';
import { type Clock, systemClock } from '../time.ts';
import { accountItems } from './dynamodb-items.ts';

/** The authorizer's one read. */
export const createDynamoStatusReader = (deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): UserStatusReader => createStatusReader({ ...deps, keyOf: accountItems.userKey });

/** Logout's one write: a session's access tokens listed as revoked. */
export const createDynamoSessionTokenRevoker = (deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly clock?: Clock;
}): SessionTokenRevoker =>
  createSessionTokenRevoker({ ...deps, clock: deps.clock ?? systemClock, keyOf: accountItems.userKey });
