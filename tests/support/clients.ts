/** API clients written straight to a test DynamoDB, as `client add` writes them. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import type { Scope } from '../../lib/scopes.ts';

/** A new client of `customerId` with `scopes` on `tableName`: its id, its one secret and that secret's id. */
export async function createTestClient(
  table: { readonly client: DynamoDBDocumentClient; readonly tableName: string },
  customerId: string,
  scopes: readonly Scope[],
) {
  const clientId = newClientId();
  const { secret, stored } = newClientSecret(new Date());
  await createDynamoClientRepository(table).createClient({ clientId, customerId, scopes, secret: stored });
  return { clientId, secret, secretId: stored.id };
}
