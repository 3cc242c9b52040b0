/**
 * The contract of the account store, on each DynamoDB implementation and on the in-memory
 * fake of the unit tests; then what only the DynamoDB store has.
 */

import { type DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { createDynamoStatusReader } from '../../lib/accounts/dynamodb-status.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import type { UserStatus, UserStatusReader } from '../../lib/revocation/revocation.ts';
import {
  describeEachDynamo,
  interceptSends,
  recordSends,
  startTestDynamo,
  type TestDynamo,
} from '../support/dynamo.ts';
import { codeOf } from '../support/errors.ts';
import { memoryStatuses } from '../support/memory-statuses.ts';
import { freePort } from '../support/ports.ts';
import {
  ACCOUNT_STORES,
  type AccountsOn,
  describeStoreContract,
  type StoreFactories,
} from '../support/stores.ts';

describeStoreContract('account repository', ACCOUNT_STORES, (store) => {
  let accountsOn: AccountsOn;
  let accounts: AccountRepository;
  beforeAll(() => {
    accountsOn = store();
    accounts = accountsOn();
  });

  const newUser = (username: string, customerId: string | null = null) =>
    accounts.createUser({ username, passwordHash: '$2b$04$hash', customerId });

  it('finds a user by the exact username only', async () => {
    await newUser('CaseUser');
    expect((await accounts.findByUsername('CaseUser'))?.username).toBe('CaseUser');
    expect(await accounts.findByUsername('caseuser')).toBeNull();
    expect(await accounts.findByUsername('CASEUSER')).toBeNull();
  });

  it('refuses a username that exists, also when it differs only by case', async () => {
    await newUser('twin');
    // Another hash, as bcrypt's salt makes it: the same hash is the same creation sent again.
    const again = (username: string) =>
      accounts.createUser({ username, passwordHash: '$2b$04$other', customerId: null });
    expect(await codeOf(again('twin'))).toBe('ALREADY_EXISTS');
    expect(await codeOf(again('Twin'))).toBe('ALREADY_EXISTS');
  });

  it('grants and ends administration, asked for one customer, only while the user is that customer’s', async () => {
    await newUser('moved-admin', 'C-now');

    expect(await codeOf(accounts.setAdministrator('moved-admin', true, 'C-before'))).toBe('NOT_FOUND');
    expect((await accounts.findByUsername('moved-admin'))?.admin).toBe(false);
    expect(await codeOf(accounts.setAdministrator('nobody-admin', true, 'C-now'))).toBe('NOT_FOUND');

    await accounts.setAdministrator('moved-admin', true, 'C-now');
    expect((await accounts.findByUsername('moved-admin'))?.admin).toBe(true);
    expect(await codeOf(accounts.setAdministrator('moved-admin', false, 'C-before'))).toBe('NOT_FOUND');
    expect((await accounts.findByUsername('moved-admin'))?.admin).toBe(true);
    await accounts.setAdministrator('moved-admin', false, 'C-now');
    expect((await accounts.findByUsername('moved-admin'))?.admin).toBe(false);
  });

  it('refuses a username that differs only under full case folding (ß and SS, ς and σ)', async () => {
    await newUser('Straße');
    await newUser('ΟΔΟΣ');
    expect(await codeOf(newUser('STRASSE'))).toBe('ALREADY_EXISTS');
    expect(await codeOf(newUser('strasse'))).toBe('ALREADY_EXISTS');
    expect(await codeOf(newUser('οδοσ'))).toBe('ALREADY_EXISTS');
    expect(await accounts.findByUsername('STRASSE')).toBeNull();
    expect((await accounts.findByUsername('Straße'))?.username).toBe('Straße');
  });

  it('gives a user the first non-empty depot code of addresses added before it', async () => {
    await accounts.addPickupAddress('C-before', '');
    await accounts.addPickupAddress('C-before', 'PRG01');
    await accounts.addPickupAddress('C-before', 'BRN02');
    await newUser('before-user', 'C-before');
    expect(await accounts.findByUsername('before-user')).toMatchObject({
      customerId: 'C-before',
      depotCode: 'PRG01',
    });
  });

  it('updates the depot code of existing users when an address is added later', async () => {
    await newUser('after-user', 'C-after');
    expect((await accounts.findByUsername('after-user'))?.depotCode).toBeNull();
    await accounts.addPickupAddress('C-after', '');
    expect((await accounts.findByUsername('after-user'))?.depotCode).toBeNull();
    await accounts.addPickupAddress('C-after', 'OST07');
    await accounts.addPickupAddress('C-after', 'PRG01');
    expect((await accounts.findByUsername('after-user'))?.depotCode).toBe('OST07');
  });

  it('keeps every address of concurrent appends of different depots, in distinct positions', async () => {
    await newUser('busy-user', 'C-busy');
    // Different depots: two appends of the same one at once may be taken for a run cut short
    // and its rerun (lib/accounts/dynamodb-customers.ts addPickupAddress), and kept once.
    await Promise.all(
      ['', 'A1', 'B2', 'C3', 'D4'].map((depot) => accounts.addPickupAddress('C-busy', depot)),
    );
    const list = await accounts.listPickupAddresses('C-busy');
    expect(list.map((a) => a.position)).toEqual([1, 2, 3, 4, 5]);
    expect((await accounts.findByUsername('busy-user'))?.depotCode).toBe(
      list.find((a) => a.depotCode !== '')?.depotCode,
    );
  });

  it('lists a customer’s addresses in the order they were added', async () => {
    for (const depot of ['X1', '', 'X3']) await accounts.addPickupAddress('C-order', depot);
    expect((await accounts.listPickupAddresses('C-order')).map((a) => a.depotCode)).toEqual(['X1', '', 'X3']);
  });

  it('lists more than nine addresses in the order they were added, and takes the depot of the first', async () => {
    const depots = ['', '', '', '', '', '', '', '', '', 'D10', 'D11'];
    for (const depot of depots) await accounts.addPickupAddress('C-eleven', depot);

    await newUser('eleven-user', 'C-eleven');

    const list = await accounts.listPickupAddresses('C-eleven');
    expect(list.map((a) => a.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(list.map((a) => a.depotCode)).toEqual(depots);
    expect((await accounts.findByUsername('eleven-user'))?.depotCode).toBe('D10');
  });

  it('disables, enables and changes the password of the exact user only', async () => {
    await newUser('flip');
    await accounts.setEnabled('flip', false);
    expect((await accounts.findByUsername('flip'))?.enabled).toBe(false);
    await accounts.setEnabled('flip', true);
    await accounts.setPasswordHash('flip', '$2b$04$other');
    expect(await accounts.findByUsername('flip')).toMatchObject({
      enabled: true,
      passwordHash: '$2b$04$other',
    });
    expect(await codeOf(accounts.setEnabled('Flip', false))).toBe('NOT_FOUND');
  });

  it('removes a user and its membership, so later addresses do not touch it', async () => {
    await newUser('leaver', 'C-leave');
    await accounts.removeUser('leaver');
    expect(await accounts.findByUsername('leaver')).toBeNull();
    await accounts.addPickupAddress('C-leave', 'D1');
    expect(await accounts.findByUsername('leaver')).toBeNull();
    expect(await codeOf(accounts.removeUser('leaver'))).toBe('NOT_FOUND');
  });

  it('gives a user created again under a removed user’s name nothing of the old customer’s addresses', async () => {
    await newUser('returner', 'C-returner');
    await accounts.removeUser('returner');
    await newUser('returner');

    await accounts.addPickupAddress('C-returner', 'D1');

    expect(await accounts.findByUsername('returner')).toMatchObject({ customerId: null, depotCode: null });
  });

  it('moves the revocation cutoff forward on every revocation, also twice in one second', async () => {
    const at = new Date('2026-11-21T10:00:00.250Z');
    const seconds = Math.floor(at.getTime() / 1000);
    const frozen = accountsOn(() => at);
    const revokedBefore = async () => (await frozen.findStatus('same-second'))?.revokedBefore;
    await frozen.createUser({ username: 'same-second', passwordHash: '$2b$04$hash', customerId: null });
    expect(await revokedBefore()).toBe(seconds + 1);
    // A login now gets iat = seconds + 1; the next revocation must reach it.
    await frozen.revokeUserTokens('same-second');
    expect(await revokedBefore()).toBe(seconds + 2);
    await frozen.setEnabled('same-second', false);
    expect(await revokedBefore()).toBe(seconds + 3);
    await frozen.setPasswordHash('same-second', '$2b$04$other');
    expect(await revokedBefore()).toBe(seconds + 4);
    // On the system clock: the cutoff of the second the revocation happened in.
    const earliest = Math.floor(Date.now() / 1000) + 1;
    await accounts.revokeUserTokens('same-second');
    const latest = Math.floor(Date.now() / 1000) + 1;
    expect(await revokedBefore()).toBeGreaterThanOrEqual(earliest);
    expect(await revokedBefore()).toBeLessThanOrEqual(latest);
  });

  it('creates an enabled user with its hash and customer, stamped by the clock and revoking what came before', async () => {
    const at = new Date('2026-11-21T10:00:00.250Z');

    await accountsOn(() => at).createUser({
      username: 'Fresh',
      passwordHash: '$2b$04$fresh',
      customerId: 'C-fresh',
    });

    expect(await accounts.findByUsername('Fresh')).toEqual({
      username: 'Fresh',
      passwordHash: '$2b$04$fresh',
      enabled: true,
      customerId: 'C-fresh',
      depotCode: null,
      revokedBefore: Math.floor(at.getTime() / 1000) + 1,
      scopes: null,
      admin: false,
      createdAt: at.toISOString(),
      updatedAt: at.toISOString(),
    });
  });

  it('stamps a change with the clock in updatedAt and keeps createdAt', async () => {
    const created = new Date('2026-11-21T10:00:00.000Z');
    const changed = new Date('2026-11-21T11:00:00.000Z');
    await accountsOn(() => created).createUser({
      username: 'stamped',
      passwordHash: '$2b$04$hash',
      customerId: null,
    });

    await accountsOn(() => changed).setPasswordHash('stamped', '$2b$04$other');

    expect(await accounts.findByUsername('stamped')).toMatchObject({
      createdAt: created.toISOString(),
      updatedAt: changed.toISOString(),
    });
  });

  it('gives the status of the exact user only: whether it is enabled, and its revocation cutoff', async () => {
    const at = new Date('2026-11-21T10:00:00.000Z');
    await accountsOn(() => at).createUser({
      username: 'Status',
      passwordHash: '$2b$04$hash',
      customerId: null,
    });

    const statuses = await Promise.all(
      ['Status', 'status', 'nobody'].map((name) => accounts.findStatus(name)),
    );

    expect(statuses).toEqual([
      { enabled: true, revokedBefore: Math.floor(at.getTime() / 1000) + 1, revokedSessions: new Set() },
      null,
      null,
    ]);
  });

  it('enables a disabled user without moving its revocation cutoff', async () => {
    await newUser('revived');
    await accounts.setEnabled('revived', false);
    const disabled = await accounts.findStatus('revived');

    await accounts.setEnabled('revived', true);

    expect(await accounts.findStatus('revived')).toEqual({
      enabled: true,
      revokedBefore: disabled?.revokedBefore,
      revokedSessions: new Set(),
    });
  });

  it('refuses every change to a user that does not exist with NOT_FOUND', async () => {
    await newUser('Present');
    const changes = [
      accounts.setPasswordHash('present', '$2b$04$other'),
      accounts.setEnabled('present', true),
      accounts.setEnabled('present', false),
      accounts.revokeUserTokens('present'),
      accounts.removeUser('present'),
      accounts.revokeUserTokens('absent'),
    ];

    const outcomes = await Promise.all(changes.map(codeOf));

    expect(outcomes).toEqual(Array(changes.length).fill('NOT_FOUND'));
    expect(await accounts.findByUsername('Present')).toMatchObject({
      passwordHash: '$2b$04$hash',
      enabled: true,
    });
  });

  it('says in its NOT_FOUND, by its reason, that there is no such user', async () => {
    const removal = accounts.removeUser('never-existed');

    await expect(removal).rejects.toMatchObject({ code: 'NOT_FOUND', reason: 'no-such-user' });
  });

  it('upgrades a hash that is still the current one, revoking nothing', async () => {
    await newUser('upgrader');
    const before = await accounts.findStatus('upgrader');

    await accounts.upgradePasswordHash('upgrader', '$2b$04$hash', '$2b$05$upgraded');

    expect((await accounts.findByUsername('upgrader'))?.passwordHash).toBe('$2b$05$upgraded');
    expect(await accounts.findStatus('upgrader')).toEqual(before);
  });

  it('upgrades no hash that changed meanwhile: a password change wins over the upgrade', async () => {
    await newUser('changer');
    await accounts.setPasswordHash('changer', '$2b$04$changed');

    await accounts.upgradePasswordHash('changer', '$2b$04$hash', '$2b$05$upgraded');

    expect((await accounts.findByUsername('changer'))?.passwordHash).toBe('$2b$04$changed');
  });

  it('upgrades nothing for a name that matches a user only ignoring case, and does not fail for no user', async () => {
    await newUser('Exact');

    const outcomes = await Promise.all([
      codeOf(accounts.upgradePasswordHash('exact', '$2b$04$hash', '$2b$05$upgraded')),
      codeOf(accounts.upgradePasswordHash('nobody', '$2b$04$hash', '$2b$05$upgraded')),
    ]);

    expect(outcomes).toEqual(['resolved', 'resolved']);
    expect((await accounts.findByUsername('Exact'))?.passwordHash).toBe('$2b$04$hash');
  });
});

/**
 * `client` for a writer whose first update of a user's depot code waits until `release()`.
 * It has read its view of the customer by then (`reachedUpdate` resolves), so a test can
 * let another writer act between that writer's read and its write.
 */
function holdingDepotUpdate(client: DynamoDBDocumentClient) {
  const reached = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  let held = false;
  const holding = interceptSends(client, async (command) => {
    if (
      !held &&
      command instanceof UpdateCommand &&
      /\bdepotCode\b/.test(command.input.UpdateExpression ?? '')
    ) {
      held = true;
      reached.resolve();
      await released.promise;
    }
  });
  return { client: holding, reachedUpdate: reached.promise, release: () => released.resolve() };
}

/**
 * What only the DynamoDB store has: its own failure mode, and writes that interleave (each
 * write of the in-memory store is one synchronous step).
 */
describeEachDynamo('account repository on DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  let accounts: AccountRepository;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
    accounts = createDynamoAccountRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.accounts,
    });
  });
  afterAll(() => dynamo?.close());

  /** A second writer on the same table, held between its view of a customer and its depot-code update. */
  const slowWriter = () => {
    const held = holdingDepotUpdate(dynamo.documentClient);
    const writer = createDynamoAccountRepository({ client: held.client, tableName: dynamo.tables.accounts });
    return { ...held, writer };
  };

  it('keeps the fresher depot code when an address write that read an older view updates the user last', async () => {
    await accounts.createUser({ username: 'raced', passwordHash: '$2b$04$hash', customerId: 'C-race' });
    const slow = slowWriter();

    // The slow write sees only its own empty-depot address: depot code null.
    const slowAdd = slow.writer.addPickupAddress('C-race', '');
    await slow.reachedUpdate;
    // The other sees both addresses, and updates the user first.
    await accounts.addPickupAddress('C-race', 'B2');
    slow.release();
    await slowAdd;

    expect((await accounts.listPickupAddresses('C-race')).map((a) => a.depotCode)).toEqual(['', 'B2']);
    expect((await accounts.findByUsername('raced'))?.depotCode).toBe('B2');
  });

  it('keeps the fresher depot code when a user creation that read an older view updates the user last', async () => {
    const slow = slowWriter();

    // The creation reads the customer before it has any address: depot code null.
    const slowCreate = slow.writer.createUser({
      username: 'joiner',
      passwordHash: '$2b$04$hash',
      customerId: 'C-join',
    });
    await slow.reachedUpdate;
    // The address write sees the new member and gives it the depot first.
    await accounts.addPickupAddress('C-join', 'J1');
    slow.release();
    await slowCreate;

    expect((await accounts.findByUsername('joiner'))?.depotCode).toBe('J1');
  });

  /** The raw items of the accounts table under `pk`, in key order. */
  const partition = async (pk: string) =>
    (
      await dynamo.documentClient.send(
        new QueryCommand({
          TableName: dynamo.tables.accounts,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
        }),
      )
    ).Items ?? [];

  /** A repository whose requests are written down, by command name, as it sends them. */
  const recording = () => {
    const { sent, client } = recordSends(dynamo.documentClient);
    return { sent, writer: createDynamoAccountRepository({ client, tableName: dynamo.tables.accounts }) };
  };

  it('stores a user without a customer with no customer, depot or view attributes', async () => {
    await accounts.createUser({ username: 'Solo', passwordHash: '$2b$04$hash', customerId: null });

    const [item] = await partition('USER#solo');

    expect(Object.keys(item ?? {}).sort()).toEqual(
      ['createdAt', 'enabled', 'passwordHash', 'pk', 'revokedBefore', 'sk', 'updatedAt', 'username'].sort(),
    );
  });

  it('creates a user without a customer in one write', async () => {
    const { sent, writer } = recording();

    await writer.createUser({ username: 'one-write', passwordHash: '$2b$04$hash', customerId: null });

    expect(sent).toEqual(['PutCommand']);
  });

  it('updates only the joining user when a user joins a customer that has others', async () => {
    for (const name of ['member-a', 'member-b']) {
      await accounts.createUser({ username: name, passwordHash: '$2b$04$hash', customerId: 'C-join-one' });
    }
    await accounts.addPickupAddress('C-join-one', 'J1');
    const { sent, writer } = recording();

    await writer.createUser({ username: 'member-c', passwordHash: '$2b$04$hash', customerId: 'C-join-one' });

    expect(sent).toEqual(['PutCommand', 'PutCommand', 'QueryCommand', 'UpdateCommand']);
    expect((await accounts.findByUsername('member-c'))?.depotCode).toBe('J1');
  });

  it('adds an address with one count, one write and one read, then one update per member', async () => {
    for (const name of ['addr-a', 'addr-b']) {
      await accounts.createUser({ username: name, passwordHash: '$2b$04$hash', customerId: 'C-add-one' });
    }
    await accounts.addPickupAddress('C-add-one', 'A1');
    const { sent, writer } = recording();

    await writer.addPickupAddress('C-add-one', 'A2');

    expect(sent).toEqual([
      'QueryCommand',
      'UpdateCommand',
      'PutCommand',
      'QueryCommand',
      'UpdateCommand',
      'UpdateCommand',
      'UpdateCommand',
    ]);
  });

  it('removes a user without a customer with a read and one delete', async () => {
    await accounts.createUser({ username: 'loner', passwordHash: '$2b$04$hash', customerId: null });
    const { sent, writer } = recording();

    await writer.removeUser('loner');

    expect(sent).toEqual(['GetCommand', 'DeleteCommand']);
  });

  it("removes a customer's user membership first, so a removal cut short leaves the user for the next one", async () => {
    await accounts.createUser({ username: 'member-first', passwordHash: '$2b$04$hash', customerId: 'C-rm' });
    const { sent, writer } = recording();

    await writer.removeUser('member-first');

    expect(sent).toEqual(['GetCommand', 'DeleteCommand', 'DeleteCommand']);
    expect(await accounts.findByUsername('member-first')).toBeNull();
  });

  it('deletes the membership of a removed user, and only that one', async () => {
    for (const name of ['stayer', 'goer']) {
      await accounts.createUser({ username: name, passwordHash: '$2b$04$hash', customerId: 'C-members' });
    }

    await accounts.removeUser('goer');

    const members = (await partition('CUSTOMER#C-members')).filter(({ sk }) =>
      String(sk).startsWith('MEMBER#'),
    );
    expect(members.map(({ username }) => username)).toEqual(['stayer']);
  });

  it('reads an address stored without a depot code as one with an empty depot code', async () => {
    await dynamo.documentClient.send(
      new PutCommand({
        TableName: dynamo.tables.accounts,
        Item: {
          pk: 'CUSTOMER#C-bare',
          sk: 'ADDRESS#0000000001',
          customerId: 'C-bare',
          position: 1,
          createdAt: '2026-11-21T10:00:00.000Z',
        },
      }),
    );

    const [address] = await accounts.listPickupAddresses('C-bare');

    expect(address).toEqual({
      customerId: 'C-bare',
      position: 1,
      depotCode: '',
      createdAt: '2026-11-21T10:00:00.000Z',
    });
  });

  it('reads a customer whose items span several query pages', async () => {
    // A query answers at most 1 MB a page: three items of 400 KB need three pages.
    for (const depot of ['P1', 'P2', 'P3']) {
      const { position } = await accounts.addPickupAddress('C-pages', depot);
      await dynamo.documentClient.send(
        new UpdateCommand({
          TableName: dynamo.tables.accounts,
          Key: { pk: 'CUSTOMER#C-pages', sk: `ADDRESS#${String(position).padStart(10, '0')}` },
          UpdateExpression: 'SET padding = :padding',
          ExpressionAttributeValues: { ':padding': 'x'.repeat(380_000) },
        }),
      );
    }

    const { sent, writer } = recording();

    const addresses = await writer.listPickupAddresses('C-pages');

    expect(addresses.map((a) => a.depotCode)).toEqual(['P1', 'P2', 'P3']);
    expect(sent.filter((name) => name === 'QueryCommand').length).toBeGreaterThan(1);
  });

  // An in-memory store has no connection to lose.
  it('reports an unreachable DynamoDB as DEPENDENCY_UNAVAILABLE', async () => {
    const down = createDynamoAccountRepository({
      client: createDocumentClient({
        region: 'local',
        dynamodbEndpoint: `http://127.0.0.1:${await freePort()}`,
      }),
      tableName: dynamo.tables.accounts,
    });
    expect(await codeOf(down.findByUsername('anyone'))).toBe('DEPENDENCY_UNAVAILABLE');
  });
});

