/**
 * The reads of a client that the authorizer and the token endpoint make, and the token
 * endpoint's and the revocation endpoint's one write each: on their own, so that those
 * functions' bundles carry these and not the whole repository (dynamodb.ts).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/errors.ts';
import { readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { createClientTokenRevoker } from '../revocation/dynamodb.ts';
import type { ClientStatusReader, ClientTokenRevoker } from '../revocation/revocation.ts';
import { type Clock, systemClock } from '../time.ts';
import type { ClientReader, ClientUseRecorder } from './clients.ts';
import { clientKey, clientOwner, secretsOf, toClient } from './dynamodb-items.ts';
import { isLive, LAST_USE_PRECISION_MS } from './secrets.ts';

/**
 * The authorizer's read, as the users' (readOwned). Its secret ids are the live ones at the
 * `clock`'s now: a token granted with a secret stops once the secret expires, as once removed.
 */
export function createDynamoClientStatusReader(deps: Table & { readonly clock?: Clock }): ClientStatusReader {
  const clock = deps.clock ?? systemClock;
  return {
    async findClientStatus(clientId, options = {}) {
      const item = await readOwned(
        deps,
        clientKey(clientId),
        clientOwner(clientId),
        ['enabled', 'revokedBefore', 'secrets', 'revokedTokens'],
        options,
      );
      if (item === undefined) return null;
      const now = clock();
      return {
        enabled: item.enabled === true,
        revokedBefore: Number(item.revokedBefore ?? 0),
        secretIds: new Set(
          secretsOf(item.secrets)
            .filter((secret) => isLive(secret, now))
            .map((secret) => secret.id),
        ),
        revokedTokens: new Set(Object.keys(item.revokedTokens ?? {})),
      };
    },
  };
}

/** The revocation endpoint's write (RFC 7009): a client's own token, by its `jti`. */
export const createDynamoClientTokenRevoker = (
  deps: Table & { readonly clock?: Clock },
): ClientTokenRevoker =>
  createClientTokenRevoker({ ...deps, keyOf: clientKey, clock: deps.clock ?? systemClock });

/**
 * The token endpoint's read: consistent, so a client or secret just added or removed is seen at
 * once; and its last-use write. The write touches the secret's `lastUsedAt` and the client's
 * alone, and never `updatedAt`: the client did not change.
 */
export function createDynamoClientReader(deps: Table): ClientReader & ClientUseRecorder {
  const { client, tableName: TableName } = deps;
  return {
    async findClient(clientId) {
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: clientKey(clientId), ConsistentRead: true })),
      );
      return Item !== undefined && Item.clientId === clientId ? toClient(Item) : null;
    },

    async recordUse(clientId, secretId, at) {
      const written = await updateOwned(deps, clientKey(clientId), clientOwner(clientId), {
        expression: 'SET secrets.#id.lastUsedAt = :at, lastUsedAt = :at',
        // The secret still live (a removed one is not written back), and not written within the precision.
        condition:
          'attribute_exists(secrets.#id) AND ' +
          '(attribute_not_exists(secrets.#id.lastUsedAt) OR secrets.#id.lastUsedAt <= :due)',
        values: {
          ':at': at.toISOString(),
          ':due': new Date(at.getTime() - LAST_USE_PRECISION_MS).toISOString(),
        },
        names: { '#id': secretId },
      });
      return written !== undefined;
    },
  };
}
