/**
 * The user items: reads, creation, password, enabling, scopes, administration and removal. Every
 * change that takes something away from a user also moves its revocation cutoff, in the same write.
 */

import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { deleteOwned, type Owner, readOwned, updateOwned } from '../aws/owned-items.ts';
import { AppError } from '../errors.ts';
import { createDynamoPasskeyStore, handleKey } from '../passkeys/dynamodb.ts';
import { moveRevocationCutoff } from '../revocation/dynamodb.ts';
import { revocationCutoff } from '../revocation/revocation.ts';
import { joinCustomer } from './dynamodb-customers.ts';
import { type AccountsTable, accountItems, toUser, type UserItem } from './dynamodb-items.ts';
import {
  type AccountRepository,
  type Administrations,
  type NewUser,
  passwordHashDigest,
} from './repository.ts';

export type UserStore = Pick<
  AccountRepository,
  | 'findByUsername'
  | 'createUser'
  | 'setPasswordHash'
  | 'setEnabled'
  | 'upgradePasswordHash'
  | 'revokeUserTokens'
  | 'setUserScopes'
  | 'setAdministrator'
  | 'removeUser'
> &
  Pick<Administrations, 'markEnding' | 'endMarked' | 'unmark'>;

const noSuchUser = () => new AppError('NOT_FOUND', { reason: 'no-such-user' });

