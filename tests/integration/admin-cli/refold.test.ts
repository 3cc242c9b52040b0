/**
 * `user refold`: a stage written while usernames were folded with NFKC and toLowerCase gets its
 * user and membership items moved to the keys of the full case folding (foldUsername), before
 * the version that looks them up there is deployed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateScan,
} from '@aws-sdk/lib-dynamodb';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import { createDynamoStatusReader } from '../../../lib/accounts/dynamodb-status.ts';
import { foldUsername } from '../../../lib/accounts/username-key.ts';
import { createDocumentClient } from '../../../lib/aws/dynamodb.ts';
import { tableNames } from '../../../lib/stage.ts';
import { createBulkAccountStore } from '../../../ops/accounts/bulk-dynamodb.ts';
import { deployedStageEnv, lines, OTHER_STAGE, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin } = cli;

const TABLE = tableNames('local').accounts;
type Item = Record<string, unknown>;

let client: DynamoDBDocumentClient;
beforeAll(() => {
  client = createDocumentClient({ region: 'local', dynamodbEndpoint: cli.endpoint });
});
afterAll(() => client?.destroy());

/** Every item of `table`, sorted by key: what a test compares before and after a run. */
async function everything(table = TABLE): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of paginateScan({ client }, { TableName: table })) items.push(...(page.Items ?? []));
  const id = (item: Item) => `${item.pk}\n${item.sk}`;
  return items.sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
}

// refold scans the whole table: each test starts from an empty one.
beforeEach(async () => {
  for (const { pk, sk } of await everything()) {
    await client.send(new DeleteCommand({ TableName: TABLE, Key: { pk, sk } }));
  }
});

const get = async (pk: string, sk: string, table = TABLE) =>
  (await client.send(new GetCommand({ TableName: table, Key: { pk, sk }, ConsistentRead: true }))).Item;

const put = (item: Item, table = TABLE) => client.send(new PutCommand({ TableName: table, Item: item }));

/** The key the previous version folded a username to. */
const oldFold = (name: string) => name.normalize('NFKC').toLowerCase();

/** A bcrypt hash at the lowest cost: what login compares, made quickly. */
const HASH = bcrypt.hashSync('the old pass word', 4);

/**
 * A user item as the previous version wrote it, under `key` (default: the old fold of its
 * name), with every attribute a user item can hold.
 */
const oldUser = (username: string, customerId: string | null, key = oldFold(username)): Item => ({
  pk: `USER#${key}`,
  sk: 'USER',
  username,
  passwordHash: HASH,
  enabled: true,
  revokedBefore: 1_760_000_000,
  revokedSessions: { 'session-1': 1_760_003_600, 'session-2': 1_760_007_200 },
  ...(customerId !== null && { customerId, depotCode: 'PRG01', addressesSeen: 1 }),
  createdAt: '2025-10-09T08:53:20.000Z',
  updatedAt: '2025-10-10T08:53:20.000Z',
});

/** A membership item as the previous version wrote it. */
const oldMember = (customerId: string, username: string, key = oldFold(username)): Item => ({
  pk: `CUSTOMER#${customerId}`,
  sk: `MEMBER#${key}`,
  username,
});

/** `item` under another key, every other attribute as it is. */
const rekeyed = (item: Item, pk: string, sk = String(item.sk)): Item => ({ ...item, pk, sk });

