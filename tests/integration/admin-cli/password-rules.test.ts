/** The rules the admin CLI applies to a new password, on user add and user passwd. */
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { unique, useAdminCli } from '../../helpers/admin-cli.ts';

const cli = useAdminCli();
const { admin } = cli;

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
    expect(await cli.local.findByUsername(username)).toBeNull();

    const twelve = '✓'.repeat(12); // 36 bytes
    expect(await admin(['user', 'add', username], { password: twelve })).toMatchObject({
      code: 0,
      stderr: [],
    });
    expect(await bcrypt.compare(twelve, (await cli.local.findByUsername(username))?.passwordHash ?? '')).toBe(
      true,
    );

    const before = await cli.local.findByUsername(username);
    await expectRefused(['user', 'passwd', username], 'a'.repeat(11), SHORT);
    expect((await cli.local.findByUsername(username))?.passwordHash).toBe(before?.passwordHash);

    const emoji = '😀'.repeat(18); // 18 characters, 72 bytes
    expect((await admin(['user', 'passwd', username], { password: emoji })).code).toBe(0);
    expect(await bcrypt.compare(emoji, (await cli.local.findByUsername(username))?.passwordHash ?? '')).toBe(
      true,
    );
  });

  it('refuses the username as its password in any letter case or compatibility form, on add and passwd', async () => {
    const username = unique('Mallory');
    for (const password of [username, username.toLowerCase(), username.toUpperCase(), fullwidth(username)]) {
      await expectRefused(['user', 'add', username], password, IS_USERNAME);
    }
    expect(await cli.local.findByUsername(username)).toBeNull();

    expect((await admin(['user', 'add', username], { password: 'good pass word' })).code).toBe(0);
    const before = await cli.local.findByUsername(username);
    await expectRefused(['user', 'passwd', username], username.toUpperCase(), IS_USERNAME);
    expect((await cli.local.findByUsername(username))?.passwordHash).toBe(before?.passwordHash);

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
    expect(await cli.local.findByUsername(username)).toBeNull();

    expect((await admin(['user', 'add', username], { password: 'good pass word' })).code).toBe(0);
    await expectRefused(['user', 'passwd', username], 'new pass word\r', CONTROL);
  });
});
