/**
 * The admin CLI against the embedded DynamoDB with real bcrypt: most cases call the command
 * runner in-process; a few spawn `scripts/admin.ts` as operators run it, password on stdin.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { keyParameterNames, tableNames } from '../../lib/stage.ts';
import { createDynamoAccountRepository } from '../../lib/users/dynamodb.ts';
import type { AccountRepository } from '../../lib/users/repository.ts';
import { failure } from '../../scripts/admin/errors.ts';
import type { ParameterStore } from '../../scripts/admin/keys.ts';
import { runAdmin } from '../../scripts/admin/main.ts';
import { type EmbeddedDynamo, startDynalite } from '../../scripts/local/dynalite.ts';
import { ensureTables } from '../../scripts/local/tables.ts';
import { freePort } from '../helpers/ports.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OTHER_STAGE = 'teststage';

let dynamo: EmbeddedDynamo;
let dataDir: string;
let local: AccountRepository;
let deployed: AccountRepository;

beforeAll(async () => {
  dynamo = await startDynalite({ port: 0 });
  await ensureTables(dynamo.client(), 'local');
  await ensureTables(dynamo.client(), OTHER_STAGE);
  dataDir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-'));
  const client = createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint });
  local = createDynamoAccountRepository({ client, tableName: tableNames('local').accounts });
  deployed = createDynamoAccountRepository({ client, tableName: tableNames(OTHER_STAGE).accounts });
});

afterAll(async () => {
  await dynamo?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

/** A name no other test uses: every test shares the one embedded DynamoDB. */
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string[];
  readonly passwordReads: number;
}

/** Runs the CLI in-process on the local target; `password` is what stdin holds. */
async function admin(
  args: string[],
  options: { password?: string; env?: Record<string, string>; parameters?: ParameterStore } = {},
): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let passwordReads = 0;
  const code = await runAdmin(args, {
    env: { DYNAMODB_PORT: String(dynamo.port), DATA_DIR: dataDir, ...options.env },
    cwd: ROOT,
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    readPassword: async () => {
      passwordReads += 1;
      return options.password ?? '';
    },
    ...(options.parameters && { parameters: () => options.parameters as ParameterStore }),
  });
  return { code, stdout: stdout.join('\n'), stderr, passwordReads };
}

