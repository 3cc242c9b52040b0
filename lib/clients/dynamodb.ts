/**
 * The API client store (the admin CLI's and the self-service API's), on the items of
 * dynamodb-items.ts. A change of the secrets is planned by the rules of secrets.ts on the item
 * read, then written only if its `updatedAt` (moved forward by every change of the secrets) and
 * its number of secrets are as read: two writers never both pass the rule. A customer's clients
 * are one Query of the table's `byCustomer` index (hash `customerId`, range `sk`: users carry a
 * customerId too, with another sort key). Refusals carry a typed reason (lib/errors.ts Refusal).
 */
import { PutCommand, paginateQuery, paginateScan } from '@aws-sdk/lib-dynamodb';
import { BY_CUSTOMER_INDEX } from '../accounts/dynamodb-items.ts';
import { conditional, dynamo } from '../aws/errors.ts';
import { deleteOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { AppError } from '../errors.ts';
import { redirectUriChangeApplied, redirectUrisAfter } from '../platforms/redirect-uris.ts';
import { moveRevocationCutoff } from '../revocation/dynamodb.ts';
import { type Clock, systemClock } from '../time.ts';
import {
  type ClientRecord,
  type ClientRepository,
  type CustomerClient,
  isPlatform,
  type NewClient,
  type NewPlatform,
  newCustomerClient,
  newPlatformClient,
  type SecretChange,
} from './clients.ts';
import {
  byAge,
  CLIENT_ATTRIBUTES,
  CLIENT_SK,
  clientItem,
  clientKey,
  clientOwner,
  secretEntry,
  toClient,
} from './dynamodb-items.ts';
import { createDynamoClientReader, createDynamoClientStatusReader } from './dynamodb-readers.ts';
import { type ClientSecret, planSecretAddition, secretRemovalRefusal } from './secrets.ts';

/** Reads and writes of a secrets change before it gives up on writers changing them alongside. */
const SECRET_WRITE_ATTEMPTS = 4;

/**
 * The `updatedAt` of a change to the secrets: now, or just past the one read when the clock is
 * behind it, so that every such change moves it and a write conditioned on the read loses a race.
 */
const laterThan = (read: string, now: Date) =>
  new Date(Math.max(now.getTime(), Date.parse(read) + 1)).toISOString();

export function createDynamoClientRepository(deps: Table & { readonly clock?: Clock }): ClientRepository {
  const { client, tableName: TableName } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => clock().toISOString();
  const noSuchClient = () => new AppError('NOT_FOUND', { reason: 'no-such-client' });
  const raced = (what: string) =>
    new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error(`${what} kept racing other changes`) });

  const reader = createDynamoClientReader(deps);
  const read = reader.findClient;

  /** The clients of every page `pages` yields, ordered by id. */
  const allPages = (pages: AsyncIterable<{ readonly Items?: Record<string, unknown>[] }>) =>
    dynamo(async () => {
      const clients: ClientRecord[] = [];
      for await (const page of pages) clients.push(...(page.Items ?? []).map(toClient));
      return clients.sort((a, b) => a.clientId.localeCompare(b.clientId));
    });

  const scanAll = () =>
    allPages(
      paginateScan(
        { client },
        {
          TableName,
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': CLIENT_SK },
          ConsistentRead: true,
        },
      ),
    );

  /** The index is eventually consistent (as every global secondary index): no ConsistentRead. */
  const ofCustomer = (customerId: string) =>
    allPages(
      paginateQuery(
        { client },
        {
          TableName,
          IndexName: BY_CUSTOMER_INDEX,
          KeyConditionExpression: 'customerId = :customer AND sk = :sk',
          ExpressionAttributeValues: { ':customer': customerId, ':sk': CLIENT_SK },
          // The index holds users too: naming the client's attributes lets the self-service
          // API's role be refused every other one (a password hash) at IAM (infra/roles-customer.yml).
          ProjectionExpression: CLIENT_ATTRIBUTES.map((name) => `#${name}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(CLIENT_ATTRIBUTES.map((name) => [`#${name}`, name])),
        },
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

  /**
   * Writes a new client or platform, or answers the one already there when it is this write's own,
   * sent again by the SDK after its answer was lost (the secret's id and digest, or key, are ours); undefined when
   * another holds the id.
   */
  async function put(record: ClientRecord): Promise<ClientRecord | undefined> {
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
    const [secret] = record.secrets;
    const existing = await read(record.clientId);
    return existing?.secrets.some(
      (stored) =>
        stored.id === secret?.id && stored.digest === secret.digest && stored.key?.kid === secret.key?.kid,
    )
      ? existing
      : undefined;
  }

  /** One read-then-write of addClientSecret: the change, or undefined when another write came between. */
  async function addOnce(
    existing: ClientRecord,
    secret: ClientSecret,
    expireOthersAt: Date | undefined,
  ): Promise<SecretChange | undefined> {
    const at = clock();
    const plan = planSecretAddition(existing.secrets, at, expireOthersAt, secret);
    if (plan.refused !== undefined) throw new AppError('CONFLICT', { reason: plan.refused });
    const { kept, ended, pruned: expired } = plan;
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
    listClients: async (customerId) =>
      (customerId === undefined ? await scanAll() : await ofCustomer(customerId)).filter(
        (found): found is CustomerClient => !isPlatform(found),
      ),
    listPlatforms: async () => (await scanAll()).filter(isPlatform),
    exportClients: () => scanAll(),

    async createClient(client: NewClient) {
      const written = await put(newCustomerClient(client, now()));
      if (written !== undefined && !isPlatform(written)) return written;
      throw new AppError('ALREADY_EXISTS', { reason: 'client-exists' });
    },

    async createPlatform(platform: NewPlatform) {
      const written = await put(newPlatformClient(platform, now()));
      if (written !== undefined && isPlatform(written)) return written;
      throw new AppError('ALREADY_EXISTS', { reason: 'client-exists' });
    },

    async changeRedirectUris(clientId, change) {
      let sent = false;
      for (let attempt = 1; attempt <= SECRET_WRITE_ATTEMPTS; attempt++) {
        const existing = await read(clientId);
        if (existing === null || !isPlatform(existing)) throw noSuchClient();
        // An addition finds its URI there (before, or by its own first sending, its answer lost);
        // after a write whose condition failed, a removal may find its own done so.
        if (redirectUriChangeApplied(existing.platform.redirectUris, change) && ('add' in change || sent))
          return existing;
        const uris = redirectUrisAfter(existing.platform.redirectUris, change);
        const updatedAt = laterThan(existing.updatedAt, clock());
        const written = await update(
          clientId,
          'SET redirectUris = :uris, updatedAt = :updated',
          'updatedAt = :read AND attribute_exists(redirectUris)',
          { ':uris': [...uris], ':updated': updatedAt, ':read': existing.updatedAt },
        );
        if (written !== undefined) return { ...existing, platform: { redirectUris: [...uris] }, updatedAt };
        sent = true;
      }
      throw raced('changing redirect URIs');
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
        if (same !== undefined) throw new AppError('ALREADY_EXISTS', { reason: 'secret-exists' });
        const change = await addOnce(existing, secret, options.expireOthersAt);
        if (change !== undefined) return change;
      }
      throw raced('adding a secret');
    },

    async removeClientSecret(clientId, secretId, options = {}) {
      const refusal = (existing: ClientRecord | null) => {
        if (existing === null) return noSuchClient();
        const reason = secretRemovalRefusal(existing.secrets, secretId, clock(), options);
        if (reason === undefined) return undefined;
        return new AppError(reason === 'no-such-secret' ? 'NOT_FOUND' : 'CONFLICT', { reason });
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
