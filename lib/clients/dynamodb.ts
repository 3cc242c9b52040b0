/**
 * The API client store, on the accounts table beside the users (lib/accounts/dynamodb.ts):
 *
 * | item   | pk                 | sk     |
 * |--------|--------------------|--------|
 * | client | CLIENT#<client id> | CLIENT |
 *
 * One item per client, its live secrets in a map by secret id, so the token endpoint and the
 * authorizer each read exactly one item, and at most two live secrets is one write's condition.
 * A secret's last use is in its map entry (`lastUsedAt`), addressed by the secret's id, so a
 * removal racing it cannot move the write onto another secret; the client's beside the map.
 * The tokens the client revoked itself are a map beside them (`revokedTokens`, jti → exp).
 */
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { deleteOwned, type Owner, readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { AppError } from '../errors.ts';
import { createClientTokenRevoker, moveRevocationCutoff } from '../revocation/dynamodb.ts';
import type { ClientStatusReader, ClientTokenRevoker } from '../revocation/revocation.ts';
import { isScope, type Scope, sortScopes } from '../scopes.ts';
import { type Clock, systemClock } from '../time.ts';
import {
  type ClientReader,
  type ClientRecord,
  type ClientRepository,
  type ClientSecret,
  type ClientUseRecorder,
  LAST_USE_PRECISION_MS,
  MAX_LIVE_SECRETS,
  type NewClient,
} from './clients.ts';

const CLIENT_SK = 'CLIENT';
const CLIENT_PREFIX = 'CLIENT#';

export const clientKey = (clientId: string) => ({ pk: `${CLIENT_PREFIX}${clientId}`, sk: CLIENT_SK });

const clientOwner = (clientId: string): Owner => ({ attribute: 'clientId', name: clientId });

/** The client item as stored: also what an import writes (ops/accounts). */
export function clientItem(record: ClientRecord): Record<string, unknown> {
  return {
    ...clientKey(record.clientId),
    clientId: record.clientId,
    customerId: record.customerId,
    scopes: [...record.scopes],
    enabled: record.enabled,
    secrets: Object.fromEntries(
      record.secrets.map(({ id, digest, createdAt, lastUsedAt }) => [
        id,
        { digest, createdAt, ...(lastUsedAt !== undefined && { lastUsedAt }) },
      ]),
    ),
    revokedBefore: record.revokedBefore,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.lastUsedAt !== undefined && { lastUsedAt: record.lastUsedAt }),
  };
}

type SecretMap = Record<string, { digest?: unknown; createdAt?: unknown; lastUsedAt?: unknown }>;

/** An ISO time as stored, if there is one (items written before last use have none). */
const timeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

const secretsOf = (map: unknown): ClientSecret[] =>
  Object.entries((map ?? {}) as SecretMap)
    .map(([id, secret]) => {
      const lastUsedAt = timeOf(secret.lastUsedAt);
      return {
        id,
        digest: String(secret.digest),
        createdAt: String(secret.createdAt),
        ...(lastUsedAt !== undefined && { lastUsedAt }),
      };
    })
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));

/** The latest of ISO times of one format (toISOString's), which order as text. */
const latest = (times: readonly (string | undefined)[]) =>
  times.reduce<string | undefined>(
    (found, time) => (time !== undefined && (found === undefined || time > found) ? time : found),
    undefined,
  );

function toClient(item: Record<string, unknown>): ClientRecord {
  const secrets = secretsOf(item.secrets);
  // Two secrets' writes may land out of order: the client's is the latest of all it stores.
  const lastUsedAt = latest([timeOf(item.lastUsedAt), ...secrets.map((secret) => secret.lastUsedAt)]);
  return {
    clientId: String(item.clientId),
    customerId: String(item.customerId),
    scopes: sortScopes(((item.scopes ?? []) as string[]).filter(isScope) as Scope[]),
    enabled: item.enabled === true,
    secrets,
    revokedBefore: Number(item.revokedBefore ?? 0),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...(lastUsedAt !== undefined && { lastUsedAt }),
  };
}

