/**
 * The admin CLI's `user admin grant` and `user admin revoke` against the embedded DynamoDB: a
 * user administers its own customer only once granted, the grant shows in `user show` and
 * `user list`, and each change is an event of the customer's audit trail.
 */
import { describe, expect, it } from 'vitest';
import { lines, unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const PASSWORD = 'correct horse battery';
const ACTOR = { AUDIT_ACTOR: 'jane.doe@carrier.example' };

/** A new user of a new customer (or of none), as the operator adds it. */
async function newUser(withCustomer = true) {
  const username = unique('alice');
  const customerId = unique('C');
  await adminOk(['user', 'add', username, ...(withCustomer ? ['--customer', customerId] : [])], {
    password: PASSWORD,
  });
  return { username, customerId };
}

const shown = async (username: string) => JSON.parse((await adminOk(['user', 'show', username])).stdout);
const eventsOf = async (customerId: string) => (await cli.audit.list({ customerId, limit: 100 })).events;

describe('admin CLI: user admin grant and revoke', () => {
  it('grant makes a user with a customer its administrator, as user show and user list print it', async () => {
    const { username, customerId } = await newUser();
    expect((await shown(username)).admin).toBe(false);

    const run = await admin(['user', 'admin', 'grant', username]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toBe(`user "${username}" administers customer ${customerId} now`);
    expect(await shown(username)).toMatchObject({ admin: true, customerId });
    expect(await cli.local.findByUsername(username)).toMatchObject({ admin: true });
    const listed = lines((await adminOk(['user', 'list', '--customer', customerId])).stdout).map((line) =>
      JSON.parse(line),
    );
    expect(listed).toEqual([expect.objectContaining({ username, admin: true })]);
  });

  it('grant leaves the user’s sessions and access tokens alone', async () => {
    const { username } = await newUser();
    const before = await cli.local.findStatus(username);

    await adminOk(['user', 'admin', 'grant', username]);

    expect((await cli.local.findStatus(username))?.revokedBefore).toBe(before?.revokedBefore);
  });

  it('revoke ends the administration and revokes the user’s sessions and access tokens, saying so', async () => {
    const { username, customerId } = await newUser();
    await adminOk(['user', 'admin', 'grant', username]);
    const before = (await cli.local.findStatus(username))?.revokedBefore ?? 0;

    const run = await admin(['user', 'admin', 'revoke', username]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toBe(
      `user "${username}" no longer administers customer ${customerId}; revoked its sessions and access tokens`,
    );
    expect((await shown(username)).admin).toBe(false);
    expect((await cli.local.findStatus(username))?.revokedBefore).toBeGreaterThan(before);
  });

  it('grant refuses a user without a customer with exit 1 and one line, changing nothing and recording nothing', async () => {
    const { username } = await newUser(false);
    const before = await cli.local.findByUsername(username);

    const run = await admin(['user', 'admin', 'grant', username]);

    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr: [
        `error: user "${username}" has no customer to administer (only a user added with --customer acts for one)`,
      ],
    });
    expect(await cli.local.findByUsername(username)).toEqual(before);
    const recorded = (await cli.audit.list({ limit: 10_000 })).events;
    expect(recorded.filter((event) => event.username === username)).toEqual([]);
  });

  it('the store refuses to grant a user without a customer, whatever the caller checked', async () => {
    const { username } = await newUser(false);

    await expect(cli.local.setAdministrator(username, true)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    await expect(cli.local.setAdministrator(unique('nobody'), true)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await cli.local.findByUsername(username))?.admin).toBe(false);
  });

  it('grant and revoke of an unknown user fail with exit 1 naming it', async () => {
    const username = unique('nobody');
    for (const action of ['grant', 'revoke']) {
      expect(await admin(['user', 'admin', action, username])).toMatchObject({
        code: 1,
        stderr: [`error: user "${username}" not found`],
      });
    }
  });

  it('a second grant, and a revoke of a user who does not administer, change nothing and record nothing', async () => {
    const { username, customerId } = await newUser();
    await adminOk(['user', 'admin', 'grant', username]);
    const granted = await cli.local.findByUsername(username);

    const again = await admin(['user', 'admin', 'grant', username]);
    await adminOk(['user', 'admin', 'revoke', username]);
    const revokedAgain = await admin(['user', 'admin', 'revoke', username]);

    expect(again).toMatchObject({ code: 0, stderr: [] });
    expect(again.stdout).toBe(
      `user "${username}" administers customer ${customerId} already; nothing changed`,
    );
    expect(revokedAgain.stdout).toBe(
      `user "${username}" does not administer customer ${customerId} already; nothing changed`,
    );
    expect(granted?.admin).toBe(true);
    expect((await eventsOf(customerId)).map((event) => event.type)).toEqual([
      'user.admin.revoked',
      'user.admin.granted',
    ]);
  });

  it('records each grant and revoke in the customer’s audit trail: the operator, from the CLI, when, which user', async () => {
    const { username, customerId } = await newUser();
    const grantedAt = new Date('2026-03-04T10:15:31.665Z');
    const revokedAt = new Date('2026-03-04T11:00:00.000Z');

    await adminOk(['user', 'admin', 'grant', username], { env: ACTOR, now: () => grantedAt });
    await adminOk(['user', 'admin', 'revoke', username], { env: ACTOR, now: () => revokedAt });

    const common = { customerId, actor: 'operator:jane.doe@carrier.example', source: 'operator', username };
    expect(await eventsOf(customerId)).toEqual([
      expect.objectContaining({ ...common, type: 'user.admin.revoked', at: revokedAt.toISOString() }),
      expect.objectContaining({ ...common, type: 'user.admin.granted', at: grantedAt.toISOString() }),
    ]);
    for (const event of await eventsOf(customerId)) {
      expect(event).not.toHaveProperty('sourceIp');
      expect(event).not.toHaveProperty('clientId');
    }
  });
});
