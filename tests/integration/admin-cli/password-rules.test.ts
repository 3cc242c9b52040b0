/** The rules the admin CLI applies to a new password, on user add and user passwd. */
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { type AdminRun, unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

/** `text` in fullwidth forms (U+FF01 to U+FF5E), which NFKC folds back to ASCII. */
const fullwidth = (text: string) =>
  text.replace(/[!-~]/g, (char) => String.fromCodePoint((char.codePointAt(0) ?? 0) + 0xfee0));

const SHORT = 'the password is shorter than 12 characters';
const IS_USERNAME = 'the password is the username (compared ignoring letter case)';
const CONTROL = 'the password contains a control character or U+FFFD (login refuses such a password)';

/** Runs `args` once with each of `passwords` on stdin, one after another. */
async function runWithEach(args: string[], passwords: readonly string[]) {
  const runs: { password: string; run: AdminRun }[] = [];
  for (const password of passwords) runs.push({ password, run: await admin(args, { password }) });
  return runs;
}

/** Expects `run` to have refused `password` with exit 2 and exactly `message`, never echoing it. */
function expectRefused(run: AdminRun, password: string, message: string) {
  expect(run).toMatchObject({ code: 2, stdout: '', stderr: [`error: ${message}`], passwordReads: 1 });
  expect(run.stderr[0]).not.toContain(password);
}

const passwordHashOf = async (username: string) => (await cli.local.findByUsername(username))?.passwordHash;

describe('admin CLI: password rules', () => {
  it('user add refuses a password under 12 characters, counting code points, not UTF-16 units or bytes', async () => {
    const username = unique('nina');
    // '✓' is 3 bytes in UTF-8; '😀' is 4 bytes and two UTF-16 units, so six of them have length 12.
    const passwords = ['a'.repeat(11), 'pass word 1', '✓'.repeat(11), '😀'.repeat(6)];

    const runs = await runWithEach(['user', 'add', username], passwords);

    for (const { run, password } of runs) expectRefused(run, password, SHORT);
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('user add accepts 12 characters, however many bytes they take', async () => {
    const username = unique('nina');
    const twelve = '✓'.repeat(12); // 36 bytes

    const added = await admin(['user', 'add', username], { password: twelve });

    expect(added).toMatchObject({ code: 0, stderr: [] });
    expect(await bcrypt.compare(twelve, (await passwordHashOf(username)) ?? '')).toBe(true);
  });

  it('passwd refuses a password under 12 characters and keeps the hash', async () => {
    const username = unique('nina');
    await adminOk(['user', 'add', username], { password: '✓'.repeat(12) });
    const before = await passwordHashOf(username);
    const short = 'a'.repeat(11);

    const run = await admin(['user', 'passwd', username], { password: short });

    expectRefused(run, short, SHORT);
    expect(await passwordHashOf(username)).toBe(before);
  });

  it('passwd accepts 18 four-byte characters: 72 bytes, but 18 characters long', async () => {
    const username = unique('nina');
    await adminOk(['user', 'add', username], { password: '✓'.repeat(12) });
    const emoji = '😀'.repeat(18);

    const changed = await admin(['user', 'passwd', username], { password: emoji });

    expect(changed.code).toBe(0);
    expect(await bcrypt.compare(emoji, (await passwordHashOf(username)) ?? '')).toBe(true);
  });

  it('user add refuses the username as its password in any letter case or compatibility form', async () => {
    const username = unique('Mallory');
    const passwords = [username, username.toLowerCase(), username.toUpperCase(), fullwidth(username)];

    const runs = await runWithEach(['user', 'add', username], passwords);

    for (const { run, password } of runs) expectRefused(run, password, IS_USERNAME);
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('passwd refuses the username in another letter case as the password and keeps the hash', async () => {
    const username = unique('Mallory');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const before = await passwordHashOf(username);

    const run = await admin(['user', 'passwd', username], { password: username.toUpperCase() });

    expectRefused(run, username.toUpperCase(), IS_USERNAME);
    expect(await passwordHashOf(username)).toBe(before);
  });

  it('passwd accepts a password that contains the username: only the username itself is refused', async () => {
    const username = unique('Mallory');
    await adminOk(['user', 'add', username], { password: 'good pass word' });

    const changed = await admin(['user', 'passwd', username], { password: `${username}!2025` });

    expect(changed.code).toBe(0);
  });

  it('user add refuses a control character or U+FFFD anywhere, which login would refuse, before any other rule', async () => {
    const username = unique('oscar');
    const passwords = [
      'correct\thorse battery',
      'correct horse\u0000battery',
      'correct horse\u007fbattery',
      'correct horse\u0085battery',
      'correct horse \ufffd battery',
      '\u001b[2Jshort',
    ];

    const runs = await runWithEach(['user', 'add', username], passwords);

    for (const { run, password } of runs) expectRefused(run, password, CONTROL);
    expect(await cli.local.findByUsername(username)).toBeNull();
  });

  it('passwd refuses a password with a control character', async () => {
    const username = unique('oscar');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const password = 'new pass word\r';

    const run = await admin(['user', 'passwd', username], { password });

    expectRefused(run, password, CONTROL);
  });
});
