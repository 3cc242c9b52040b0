/**
 * `admin import`, `admin export`, `user list` and `customer list` as an operator runs them
 * (the CLI in-process), on dynalite and DynamoDB Local, with real bcrypt.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables } from '../../dev/local/tables.ts';
import { readStageParams, type StageParams } from '../../infra/stage-params.ts';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { createDynamoSecurityPolicies } from '../../lib/accounts/dynamodb-policies.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { login } from '../../lib/auth/login.ts';
import { createPasswordVerifier } from '../../lib/auth/passwords.ts';
import { createLogger } from '../../lib/log.ts';
import { createDynamoPasskeyStore } from '../../lib/passkeys/dynamodb.ts';
import { createDynamoSessionStore } from '../../lib/sessions/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import { type BulkAccountStore, createBulkAccountStore } from '../../ops/accounts/bulk-dynamodb.ts';
import { runAdmin } from '../../ops/admin/main.ts';
import { describeEachDynamo, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { COUNTER_SECRET, TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { noMetrics } from '../support/memory-metrics.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = resolve(ROOT, 'docs/import-example.jsonl');
const EXAMPLE_CSV = resolve(ROOT, 'docs/import-example.csv');
const LEGACY_PASSWORD = 'legacy-password-1';
/** The cost of the stage the CLI targets here (the local one), and the most its import accepts. */
const STAGE_COST = readStageParams('local', {}).bcryptCost;
const IMPORT_MAX = readStageParams('local', {}).importBcryptMaxCost;
/** A well-formed hash at `cost`, two digits as bcrypt writes it. */
const atCost = (hash: string, cost: number) =>
  hash.replace(/^(\$2[aby]\$)\d\d\$/, `$1${String(cost).padStart(2, '0')}$`);

