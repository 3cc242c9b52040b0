/** The admin CLI's user commands: add, show, passwd, enable, disable, remove and logout. */
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { revocationCutoff } from '../../../lib/revocation/revocation.ts';
import { unique, useAdminCli } from '../../helpers/admin-cli.ts';

const cli = useAdminCli();
const { admin } = cli;

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
    expect((await cli.local.findByUsername(username))?.username).toBe(username);
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
    expect(await cli.local.findByUsername(username)).toBeNull();
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
    expect(await cli.local.findByUsername(username)).toBeNull();

    const longest = 'ž'.repeat(36); // 72 bytes: every byte counts
    expect((await admin(['user', 'add', username], { password: longest })).code).toBe(0);
    const stored = await cli.local.findByUsername(username);
    expect(await bcrypt.compare(longest, stored?.passwordHash ?? '')).toBe(true);
  });

  it('passwd replaces the hash: the new password matches, the old one no longer does', async () => {
    const username = unique('dave');
    await admin(['user', 'add', username], { password: 'old password' });
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

  it('disable and enable flip whether the user is enabled', async () => {
    const username = unique('erin');
    await admin(['user', 'add', username], { password: 'good pass word' });

    expect((await admin(['user', 'disable', username])).code).toBe(0);
    expect((await cli.local.findByUsername(username))?.enabled).toBe(false);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).enabled).toBe(false);

    expect((await admin(['user', 'enable', username])).code).toBe(0);
    expect((await cli.local.findByUsername(username))?.enabled).toBe(true);
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
    expect(await cli.local.findStatus(username)).toEqual({
      enabled: true,
      revokedBefore: revocationCutoff(inAMinute),
    });

    const inTwoMinutes = new Date(Date.now() + 120_000);
    const disabled = await admin(['user', 'disable', username], { accountsClock: () => inTwoMinutes });
    expect(disabled.stdout).toBe(`disabled user "${username}" and revoked its sessions and access tokens`);
    expect(await cli.local.findStatus(username)).toEqual({
      enabled: false,
      revokedBefore: revocationCutoff(inTwoMinutes),
    });

    const enabled = await admin(['user', 'enable', username]);
    expect(enabled.stdout).toBe(`enabled user "${username}"`);
    expect((await cli.local.findStatus(username))?.revokedBefore).toBe(revocationCutoff(inTwoMinutes));

    const removed = await admin(['user', 'remove', username]);
    expect(removed.stdout).toBe(`removed user "${username}" and revoked its sessions and access tokens`);
    expect(await cli.local.findStatus(username)).toBeNull();
  });
});
