/**
 * Authorization requests and codes on the sessions table, beside the refresh sessions, whose
 * key (`sessionId`) and TTL (`expiresAt`) they share; a prefix keeps them apart from a session's
 * random UUID:
 *
 * | item    | sessionId                 |
 * |---------|---------------------------|
 * | request | authz#<request id>        |
 * | code    | code#<SHA-256 of the code> |
 *
 * Every step is one conditional write, so a request is opened in one browser, takes one decision,
 * and a code is spent once. DynamoDB's TTL deletes them late; expiry is `expiresAt`, checked.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import type { Table } from '../aws/owned-items.ts';
import { isScope, type Scope } from '../scopes.ts';
import { epochSeconds } from '../time.ts';
import type { AuthorizationCode, AuthorizationStore, PendingAuthorization, Redemption } from './store.ts';

const REQUEST_PREFIX = 'authz#';
const CODE_PREFIX = 'code#';

const requestKey = (id: string) => ({ sessionId: `${REQUEST_PREFIX}${id}` });
const codeKey = (digest: string) => ({ sessionId: `${CODE_PREFIX}${digest}` });

function toPending(item: Record<string, unknown>): PendingAuthorization {
  return {
    id: String(item.id),
    request: {
      clientId: String(item.clientId),
      redirectUri: String(item.redirectUri),
      scopes: (item.scopes as string[]).filter(isScope) as Scope[],
      ...(typeof item.state === 'string' && { state: item.state }),
      codeChallenge: String(item.codeChallenge),
    },
    platformName: String(item.platformName),
    expiresAt: Number(item.expiresAt),
    ...(typeof item.browser === 'string' && { browser: item.browser }),
    ...(typeof item.username === 'string' && {
      signedIn: {
        username: item.username,
        customerId: String(item.customerId),
        at: Number(item.signedInAt),
        method: item.signInMethod === 'passkey' ? 'passkey' : 'password',
      },
    }),
    ...(typeof item.decidedAt === 'number' && { decidedAt: item.decidedAt }),
  };
}

function toCode(item: Record<string, unknown>): AuthorizationCode {
  return {
    digest: String(item.digest),
    clientId: String(item.clientId),
    redirectUri: String(item.redirectUri),
    codeChallenge: String(item.codeChallenge),
    connectionId: String(item.connectionId),
    customerId: String(item.customerId),
    scopes: (item.scopes as string[]).filter(isScope) as Scope[],
    approvedAt: Number(item.approvedAt),
    expiresAt: Number(item.expiresAt),
  };
}

export function createDynamoAuthorizationStore(deps: Table): AuthorizationStore {
  const { client, tableName: TableName } = deps;
  const read = async (Key: Record<string, string>) =>
    (await dynamo(() => client.send(new GetCommand({ TableName, Key, ConsistentRead: true })))).Item;
  /** One conditional update of a live request; true when it held, or when `ours` says the item already is as written. */
  const step = async (
    id: string,
    expression: string,
    condition: string,
    values: Record<string, unknown>,
    ours: (item: Record<string, unknown>) => boolean,
  ) => {
    const written = await conditional(() =>
      client.send(
        new UpdateCommand({
          TableName,
          Key: requestKey(id),
          UpdateExpression: expression,
          ConditionExpression: `${condition} AND expiresAt > :now`,
          ExpressionAttributeValues: values,
        }),
      ),
    );
    if (written !== undefined) return true;
    // Our own write, resent by the SDK after its answer was lost, found the condition spent.
    const item = await read(requestKey(id));
    return item !== undefined && ours(item);
  };

  return {
    async push(pending) {
      const { request } = pending;
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: {
              ...requestKey(pending.id),
              id: pending.id,
              clientId: request.clientId,
              redirectUri: request.redirectUri,
              scopes: [...request.scopes],
              ...(request.state !== undefined && { state: request.state }),
              codeChallenge: request.codeChallenge,
              platformName: pending.platformName,
              expiresAt: pending.expiresAt,
              ...(pending.browser !== undefined && { browser: pending.browser }),
            },
            // A random id: only our own resend can find it there, and it writes the same.
            ConditionExpression: 'attribute_not_exists(sessionId) OR id = :id',
            ExpressionAttributeValues: { ':id': pending.id },
          }),
        ),
      );
    },

    async get(id, now) {
      const item = await read(requestKey(id));
      return item === undefined || Number(item.expiresAt) <= epochSeconds(now) ? null : toPending(item);
    },

    open: (id, browser, expiresAt, now) =>
      step(
        id,
        'SET browser = :browser, expiresAt = :until',
        'attribute_not_exists(browser)',
        { ':browser': browser, ':until': expiresAt, ':now': epochSeconds(now) },
        (item) => item.browser === browser && item.expiresAt === expiresAt,
      ),

    signIn: (id, browser, nextBrowser, who, now) =>
      step(
        id,
        'SET username = :username, customerId = :customer, signedInAt = :at, signInMethod = :method, browser = :next',
        'browser = :browser AND attribute_not_exists(decidedAt)',
        {
          ':browser': browser,
          ':next': nextBrowser,
          ':username': who.username,
          ':customer': who.customerId,
          ':at': who.at,
          ':method': who.method,
          ':now': epochSeconds(now),
        },
        (item) =>
          item.username === who.username && item.decidedAt === undefined && item.browser === nextBrowser,
      ),

    decide: (id, browser, now) => {
      // Names this decision: the SDK's resend of it is ours, another decision is not.
      const by = randomUUID();
      return step(
        id,
        'SET decidedAt = :at, decidedBy = :by',
        'browser = :browser AND attribute_exists(username) AND attribute_not_exists(decidedAt)',
        { ':browser': browser, ':at': now.getTime(), ':by': by, ':now': epochSeconds(now) },
        (item) => item.decidedBy === by,
      );
    },

    async createCode(code) {
      await dynamo(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: { ...codeKey(code.digest), ...code, scopes: [...code.scopes] },
            ConditionExpression: 'attribute_not_exists(sessionId) OR connectionId = :connection',
            ExpressionAttributeValues: { ':connection': code.connectionId },
          }),
        ),
      );
    },

    async redeemCode(digest, binding, redemptionId, now): Promise<Redemption> {
      const written = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: codeKey(digest),
            UpdateExpression: 'SET redeemedBy = :by',
            ConditionExpression:
              'clientId = :client AND redirectUri = :uri AND codeChallenge = :challenge AND ' +
              'attribute_not_exists(redeemedBy) AND expiresAt > :now',
            ExpressionAttributeValues: {
              ':by': redemptionId,
              ':client': binding.clientId,
              ':uri': binding.redirectUri,
              ':challenge': binding.codeChallenge,
              ':now': epochSeconds(now),
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (written?.Attributes !== undefined) return { outcome: 'redeemed', code: toCode(written.Attributes) };
      const item = await read(codeKey(digest));
      // Not all it was issued for: the exchange is wrong, the code untouched.
      if (
        item === undefined ||
        item.clientId !== binding.clientId ||
        item.redirectUri !== binding.redirectUri ||
        item.codeChallenge !== binding.codeChallenge
      )
        return { outcome: 'unknown' };
      if (item.redeemedBy === redemptionId) return { outcome: 'redeemed', code: toCode(item) };
      // Spent by another exchange: a replay, even once expired. Unspent and expired: merely unknown.
      return item.redeemedBy === undefined
        ? { outcome: 'unknown' }
        : { outcome: 'replayed', code: toCode(item) };
    },
  };
}
