/**
 * The API client store, on the accounts table beside the users (lib/accounts/dynamodb.ts):
 *
 * | item   | pk                 | sk     |
 * |--------|--------------------|--------|
 * | client | CLIENT#<client id> | CLIENT |
 *
 * One item per client, its secrets in a map by secret id, so the token endpoint and the
 * authorizer each read exactly one item. A secret with an `expiresAt` passed stays in the map
 * until the next secret's write prunes it, and counts as removed meanwhile. At most two live
 * secrets is the condition of the write that adds one: the item read, then written only if its
 * `updatedAt` (moved forward by every change of the secrets) and its number of secrets are as
 * read. A secret's last use is in its map entry (`lastUsedAt`), addressed by the secret's id,
 * so a removal racing it cannot move the write onto another secret; the client's beside the map.
 * The tokens the client revoked itself are a map beside them (`revokedTokens`, jti → exp).
 *
 * A customer's clients are one Query of the table's `byCustomer` index (hash `customerId`,
 * range `sk`: users carry a customerId too, with another sort key).
 */
import { GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { BY_CUSTOMER_INDEX } from '../accounts/dynamodb-items.ts';
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
  isLive,
  LAST_USE_PRECISION_MS,
  MAX_LIVE_SECRETS,
  type NewClient,
  type SecretChange,
} from './clients.ts';

const CLIENT_SK = 'CLIENT';
const CLIENT_PREFIX = 'CLIENT#';
/** The accounts table's index of items by customer (infra/tables.yml). */
/** Reads and writes of a secrets change before it gives up on writers changing them alongside. */
const SECRET_WRITE_ATTEMPTS = 4;

export const clientKey = (clientId: string) => ({ pk: `${CLIENT_PREFIX}${clientId}`, sk: CLIENT_SK });

/** Every attribute a client item may hold (clientItem's, and the revocation endpoint's map). */
const CLIENT_ATTRIBUTES = [
  'pk',
  'sk',
  'clientId',
  'customerId',
  'name',
  'scopes',
  'enabled',
  'secrets',
  'revokedBefore',
  'revokedTokens',
  'createdAt',
  'updatedAt',
  'lastUsedAt',
] as const;

const clientOwner = (clientId: string): Owner => ({ attribute: 'clientId', name: clientId });

/** The client item as stored: also what an import writes (ops/accounts). */
export function clientItem(record: ClientRecord): Record<string, unknown> {
  return {
    ...clientKey(record.clientId),
    clientId: record.clientId,
    customerId: record.customerId,
    ...(record.name !== undefined && { name: record.name }),
    scopes: [...record.scopes],
    enabled: record.enabled,
    secrets: Object.fromEntries(record.secrets.map((secret) => [secret.id, secretEntry(secret)])),
    revokedBefore: record.revokedBefore,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.lastUsedAt !== undefined && { lastUsedAt: record.lastUsedAt }),
  };
}

/** A secret's entry in the item's map. */
function secretEntry({ digest, createdAt, lastUsedAt, expiresAt }: ClientSecret) {
  return {
    digest,
    createdAt,
    ...(lastUsedAt !== undefined && { lastUsedAt }),
    ...(expiresAt !== undefined && { expiresAt }),
  };
}

/** Oldest first, as the CLI lists them: the one in use, then its successor. */
const byAge = (a: ClientSecret, b: ClientSecret) =>
  a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

type SecretMap = Record<
  string,
  { digest?: unknown; createdAt?: unknown; lastUsedAt?: unknown; expiresAt?: unknown }
>;

/** A text as stored, if there is one: an ISO time (items written before last use have none), a name. */
const timeOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

const secretsOf = (map: unknown): ClientSecret[] =>
  Object.entries((map ?? {}) as SecretMap)
    .map(([id, secret]) => {
      const lastUsedAt = timeOf(secret.lastUsedAt);
      const expiresAt = timeOf(secret.expiresAt);
      return {
        id,
        digest: String(secret.digest),
        createdAt: String(secret.createdAt),
        ...(lastUsedAt !== undefined && { lastUsedAt }),
        ...(expiresAt !== undefined && { expiresAt }),
      };
    })
    .sort(byAge);

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
  const name = timeOf(item.name);
  return {
    clientId: String(item.clientId),
    customerId: String(item.customerId),
    ...(name !== undefined && { name }),
    scopes: sortScopes(((item.scopes ?? []) as string[]).filter(isScope) as Scope[]),
    enabled: item.enabled === true,
    secrets,
    revokedBefore: Number(item.revokedBefore ?? 0),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...(lastUsedAt !== undefined && { lastUsedAt }),
  };
}

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