interface Spawned {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node scripts/admin.ts` as an operator would, with `stdin` piped in. */
function spawnAdmin(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  // Nothing of the developer's AWS setup leaks into the child.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  const child = spawn(process.execPath, ['scripts/admin.ts', ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...env, DYNAMODB_PORT: String(dynamo.port), DATA_DIR: dataDir, ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(options.stdin ?? '');
  return new Promise<Spawned>((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

/** A parameter store in memory that refuses to overwrite as SSM does (PutParameter, Overwrite false). */
function memoryParameters() {
  const stored = new Map<string, { value: string; secure: boolean }>();
  const store: ParameterStore = {
    exists: async (name) => stored.has(name),
    async put(name, value, { secure, overwrite }) {
      if (stored.has(name) && !overwrite) throw failure(`SSM parameter ${name} exists already`);
      stored.set(name, { value, secure });
    },
  };
  return { stored, store };
}

describe('admin CLI: users', () => {
  it('adds a user with a customer and shows it as JSON without the password hash', async () => {
    const username = unique('alice');
    const customer = unique('C');
    expect((await admin(['address', 'add', customer, '--depot', 'PRG01'])).code).toBe(0);

    const added = await admin(['user', 'add', username, '--customer', customer], {
      password: 'correct horse',
    });
    expect(added).toMatchObject({ code: 0, stderr: [], passwordReads: 1 });

    const shown = await admin(['user', 'show', username]);
    expect(shown.code).toBe(0);
    const user = JSON.parse(shown.stdout);
    expect(Object.keys(user).sort()).toEqual(
      ['createdAt', 'customerId', 'depotCode', 'enabled', 'updatedAt', 'username'].sort(),
    );
    expect(user).toMatchObject({ username, enabled: true, customerId: customer, depotCode: 'PRG01' });
    expect(shown.stdout).not.toMatch(/\$2[aby]\$|passwordHash/);
  });

  it('refuses an existing username, also one differing only in case, with exit 1 and one line', async () => {
    const username = unique('Twin');
    expect((await admin(['user', 'add', username], { password: 'first one' })).code).toBe(0);

    for (const variant of [username, username.toLowerCase(), username.toUpperCase()]) {
      const again = await admin(['user', 'add', variant], { password: 'second one' });
      expect(again.code).toBe(1);
      expect(again.stderr).toEqual(['error: a user with this name (in any letter case) exists']);
    }
    expect((await local.findByUsername(username))?.username).toBe(username);
  });

  it('takes the password only from stdin: one given as an argument is refused and not echoed', async () => {
    const username = unique('bob');
    const secret = 'Hunter2-argv-secret';
    for (const args of [
      ['user', 'add', username, secret],
      ['user', 'add', username, `--password=${secret}`],
      ['user', 'add', username, '--password', secret],
    ]) {
      const run = await admin(args, { password: 'from stdin' });
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
      expect(run.stderr.join('')).not.toContain(secret);
      expect(run.passwordReads).toBe(0);
    }
    expect(await local.findByUsername(username)).toBeNull();
  });

  it('refuses an empty password and one over 72 UTF-8 bytes, counting multi-byte characters', async () => {
    const username = unique('carol');
    const tooLong = 'ž'.repeat(37); // 37 characters, 74 bytes
    for (const password of ['', tooLong, 'a'.repeat(73)]) {
      const run = await admin(['user', 'add', username], { password });
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
      if (password !== '') expect(run.stderr[0]).toMatch(/longer than 72 bytes/);
      expect(run.stderr.join('')).not.toContain(password === '' ? 'žž' : password);
    }
    expect(await local.findByUsername(username)).toBeNull();

    const longest = 'ž'.repeat(36); // 72 bytes: every byte counts
    expect((await admin(['user', 'add', username], { password: longest })).code).toBe(0);
    const stored = await local.findByUsername(username);
    expect(await bcrypt.compare(longest, stored?.passwordHash ?? '')).toBe(true);
  });

  it('passwd replaces the hash: the new password matches, the old one no longer does', async () => {
    const username = unique('dave');
    await admin(['user', 'add', username], { password: 'old password' });
    const before = await local.findByUsername(username);

    const changed = await admin(['user', 'passwd', username], { password: 'new password ✓' });
    expect(changed).toMatchObject({ code: 0, stderr: [], passwordReads: 1 });
    const after = await local.findByUsername(username);
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    expect(await bcrypt.compare('new password ✓', after?.passwordHash ?? '')).toBe(true);
    expect(await bcrypt.compare('old password', after?.passwordHash ?? '')).toBe(false);
  });

  it('passwd of an unknown user fails with exit 1 and names the user', async () => {
    const run = await admin(['user', 'passwd', 'nobody-here'], { password: 'whatever' });
    expect(run).toMatchObject({ code: 1, stderr: ['error: user "nobody-here" not found'] });
  });

  it('disable and enable flip whether the user is enabled', async () => {
    const username = unique('erin');
    await admin(['user', 'add', username], { password: 'pass word' });

    expect((await admin(['user', 'disable', username])).code).toBe(0);
    expect((await local.findByUsername(username))?.enabled).toBe(false);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).enabled).toBe(false);

    expect((await admin(['user', 'enable', username])).code).toBe(0);
    expect((await local.findByUsername(username))?.enabled).toBe(true);
  });

  it('remove deletes the user: show then reports it not found with exit 1', async () => {
    const username = unique('frank');
    await admin(['user', 'add', username], { password: 'pass word' });

    expect((await admin(['user', 'remove', username])).code).toBe(0);
    const shown = await admin(['user', 'show', username]);
    expect(shown).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${username}" not found`] });
    expect((await admin(['user', 'remove', username])).code).toBe(1);
  });
});

describe('admin CLI: pickup addresses', () => {
  it('appends addresses in order, an empty depot allowed, and users get the first non-empty depot', async () => {
    const customer = unique('CUST');
    const first = await admin(['address', 'add', customer, '--depot', '']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ customerId: customer, position: 1, depotCode: '' });

    const username = unique('grace');
    await admin(['user', 'add', username, '--customer', customer], { password: 'pass word' });
    expect((await local.findByUsername(username))?.depotCode).toBeNull();

    expect((await admin(['address', 'add', customer, '--depot=PRG01'])).code).toBe(0);
    expect((await admin(['address', 'add', customer, '--depot', 'BRN02'])).code).toBe(0);

    const listed = await admin(['address', 'list', customer]);
    expect(listed.code).toBe(0);
    const addresses = JSON.parse(listed.stdout) as { position: number; depotCode: string }[];
    expect(addresses.map(({ position, depotCode }) => [position, depotCode])).toEqual([
      [1, ''],
      [2, 'PRG01'],
      [3, 'BRN02'],
    ]);
    expect((await local.findByUsername(username))?.depotCode).toBe('PRG01');
  });

  it('requires --depot and refuses an invalid customer or depot code with exit 2', async () => {
    for (const args of [
      ['address', 'add', 'C-1'],
      ['address', 'add', 'C-1', '--depot'],
      ['address', 'add', 'C 1', '--depot', 'X'],
      ['address', 'add', 'C-1', '--depot', 'no spaces'],
    ]) {
      const run = await admin(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
    }
    expect(JSON.parse((await admin(['address', 'list', 'C-1'])).stdout)).toEqual([]);
  });
});