export function createUserStore(table: AccountsTable): UserStore {
  const { client, tableName: TableName, clock } = table;
  const now = () => clock().toISOString();
  const { userKey } = accountItems;

  /** The item under the user's folded name, whichever spelling it holds. */
  const readItem = async (username: string) =>
    (
      await dynamo(() =>
        client.send(new GetCommand({ TableName, Key: userKey(username), ConsistentRead: true })),
      )
    ).Item;

  const owner = (username: string): Owner => ({ attribute: 'username', name: username });

  /** Updates a user found by exact username; NOT_FOUND when there is none. */
  async function updateUser(username: string, expression: string, values: Record<string, unknown>) {
    const updated = await updateOwned(table, userKey(username), owner(username), {
      expression: `${expression}, updatedAt = :now`,
      values: { ...values, ':now': now() },
    });
    if (updated === undefined) throw noSuchUser();
  }

  /** `also`: a further condition (its values in `values`), failing as no such user does. */
  async function updateAndRevoke(
    username: string,
    assignments: string[],
    values: Record<string, unknown>,
    remove?: string[],
    also?: string,
  ) {
    const revoked = await moveRevocationCutoff({
      client,
      tableName: TableName,
      key: userKey(username),
      owner: owner(username),
      assignments: [...assignments, 'updatedAt = :now'],
      values: { ...values, ':now': now() },
      remove,
      ...(also !== undefined && { also }),
      clock,
    });
    if (!revoked) throw noSuchUser();
  }

  return {
    async findByUsername(username) {
      const item = (await readItem(username)) as UserItem | undefined;
      return item !== undefined && item.username === username ? toUser(item) : null;
    },

    async createUser({ username, passwordHash, customerId }: NewUser) {
      const at = now();
      const created = await conditional(() =>
        client.send(
          new PutCommand({
            TableName,
            Item: accountItems.user({
              username,
              passwordHash,
              enabled: true,
              customerId,
              depot: { depotCode: null, addressesSeen: 0 },
              revokedBefore: revocationCutoff(clock()),
              createdAt: at,
              updatedAt: at,
            }),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      if (created === undefined) {
        // A first run whose later writes failed left a user without its membership or depot
        // code; the operator's second run completes them before it is told the user exists.
        const Item = await readItem(username);
        if (Item?.username === username && typeof Item.customerId === 'string') {
          await joinCustomer(table, Item.customerId, username);
        }
        // Our own write, sent again by the SDK after its answer was lost: the hash's salt is ours.
        if (Item?.username === username && Item.passwordHash === passwordHash) return;
        throw new AppError('ALREADY_EXISTS', { reason: 'user-exists' });
      }
      if (customerId !== null) await joinCustomer(table, customerId, username);
    },

    // A new password: the digest of a hash an upgrade replaced no longer names this password.
    setPasswordHash: (username, passwordHash) =>
      updateAndRevoke(
        username,
        // When: an import run again tells a password set here since (kept) from another file's.
        ['passwordHash = :hash', 'passwordSetAt = :now'],
        { ':hash': passwordHash },
        ['upgradedFromHash'],
      ),

    setEnabled: (username, enabled) =>
      enabled
        ? updateUser(username, 'SET enabled = :enabled', { ':enabled': true })
        : updateAndRevoke(username, ['enabled = :enabled'], { ':enabled': false }),

    async upgradePasswordHash(username, currentHash, upgradedHash) {
      // A failed condition: the password changed meanwhile, or the user went. Nothing to do.
      await updateOwned(table, userKey(username), owner(username), {
        expression:
          'SET passwordHash = :upgraded, upgradedFromHash = if_not_exists(upgradedFromHash, :replaced)',
        condition: 'passwordHash = :current',
        values: {
          ':upgraded': upgradedHash,
          ':current': currentHash,
          ':replaced': passwordHashDigest(currentHash),
        },
      });
    },

    revokeUserTokens: (username) => updateAndRevoke(username, [], {}),

    // Revokes the user's tokens: none keeps scopes it no longer has, or lacks ones it was given.
    setUserScopes: (username, scopes) =>
      scopes === null
        ? updateAndRevoke(username, [], {}, ['scopes'])
        : updateAndRevoke(username, ['scopes = :scopes'], { ':scopes': [...scopes] }),

    async setAdministrator(username, admin, customerId) {
      if (!admin)
        return customerId === undefined
          ? updateAndRevoke(username, [], {}, ['admin'])
          : updateAndRevoke(username, [], { ':customer': customerId }, ['admin'], 'customerId = :customer');
      const granted = await updateOwned(table, userKey(username), owner(username), {
        expression: 'SET admin = :admin, updatedAt = :now',
        condition: customerId === undefined ? 'attribute_exists(customerId)' : 'customerId = :customer',
        values: {
          ':admin': true,
          ':now': now(),
          ...(customerId !== undefined && { ':customer': customerId }),
        },
      });
      if (granted !== undefined) return;
      // The condition failed: no such user (or, asked for one customer's, none of that
      // customer's), or one without a customer. Its name only: the self-service API's role may
      // read no more of a user (infra/roles-customer.yml).
      if (customerId !== undefined) throw noSuchUser();
      if ((await readOwned(table, userKey(username), owner(username), [])) === undefined) throw noSuchUser();
      throw new AppError('VALIDATION_FAILED', { reason: 'no-customer' });
    },

    async markEnding(username, customerId, ending, at) {
      // Only an administrator of that customer, and only while no other end's mark holds (this
      // one's own: the SDK sends the write again when its answer was lost).
      const marked = await updateOwned(table, userKey(username), owner(username), {
        expression: 'SET adminEnding = :ending, adminEndingUntil = :until',
        condition:
          'admin = :admin AND customerId = :customer AND ' +
          '(attribute_not_exists(adminEndingUntil) OR adminEndingUntil <= :now OR adminEnding = :ending)',
        values: {
          ':ending': ending.id,
          ':until': ending.until,
          ':admin': true,
          ':customer': customerId,
          ':now': at,
        },
      });
      if (marked !== undefined) return 'marked';
      const item = await readOwned(table, userKey(username), owner(username), ['customerId', 'admin'], {
        consistent: true,
      });
      return item?.admin === true && item.customerId === customerId ? 'in-progress' : 'not-administrator';
    },

    async endMarked(username, customerId, ending, at) {
      return moveRevocationCutoff({
        client,
        tableName: TableName,
        key: userKey(username),
        owner: owner(username),
        assignments: ['updatedAt = :now'],
        values: { ':now': now(), ':customer': customerId, ':ending': ending.id, ':at': at },
        remove: ['admin', 'adminEnding', 'adminEndingUntil'],
        also: 'customerId = :customer AND adminEnding = :ending AND adminEndingUntil > :at',
        clock,
      });
    },

    async unmark(username, ending) {
      await updateOwned(table, userKey(username), owner(username), {
        expression: 'REMOVE adminEnding, adminEndingUntil',
        condition: 'adminEnding = :ending',
        values: { ':ending': ending.id },
      });
    },

    async removeUser(username) {
      // The membership first: a run that fails after it leaves the user, and the next run
      // finds it and finishes; the other order would leave a membership nothing can find.
      const Item = await readItem(username);
      if (Item?.username !== username) throw noSuchUser();
      // Its passkeys and their alias too, before the user: a user made later under the name
      // must inherit no way in, and a run cut short finds the user and finishes. A user has
      // passkeys only once it has a handle: a registration's options make it first.
      const handle = Item.passkeyHandle;
      if (typeof handle === 'string') {
        const passkeys = createDynamoPasskeyStore(table);
        await Promise.all(
          (await passkeys.list(username)).map((passkey) => passkeys.remove(username, passkey.passkeyId)),
        );
        await dynamo(() => client.send(new DeleteCommand({ TableName, Key: handleKey(handle) })));
      }
      const customerId = Item.customerId;
      if (typeof customerId === 'string') {
        await dynamo(() =>
          client.send(new DeleteCommand({ TableName, Key: accountItems.memberKey(customerId, username) })),
        );
      }
      // A failed condition: the user is gone since the read, by this delete sent again by the
      // SDK after its answer was lost, or by another removal; gone either way.
      await deleteOwned(table, userKey(username), owner(username));
    },
  };
}