describe('admin CLI: user refold', () => {
  it('moves a user stored under the old fold, with its membership, keeping every attribute as stored', async () => {
    const user = oldUser('Straße', 'C-1');
    const member = oldMember('C-1', 'Straße');
    await put(user);
    await put(member);

    const run = await admin(['user', 'refold']);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      're-keyed user "Straße" and its membership of customer C-1',
      're-keyed 1 user and 1 membership',
    ]);
    expect(await everything()).toEqual([
      rekeyed(member, 'CUSTOMER#C-1', 'MEMBER#strasse'),
      rekeyed(user, 'USER#strasse'),
    ]);
  });

  it('leaves the user findable where login and the authorizer look it up, and removable without leftovers', async () => {
    await put(oldUser('Straße', 'C-1'));
    await put(oldMember('C-1', 'Straße'));
    const repository = createDynamoAccountRepository({ client, tableName: TABLE });
    const status = createDynamoStatusReader({ client, tableName: TABLE });
    expect(await repository.findByUsername('Straße')).toBeNull();

    await cli.adminOk(['user', 'refold']);

    const found = await repository.findByUsername('Straße');
    expect(found).toMatchObject({ username: 'Straße', customerId: 'C-1', depotCode: 'PRG01' });
    expect(await bcrypt.compare('the old pass word', found?.passwordHash ?? '')).toBe(true);
    expect(await status.findStatus('Straße')).toEqual({
      enabled: true,
      revokedBefore: 1_760_000_000,
      revokedSessions: new Set(['session-1', 'session-2']),
    });
    const again = await admin(['user', 'add', 'STRASSE'], { password: 'a new pass word' });
    expect(again.code).toBe(1);
    await cli.adminOk(['user', 'remove', 'Straße']);
    expect(await everything()).toEqual([]);
  });

  it('moves the names whose fold changed (ẞ, ς, ı, an iota subscript) and leaves ASCII names where they are', async () => {
    const ascii = oldUser('Alice', 'C-2');
    const asciiMember = oldMember('C-2', 'Alice');
    const moved = ['STRAẞE', 'ΟΔΟΣ-ς', 'admın', 'ᾳθ'];
    await put(ascii);
    await put(asciiMember);
    for (const name of moved) await put(oldUser(name, null));

    const run = await admin(['user', 'refold']);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toHaveLength(moved.length + 1);
    expect(lines(run.stdout).at(-1)).toBe('re-keyed 4 users and 0 memberships');
    for (const name of moved) {
      expect(oldFold(name), name).not.toBe(foldUsername(name));
      expect(await get(`USER#${oldFold(name)}`, 'USER'), name).toBeUndefined();
      expect(await get(`USER#${foldUsername(name)}`, 'USER'), name).toEqual(
        rekeyed(oldUser(name, null), `USER#${foldUsername(name)}`),
      );
    }
    expect(await get('USER#alice', 'USER')).toEqual(ascii);
    expect(await get('CUSTOMER#C-2', 'MEMBER#alice')).toEqual(asciiMember);
  });

  it('reports two users whose names now fold alike, moves neither, moves the rest, and exits 1', async () => {
    const lower = oldUser('straße', 'C-3');
    const lowerMember = oldMember('C-3', 'straße');
    const upper = oldUser('STRASSE', 'C-3', 'strasse');
    const upperMember = oldMember('C-3', 'STRASSE', 'strasse');
    for (const item of [lower, lowerMember, upper, upperMember, oldUser('Ωιδη-ς', null)]) await put(item);
    const before = await everything();

    const run = await admin(['user', 'refold']);

    expect(run.code).toBe(1);
    expect(lines(run.stdout)).toEqual([
      're-keyed user "Ωιδη-ς"',
      'users "STRASSE" and "straße" now share one key: neither is re-keyed',
      're-keyed 1 user and 0 memberships, 1 collision',
    ]);
    expect(run.stderr).toEqual([
      'error: 1 collision (see above): decide which name to keep and remove the other ' +
        '(docs/deploying.md), then run user refold again',
    ]);
    const after = await everything();
    for (const item of [lower, lowerMember, upper, upperMember]) expect(after).toContainEqual(item);
    expect(after).toHaveLength(before.length);
  });

  it('quotes a colliding name that holds a control character', async () => {
    await put(oldUser('ς\u001b[2J', null));
    await put(oldUser('Σ\u001b[2J', null, 'σ\u001b[2j'));

    const run = await admin(['user', 'refold']);

    expect(run.code).toBe(1);
    expect(lines(run.stdout)).toContain(
      'users "Σ\\u001b[2J" and "ς\\u001b[2J" now share one key: neither is re-keyed',
    );
  });

  it('with --dry-run prints what it would move and writes nothing', async () => {
    await put(oldUser('Straße', 'C-4'));
    await put(oldMember('C-4', 'Straße'));
    await put(oldUser('alice', null));
    const before = await everything();

    const run = await admin(['user', 'refold', '--dry-run']);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      'would re-key user "Straße" and its membership of customer C-4',
      'dry run, nothing written: would re-key 1 user and 1 membership',
    ]);
    expect(await everything()).toEqual(before);
  });

  it('finds nothing to do on a second run, and says so', async () => {
    await put(oldUser('Straße', 'C-5'));
    await put(oldMember('C-5', 'Straße'));
    await cli.adminOk(['user', 'refold']);
    const refolded = await everything();

    const again = await admin(['user', 'refold']);
    const dry = await admin(['user', 'refold', '--dry-run']);

    for (const run of [again, dry]) {
      expect(run).toMatchObject({ code: 0, stderr: [] });
      expect(lines(run.stdout)).toEqual([
        'nothing to re-key: every user and membership is under the key of its name',
      ]);
    }
    expect(await everything()).toEqual(refolded);
  });

  it('finishes an interrupted run: an item already copied to its new key only leaves the old one', async () => {
    const user = oldUser('Straße', 'C-6');
    const member = oldMember('C-6', 'Straße');
    await put(user);
    await put(member);
    await put(rekeyed(user, 'USER#strasse'));
    await put(rekeyed(member, 'CUSTOMER#C-6', 'MEMBER#strasse'));

    const run = await admin(['user', 'refold']);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      're-keyed user "Straße" and its membership of customer C-6',
      're-keyed 1 user and 1 membership',
    ]);
    expect(await get('USER#straße', 'USER')).toBeUndefined();
    expect(await get('CUSTOMER#C-6', 'MEMBER#straße')).toBeUndefined();
    expect(await get('USER#strasse', 'USER')).toEqual(rekeyed(user, 'USER#strasse'));
    expect(await get('CUSTOMER#C-6', 'MEMBER#strasse')).toEqual(
      rekeyed(member, 'CUSTOMER#C-6', 'MEMBER#strasse'),
    );
  });

  it('moves nothing when a copy under the new key differs from the old item, and reports it', async () => {
    const user = oldUser('Straße', null);
    await put(user);
    await put({ ...rekeyed(user, 'USER#strasse'), enabled: false });
    const before = await everything();

    const run = await admin(['user', 'refold']);

    expect(run.code).toBe(1);
    expect(lines(run.stdout)).toContain(
      'user "Straße" is under its old and its new key, with different attributes: neither is re-keyed',
    );
    expect(await everything()).toEqual(before);
  });

  it('takes only the dry-run option and no arguments', async () => {
    const extra = await admin(['user', 'refold', 'Straße']);
    const option = await admin(['user', 'refold', '--customer', 'C-1']);

    expect(extra).toMatchObject({ code: 2, stderr: ['error: user refold takes no arguments'] });
    expect(option).toMatchObject({
      code: 2,
      stderr: ['error: option --customer does not apply to user refold'],
    });
  });

  it('--stage moves the items of that stage’s table, not the local one', async () => {
    const awsDir = await mkdtemp(join(tmpdir(), 'parcel-auth-refold-aws-'));
    const stageTable = tableNames(OTHER_STAGE).accounts;
    try {
      const user = oldUser('Straße', null);
      await put(user, stageTable);
      await put(user);

      const run = await cli.spawnAdmin(['user', 'refold', '--stage', OTHER_STAGE], {
        env: await deployedStageEnv(cli.endpoint, awsDir),
      });

      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(await get('USER#strasse', 'USER', stageTable)).toEqual(rekeyed(user, 'USER#strasse'));
      expect(await get('USER#straße', 'USER', stageTable)).toBeUndefined();
      expect(await get('USER#straße', 'USER')).toEqual(user);
    } finally {
      await client.send(
        new DeleteCommand({ TableName: stageTable, Key: { pk: 'USER#strasse', sk: 'USER' } }),
      );
      await rm(awsDir, { recursive: true, force: true });
    }
  });
});

