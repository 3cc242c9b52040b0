/**
 * The admin CLI against the embedded DynamoDB with real bcrypt: most cases call the command
 * runner in-process; a few spawn `scripts/admin.ts` as operators run it, password on stdin.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { createLogger } from '../../lib/log.ts';
import { revocationCutoff } from '../../lib/revocation/revocation.ts';
import { keyParameterNames, tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import {
  createLoginThrottle,
  lockSeconds,
  sourceIpCounterKey,
  type ThrottlePolicy,
  type ThrottleStore,
  usernameCounterKey,
} from '../../lib/throttle/throttle.ts';
import { epochSeconds } from '../../lib/time.ts';
import {
  generateKeyring,
  generateSigningJwk,
  importSigningKey,
  importVerificationKeys,
  type Jwks,
  type Keyring,
  parseJwks,
  parseKeyring,
  publishedKeys,
  toPublicJwk,
} from '../../lib/tokens/keys.ts';
import { createAccessTokenVerifier, createTokenIssuer } from '../../lib/tokens/tokens.ts';
import { createBulkAccountStore } from '../../lib/users/bulk-dynamodb.ts';
import { createDynamoAccountRepository } from '../../lib/users/dynamodb.ts';
import type { AccountRepository } from '../../lib/users/repository.ts';
import { failure } from '../../scripts/admin/errors.ts';
import type { ParameterStore } from '../../scripts/admin/keys.ts';
import { runAdmin } from '../../scripts/admin/main.ts';
import { freePort } from '../../scripts/harness/ports.ts';
import { type EmbeddedDynamo, startDynalite } from '../../scripts/local/dynalite.ts';
import { ensureTables } from '../../scripts/local/tables.ts';
import { TOKEN_SETTINGS } from '../helpers/keys.ts';
import { runScript } from '../helpers/run-script.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OTHER_STAGE = 'teststage';

let dynamo: EmbeddedDynamo;
let dataDir: string;
let client: ReturnType<typeof createDocumentClient>;
let local: AccountRepository;
let deployed: AccountRepository;
/** The failed-login counters of the local stage. */
let throttleStore: ThrottleStore;

beforeAll(async () => {
  dynamo = await startDynalite({ port: 0 });
  await ensureTables(dynamo.client(), 'local');
  await ensureTables(dynamo.client(), OTHER_STAGE);
  dataDir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-'));
  client = createDocumentClient({ region: 'local', dynamodbEndpoint: dynamo.endpoint });
  local = createDynamoAccountRepository({ client, tableName: tableNames('local').accounts });
  deployed = createDynamoAccountRepository({ client, tableName: tableNames(OTHER_STAGE).accounts });
  throttleStore = createDynamoThrottleStore({ client, tableName: tableNames('local').loginThrottle });
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

interface AdminOptions {
  readonly password?: string;
  readonly env?: Record<string, string>;
  readonly parameters?: ParameterStore;
  /** The clock of the local account store; default the system clock. */
  readonly accountsClock?: () => Date;
}

/** Runs the CLI in-process on the local target; `password` is what stdin holds. */
async function admin(args: string[], options: AdminOptions = {}): Promise<Run> {
  const { accountsClock } = options;
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
    ...(accountsClock && {
      openStores: () => ({
        accounts: createDynamoAccountRepository({
          client,
          tableName: tableNames('local').accounts,
          clock: accountsClock,
        }),
        loginFailures: throttleStore,
        bulk: createBulkAccountStore({ client, tableName: tableNames('local').accounts }),
        close: () => {},
      }),
    }),
  });
  return { code, stdout: stdout.join('\n'), stderr, passwordReads };
}

/** Runs `node scripts/admin.ts` as an operator would, with `stdin` piped in. */
function spawnAdmin(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  // Nothing of the developer's AWS setup leaks into the child.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  return runScript('scripts/admin.ts', args, {
    env: { ...env, DYNAMODB_PORT: String(dynamo.port), DATA_DIR: dataDir, ...options.env },
    ...(options.stdin !== undefined && { stdin: options.stdin }),
  });
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

