/** The admin CLI's user commands: add, show, passwd, enable, disable, remove and logout. */
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { revocationCutoff } from '../../../lib/revocation/revocation.ts';
import { unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const TOO_LONG =
  'error: the password is longer than 72 bytes in UTF-8 (bcrypt would ignore the rest; ' +
  'a character outside ASCII takes 2 to 4 bytes)';

describe('admin CLI: users', () => {
  it('user add creates the user with its customer’s depot, reading the password from stdin once', async () => {
    const username = unique('alice');
    const customer = unique('C');
    await adminOk(['address', 'add', customer, '--depot', 'PRG01']);

    const added = await admin(['user', 'add', username, '--customer', customer], {
      password: 'correct horse',
    });

    expect(added).toMatchObject({ code: 0, stderr: [], passwordReads: 1 });
    expect(await cli.local.findByUsername(username)).toMatchObject({
      customerId: customer,
      depotCode: 'PRG01',
    });
  });

  it('user show prints the user as JSON with its customer, depot and failed logins, without the password hash', async () => {
    const username = unique('alice');
    const customer = unique('C');
    await adminOk(['address', 'add', customer, '--depot', 'PRG01']);
    await adminOk(['user', 'add', username, '--customer', customer], { password: 'correct horse' });

    const shown = await admin(['user', 'show', username]);

    expect(shown.code).toBe(0);
    const user = JSON.parse(shown.stdout);
    expect(Object.keys(user).sort()).toEqual(
      [
        'admin',
        'createdAt',
        'customerId',
        'depotCode',
        'enabled',
        'failedLogins',
        'scopes',
        'updatedAt',
        'username',
      ].sort(),
    );
    expect(user).toMatchObject({
      username,
      enabled: true,
      customerId: customer,
      depotCode: 'PRG01',
      scopes: null,
      admin: false,
    });
    expect(user.failedLogins).toEqual({
      failures: 0,
      lastAttemptAt: null,
      lockedUntil: null,
      knownSources: 0,
      knownSourcesLocked: [],
    });
    expect(shown.stdout).not.toMatch(/\$2[aby]\$|passwordHash/);
  });

  it('user add refuses an existing username, also one differing only in case, with exit 1 and one line', async () => {
    const username = unique('Twin');
    await adminOk(['user', 'add', username], { password: 'first pass word' });
    const variants = [username, username.toLowerCase(), username.toUpperCase()];

    const runs = [];
    for (const variant of variants) {
      runs.push(await admin(['user', 'add', variant], { password: 'second pass word' }));
    }

    for (const again of runs) {
      expect(again.code).toBe(1);
      expect(again.stderr).toEqual(['error: a user with this name (in any letter case) exists']);
    }
    expect((await cli.local.findByUsername(username))?.username).toBe(username);
  });

  it('user add takes the password only from stdin: one given as an argument is refused and not echoed', async () => {
    const username = unique('bob');
    const secret = 'Hunter2-argv-secret';
    const invocations = [
      ['user', 'add', username, secret],
      ['user', 'add', username, `--password=${secret}`],
      ['user', 'add', username, '--password', secret],
    ];

    const runs = [];
    for (const args of invocations) runs.push(await admin(args, { password: 'from stdin' }));

    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
      expect(run.stderr.join('')).not.toContain(secret);
      expect(run.passwordReads).toBe(0);
    }
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('user add refuses a password over 72 UTF-8 bytes, counting multi-byte characters', async () => {
    const username = unique('carol');
    // 'ž' takes 2 bytes, '✓' 3, '😀' 4 (and two UTF-16 units).
    const passwords = ['ž'.repeat(37), '✓'.repeat(25), '😀'.repeat(19), 'a'.repeat(73)];

    const runs = [];
    for (const password of passwords) runs.push(await admin(['user', 'add', username], { password }));

    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stderr).toEqual([TOO_LONG]);
    }
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('user add refuses an empty password', async () => {
    const username = unique('carol');

    const empty = await admin(['user', 'add', username], { password: '' });

    expect(empty).toMatchObject({
      code: 2,
      stderr: ['error: the password is empty (it is read from the first line of stdin)'],
    });
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('user add accepts a password of exactly 72 UTF-8 bytes, every byte of it counting', async () => {
    const username = unique('carol');
    const longest = 'ž'.repeat(36); // 72 bytes

    const added = await admin(['user', 'add', username], { password: longest });

    expect(added.code).toBe(0);
    const stored = await cli.local.findByUsername(username);
    expect(await bcrypt.compare(longest, stored?.passwordHash ?? '')).toBe(true);
  });

  it('passwd replaces the hash: the new password matches, the old one no longer does', async () => {
    const username = unique('dave');
    await adminOk(['user', 'add', username], { password: 'old password' });
    const before = await cli.local.findByUsername(username);

    const changed = await admin(['user', 'passwd', username], { password: 'new password ✓' });

    expect(changed).toMatchObject({ code: 0, stderr: [], passwordReads: 1 });
    const after = await cli.local.findByUsername(username);
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    expect(await bcrypt.compare('new password ✓', after?.passwordHash ?? '')).toBe(true);
    expect(await bcrypt.compare('old password', after?.passwordHash ?? '')).toBe(false);
  });

  it('passwd of an unknown user fails with exit 1 and names the user', async () => {
    const run = await admin(['user', 'passwd', 'nobody-here'], { password: 'whatever pass word' });

    expect(run).toMatchObject({ code: 1, stderr: ['error: user "nobody-here" not found'] });
  });

  it('disable disables the user, in the store and in user show', async () => {
    const username = unique('erin');
    await adminOk(['user', 'add', username], { password: 'good pass word' });

    const disabled = await admin(['user', 'disable', username]);

    expect(disabled.code).toBe(0);
    expect((await cli.local.findByUsername(username))?.enabled).toBe(false);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).enabled).toBe(false);
  });

  it('enable enables a disabled user again', async () => {
    const username = unique('erin');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    await adminOk(['user', 'disable', username]);

    const enabled = await admin(['user', 'enable', username]);

    expect(enabled.code).toBe(0);
    expect((await cli.local.findByUsername(username))?.enabled).toBe(true);
  });

  it('remove deletes the user: show then reports it not found with exit 1', async () => {
    const username = unique('frank');
    await adminOk(['user', 'add', username], { password: 'good pass word' });

    const removed = await admin(['user', 'remove', username]);

    expect(removed.code).toBe(0);
    const shown = await admin(['user', 'show', username]);
    expect(shown).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${username}" not found`] });
  });

  it('remove of a user removed already fails with exit 1', async () => {
    const username = unique('frank');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    await adminOk(['user', 'remove', username]);

    const again = await admin(['user', 'remove', username]);

    expect(again.code).toBe(1);
  });

  it('logout revokes every session and access token of the user: revokedBefore advances', async () => {
    const username = unique('kim');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const before = await cli.local.findStatus(username);
    const later = new Date(Date.now() + 60_000);

    const run = await admin(['user', 'logout', username], { accountsClock: () => later });

    expect(run).toMatchObject({
      code: 0,
      stderr: [],
      stdout: `revoked the sessions and access tokens of user "${username}"`,
      passwordReads: 0,
    });
    const after = await cli.local.findStatus(username);
    expect(after).toEqual({
      enabled: true,
      revokedBefore: revocationCutoff(later),
      revokedSessions: new Set(),
    });
    expect(after?.revokedBefore).toBeGreaterThan(before?.revokedBefore ?? Number.POSITIVE_INFINITY);
  });

  it('logout of an unknown user fails with exit 1 and names the user', async () => {
    const run = await admin(['user', 'logout', 'nobody-here']);

    expect(run).toMatchObject({ code: 1, stdout: '', stderr: ['error: user "nobody-here" not found'] });
  });

  it('passwd says it revoked the user’s sessions and access tokens, and advances revokedBefore', async () => {
    const username = unique('lena');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const inAMinute = new Date(Date.now() + 60_000);

    const changed = await admin(['user', 'passwd', username], {
      password: 'another pass word',
      accountsClock: () => inAMinute,
    });

    expect(changed.stdout).toBe(
      `changed the password of user "${username}" and revoked its sessions and access tokens`,
    );
    expect(await cli.local.findStatus(username)).toEqual({
      enabled: true,
      revokedBefore: revocationCutoff(inAMinute),
      revokedSessions: new Set(),
    });
  });

  it('disable says it revoked the user’s sessions and access tokens, and advances revokedBefore', async () => {
    const username = unique('lena');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const inTwoMinutes = new Date(Date.now() + 120_000);

    const disabled = await admin(['user', 'disable', username], { accountsClock: () => inTwoMinutes });

    expect(disabled.stdout).toBe(`disabled user "${username}" and revoked its sessions and access tokens`);
    expect(await cli.local.findStatus(username)).toEqual({
      enabled: false,
      revokedBefore: revocationCutoff(inTwoMinutes),
      revokedSessions: new Set(),
    });
  });

  it('enable says so and leaves revokedBefore where the last revocation put it', async () => {
    const username = unique('lena');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const inTwoMinutes = new Date(Date.now() + 120_000);
    await adminOk(['user', 'disable', username], { accountsClock: () => inTwoMinutes });

    const enabled = await admin(['user', 'enable', username]);

    expect(enabled.stdout).toBe(`enabled user "${username}"`);
    expect((await cli.local.findStatus(username))?.revokedBefore).toBe(revocationCutoff(inTwoMinutes));
  });

  it('remove says it revoked the user’s sessions and access tokens, and leaves no status', async () => {
    const username = unique('lena');
    await adminOk(['user', 'add', username], { password: 'good pass word' });

    const removed = await admin(['user', 'remove', username]);

    expect(removed.stdout).toBe(`removed user "${username}" and revoked its sessions and access tokens`);
    expect(await cli.local.findStatus(username)).toBeNull();
  });
});
