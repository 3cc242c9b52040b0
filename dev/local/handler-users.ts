/** The users the in-process handler suites log in as, on a test DynamoDB. */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';

/**
 * `alice` of customer C-1001 (pickup addresses: one without depot, then PRG01) and `solo`
 * without customer, both with `password` hashed at cost 4.
 */
export async function seedHandlerUsers(
  dynamo: { readonly documentClient: DynamoDBDocumentClient; readonly tables: { readonly accounts: string } },
  password: string,
) {
  const accounts = createDynamoAccountRepository({
    client: dynamo.documentClient,
    tableName: dynamo.tables.accounts,
  });
  await accounts.addPickupAddress('C-1001', '');
  await accounts.addPickupAddress('C-1001', 'PRG01');
  const passwordHash = await hashPassword(password, 4);
  await accounts.createUser({ username: 'alice', passwordHash, customerId: 'C-1001' });
  await accounts.createUser({ username: 'solo', passwordHash, customerId: null });
  return accounts;
}