/**
 * The `updatedAt` of a change to the secrets: now, or just past the one read when the clock is
 * behind it, so that every such change moves it and a write conditioned on the read loses a race.
 */
const laterThan = (read: string, now: Date) =>
  new Date(Math.max(now.getTime(), Date.parse(read) + 1)).toISOString();

/** The earlier of a secret's end and the roll-over's, as ISO; the roll-over's when it has none. */
const endBy = (expiresAt: string | undefined, by: Date) =>
  expiresAt !== undefined && Date.parse(expiresAt) <= by.getTime() ? expiresAt : by.toISOString();

export function createDynamoClientRepository(deps: Table & { readonly clock?: Clock }): ClientRepository {
  const { client, tableName: TableName } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => clock().toISOString();
  const noSuchClient = () => new AppError('NOT_FOUND', { detail: 'no such client' });
  const raced = (what: string) =>
    new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error(`${what} kept racing other changes`) });

  const reader = createDynamoClientReader(deps);
  const read = reader.findClient;

  /** The clients of every page `page` answers, ordered by id. */
  const allPages = async (
    page: (start: Record<string, unknown> | undefined) => Promise<{
      Items?: Record<string, unknown>[];
      LastEvaluatedKey?: Record<string, unknown>;
    }>,
  ) => {
    const clients: ClientRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const answer = await dynamo(() => page(start));
      clients.push(...(answer.Items ?? []).map(toClient));
      start = answer.LastEvaluatedKey;
    } while (start !== undefined);
    return clients.sort((a, b) => a.clientId.localeCompare(b.clientId));
  };

  const scan = () =>
    allPages((ExclusiveStartKey) =>
      client.send(
        new ScanCommand({
          TableName,
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': CLIENT_SK },
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      ),
    );

  /** The index is eventually consistent (as every global secondary index): no ConsistentRead. */
  const ofCustomer = (customerId: string) =>
    allPages((ExclusiveStartKey) =>
      client.send(
        new QueryCommand({
          TableName,
          IndexName: BY_CUSTOMER_INDEX,
          KeyConditionExpression: 'customerId = :customer AND sk = :sk',
          ExpressionAttributeValues: { ':customer': customerId, ':sk': CLIENT_SK },
          // The index holds users too: naming the client's attributes lets the self-service
          // API's role be refused every other one (a password hash) at IAM (infra/roles.yml).
          ProjectionExpression: CLIENT_ATTRIBUTES.map((name) => `#${name}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(CLIENT_ATTRIBUTES.map((name) => [`#${name}`, name])),
          ExclusiveStartKey,
        }),
      ),
    );

  const update = (
    clientId: string,
    expression: string,
    condition: string | undefined,
    values: Record<string, unknown>,
    names?: Record<string, string>,
  ) =>
    updateOwned(deps, clientKey(clientId), clientOwner(clientId), { expression, condition, values, names });

  /** The secrets as read: a write of them holds only while no other change of them came between. */
  const unchangedSince = (read: ClientRecord) => ({
    condition: 'updatedAt = :read AND size(secrets) = :count',
    values: { ':read': read.updatedAt, ':count': read.secrets.length },
  });

  /** One read-then-write of addClientSecret: the change, or undefined when another write came between. */
  async function addOnce(
    existing: ClientRecord,
    secret: ClientSecret,
    expireOthersAt: Date | undefined,
  ): Promise<SecretChange | undefined> {
    const at = clock();
    const live = existing.secrets.filter((stored) => isLive(stored, at));
    const expired = existing.secrets.filter((stored) => !isLive(stored, at));
    if (live.length >= MAX_LIVE_SECRETS)
      throw new AppError('CONFLICT', {
        detail: `the client has ${MAX_LIVE_SECRETS} live secrets: remove one (client secret remove) first`,
      });
    const kept = live.map((stored) =>
      expireOthersAt === undefined
        ? stored
        : { ...stored, expiresAt: endBy(stored.expiresAt, expireOthersAt) },
    );
    const ended = kept.filter((stored, index) => stored.expiresAt !== live[index]?.expiresAt);
    const updatedAt = laterThan(existing.updatedAt, at);
    const { condition, values } = unchangedSince(existing);
    const written = await update(
      existing.clientId,
      [
        `SET ${[
          'secrets.#new = :secret',
          'updatedAt = :updated',
          ...ended.map((_, i) => `secrets.#end${i}.expiresAt = :end${i}`),
        ].join(', ')}`,
        ...(expired.length === 0 ? [] : [`REMOVE ${expired.map((_, i) => `secrets.#gone${i}`).join(', ')}`]),
      ].join(' '),
      // A new id: never a secret's the write would replace.
      `${condition} AND attribute_not_exists(secrets.#new)`,
      {
        ...values,
        ':secret': secretEntry(secret),
        ':updated': updatedAt,
        ...Object.fromEntries(ended.map((stored, i) => [`:end${i}`, stored.expiresAt])),
      },
      {
        '#new': secret.id,
        ...Object.fromEntries(ended.map((stored, i) => [`#end${i}`, stored.id])),
        ...Object.fromEntries(expired.map((stored, i) => [`#gone${i}`, stored.id])),
      },
    );
    if (written === undefined) return undefined;
    return {
      before: existing,
      after: { ...existing, secrets: [...kept, secret].sort(byAge), updatedAt },
    };
  }

  return {
    findClient: read,
    recordUse: reader.recordUse,
    findClientStatus: createDynamoClientStatusReader(deps).findClientStatus,
    listClients: (customerId) => (customerId === undefined ? scan() : ofCustomer(customerId)),
    exportClients: () => scan(),

    async createClient({ clientId, customerId, name, scopes, secret }: NewClient) {
      const at = now();
      const record: ClientRecord = {
        clientId,
        customerId,
        ...(name !== undefined && { name }),
        scopes: sortScopes(scopes),
        enabled: true,
        secrets: [secret],
        // A new client id has no earlier tokens to revoke.
        revokedBefore: 0,
        createdAt: at,
        updatedAt: at,
      };
      const created = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: clientItem(record),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      if (created !== undefined) return record;
      // Our own write, sent again by the SDK after its answer was lost: the secret's digest is ours.
      const existing = await read(clientId);
      if (existing?.secrets.some((stored) => stored.id === secret.id && stored.digest === secret.digest))
        return existing;
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

    async renameClient(clientId, name) {
      // `name` is a reserved word of DynamoDB's expressions.
      const renamed = await update(
        clientId,
        'SET #name = :name, updatedAt = :now',
        undefined,
        { ':name': name, ':now': now() },
        { '#name': 'name' },
      );
      if (renamed === undefined) throw noSuchClient();
    },

    async removeClient(clientId) {
      // Read first: a delete the SDK sent again after its answer was lost finds nothing, and
      // must not tell the operator the client never existed.
      if ((await read(clientId)) === null) throw noSuchClient();
      // A failed condition: gone since the read, by this delete's first sending or another's.
      await deleteOwned(deps, clientKey(clientId), clientOwner(clientId));
    },

    async addClientSecret(clientId, secret, options = {}) {
      let first: ClientRecord | undefined;
      for (let attempt = 1; attempt <= SECRET_WRITE_ATTEMPTS; attempt++) {
        const existing = await read(clientId);
        if (existing === null) throw noSuchClient();
        first ??= existing;
        const same = existing.secrets.find((stored) => stored.id === secret.id);
        // Our own write, sent again by the SDK after its answer was lost: the digest is ours.
        if (same?.digest === secret.digest) return { before: first, after: existing };
        if (same !== undefined)
          throw new AppError('ALREADY_EXISTS', { detail: 'the client has a secret with this id' });
        const change = await addOnce(existing, secret, options.expireOthersAt);
        if (change !== undefined) return change;
      }
      throw raced('adding a secret');
    },

    async removeClientSecret(clientId, secretId) {
      const refusal = (existing: ClientRecord | null) => {
        if (existing === null) return noSuchClient();
        const at = clock();
        const live = existing.secrets.filter((stored) => isLive(stored, at));
        if (!live.some((stored) => stored.id === secretId))
          return new AppError('NOT_FOUND', { detail: 'the client has no live secret with this id' });
        if (live.length <= 1)
          return new AppError('CONFLICT', {
            detail:
              'this is the client’s last live secret: add its successor first, or disable or remove the client',
          });
        return undefined;
      };
      // Read first, as removeClient: a removal sent again after its answer was lost is no refusal.
      let existing = await read(clientId);
      for (let attempt = 1; attempt <= SECRET_WRITE_ATTEMPTS; attempt++) {
        const refused = refusal(existing);
        if (refused !== undefined || existing === null) throw refused;
        const { condition, values } = unchangedSince(existing);
        const removed = await update(
          clientId,
          'REMOVE secrets.#id SET updatedAt = :updated',
          `${condition} AND attribute_exists(secrets.#id)`,
          { ...values, ':updated': laterThan(existing.updatedAt, clock()) },
          { '#id': secretId },
        );
        if (removed !== undefined) return;
        existing = await read(clientId);
        // Gone since the read: this removal's first sending applied, or another's.
        if (existing !== null && !existing.secrets.some((stored) => stored.id === secretId)) return;
      }
      throw raced('removing a secret');
    },
  };
}