/**
 * A parameter store in memory that refuses to overwrite as SSM does (PutParameter, Overwrite
 * false) and records the order of writes; `failWrite` makes the write of one name fail.
 */
function memoryParameters(options: { failWrite?: string } = {}) {
  const stored = new Map<string, { value: string; secure: boolean }>();
  const writes: string[] = [];
  const store: ParameterStore = {
    exists: async (name) => stored.has(name),
    get: async (name) => stored.get(name)?.value,
    async put(name, value, { secure, overwrite }) {
      if (name === options.failWrite)
        throw failure(`SSM: cannot write parameter ${name} (test): AccessDenied`);
      if (stored.has(name) && !overwrite) throw failure(`SSM parameter ${name} exists already`);
      stored.set(name, { value, secure });
      writes.push(name);
    },
  };
  return { stored, writes, store };
}

/** The keys of a stage as they stand, parsed. */
const storedKeys = (stored: Map<string, { value: string }>, stage: string) => {
  const names = keyParameterNames(stage);
  return {
    keyring: parseKeyring(stored.get(names.signingKeyring)?.value ?? ''),
    jwks: parseJwks(stored.get(names.jwks)?.value ?? ''),
  };
};

/** A fresh DATA_DIR for a test that changes key files; removed after `use`. */
async function withDataDir(use: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-keys-'));
  try {
    await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const keyFiles = (dir: string) => ({
  keyring: join(dir, 'keys', 'signing-keyring.json'),
  jwks: join(dir, 'keys', 'jwks.json'),
});

/** Writes local key files as `npm start` would have, with whatever keyring a test needs. */
async function writeLocalKeys(dir: string, keyring: Keyring, jwks: Jwks = publishedKeys(keyring)) {
  await mkdir(join(dir, 'keys'), { recursive: true, mode: 0o700 });
  await writeFile(keyFiles(dir).jwks, JSON.stringify(jwks), { mode: 0o644 });
  await writeFile(keyFiles(dir).keyring, JSON.stringify(keyring), { mode: 0o600 });
}

async function readLocalKeys(dir: string) {
  return {
    keyring: parseKeyring(await readFile(keyFiles(dir).keyring, 'utf8')),
    jwks: parseJwks(await readFile(keyFiles(dir).jwks, 'utf8')),
  };
}

const kids = (jwks: Jwks) => jwks.keys.map(({ kid }) => kid);

/** A keyring last rotated `hoursAgo` hours ago: a rotation now is not refused. */
const keyringFrom = (hoursAgo: number) => generateKeyring(new Date(Date.now() - hoursAgo * 3_600_000));

/** An access token signed with `keyring`'s active key, as a login function would sign it. */
async function signWith(keyring: Keyring) {
  const signingKey = await importSigningKey(keyring.active);
  const issuer = createTokenIssuer({ signingKey: async () => signingKey, settings: TOKEN_SETTINGS });
  const now = epochSeconds(new Date());
  const { accessToken } = await issuer.issue({
    subject: { username: 'rotation-user', customerId: null },
    sessionId: randomUUID(),
    refreshJti: randomUUID(),
    authTime: now,
    issuedAt: now,
    notAfter: now + TOKEN_SETTINGS.refreshTtlSeconds,
  });
  return accessToken;
}

/** The username of a token the authorizer's verifier accepts with `jwks`. */
async function verifyWith(jwks: Jwks, token: string) {
  const keys = await importVerificationKeys(jwks);
  const verifier = createAccessTokenVerifier({ keys: async () => keys, settings: TOKEN_SETTINGS });
  return (await verifier.verify(token)).username;
}

/** The local stage's env for key commands: a long reload interval, so the refusal is testable. */
const keysEnv = (dir: string) => ({ DATA_DIR: dir, KEY_RELOAD_INTERVAL: '10m' });

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
      ['createdAt', 'customerId', 'depotCode', 'enabled', 'failedLogins', 'updatedAt', 'username'].sort(),
    );
    expect(user).toMatchObject({ username, enabled: true, customerId: customer, depotCode: 'PRG01' });
    expect(user.failedLogins).toEqual({ failures: 0, lastAttemptAt: null, lockedUntil: null });
    expect(shown.stdout).not.toMatch(/\$2[aby]\$|passwordHash/);
  });

  it('refuses an existing username, also one differing only in case, with exit 1 and one line', async () => {
    const username = unique('Twin');
    expect((await admin(['user', 'add', username], { password: 'first pass word' })).code).toBe(0);

    for (const variant of [username, username.toLowerCase(), username.toUpperCase()]) {
      const again = await admin(['user', 'add', variant], { password: 'second pass word' });
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
    // 'ž' takes 2 bytes, '✓' 3, '😀' 4 (and two UTF-16 units).
    for (const password of ['ž'.repeat(37), '✓'.repeat(25), '😀'.repeat(19), 'a'.repeat(73)]) {
      const run = await admin(['user', 'add', username], { password });
      expect(run.code).toBe(2);
      expect(run.stderr).toEqual([
        'error: the password is longer than 72 bytes in UTF-8 (bcrypt would ignore the rest; ' +
          'a character outside ASCII takes 2 to 4 bytes)',
      ]);
    }
    const empty = await admin(['user', 'add', username], { password: '' });
    expect(empty).toMatchObject({
      code: 2,
      stderr: ['error: the password is empty (it is read from the first line of stdin)'],
    });
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
    const run = await admin(['user', 'passwd', 'nobody-here'], { password: 'whatever pass word' });
    expect(run).toMatchObject({ code: 1, stderr: ['error: user "nobody-here" not found'] });
  });

  it('disable and enable flip whether the user is enabled', async () => {
    const username = unique('erin');
    await admin(['user', 'add', username], { password: 'good pass word' });

    expect((await admin(['user', 'disable', username])).code).toBe(0);
    expect((await local.findByUsername(username))?.enabled).toBe(false);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).enabled).toBe(false);

    expect((await admin(['user', 'enable', username])).code).toBe(0);
    expect((await local.findByUsername(username))?.enabled).toBe(true);
  });

  it('remove deletes the user: show then reports it not found with exit 1', async () => {
    const username = unique('frank');
    await admin(['user', 'add', username], { password: 'good pass word' });

    expect((await admin(['user', 'remove', username])).code).toBe(0);
    const shown = await admin(['user', 'show', username]);
    expect(shown).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${username}" not found`] });
    expect((await admin(['user', 'remove', username])).code).toBe(1);
  });

  it('logout revokes every session and access token of the user: revokedBefore advances', async () => {
    const username = unique('kim');
    await admin(['user', 'add', username], { password: 'good pass word' });
    const before = await local.findStatus(username);
    const later = new Date(Date.now() + 60_000);

    const run = await admin(['user', 'logout', username], { accountsClock: () => later });
    expect(run).toMatchObject({
      code: 0,
      stderr: [],
      stdout: `revoked the sessions and access tokens of user "${username}"`,
      passwordReads: 0,
    });
    const after = await local.findStatus(username);
    expect(after).toEqual({ enabled: true, revokedBefore: revocationCutoff(later) });
    expect(after?.revokedBefore).toBeGreaterThan(before?.revokedBefore ?? Number.POSITIVE_INFINITY);
  });

  it('logout of an unknown user fails with exit 1 and names the user', async () => {
    const run = await admin(['user', 'logout', 'nobody-here']);
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: ['error: user "nobody-here" not found'] });
  });

  it('passwd, disable and remove say the user’s sessions were revoked; passwd and disable advance revokedBefore', async () => {
    const username = unique('lena');
    await admin(['user', 'add', username], { password: 'good pass word' });

    const inAMinute = new Date(Date.now() + 60_000);
    const changed = await admin(['user', 'passwd', username], {
      password: 'another pass word',
      accountsClock: () => inAMinute,
    });
    expect(changed.stdout).toBe(
      `changed the password of user "${username}" and revoked its sessions and access tokens`,
    );
    expect(await local.findStatus(username)).toEqual({
      enabled: true,
      revokedBefore: revocationCutoff(inAMinute),
    });

    const inTwoMinutes = new Date(Date.now() + 120_000);
    const disabled = await admin(['user', 'disable', username], { accountsClock: () => inTwoMinutes });
    expect(disabled.stdout).toBe(`disabled user "${username}" and revoked its sessions and access tokens`);
    expect(await local.findStatus(username)).toEqual({
      enabled: false,
      revokedBefore: revocationCutoff(inTwoMinutes),
    });

    const enabled = await admin(['user', 'enable', username]);
    expect(enabled.stdout).toBe(`enabled user "${username}"`);
    expect((await local.findStatus(username))?.revokedBefore).toBe(revocationCutoff(inTwoMinutes));

    const removed = await admin(['user', 'remove', username]);
    expect(removed.stdout).toBe(`removed user "${username}" and revoked its sessions and access tokens`);
    expect(await local.findStatus(username)).toBeNull();
  });
});

