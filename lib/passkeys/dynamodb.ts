/**
 * Passkeys on the accounts table, a partition per user beside the user's item (not in it: IAM
 * conditions a request on the partition key alone, so the roles that write passkeys are kept off
 * every user item), and the alias that finds that partition from the WebAuthn user handle a
 * discoverable sign-in carries (no name in it):
 *
 * | item    | pk                    | sk                   |
 * |---------|-----------------------|----------------------|
 * | passkey | PASSKEY#<folded name> | PASSKEY#<credential> |
 * | alias   | HANDLE#<handle>       | HANDLE               |
 *
 * Each passkey is one item written in one request, so a registration whose answer is lost leaves
 * a whole passkey or none. The user item holds the handle (`passkeyHandle`); removing the user
 * removes its passkeys and alias first (lib/accounts/dynamodb-users.ts), so a user created later
 * under the same name inherits none.
 *
 * Their ceremonies' challenges on the sessions table, beside the refresh sessions and the
 * authorization requests, as `webauthn#<challenge>`: spent by one conditional write, expired by
 * `expiresAt` (checked; DynamoDB's TTL deletes them late).
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { accountItems } from '../accounts/dynamodb-items.ts';
import { foldUsername } from '../accounts/username-key.ts';
import { conditional, dynamo } from '../aws/errors.ts';
import { readOwned, type Table, updateOwned } from '../aws/owned-items.ts';
import { epochSeconds } from '../time.ts';
import type { ChallengeStore, Passkey, PasskeyStore } from './store.ts';

export const PASSKEY_PREFIX = 'PASSKEY#';
export const HANDLE_PREFIX = 'HANDLE#';
const CHALLENGE_PREFIX = 'webauthn#';

const passkeysPk = (username: string) => `${PASSKEY_PREFIX}${foldUsername(username)}`;
const passkeyKey = (username: string, passkeyId: string) => ({
  pk: passkeysPk(username),
  sk: `${PASSKEY_PREFIX}${passkeyId}`,
});
export const handleKey = (handle: string) => ({ pk: `${HANDLE_PREFIX}${handle}`, sk: 'HANDLE' });

const owner = (username: string) => ({ attribute: 'username', name: username }) as const;

function toPasskey(item: Record<string, unknown>): Passkey {
  return {
    passkeyId: String(item.passkeyId),
    username: String(item.username),
    name: String(item.name),
    publicKey: String(item.publicKey),
    counter: Number(item.counter ?? 0),
    transports: Array.isArray(item.transports) ? item.transports.map(String) : [],
    backedUp: item.backedUp === true,
    createdAt: String(item.createdAt),
    ...(typeof item.lastUsedAt === 'string' && { lastUsedAt: item.lastUsedAt }),
  };
}

export function createDynamoPasskeyStore(table: Table): PasskeyStore {
  const { client, tableName: TableName } = table;
  const userKey = accountItems.userKey;

  return {
    async userHandle(username) {
      const user = await readOwned(table, userKey(username), owner(username), ['passkeyHandle'], {
        consistent: true,
      });
      if (user === undefined) return null;
      if (typeof user.passkeyHandle === 'string') return user.passkeyHandle;
      // The alias first: a handle on the user item always finds its way back. Two first uses at
      // once each write an alias; the user item keeps one, and the other alias finds a handle no
      // authenticator holds.
      const handle = randomBytes(32).toString('base64url');
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: { ...handleKey(handle), username },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      const updated = await updateOwned(table, userKey(username), owner(username), {
        expression: 'SET passkeyHandle = if_not_exists(passkeyHandle, :handle)',
        values: { ':handle': handle },
        returnValues: 'UPDATED_NEW',
      });
      return updated === undefined ? null : String(updated.Attributes?.passkeyHandle);
    },

    async list(username) {
      // Ten at most (MAX_PASSKEYS): one page.
      const { Items = [] } = await dynamo(() =>
        client.send(
          new QueryCommand({
            TableName,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': passkeysPk(username) },
            ConsistentRead: true,
          }),
        ),
      );
      return Items.filter((item) => item.username === username)
        .map(toPasskey)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async add(passkey) {
      const added = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: {
              ...passkeyKey(passkey.username, passkey.passkeyId),
              passkeyId: passkey.passkeyId,
              username: passkey.username,
              name: passkey.name,
              publicKey: passkey.publicKey,
              counter: passkey.counter,
              transports: [...passkey.transports],
              backedUp: passkey.backedUp,
              createdAt: passkey.createdAt,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      if (added !== undefined) return true;
      // This write sent again by the SDK after its answer was lost: the passkey is ours, as made.
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({
            TableName,
            Key: passkeyKey(passkey.username, passkey.passkeyId),
            ConsistentRead: true,
          }),
        ),
      );
      return (
        Item?.username === passkey.username &&
        Item.publicKey === passkey.publicKey &&
        Item.createdAt === passkey.createdAt
      );
    },

    async remove(username, passkeyId) {
      const removed = await conditional(() =>
        client.send(
          new DeleteCommand({
            TableName,
            Key: passkeyKey(username, passkeyId),
            ConditionExpression: 'username = :owner',
            ExpressionAttributeValues: { ':owner': username },
          }),
        ),
      );
      return removed !== undefined;
    },

    async findByHandle(userHandle, passkeyId) {
      const { Item: alias } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: handleKey(userHandle), ConsistentRead: true })),
      );
      if (typeof alias?.username !== 'string') return null;
      const { Item } = await dynamo(() =>
        client.send(
          new GetCommand({ TableName, Key: passkeyKey(alias.username, passkeyId), ConsistentRead: true }),
        ),
      );
      return Item?.username === alias.username ? toPasskey(Item) : null;
    },

    async recordUse(passkey, { to, at }) {
      const key = passkeyKey(passkey.username, passkey.passkeyId);
      const recorded = await updateOwned(table, key, owner(passkey.username), {
        expression: 'SET #counter = :to, lastUsedAt = :at',
        condition: '#counter = :from',
        names: { '#counter': 'counter' },
        values: { ':to': to, ':from': passkey.counter, ':at': at },
      });
      if (recorded !== undefined) return true;
      // This write sent again by the SDK after its answer was lost: the use recorded is ours.
      const { Item } = await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: key, ConsistentRead: true })),
      );
      return Item?.username === passkey.username && Item.counter === to && Item.lastUsedAt === at;
    },
  };
}

export function createDynamoChallengeStore(table: Table): ChallengeStore {
  const { client, tableName: TableName } = table;
  const key = (challenge: string) => ({ sessionId: `${CHALLENGE_PREFIX}${challenge}` });
  return {
    async create(challenge, ceremony, expiresAt) {
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: {
              ...key(challenge),
              ceremony: ceremony.kind,
              ...(ceremony.kind === 'registration' && { username: ceremony.username }),
              expiresAt,
            },
          }),
        ),
      );
    },

    async spend(challenge, spender, now) {
      const spent = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: key(challenge),
            UpdateExpression: 'SET spentBy = :spender',
            ConditionExpression:
              'attribute_exists(sessionId) AND expiresAt > :now AND (attribute_not_exists(spentBy) OR spentBy = :spender)',
            ExpressionAttributeValues: { ':spender': spender, ':now': epochSeconds(now) },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      const item = spent?.Attributes;
      if (item === undefined) return null;
      return item.ceremony === 'registration'
        ? { kind: 'registration', username: String(item.username) }
        : item.ceremony === 'sign-in'
          ? { kind: 'sign-in' }
          : null;
    },
  };
}