/** The authorizer's read, as the users' (readOwned). */
export function createDynamoClientStatusReader(deps: Table): ClientStatusReader {
  return {
    async findClientStatus(clientId) {
      const item = await readOwned(deps, clientKey(clientId), clientOwner(clientId), [
        'enabled',
        'revokedBefore',
        'secrets',
        'revokedTokens',
      ]);
      if (item === undefined) return null;
      return {
        enabled: item.enabled === true,
        revokedBefore: Number(item.revokedBefore ?? 0),
        secretIds: new Set(Object.keys(item.secrets ?? {})),
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

export function createDynamoClientRepository(deps: Table & { readonly clock?: Clock }): ClientRepository {
  const { client, tableName: TableName } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => clock().toISOString();
  const noSuchClient = () => new AppError('NOT_FOUND', { detail: 'no such client' });

  const reader = createDynamoClientReader(deps);
  const read = reader.findClient;

  const scan = async (customerId?: string) => {
    const clients: ClientRecord[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo(() =>
        client.send(
          new ScanCommand({
            TableName,
            FilterExpression: `sk = :sk${customerId === undefined ? '' : ' AND customerId = :customer'}`,
            ExpressionAttributeValues: {
              ':sk': CLIENT_SK,
              ...(customerId !== undefined && { ':customer': customerId }),
            },
            ConsistentRead: true,
            ExclusiveStartKey,
          }),
        ),
      );
      clients.push(...(page.Items ?? []).map(toClient));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey !== undefined);
    return clients.sort((a, b) => a.clientId.localeCompare(b.clientId));
  };

  const update = (
    clientId: string,
    expression: string,
    condition: string | undefined,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ) =>
    updateOwned(deps, clientKey(clientId), clientOwner(clientId), { expression, condition, values, names });

  return {
    findClient: read,
    recordUse: reader.recordUse,
    findClientStatus: createDynamoClientStatusReader(deps).findClientStatus,
    listClients: (customerId) => scan(customerId),
    exportClients: () => scan(),

    async createClient({ clientId, customerId, scopes, secret }: NewClient) {
      const at = now();
      const created = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: clientItem({
              clientId,
              customerId,
              scopes,
              enabled: true,
              secrets: [secret],
              // A new client id has no earlier tokens to revoke.
              revokedBefore: 0,
              createdAt: at,
              updatedAt: at,
            }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      if (created !== undefined) return;
      // Our own write, sent again by the SDK after its answer was lost: the secret's digest is ours.
      const existing = await read(clientId);
      if (existing?.secrets.some((stored) => stored.id === secret.id && stored.digest === secret.digest))
        return;
      throw new AppError('ALREADY_EXISTS', { detail: 'a client with this id exists' });
    },

    async setClientEnabled(clientId, enabled) {
      if (enabled) {
        const updated = await update(clientId, 'SET enabled = :enabled, updatedAt = :now', undefined, {
          ':enabled': true,
          ':now': now(),
        });
        if (updated === undefined) throw noSuchClient();
        return;
      }
      const revoked = await moveRevocationCutoff({
        client,
        tableName: TableName,
        key: clientKey(clientId),
        owner: clientOwner(clientId),
        assignments: ['enabled = :enabled', 'updatedAt = :now'],
        values: { ':enabled': false, ':now': now() },
        clock,
      });
      if (!revoked) throw noSuchClient();
    },

    async removeClient(clientId) {
      // Read first: a delete the SDK sent again after its answer was lost finds nothing, and
      // must not tell the operator the client never existed.
      if ((await read(clientId)) === null) throw noSuchClient();
      // A failed condition: gone since the read, by this delete's first sending or another's.
      await deleteOwned(deps, clientKey(clientId), clientOwner(clientId));
    },

    async addClientSecret(clientId, secret) {
      const added = await update(
        clientId,
        'SET secrets.#id = :secret, updatedAt = :now',
        // A new id: never a live secret's, whose digest the write would replace.
        'size(secrets) < :max AND attribute_not_exists(secrets.#id)',
        {
          ':secret': { digest: secret.digest, createdAt: secret.createdAt },
          ':now': now(),
          ':max': MAX_LIVE_SECRETS,
        },
        { '#id': secret.id },
      );
      if (added !== undefined) return;
      const existing = await read(clientId);
      if (existing === null) throw noSuchClient();
      // Our own write, sent again after its answer was lost.
      if (existing.secrets.some((stored) => stored.id === secret.id && stored.digest === secret.digest))
        return;
      throw new AppError('VALIDATION_FAILED', {
        detail: `the client has ${MAX_LIVE_SECRETS} live secrets: remove one (client secret remove) first`,
      });
    },

    async removeClientSecret(clientId, secretId) {
      const refusal = (existing: ClientRecord | null) => {
        if (existing === null) return noSuchClient();
        if (!existing.secrets.some((stored) => stored.id === secretId))
          return new AppError('NOT_FOUND', { detail: 'the client has no live secret with this id' });
        if (existing.secrets.length <= 1)
          return new AppError('VALIDATION_FAILED', {
            detail:
              'this is the client’s last secret: add its successor first, or disable or remove the client',
          });
        return undefined;
      };
      // Read first, as removeClient: a removal sent again after its answer was lost is no refusal.
      const before = refusal(await read(clientId));
      if (before !== undefined) throw before;
      const removed = await update(
        clientId,
        'REMOVE secrets.#id SET updatedAt = :now',
        'attribute_exists(secrets.#id) AND size(secrets) > :one',
        { ':now': now(), ':one': 1 },
        { '#id': secretId },
      );
      if (removed !== undefined) return;
      const after = await read(clientId);
      // Gone since the read: this removal's first sending applied, or another's.
      if (after !== null && !after.secrets.some((stored) => stored.id === secretId)) return;
      throw (
        refusal(after) ?? new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('secret removal raced') })
      );
    },
  };
}