/** `text` in fullwidth forms (U+FF01 to U+FF5E), which NFKC folds back to ASCII. */
const fullwidth = (text: string) =>
  text.replace(/[!-~]/g, (char) => String.fromCodePoint((char.codePointAt(0) ?? 0) + 0xfee0));

describe('admin CLI: password rules', () => {
  /** Expects `password` refused for `args` with exit 2 and exactly `message`, never echoed. */
  async function expectRefused(args: string[], password: string, message: string) {
    const run = await admin(args, { password });
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: [`error: ${message}`], passwordReads: 1 });
    expect(run.stderr[0]).not.toContain(password);
  }

  const SHORT = 'the password is shorter than 12 characters';
  const IS_USERNAME = 'the password is the username (compared ignoring letter case)';
  const CONTROL = 'the password contains a control character or U+FFFD (login refuses such a password)';

  it('refuses a password under 12 characters, counting code points, not UTF-16 units or bytes', async () => {
    const username = unique('nina');
    // '✓' is 3 bytes in UTF-8; '😀' is 4 bytes and two UTF-16 units, so six of them have length 12.
    for (const password of ['a'.repeat(11), 'pass word 1', '✓'.repeat(11), '😀'.repeat(6)]) {
      await expectRefused(['user', 'add', username], password, SHORT);
    }
    expect(await local.findByUsername(username)).toBeNull();

    const twelve = '✓'.repeat(12); // 36 bytes
    expect(await admin(['user', 'add', username], { password: twelve })).toMatchObject({
      code: 0,
      stderr: [],
    });
    expect(await bcrypt.compare(twelve, (await local.findByUsername(username))?.passwordHash ?? '')).toBe(
      true,
    );

    const before = await local.findByUsername(username);
    await expectRefused(['user', 'passwd', username], 'a'.repeat(11), SHORT);
    expect((await local.findByUsername(username))?.passwordHash).toBe(before?.passwordHash);

    const emoji = '😀'.repeat(18); // 18 characters, 72 bytes
    expect((await admin(['user', 'passwd', username], { password: emoji })).code).toBe(0);
    expect(await bcrypt.compare(emoji, (await local.findByUsername(username))?.passwordHash ?? '')).toBe(
      true,
    );
  });

  it('refuses the username as its password in any letter case or compatibility form, on add and passwd', async () => {
    const username = unique('Mallory');
    for (const password of [username, username.toLowerCase(), username.toUpperCase(), fullwidth(username)]) {
      await expectRefused(['user', 'add', username], password, IS_USERNAME);
    }
    expect(await local.findByUsername(username)).toBeNull();

    expect((await admin(['user', 'add', username], { password: 'good pass word' })).code).toBe(0);
    const before = await local.findByUsername(username);
    await expectRefused(['user', 'passwd', username], username.toUpperCase(), IS_USERNAME);
    expect((await local.findByUsername(username))?.passwordHash).toBe(before?.passwordHash);

    // Only the username itself is refused, not a password that contains it.
    expect((await admin(['user', 'passwd', username], { password: `${username}!2025` })).code).toBe(0);
  });

  it('refuses a control character or U+FFFD anywhere, which login would refuse, before any other rule', async () => {
    const username = unique('oscar');
    for (const password of [
      'correct\thorse battery',
      'correct horse\u0000battery',
      'correct horse\u007fbattery',
      'correct horse\u0085battery',
      'correct horse \ufffd battery',
      '\u001b[2Jshort',
    ]) {
      await expectRefused(['user', 'add', username], password, CONTROL);
    }
    expect(await local.findByUsername(username)).toBeNull();

    expect((await admin(['user', 'add', username], { password: 'good pass word' })).code).toBe(0);
    await expectRefused(['user', 'passwd', username], 'new pass word\r', CONTROL);
  });
});