/** A status reader over users a test seeds, and one whose store cannot be reached. */
interface StatusBench {
  readonly reader: UserStatusReader;
  seed(username: string, status: Omit<UserStatus, 'revokedSessions'>): Promise<void>;
  /** A reader that cannot reach its store (the fake's fails for `username` only). */
  unreachable(username: string): Promise<UserStatusReader>;
}

const STATUS_READERS: StoreFactories<StatusBench> = {
  dynamo: async (dynamo) => {
    const accountsOn = await ACCOUNT_STORES.dynamo(dynamo);
    const atSecond = (seconds: number) => accountsOn(() => new Date(seconds * 1000));
    return {
      reader: createDynamoStatusReader({ client: dynamo.documentClient, tableName: dynamo.tables.accounts }),
      // Through the account store, at the instants whose revocations set `revokedBefore`.
      async seed(username, { enabled, revokedBefore }) {
        const user = { username, passwordHash: '$2b$04$hash', customerId: null };
        if (enabled) return atSecond(revokedBefore - 1).createUser(user);
        await atSecond(revokedBefore - 2).createUser(user);
        await atSecond(revokedBefore - 1).setEnabled(username, false);
      },
      unreachable: async () =>
        createDynamoStatusReader({
          client: createDocumentClient({
            region: 'local',
            dynamodbEndpoint: `http://127.0.0.1:${await freePort()}`,
          }),
          tableName: dynamo.tables.accounts,
        }),
    };
  },
  memory: () => {
    const { statuses, reader } = memoryStatuses();
    return {
      reader,
      seed: async (username, status) => {
        statuses.set(username, status);
      },
      unreachable: async (username) => memoryStatuses({ failFor: username }).reader,
    };
  },
};

