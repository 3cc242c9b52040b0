/** The admin CLI run as operators run it: `node ops/admin.ts`, the password on stdin. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import { deployedStageEnv, lines, OTHER_STAGE, unique, useAdminCli } from '../../support/admin-cli.ts';
import { freePort } from '../../support/ports.ts';

const cli = useAdminCli();
const { spawnAdmin } = cli;

describe('admin CLI as a process', () => {
  it('user add takes the password from the first line of stdin, without its line ending, and does not echo it', async () => {
    const username = unique('heidi');

    const added = await spawnAdmin(['user', 'add', username], {
      stdin: 'pässword with spaces \r\nsecond line\n',
    });

    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).not.toContain('pässword');
    const stored = await cli.local.findByUsername(username);
    expect(await bcrypt.compare('pässword with spaces ', stored?.passwordHash ?? '')).toBe(true);
  });

  it('user show prints the user as JSON on stdout', async () => {
    const username = unique('heidi');
    await cli.local.createUser({ username, passwordHash: '$2b$04$hash', customerId: null });

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

  it('prints the usage for --help with exit 0', async () => {
    const help = await spawnAdmin(['--help']);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run admin -- <command>/);
    expect(help.stdout).toContain('user unlock <username>');
  });

  it('prints the usage for no command with exit 2', async () => {
    const none = await spawnAdmin([]);

    expect(none.code).toBe(2);
    expect(none.stdout).toMatch(/^Usage:/);
  });

  it('refuses an unknown command with exit 2 and one line pointing to help', async () => {
    const unknown = await spawnAdmin(['frobnicate']);

    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([
      'error: unknown command "frobnicate" (see: npm run admin -- help)',
    ]);
  });

  it("finds the local stack's DynamoDB at DYNAMODB_ENDPOINT when it is set, as npm start does", async () => {
    const username = unique('heidi');
    await cli.local.createUser({ username, passwordHash: '$2b$04$hash', customerId: null });
    const closedPort = await freePort();

    const shown = await spawnAdmin(['user', 'show', username], {
      env: { DYNAMODB_ENDPOINT: `${cli.endpoint}/`, DYNAMODB_PORT: String(closedPort) },
    });

    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).username).toBe(username);
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
      const env = await deployedStageEnv(cli.endpoint, awsDir);
      const username = unique('judy');
      const customer = unique('STAGE');
      // Arrange through --stage too: the depot code below shows where the address went.
      const address = await spawnAdmin(
        ['address', 'add', customer, '--depot', 'OST01', '--stage', OTHER_STAGE],
        { env },
      );
      expect(address).toMatchObject({ code: 0, stderr: '' });

      const added = await spawnAdmin(
        ['user', 'add', username, '--customer', customer, '--stage', OTHER_STAGE, '--region', 'eu-west-1'],
        { env, stdin: 'stage password\n' },
      );

      expect(added).toMatchObject({ code: 0, stderr: '' });
      const stored = await cli.deployed.findByUsername(username);
      expect(stored).toMatchObject({ customerId: customer, depotCode: 'OST01', enabled: true });
      expect(await bcrypt.compare('stage password', stored?.passwordHash ?? '')).toBe(true);
      expect(await cli.local.findByUsername(username)).toBeNull();
    } finally {
      await rm(awsDir, { recursive: true, force: true });
    }
  });
});