/** The username policy of the login throttle: three failures lock, for 30s doubling up to 15m. */
const POLICY: ThrottlePolicy = { limit: 3, windowSeconds: 3600, baseLockSeconds: 30, maxLockSeconds: 900 };

/** Fails `times` logins of `username` from `sourceIp` at `at`, as the login function would. */
async function failLogins(username: string, times: number, at: Date, sourceIp = '') {
  const throttle = createLoginThrottle({
    store: throttleStore,
    settings: { username: POLICY, sourceIp: POLICY },
    clock: () => at,
    logger: createLogger('error', () => {}),
  });
  for (let i = 0; i < times; i += 1) {
    const attempt = { username, sourceIp };
    await throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
  }
  return throttle;
}

describe('admin CLI: failed logins', () => {
  it('show prints the failures of the username in any letter case, the last one, and the running lock', async () => {
    const username = unique('Peggy');
    await admin(['user', 'add', username], { password: 'good pass word' });
    const at = new Date(Date.now() - 1000);
    await failLogins(username.toUpperCase(), 2, at);
    await failLogins(username, 1, at);

    const shown = await admin(['user', 'show', username]);
    expect(shown).toMatchObject({ code: 0, stderr: [] });
    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: at.toISOString(),
      lockedUntil: new Date(at.getTime() + lockSeconds(POLICY, 3) * 1000).toISOString(),
    });
  });

  it('show gives lockedUntil null once the lock has run out, and keeps the count', async () => {
    const username = unique('quinn');
    await admin(['user', 'add', username], { password: 'good pass word' });
    const hourAgo = new Date(Date.now() - 3_600_000);
    await failLogins(username, 3, hourAgo);

    const shown = await admin(['user', 'show', username]);
    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: hourAgo.toISOString(),
      lockedUntil: null,
    });
  });

  it('show of a name that is no user says only that, even when the name has failed logins', async () => {
    const name = unique('nobody');
    await failLogins(name, 3, new Date());
    const shown = await admin(['user', 'show', name]);
    expect(shown).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${name}" not found`] });
  });

  it('unlock clears the username’s counter and ends its lock, leaving the source address’s counter', async () => {
    const username = unique('Rupert');
    const sourceIp = '203.0.113.7';
    await admin(['user', 'add', username], { password: 'good pass word' });
    const throttle = await failLogins(username, 3, new Date(), sourceIp);
    const attempt = { username, sourceIp: '' };
    await expect(throttle.begin(attempt)).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });

    const run = await admin(['user', 'unlock', username]);
    expect(run).toMatchObject({
      code: 0,
      stderr: [],
      stdout: `cleared the failed logins of user "${username}"`,
      passwordReads: 0,
    });
    const left = await throttleStore.read([usernameCounterKey(username), sourceIpCounterKey(sourceIp)]);
    expect([...left.keys()]).toEqual([sourceIpCounterKey(sourceIp)]);
    expect(left.get(sourceIpCounterKey(sourceIp))?.failures).toBe(3);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).failedLogins).toEqual({
      failures: 0,
      lastAttemptAt: null,
      lockedUntil: null,
    });
    await expect(throttle.begin({ username, sourceIp })).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    await expect(throttle.begin(attempt)).resolves.toMatchObject({
      counted: [{ kind: 'username', failures: 1 }],
    });
    // Nothing to clear is no failure.
    expect((await admin(['user', 'unlock', username])).code).toBe(0);
  });

  it('unlock of a name that is no user fails with exit 1 and clears nothing', async () => {
    const name = unique('nobody');
    await failLogins(name, 3, new Date());
    const run = await admin(['user', 'unlock', name]);
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${name}" not found`] });
    expect(
      (await throttleStore.read([usernameCounterKey(name)])).get(usernameCounterKey(name))?.failures,
    ).toBe(3);
  });

  it('unlock takes exactly one username', async () => {
    for (const args of [
      ['user', 'unlock'],
      ['user', 'unlock', 'a', 'b'],
    ]) {
      expect(await admin(args)).toMatchObject({ code: 2, stderr: ['error: user unlock takes <username>'] });
    }
  });
});