describe('the accounts table’s move (BulkAccountStore.move)', () => {
  const store = () => createBulkAccountStore({ client, tableName: TABLE });

  it('writes nothing when another item holds the new key', async () => {
    const user = oldUser('straße', null);
    const other = oldUser('STRASSE', null, 'strasse');
    await put(user);
    await put(other);

    expect(await store().move(user, { pk: 'USER#strasse', sk: 'USER' })).toBe('occupied');

    expect(await everything()).toEqual([other, user]);
  });

  it('undoes the copy when the item changed after it was read: an attribute changed, or one added', async () => {
    const read = oldUser('Straße', null);
    const { revokedSessions: _, ...withoutSessions } = read;
    const changes: [Item, Item][] = [
      [read, { ...read, revokedSessions: { 'session-1': 1_760_003_600 } }],
      [read, { ...read, revokedBefore: 1_760_000_001 }],
      [withoutSessions, read],
      [read, { ...read, depotCode: null }],
    ];
    for (const [scanned, stored] of changes) {
      await put(stored);

      expect(await store().move(scanned, { pk: 'USER#strasse', sk: 'USER' })).toBe('changed');

      expect(await everything()).toEqual([stored]);
    }
  });

  it('keeps a null attribute as null', async () => {
    const user = { ...oldUser('Straße', 'C-7'), depotCode: null };
    await put(user);

    expect(await store().move(user, { pk: 'USER#strasse', sk: 'USER' })).toBe('moved');

    expect(await everything()).toEqual([rekeyed(user, 'USER#strasse')]);
  });
});