describe('admin CLI: keys', () => {
  it('keys init creates the local key files once and then reports them present, printing only the kid', async () => {
    const keysDir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-keys-'));
    try {
      const first = await admin(['keys', 'init'], { env: { DATA_DIR: keysDir } });
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^created the local signing key in .+; kid [\w-]{43}$/);

      const signingKey = JSON.parse(await readFile(join(keysDir, 'keys', 'signing-key.json'), 'utf8'));
      const jwks = JSON.parse(await readFile(join(keysDir, 'keys', 'jwks.json'), 'utf8'));
      expect((await stat(join(keysDir, 'keys', 'signing-key.json'))).mode & 0o077).toBe(0);
      expect(first.stdout).toContain(`kid ${signingKey.kid}`);
      expect(jwks.keys[0].kid).toBe(signingKey.kid);
      expect(first.stdout).not.toContain(signingKey.d);

      const second = await admin(['keys', 'init'], { env: { DATA_DIR: keysDir } });
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/already present/);
      expect(second.stdout).toContain(`kid ${signingKey.kid}`);
    } finally {
      await rm(keysDir, { recursive: true, force: true });
    }
  });

  it('keys init --stage stores the private key as a SecureString and refuses to replace keys without --force', async () => {
    const { stored, store } = memoryParameters();
    const names = keyParameterNames(OTHER_STAGE);

    const first = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    expect(first.code).toBe(0);
    const signingKey = JSON.parse(stored.get(names.signingKey)?.value ?? '{}');
    const jwks = JSON.parse(stored.get(names.jwks)?.value ?? '{}');
    expect(stored.get(names.signingKey)?.secure).toBe(true);
    expect(stored.get(names.jwks)?.secure).toBe(false);
    expect(jwks.keys).toEqual([expect.objectContaining({ kid: signingKey.kid, kty: 'OKP', crv: 'Ed25519' })]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect(first.stdout).toMatch(new RegExp(`kid ${signingKey.kid}$`));
    expect(first.stdout).not.toContain(signingKey.d);

    const refused = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toHaveLength(1);
    expect(refused.stderr[0]).toMatch(/has keys already.*--force/);
    expect(JSON.parse(stored.get(names.signingKey)?.value ?? '{}').kid).toBe(signingKey.kid);

    const forced = await admin(['keys', 'init', '--stage', OTHER_STAGE, '--force'], { parameters: store });
    expect(forced.code).toBe(0);
    const replaced = JSON.parse(stored.get(names.signingKey)?.value ?? '{}');
    expect(replaced.kid).not.toBe(signingKey.kid);
    expect(JSON.parse(stored.get(names.jwks)?.value ?? '{}').keys[0].kid).toBe(replaced.kid);
  });
});

describe('admin CLI as a process', () => {
  it('adds a user with the password from the first line of stdin, without its line ending', async () => {
    const username = unique('heidi');
    const added = await spawnAdmin(['user', 'add', username], {
      stdin: 'pässword with spaces \r\nsecond line\n',
    });
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).not.toContain('pässword');

    const stored = await local.findByUsername(username);
    expect(await bcrypt.compare('pässword with spaces ', stored?.passwordHash ?? '')).toBe(true);

    const shown = await spawnAdmin(['user', 'show', username]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).username).toBe(username);
  });

  it('refuses an empty stdin as the password with exit 2', async () => {
    const run = await spawnAdmin(['user', 'add', unique('ivan')], { stdin: '' });
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      'error: the password is empty (it is read from the first line of stdin)',
    ]);
  });

  it('prints the usage for help (exit 0) and exits 2 for no or an unknown command', async () => {
    const help = await spawnAdmin(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run admin -- <command>/);

    const none = await spawnAdmin([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toMatch(/^Usage:/);

    const unknown = await spawnAdmin(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([
      'error: unknown command "frobnicate" (see: npm run admin -- help)',
    ]);
  });

  it('reports DynamoDB down in one line and exits 1', async () => {
    const closedPort = await freePort();
    const run = await spawnAdmin(['user', 'show', 'anyone'], { env: { DYNAMODB_PORT: String(closedPort) } });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      `error: DynamoDB is unavailable at http://127.0.0.1:${closedPort} (is npm start running?)`,
    ]);
  });

  it('--stage acts on that stage’s tables through the AWS endpoint settings, not the local stack', async () => {
    const awsDir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-aws-'));
    try {
      const env = {
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_CONFIG_FILE: join(awsDir, 'config'),
        AWS_SHARED_CREDENTIALS_FILE: join(awsDir, 'credentials'),
        // The local stack is down: only the stage's endpoint can answer.
        DYNAMODB_PORT: String(await freePort()),
      };
      const username = unique('judy');
      const customer = unique('STAGE');
      const address = await spawnAdmin(
        ['address', 'add', customer, '--depot', 'OST01', '--stage', OTHER_STAGE],
        {
          env,
        },
      );
      expect(address).toMatchObject({ code: 0, stderr: '' });
      const added = await spawnAdmin(
        ['user', 'add', username, '--customer', customer, '--stage', OTHER_STAGE, '--region', 'eu-west-1'],
        { env, stdin: 'stage password\n' },
      );
      expect(added).toMatchObject({ code: 0, stderr: '' });

      const stored = await deployed.findByUsername(username);
      expect(stored).toMatchObject({ customerId: customer, depotCode: 'OST01', enabled: true });
      expect(await bcrypt.compare('stage password', stored?.passwordHash ?? '')).toBe(true);
      expect(await local.findByUsername(username)).toBeNull();
    } finally {
      await rm(awsDir, { recursive: true, force: true });
    }
  });
});