describe('admin CLI: pickup addresses', () => {
  it('appends addresses in order, an empty depot allowed, and users get the first non-empty depot', async () => {
    const customer = unique('CUST');
    const first = await admin(['address', 'add', customer, '--depot', '']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ customerId: customer, position: 1, depotCode: '' });

    const username = unique('grace');
    await admin(['user', 'add', username, '--customer', customer], { password: 'good pass word' });
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
  it('keys init creates the local keyring once and then reports it present, printing only kids', () =>
    withDataDir(async (dir) => {
      const first = await admin(['keys', 'init'], { env: { DATA_DIR: dir } });
      expect(first).toMatchObject({ code: 0, stderr: [] });
      const { keyring, jwks } = await readLocalKeys(dir);
      expect(first.stdout).toBe(
        `created the local signing keyring in ${join(dir, 'keys')}; ` +
          `active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`,
      );
      expect((await stat(keyFiles(dir).keyring)).mode & 0o077).toBe(0);
      expect(kids(jwks)).toEqual([keyring.active.kid, keyring.next.kid]);
      expect(first.stdout).not.toContain(keyring.active.d);
      expect(first.stdout).not.toContain(keyring.next.d);

      const second = await admin(['keys', 'init'], { env: { DATA_DIR: dir } });
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/^the local signing keyring is already present in /);
      expect(second.stdout).toContain(`active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`);

      const forced = await admin(['keys', 'init', '--force'], { env: { DATA_DIR: dir } });
      expect(forced.code).toBe(2);
      expect(forced.stderr).toEqual([expect.stringMatching(/^error: --force applies only with --stage/)]);
      expect((await readLocalKeys(dir)).keyring).toEqual(keyring);
    }));

  it('keys init --stage publishes the key set before it writes the keyring, and refuses to replace keys without --force', async () => {
    const { stored, writes, store } = memoryParameters();
    const names = keyParameterNames(OTHER_STAGE);

    const first = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    expect(first.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    expect(stored.get(names.signingKeyring)?.secure).toBe(true);
    expect(stored.get(names.jwks)?.secure).toBe(false);
    const { keyring, jwks } = storedKeys(stored, OTHER_STAGE);
    expect(kids(jwks)).toEqual([keyring.active.kid, keyring.next.kid]);
    expect(stored.get(names.jwks)?.value).not.toContain('"d"');
    expect(first.stdout).toBe(
      `created the signing keyring of stage ${OTHER_STAGE} in SSM (eu-central-1); ` +
        `active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`,
    );

    const refused = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toEqual([
      expect.stringMatching(/has keys already.*keys rotate.*--force replaces/),
    ]);
    expect(storedKeys(stored, OTHER_STAGE).keyring).toEqual(keyring);

    const forced = await admin(['keys', 'init', '--stage', OTHER_STAGE, '--force'], { parameters: store });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^replaced the signing keyring/);
    const replaced = storedKeys(stored, OTHER_STAGE);
    expect(replaced.keyring.active.kid).not.toBe(keyring.active.kid);
    expect(kids(replaced.jwks)).toEqual([replaced.keyring.active.kid, replaced.keyring.next.kid]);
  });

  it('keys list prints each key with its state and whether it is published', () =>
    withDataDir(async (dir) => {
      const retired = await generateSigningJwk();
      const base = await keyringFrom(2);
      const keyring: Keyring = {
        ...base,
        retired: [{ kid: retired.kid, retiredAt: '2025-06-01T08:00:00.000Z' }],
      };
      await writeLocalKeys(dir, keyring, publishedKeys(keyring, { keys: [toPublicJwk(retired)] }));

      const listed = await admin(['keys', 'list'], { env: { DATA_DIR: dir } });
      expect(listed).toMatchObject({ code: 0, stderr: [] });
      // States are padded to the longest, here the retired key's.
      const pad = (state: string) => state.padEnd('retired since 2025-06-01T08:00:00.000Z'.length);
      expect(lines(listed.stdout)).toEqual([
        `${keyring.active.kid}  ${pad(`active since ${keyring.rotatedAt}`)}  published`,
        `${keyring.next.kid}  ${pad('next')}  published`,
        `${retired.kid}  ${pad('retired since 2025-06-01T08:00:00.000Z')}  published`,
      ]);
      expect(listed.stdout).not.toContain(keyring.active.d);

      expect((await admin(['keys', 'list', '--force'], { env: { DATA_DIR: dir } })).code).toBe(2);
    }));

  it('keys list fails with exit 1 when a key of the keyring is not published', () =>
    withDataDir(async (dir) => {
      const keyring = await keyringFrom(2);
      await writeLocalKeys(dir, keyring, { keys: [toPublicJwk(keyring.active)] });

      const listed = await admin(['keys', 'list'], { env: { DATA_DIR: dir } });
      expect(listed.code).toBe(1);
      expect(lines(listed.stdout)[1]).toMatch(new RegExp(`^${keyring.next.kid} +next +NOT PUBLISHED$`));
      expect(listed.stderr).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: the key set .*jwks.json lacks 1 key\\(s\\) of the keyring \\(${keyring.next.kid} next\\)`,
          ),
        ),
      ]);
    }));

  it('keys rotate makes the next key active and keeps the old active key published, so its tokens still verify', () =>
    withDataDir(async (dir) => {
      const before = await keyringFrom(1);
      await writeLocalKeys(dir, before);
      const token = await signWith(before);

      const rotated = await admin(['keys', 'rotate'], { env: keysEnv(dir) });
      expect(rotated).toMatchObject({ code: 0, stderr: [] });
      const after = await readLocalKeys(dir);
      expect(after.keyring.active).toEqual(before.next);
      expect([before.active.kid, before.next.kid]).not.toContain(after.keyring.next.kid);
      expect(after.keyring.retired).toEqual([{ kid: before.active.kid, retiredAt: expect.any(String) }]);
      expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid, before.active.kid]);
      expect((await stat(keyFiles(dir).keyring)).mode & 0o077).toBe(0);

      expect(await verifyWith(after.jwks, token)).toBe('rotation-user');
      expect(await verifyWith(after.jwks, await signWith(after.keyring))).toBe('rotation-user');

      const output = lines(rotated.stdout);
      expect(output).toEqual([
        `rotated the signing keys of stage local in ${join(dir, 'keys')}; the functions load them within 10m`,
        `active  ${before.next.kid} (was next)`,
        `next    ${after.keyring.next.kid} (new: published now, signs after the next rotation)`,
        expect.stringMatching(
          new RegExp(
            `^retired ${before.active.kid} \\(was active: published until a rotation after \\S+Z\\)$`,
          ),
        ),
        'dropped none',
      ]);
      for (const jwk of [before.active, before.next, after.keyring.next])
        expect(rotated.stdout).not.toContain(jwk.d);
    }));

  it('keys rotate refuses a second rotation within keyReloadInterval with exit 1; --force rotates anyway', () =>
    withDataDir(async (dir) => {
      const initial = await keyringFrom(1);
      await writeLocalKeys(dir, initial);
      expect((await admin(['keys', 'rotate'], { env: keysEnv(dir) })).code).toBe(0);
      const once = await readLocalKeys(dir);

      const refused = await admin(['keys', 'rotate'], { env: keysEnv(dir) });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: the keys of stage local were rotated at ${once.keyring.rotatedAt}, less than ` +
              `keyReloadInterval \\(10m\\) ago: .*\\(${once.keyring.next.kid}\\); wait until \\S+Z, or add --force`,
          ),
        ),
      ]);
      expect(await readLocalKeys(dir)).toEqual(once);

      const forced = await admin(['keys', 'rotate', '--force'], { env: keysEnv(dir) });
      expect(forced.code).toBe(0);
      const twice = await readLocalKeys(dir);
      expect(twice.keyring.active).toEqual(once.keyring.next);
      expect(twice.keyring.retired.map(({ kid }) => kid)).toEqual([initial.next.kid, initial.active.kid]);
      expect(kids(twice.jwks)).toEqual([
        twice.keyring.active.kid,
        twice.keyring.next.kid,
        initial.next.kid,
        initial.active.kid,
      ]);
    }));

  it('keys rotate drops retired keys older than the token lifetimes plus the reload interval', () =>
    withDataDir(async (dir) => {
      const [expired, recent] = await Promise.all([generateSigningJwk(), generateSigningJwk()]);
      const recentlyRetired = new Date(Date.now() - 86_400_000).toISOString();
      const keyring: Keyring = {
        ...(await keyringFrom(1)),
        retired: [
          { kid: recent.kid, retiredAt: recentlyRetired },
          { kid: expired.kid, retiredAt: '2020-01-01T00:00:00.000Z' },
        ],
      };
      await writeLocalKeys(
        dir,
        keyring,
        publishedKeys(keyring, { keys: [toPublicJwk(recent), toPublicJwk(expired)] }),
      );

      const rotated = await admin(['keys', 'rotate'], { env: keysEnv(dir) });
      expect(rotated.code).toBe(0);
      expect(lines(rotated.stdout).at(-1)).toBe(`dropped ${expired.kid} (retired 2020-01-01T00:00:00.000Z)`);
      const after = await readLocalKeys(dir);
      expect(after.keyring.retired.map(({ kid }) => kid)).toEqual([keyring.active.kid, recent.kid]);
      expect(kids(after.jwks)).toEqual([
        keyring.next.kid,
        after.keyring.next.kid,
        keyring.active.kid,
        recent.kid,
      ]);
    }));

  it('keys rotate --stage writes the key set before the keyring; a failed keyring write leaves every token verifying and a rerun finishes', async () => {
    const names = keyParameterNames(OTHER_STAGE);
    const before = await keyringFrom(1);
    const { stored, writes, store } = memoryParameters();
    await store.put(names.jwks, JSON.stringify(publishedKeys(before)), { secure: false, overwrite: false });
    await store.put(names.signingKeyring, JSON.stringify(before), { secure: true, overwrite: false });
    writes.length = 0;
    const token = await signWith(before);

    const failing = memoryParameters({ failWrite: names.signingKeyring });
    for (const [name, value] of stored) failing.stored.set(name, value);
    const halfWay = await admin(['keys', 'rotate', '--stage', OTHER_STAGE], { parameters: failing.store });
    expect(halfWay.code).toBe(1);
    expect(halfWay.stderr).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error: published the new key set but could not write the keyring ${names.signingKeyring} .*AccessDenied.*` +
            `every token still verifies: run keys rotate --stage ${OTHER_STAGE} again to finish$`,
        ),
      ),
    ]);
    const half = storedKeys(failing.stored, OTHER_STAGE);
    expect(half.keyring).toEqual(before);
    expect(await verifyWith(half.jwks, token)).toBe('rotation-user');
    expect(kids(half.jwks)).toEqual(expect.arrayContaining([before.active.kid, before.next.kid]));

    const listed = await admin(['keys', 'list', '--stage', OTHER_STAGE], { parameters: failing.store });
    expect(listed.code).toBe(0);
    expect(lines(listed.stdout).at(-1)).toMatch(/ not in the keyring +published$/);

    for (const [name, value] of failing.stored) stored.set(name, value);
    const rerun = await admin(['keys', 'rotate', '--stage', OTHER_STAGE], { parameters: store });
    expect(rerun.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    const after = storedKeys(stored, OTHER_STAGE);
    expect(after.keyring.active).toEqual(before.next);
    expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid, before.active.kid]);
    expect(await verifyWith(after.jwks, token)).toBe('rotation-user');
  });

  it('keys rotate reports a stage without keys with exit 1 and points to keys init', async () => {
    const { store } = memoryParameters();
    const run = await admin(['keys', 'rotate', '--stage', 'emptystage'], { parameters: store });
    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([
      'error: stage emptystage has no /parcel-auth/emptystage/signing-keyring and no /parcel-auth/emptystage/jwks; ' +
        'run keys init --stage emptystage',
    ]);
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
    expect(help.stdout).toContain('user unlock <username>');

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