/** The one read of the authorizer; the fake is the one its unit tests use. */
describeStoreContract('user status reader', STATUS_READERS, (bench) => {
  it('gives the state of the user with exactly that name: whether it is enabled, and its cutoff', async () => {
    await bench().seed('Enabled', { enabled: true, revokedBefore: 1_800_000_000 });
    await bench().seed('Disabled', { enabled: false, revokedBefore: 1_800_000_100 });

    const statuses = await Promise.all(
      ['Enabled', 'Disabled'].map((name) => bench().reader.findStatus(name)),
    );

    expect(statuses).toEqual([
      { enabled: true, revokedBefore: 1_800_000_000, revokedSessions: new Set() },
      { enabled: false, revokedBefore: 1_800_000_100, revokedSessions: new Set() },
    ]);
  });

  it('answers null for a name that matches a user only ignoring case, and for no user', async () => {
    await bench().seed('Cased', { enabled: true, revokedBefore: 1_800_000_000 });

    const statuses = await Promise.all(
      ['cased', 'CASED', 'nobody'].map((name) => bench().reader.findStatus(name)),
    );

    expect(statuses).toEqual([null, null, null]);
  });

  it('rejects with DEPENDENCY_UNAVAILABLE when its store cannot be reached', async () => {
    const reader = await bench().unreachable('anyone');

    const outcome = await codeOf(reader.findStatus('anyone'));

    expect(outcome).toBe('DEPENDENCY_UNAVAILABLE');
  });
});