describeEachDynamo('admin import and export', (kind) => {
  let dynamo: TestDynamo;
  let dir: string;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
    dir = await mkdtemp(join(tmpdir(), 'parcel-auth-import-'));
  });
  afterAll(async () => {
    await dynamo?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** A stage of its own (its tables created) in the one DynamoDB of this suite. */
  async function freshStage(): Promise<Stage> {
    const stage = `imp${randomUUID().slice(0, 8)}`;
    const setup = dynamo.client();
    await ensureTables(setup, stage);
    setup.destroy();
    return { documentClient: dynamo.documentClient, tables: tableNames(stage) };
  }

  interface Run {
    readonly code: number;
    readonly out: string[];
    readonly err: string[];
  }

  /**
   * The CLI on `stage`'s tables; `wrap` may wrap the real bulk store (to inject a fault);
   * `params`: another stage's parameters than the local one's; `password`: what stdin holds.
   */
  async function admin(
    stage: Stage,
    args: string[],
    options: {
      wrap?: (bulk: BulkAccountStore) => BulkAccountStore;
      params?: StageParams;
      password?: string;
    } = {},
  ): Promise<Run> {
    const { wrap = (bulk) => bulk, params, password = '' } = options;
    const out: string[] = [];
    const err: string[] = [];
    const client = stage.documentClient;
    const code = await runAdmin(args, {
      env: { DYNAMODB_PORT: '1', DATA_DIR: dir },
      cwd: dir,
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      readPassword: async () => password,
      ...(params !== undefined && { stageParams: () => params }),
      openStores: () => ({
        accounts: createDynamoAccountRepository({ client, tableName: stage.tables.accounts }),
        loginFailures: createDynamoThrottleStore({ client, tableName: stage.tables.loginThrottle }),
        bulk: wrap(createBulkAccountStore({ client, tableName: stage.tables.accounts, baseDelayMs: 1 })),
        audit: createDynamoAuditTrail({ client, tableName: stage.tables.audit }),
        passkeys: createDynamoPasskeyStore({ client, tableName: stage.tables.accounts }),
        policies: createDynamoSecurityPolicies({ client, tableName: stage.tables.accounts }),
        close: () => {},
      }),
    });
    return { code, out, err };
  }

  const file = async (name: string, lines: readonly unknown[]) => {
    const path = join(dir, name);
    await writeFile(
      path,
      `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`,
    );
    return path;
  };
  const accounts = (stage: Stage): AccountRepository =>
    createDynamoAccountRepository({ client: stage.documentClient, tableName: stage.tables.accounts });
  /**
   * A login as the login function makes it (lib/auth/login.ts: the password checked, a hash of
   * another cost re-hashed) on `stage`'s tables, at the stage's cost unless `cost` is given.
   * Not throttled: the throttle is not what these tests are about.
   */
  async function logIn(stage: Stage, username: string, password: string, cost = STAGE_COST) {
    const { documentClient: client, tables } = stage;
    const logger = createLogger('error', () => {});
    const off = {
      limit: 0,
      windowSeconds: 3600,
      baseLockSeconds: 30,
      maxLockSeconds: 900,
      inflightLimit: 50,
    };
    await login(
      {
        users: accounts(stage),
        passwords: createPasswordVerifier({ cost }),
        sessions: {
          store: createDynamoSessionStore({ client, tableName: tables.sessions }),
          tokens: createTokenIssuer({ signingKey: (await testKeys()).signer, settings: TOKEN_SETTINGS }),
          settings: { maxLifetimeSeconds: 86_400, reuseGraceSeconds: 0 },
        },
        throttle: createLoginThrottle({
          store: createDynamoThrottleStore({ client, tableName: tables.loginThrottle }),
          settings: { username: off, sourceIp: off, clientSourceIp: off, knownSourceSeconds: 0 },
          counterSecret: COUNTER_SECRET,
          logger,
          metrics: noMetrics,
        }),
        logger,
        metrics: noMetrics,
      },
      { username, password, sourceIp: '203.0.113.10' },
    );
  }
  const itemCount = async (stage: Stage) => {
    let count = 0;
    for await (const _ of createBulkAccountStore({
      client: stage.documentClient,
      tableName: stage.tables.accounts,
    }).scan())
      count += 1;
    return count;
  };

  it('imports customers and users with their hashes: a legacy $2y$ hash keeps its password, depot codes are derived', async () => {
    const stage = await freshStage();

    const run = await admin(stage, ['import', EXAMPLE]);

    expect(run).toMatchObject({ code: 0, out: ['created 5, unchanged 0, updated 0, skipped 0, failed 0'] });
    const brno = await accounts(stage).findByUsername('eshop-brno');
    expect(brno).toMatchObject({ customerId: 'C-2001', depotCode: 'BRQ02', enabled: true });
    expect(brno?.passwordHash.startsWith('$2y$04$')).toBe(true);
    expect(await bcrypt.compare(LEGACY_PASSWORD, brno?.passwordHash ?? '')).toBe(true);
    expect(await accounts(stage).findByUsername('Warehouse.Ostrava')).toMatchObject({
      enabled: false,
      depotCode: 'OSR01',
    });
    const printer = await accounts(stage).findByUsername('label-printer');
    expect(await bcrypt.compare('a-new-password-for-labels', printer?.passwordHash ?? '')).toBe(true);
    expect((await accounts(stage).listPickupAddresses('C-2001')).map((a) => a.depotCode)).toEqual([
      '',
      'BRQ02',
    ]);
  });

  it('imports users from CSV after their customers: the legacy hash keeps its password', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);

    const run = await admin(stage, ['import', EXAMPLE_CSV]);

    expect(run).toMatchObject({ code: 0, out: ['created 2, unchanged 0, updated 0, skipped 0, failed 0'] });
    const olomouc = await accounts(stage).findByUsername('warehouse-olomouc');
    expect(olomouc).toMatchObject({ customerId: 'C-2001', depotCode: 'BRQ02', enabled: true });
    expect(await bcrypt.compare('legacy-password-2', olomouc?.passwordHash ?? '')).toBe(true);
    const station = await accounts(stage).findByUsername('label-station-7');
    expect(station).toMatchObject({ customerId: null, enabled: false });
    expect(await bcrypt.compare('a-new-password-for-station-7', station?.passwordHash ?? '')).toBe(true);
  });

  it('checks CSV rows by the user rules and reports them by the line of the file', async () => {
    const stage = await freshStage();
    const before = await itemCount(stage);
    const hash = bcrypt.hashSync('a-long-password-1', 4);
    const path = join(dir, 'bad.csv');
    await writeFile(
      path,
      [
        'username,passwordHash,customerId,enabled,password',
        `good,${hash},,,`,
        '',
        `"two words",${hash},,,`,
        `orphan,${hash},C-404,,`,
        `maybe,${hash},,perhaps,`,
        'short,,,,short',
        `both,${hash},,,a-long-password-2`,
      ].join('\r\n'),
    );

    const run = await admin(stage, ['import', path]);

    expect(run.code).toBe(1);
    expect(
      run.out.filter((line) => line.startsWith('line ')).map((line) => Number(/^line (\d+)/.exec(line)?.[1])),
    ).toEqual([4, 5, 6, 7, 8]);
    expect(run.out.join('\n')).not.toContain(hash);
    expect(run.out.join('\n')).not.toContain('a-long-password-2');
    expect(await itemCount(stage)).toBe(before);
  });

  it.each([
    ['an unknown column', 'username,role\nx,admin\n', /unknown column role/],
    ['no username column', 'passwordHash\nx\n', /username column is required/],
    ['a row of another length', 'username,enabled\nx,true\ny\n', /line 3: not valid CSV/],
  ])('stops a CSV with %s before writing anything', async (_, text, message) => {
    const stage = await freshStage();
    const path = join(dir, `${randomUUID()}.csv`);
    await writeFile(path, text);

    const run = await admin(stage, ['import', path]);

    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toMatch(message);
    expect(await itemCount(stage)).toBe(0);
  });

  it('writes the same items as user add and address add, so stores cannot tell them apart', async () => {
    const imported = await freshStage();
    const byHand = await freshStage();
    await admin(imported, [
      'import',
      await file('one.jsonl', [
        { type: 'customer', customerId: 'C-1', pickupAddresses: [{ depotCode: '' }, { depotCode: 'D1' }] },
        {
          type: 'user',
          username: 'same',
          customerId: 'C-1',
          passwordHash: bcrypt.hashSync('a-long-password-1', 4),
        },
      ]),
    ]);
    const hash = (await accounts(imported).findByUsername('same'))?.passwordHash ?? '';
    await accounts(byHand).addPickupAddress('C-1', '');
    await accounts(byHand).addPickupAddress('C-1', 'D1');
    await accounts(byHand).createUser({ username: 'same', passwordHash: hash, customerId: 'C-1' });

    const shape = async (stage: Stage) => {
      const items: Record<string, unknown>[] = [];
      for await (const item of createBulkAccountStore({
        client: stage.documentClient,
        tableName: stage.tables.accounts,
      }).scan()) {
        items.push(
          Object.fromEntries(
            Object.keys(item)
              .sort()
              .map((key) => [key, /At$|revokedBefore/.test(key) ? typeof item[key] : item[key]]),
          ),
        );
      }
      return items.sort((a, b) => `${a.pk}${a.sk}`.localeCompare(`${b.pk}${b.sk}`));
    };
    expect(await shape(imported)).toEqual(await shape(byHand));
  });

  it('changes nothing when the same file is imported again, and says so', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);
    const before = await itemCount(stage);

    const again = await admin(stage, ['import', EXAMPLE]);

    expect(again).toMatchObject({
      code: 0,
      out: ['nothing to change: created 0, unchanged 5, updated 0, skipped 0, failed 0'],
    });
    expect(await itemCount(stage)).toBe(before);
  });

  it('imports the same file again after logins: a hash re-hashed is unchanged, a password set since is kept, exit 0 both times', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);
    const legacy = (await accounts(stage).findByUsername('eshop-brno'))?.passwordHash ?? '';
    await logIn(stage, 'eshop-brno', LEGACY_PASSWORD);
    await logIn(stage, 'label-printer', 'a-new-password-for-labels');
    const upgraded = (await accounts(stage).findByUsername('eshop-brno'))?.passwordHash ?? '';
    expect(legacy.startsWith('$2y$04$')).toBe(true);
    expect(bcrypt.getRounds(upgraded)).toBe(STAGE_COST);
    const before = await itemCount(stage);

    const afterLogins = await admin(stage, ['import', EXAMPLE]);

    expect(afterLogins).toMatchObject({
      code: 0,
      out: ['nothing to change: created 0, unchanged 5, updated 0, skipped 0, failed 0'],
    });
    expect((await accounts(stage).findByUsername('eshop-brno'))?.passwordHash).toBe(upgraded);
    expect(await itemCount(stage)).toBe(before);

    for (const [username, password] of [
      ['eshop-brno', 'a-password-set-here-1'],
      ['label-printer', 'a-password-set-here-2'],
    ] as const) {
      expect((await admin(stage, ['user', 'passwd', username], { password })).code).toBe(0);
    }
    const afterPasswd = await admin(stage, ['import', EXAMPLE]);

    expect(afterPasswd.code).toBe(0);
    expect(afterPasswd.out.slice(0, -1)).toEqual([
      'line 3: user exists with a password set since (left as it is)',
      'line 5: user exists with a password set since (left as it is)',
    ]);
    // `, kept 2` where the CLI's summary line counts kept users (docs/import-format.md).
    expect(afterPasswd.out.at(-1)).toMatch(
      /^nothing to change: created 0, unchanged 3, updated 0, skipped 0, failed 0(, kept 2)?$/,
    );
    const brno = await accounts(stage).findByUsername('eshop-brno');
    expect(await bcrypt.compare('a-password-set-here-1', brno?.passwordHash ?? '')).toBe(true);
    expect(await itemCount(stage)).toBe(before);
  });

  it('still finds the imported hash unchanged after a second re-hash, at a stage cost changed since', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);
    await logIn(stage, 'eshop-brno', LEGACY_PASSWORD);
    const first = (await accounts(stage).findByUsername('eshop-brno'))?.passwordHash ?? '';
    await logIn(stage, 'eshop-brno', LEGACY_PASSWORD, STAGE_COST + 1);
    const second = (await accounts(stage).findByUsername('eshop-brno'))?.passwordHash ?? '';
    expect(bcrypt.getRounds(second)).toBe(STAGE_COST + 1);
    expect(second).not.toBe(first);

    const again = await admin(stage, ['import', EXAMPLE]);

    expect(again).toMatchObject({
      code: 0,
      out: ['nothing to change: created 0, unchanged 5, updated 0, skipped 0, failed 0'],
    });
  });

  it('completes the missing membership of a user whose password was set since, and keeps the password', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);
    // What an import or a `user add` stopped between the user's item and its membership leaves.
    await stage.documentClient.send(
      new DeleteCommand({
        TableName: stage.tables.accounts,
        Key: accountItems.memberKey('C-2001', 'eshop-brno'),
      }),
    );
    expect(
      (await admin(stage, ['user', 'passwd', 'eshop-brno'], { password: 'a-password-set-here-1' })).code,
    ).toBe(0);
    const members = () =>
      createBulkAccountStore({ client: stage.documentClient, tableName: stage.tables.accounts }).members(
        'C-2001',
      );
    expect(await members()).toEqual([]);

    const run = await admin(stage, ['import', EXAMPLE]);

    expect(run.code).toBe(0);
    expect(run.out[0]).toBe('line 3: user exists with a password set since (left as it is)');
    expect(await members()).toEqual(['eshop-brno']);
    const brno = await accounts(stage).findByUsername('eshop-brno');
    expect(await bcrypt.compare('a-password-set-here-1', brno?.passwordHash ?? '')).toBe(true);
  });

  it('reports every bad record by line number and writes nothing', async () => {
    const stage = await freshStage();
    await accounts(stage).createUser({
      username: 'Existing',
      passwordHash: bcrypt.hashSync('a-long-password-1', 4),
      customerId: null,
    });
    const before = await itemCount(stage);
    const hash = bcrypt.hashSync('a-long-password-1', 4);
    const path = await file('bad.jsonl', [
      '{not json',
      { type: 'shipment' },
      { type: 'customer', customerId: 'bad id!', pickupAddresses: [] },
      {
        type: 'customer',
        customerId: 'C-9',
        pickupAddresses: [{ depotCode: 'way-too-long-depot-code-for-the-rules' }],
      },
      { type: 'user', username: 'no-credential' },
      { type: 'user', username: 'both', passwordHash: hash, password: 'a-long-password-2' },
      { type: 'user', username: 'short', password: 'short' },
      { type: 'user', username: 'bad-hash', passwordHash: '$2x$10$abc' },
      { type: 'user', username: 'low-cost', passwordHash: hash.replace('$04$', '$03$') },
      { type: 'user', username: 'orphan', customerId: 'C-404', passwordHash: hash },
      { type: 'user', username: 'Twin', passwordHash: hash },
      { type: 'user', username: 'twin', passwordHash: hash },
      { type: 'user', username: 'extra', passwordHash: hash, role: 'admin' },
      { type: 'user', username: 'good', passwordHash: hash },
    ]);

    const run = await admin(stage, ['import', path]);

    expect(run.code).toBe(1);
    expect(
      run.out.filter((line) => line.startsWith('line ')).map((line) => Number(/^line (\d+)/.exec(line)?.[1])),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(run.out.join('\n')).not.toContain(hash);
    expect(run.out.join('\n')).not.toContain('a-long-password-2');
    expect(run.err).toEqual([
      'error: 13 invalid records; nothing was written (fix them, or add --skip-invalid to import the valid records)',
    ]);
    expect(await itemCount(stage)).toBe(before);
  });

  it('refuses a hash above the stage’s importBcryptMaxCost, naming the line, the field and the most accepted, and writes nothing', async () => {
    const stage = await freshStage();
    const hash = bcrypt.hashSync('a-long-password-1', 4);
    const path = await file('costs.jsonl', [
      { type: 'user', username: 'cheap', passwordHash: hash },
      { type: 'user', username: 'at-most', passwordHash: atCost(hash, IMPORT_MAX) },
      { type: 'user', username: 'above', passwordHash: atCost(hash, IMPORT_MAX + 1) },
      { type: 'user', username: 'php-max', passwordHash: atCost(hash, 31).replace('$2b$', '$2y$') },
    ]);

    const run = await admin(stage, ['import', path]);

    expect(run.code).toBe(1);
    const most = `above the stage's importBcryptMaxCost (${IMPORT_MAX}), the most an import accepts`;
    expect(run.out).toEqual([
      `line 3: passwordHash has cost ${IMPORT_MAX + 1}, ${most}`,
      `line 4: passwordHash has cost 31, ${most}`,
    ]);
    expect(await itemCount(stage)).toBe(0);
  });

  it('accepts a hash of any cost up to the stage’s importBcryptMaxCost as it is', async () => {
    const stage = await freshStage();
    const cheap = bcrypt.hashSync('a-long-password-1', 4);
    const atStage = bcrypt.hashSync('a-long-password-2', STAGE_COST);
    // Well-formed at the most: into an empty table the import never compares it.
    const atMost = atCost(cheap, IMPORT_MAX);

    const run = await admin(stage, [
      'import',
      await file('accepted.jsonl', [
        { type: 'user', username: 'cheap', passwordHash: cheap },
        { type: 'user', username: 'at-stage', passwordHash: atStage },
        { type: 'user', username: 'at-most', passwordHash: atMost },
      ]),
    ]);

    expect(run).toMatchObject({ code: 0, out: ['created 3, unchanged 0, updated 0, skipped 0, failed 0'] });
    expect((await accounts(stage).findByUsername('cheap'))?.passwordHash).toBe(cheap);
    expect((await accounts(stage).findByUsername('at-stage'))?.passwordHash).toBe(atStage);
    expect((await accounts(stage).findByUsername('at-most'))?.passwordHash).toBe(atMost);
  });

  it('imports a cost-10 hash, bcrypt’s common default, into the local stage, whose own cost is lower', async () => {
    const stage = await freshStage();
    expect(STAGE_COST).toBeLessThan(10);
    const legacy = atCost(bcrypt.hashSync('a-long-password-1', 4), 10);

    const run = await admin(stage, [
      'import',
      await file('cost-10.jsonl', [{ type: 'user', username: 'legacy-10', passwordHash: legacy }]),
    ]);

    expect(run).toMatchObject({ code: 0, out: ['created 1, unchanged 0, updated 0, skipped 0, failed 0'] });
    expect((await accounts(stage).findByUsername('legacy-10'))?.passwordHash).toBe(legacy);
  });

  it('imports a cost-12 hash, the default of Rails, Django and Laravel, with prod’s stage parameters', async () => {
    const stage = await freshStage();
    const prod = readStageParams('prod', {});
    expect(prod.bcryptCost).toBeLessThan(12);
    const legacy = atCost(bcrypt.hashSync('a-long-password-1', 4), 12).replace('$2b$', '$2y$');

    const run = await admin(
      stage,
      [
        'import',
        await file('cost-12.jsonl', [{ type: 'user', username: 'legacy-12', passwordHash: legacy }]),
      ],
      { params: prod },
    );

    expect(run).toMatchObject({ code: 0, out: ['created 1, unchanged 0, updated 0, skipped 0, failed 0'] });
    expect((await accounts(stage).findByUsername('legacy-12'))?.passwordHash).toBe(legacy);
  });

  it('shows a field name from the file escaped: no terminal escape or line break reaches the screen', async () => {
    const stage = await freshStage();
    const key = 'role\u001b[31m\nline 9: forged';
    const record = {
      type: 'user',
      username: 'crafted',
      passwordHash: bcrypt.hashSync('a-long-password-1', 4),
    };

    const run = await admin(stage, [
      'import',
      await file('crafted.jsonl', [
        { ...record, [key]: 'admin' },
        { ...record, username: 'other', role: 'x' },
      ]),
    ]);

    expect(run.code).toBe(1);
    expect(run.out).toEqual([
      'line 1: "role\\u001b[31m\\nline 9: forged" is not a field of the record',
      'line 2: role is not a field of the record',
    ]);
    expect(run.out.join('')).not.toContain('\u001b');
    expect(run.out.join('')).not.toContain('\n');
  });

  it('shows a CSV column name from the file escaped', async () => {
    const stage = await freshStage();
    const path = join(dir, `${randomUUID()}.csv`);
    await writeFile(path, 'username,"ro\u001b[2Jle"\nx,admin\n');

    const run = await admin(stage, ['import', path]);

    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('unknown column "ro\\u001b[2Jle"');
    expect(run.err.join('\n')).not.toContain('\u001b');
  });

  it('never lets a username differing only by case overwrite one in the table', async () => {
    const stage = await freshStage();
    const original = bcrypt.hashSync('a-long-password-1', 4);
    await accounts(stage).createUser({ username: 'Existing', passwordHash: original, customerId: null });

    const run = await admin(stage, [
      'import',
      await file('case.jsonl', [
        { type: 'user', username: 'existing', passwordHash: bcrypt.hashSync('a-long-password-2', 4) },
      ]),
    ]);

    expect(run.code).toBe(1);
    expect(run.out).toContain('line 1: username exists in another letter case (Existing)');
    expect((await accounts(stage).findByUsername('Existing'))?.passwordHash).toBe(original);
    expect(await accounts(stage).findByUsername('existing')).toBeNull();
  });

  it('refuses a username that mixes scripts and two that differ only under full case folding', async () => {
    const stage = await freshStage();
    const before = await itemCount(stage);
    const hash = bcrypt.hashSync('a-long-password-1', 4);

    const run = await admin(stage, [
      'import',
      await file('scripts.jsonl', [
        { type: 'user', username: 'p\u0430ypal', passwordHash: hash },
        { type: 'user', username: 'ΟΔΟΣ', passwordHash: hash },
        { type: 'user', username: 'οδοσ', passwordHash: hash },
      ]),
    ]);

    expect(run.code).toBe(1);
    expect(run.out.filter((line) => line.startsWith('line '))).toEqual([
      'line 1: username must not mix scripts (e.g. Latin and Cyrillic letters)',
      'line 2: username is also on line 3 (in any letter case)',
      'line 3: username differs from the one on line 2 only by letter case or is the same',
    ]);
    expect(await itemCount(stage)).toBe(before);
  });

  it('never lets a username differing only under full case folding overwrite one in the table', async () => {
    const stage = await freshStage();
    const original = bcrypt.hashSync('a-long-password-1', 4);
    await accounts(stage).createUser({ username: 'Straße', passwordHash: original, customerId: null });

    const run = await admin(stage, [
      'import',
      await file('folding.jsonl', [
        { type: 'user', username: 'STRASSE', passwordHash: bcrypt.hashSync('a-long-password-2', 4) },
      ]),
    ]);

    expect(run.code).toBe(1);
    expect(run.out).toContain('line 1: username exists in another letter case (Straße)');
    expect((await accounts(stage).findByUsername('Straße'))?.passwordHash).toBe(original);
    expect(await accounts(stage).findByUsername('STRASSE')).toBeNull();
  });

  it('with --skip-invalid writes the valid records and counts the rest as skipped', async () => {
    const stage = await freshStage();
    const hash = bcrypt.hashSync('a-long-password-1', 4);

    const run = await admin(stage, [
      'import',
      '--skip-invalid',
      await file('mixed.jsonl', [
        { type: 'user', username: 'kept', passwordHash: hash },
        { type: 'user', username: 'dropped', passwordHash: 'nope' },
      ]),
    ]);

    expect(run.code).toBe(0);
    expect(run.out).toEqual([
      'line 2: passwordHash must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 31)',
      'created 1, unchanged 0, updated 0, skipped 1, failed 0',
    ]);
    expect(await accounts(stage).findByUsername('kept')).not.toBeNull();
  });

  it('with --dry-run checks against the table and writes nothing', async () => {
    const stage = await freshStage();

    const run = await admin(stage, ['import', '--dry-run', EXAMPLE]);

    expect(run).toMatchObject({
      code: 0,
      out: ['dry run, nothing written: would have created 5, unchanged 0, updated 0, skipped 0, failed 0'],
    });
    expect(await itemCount(stage)).toBe(0);
  });

  it('resumes an import stopped half-way without duplicates or half-written customers', async () => {
    const stage = await freshStage();
    const hash = bcrypt.hashSync('a-long-password-1', 4);
    const records = [
      ...Array.from({ length: 30 }, (_, i) => ({
        type: 'customer',
        customerId: `C-${i}`,
        pickupAddresses: [{ depotCode: '' }, { depotCode: `D${i}` }, { depotCode: 'X' }],
      })),
      ...Array.from({ length: 120 }, (_, i) => ({
        type: 'user',
        username: `user-${i}`,
        customerId: `C-${i % 30}`,
        passwordHash: hash,
      })),
    ];
    const path = await file('big.jsonl', records);
    // The store dies half-way through the users' writes (calls 1 and 2 are the customers'
    // addresses and counters), as a killed process or a throttling storm would.
    let writes = 0;
    const dying = (bulk: BulkAccountStore): BulkAccountStore => ({
      ...bulk,
      write: async (items) => {
        writes += 1;
        if (writes > 4) throw new Error('connection reset');
        await bulk.write(items.slice(0, Math.ceil(items.length / 2)));
        if (writes === 4) throw new Error('connection reset');
        await bulk.write(items.slice(Math.ceil(items.length / 2)));
      },
    });

    const stopped = await admin(stage, ['import', path], { wrap: dying });
    const resumed = await admin(stage, ['import', path]);

    expect(stopped.code).toBe(1);
    expect(resumed.code).toBe(0);
    expect(await itemCount(stage)).toBe(30 * 4 + 120 * 2);
    for (let i = 0; i < 120; i += 1) {
      expect(await accounts(stage).findByUsername(`user-${i}`)).toMatchObject({
        customerId: `C-${i % 30}`,
        depotCode: `D${i % 30}`,
      });
    }
    expect((await accounts(stage).listPickupAddresses('C-7')).map((a) => a.position)).toEqual([1, 2, 3]);
    const third = await admin(stage, ['import', path]);
    expect(third.out.at(-1)).toBe(
      'nothing to change: created 0, unchanged 150, updated 0, skipped 0, failed 0',
    );
  });

  it('exports what an import into an empty stage reproduces exactly', async () => {
    const source = await freshStage();
    await admin(source, ['import', EXAMPLE]);
    await accounts(source).addPickupAddress('C-2002', '');
    await accounts(source).createUser({
      username: 'hand-made',
      passwordHash: bcrypt.hashSync('a-long-password-1', 4),
      customerId: 'C-3003',
    });
    const exported = await admin(source, ['export', '--include-password-hashes']);
    const target = await freshStage();

    const imported = await admin(target, ['import', await file('export.jsonl', exported.out)]);
    const again = await admin(target, ['export', '--include-password-hashes']);

    expect(imported.code).toBe(0);
    expect([...again.out].sort()).toEqual([...exported.out].sort());
    for (const username of ['eshop-brno', 'Warehouse.Ostrava', 'label-printer', 'hand-made']) {
      const before = await accounts(source).findByUsername(username);
      const after = await accounts(target).findByUsername(username);
      expect(after).toMatchObject({
        passwordHash: before?.passwordHash,
        enabled: before?.enabled,
        customerId: before?.customerId,
        depotCode: before?.depotCode,
        createdAt: before?.createdAt,
      });
    }
    expect(await accounts(target).listPickupAddresses('C-2002')).toEqual(
      await accounts(source).listPickupAddresses('C-2002'),
    );
  });

  it('exports no password hash unless asked to', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);

    const run = await admin(stage, ['export']);

    expect(run.code).toBe(0);
    expect(run.out.join('\n')).not.toContain('$2');
    expect(run.out.map((line) => JSON.parse(line).type).sort()).toEqual([
      'customer',
      'customer',
      'user',
      'user',
      'user',
    ]);
  });

  it('lists users, by customer and disabled ones, and customers, as JSON Lines', async () => {
    const stage = await freshStage();
    await admin(stage, ['import', EXAMPLE]);

    const all = await admin(stage, ['user', 'list']);
    const ofCustomer = await admin(stage, ['user', 'list', '--customer', 'C-2001']);
    const disabled = await admin(stage, ['user', 'list', '--disabled']);
    const customers = await admin(stage, ['customer', 'list']);

    expect(all.out.map((line) => JSON.parse(line).username)).toEqual([
      'Warehouse.Ostrava',
      'eshop-brno',
      'label-printer',
    ]);
    expect(all.out.join('\n')).not.toContain('$2');
    expect(ofCustomer.out.map((line) => JSON.parse(line).username)).toEqual(['eshop-brno']);
    expect(disabled.out.map((line) => JSON.parse(line).username)).toEqual(['Warehouse.Ostrava']);
    expect(customers.out.map((line) => JSON.parse(line))).toEqual([
      { customerId: 'C-2001', addresses: 2, depotCode: 'BRQ02', depotCodes: ['', 'BRQ02'] },
      { customerId: 'C-2002', addresses: 1, depotCode: 'OSR01', depotCodes: ['OSR01'] },
    ]);
  });

  it('answers a missing file in one line, exit 1', async () => {
    const stage = await freshStage();

    const run = await admin(stage, ['import', 'no-such-file.jsonl']);

    expect(run).toMatchObject({ code: 1, err: ['error: cannot read no-such-file.jsonl: ENOENT'] });
  });
});

describe('admin import, the command line', () => {
  it('takes one file and the import options only', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(['import'], {
      env: {},
      cwd: ROOT,
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      readPassword: async () => '',
    });
    expect(code).toBe(2);
    expect(err).toEqual(['error: import takes <file>']);
  });
});

/** One stage's tables in the suite's DynamoDB. */
interface Stage {
  readonly documentClient: TestDynamo['documentClient'];
  readonly tables: ReturnType<typeof tableNames>;
}
