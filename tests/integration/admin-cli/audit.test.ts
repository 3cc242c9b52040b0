/**
 * The audit trail as the admin CLI writes and reads it, against the embedded DynamoDB: every
 * client command that changes a credential records who, from where, when and what; `audit
 * list` reads the newest first, as JSON Lines; an event expires after the stage's retention;
 * and a trail that cannot be written leaves the command's change and answer as they were.
 */
import { userInfo } from 'node:os';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { readStageParams } from '../../../infra/stage-params.ts';
import { tableNames } from '../../../lib/stage.ts';
import { type AdminRun, lines, unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const ACTOR = 'jane.doe@carrier.example';

/** What `client add` and `client secret add` print: the labelled lines. */
function printed(run: Pick<AdminRun, 'stdout'>) {
  const value = (label: string) =>
    lines(run.stdout)
      .find((text) => text.startsWith(`${label}:`))
      ?.slice(label.length + 1)
      .trim() ?? '';
  return { clientId: value('client id'), secretId: value('secret id'), secret: value('secret') };
}

/** The CLI as operator ACTOR, its clock at `at`. */
const as = (at: Date) => ({ env: { AUDIT_ACTOR: ACTOR }, now: () => at });

/** `at` plus `seconds`. */
const later = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);

const listed = (run: AdminRun) =>
  lines(run.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('admin CLI: the audit events of the client commands', () => {
  it('records each change of a client: who, from the CLI, when, the customer and the client and secret it concerns', async () => {
    const customerId = unique('C');
    const t0 = new Date('2026-05-01T08:00:00.000Z');
    const added = printed(await adminOk(['client', 'add', customerId, '--scope', 'tracking:read'], as(t0)));
    const { clientId } = added;
    await adminOk(['client', 'disable', clientId], as(later(t0, 1)));
    await adminOk(['client', 'enable', clientId], as(later(t0, 2)));
    const second = printed(await adminOk(['client', 'secret', 'add', clientId], as(later(t0, 3))));
    await adminOk(['client', 'secret', 'remove', clientId, added.secretId], as(later(t0, 4)));
    await adminOk(['client', 'unlock', clientId], as(later(t0, 5)));
    await adminOk(['client', 'remove', clientId], as(later(t0, 6)));

    const run = await admin(['audit', 'list', '--customer', customerId]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    const who = { customerId, actor: `operator:${ACTOR}`, source: 'operator', clientId };
    const at = (seconds: number) => later(t0, seconds).toISOString();
    expect(listed(run)).toEqual([
      { at: at(6), ...who, type: 'client.removed' },
      { at: at(5), ...who, type: 'client.unlocked' },
      { at: at(4), ...who, type: 'client.secret.removed', secretId: added.secretId },
      { at: at(3), ...who, type: 'client.secret.added', secretId: second.secretId },
      { at: at(2), ...who, type: 'client.enabled' },
      { at: at(1), ...who, type: 'client.disabled' },
      { at: at(0), ...who, type: 'client.created', secretId: added.secretId },
    ]);
    // Ids only: never a secret, nor anything made from one.
    expect(run.stdout).not.toContain(added.secret);
    expect(run.stdout).not.toContain(second.secret);
    expect(run.stdout).not.toMatch(/digest|pcs_/);
  });

  it('records nothing for a command that changed nothing: an unknown client, a refused secret', async () => {
    const customerId = unique('C');
    const { clientId, secretId } = printed(
      await adminOk(['client', 'add', customerId, '--scope', 'tracking:read']),
    );

    expect((await admin(['client', 'secret', 'remove', clientId, secretId])).code).toBe(1);
    expect((await admin(['client', 'disable', 'pcl_00000000000000000000'])).code).toBe(1);

    expect((await cli.audit.list({ customerId, limit: 100 })).events.map((event) => event.type)).toEqual([
      'client.created',
    ]);
  });

  it('names the operator by AUDIT_ACTOR, else by the operating system’s user', async () => {
    const customerId = unique('C');

    await adminOk(['client', 'add', customerId, '--scope', 'tracking:read']);
    await adminOk(['client', 'add', customerId, '--scope', 'tracking:read'], {
      env: { AUDIT_ACTOR: 'ci-deploy' },
    });

    expect((await cli.audit.list({ customerId, limit: 100 })).events.map((event) => event.actor)).toEqual([
      'operator:ci-deploy',
      `operator:${userInfo().username}`,
    ]);
  });

  it('refuses an AUDIT_ACTOR the trail cannot record with exit 2, without echoing it, changing nothing', async () => {
    const customerId = unique('C');

    const run = await admin(['client', 'add', customerId, '--scope', 'tracking:read'], {
      env: { AUDIT_ACTOR: 'jane\u001b[2Jdoe' },
    });

    expect(run).toMatchObject({
      code: 2,
      stdout: '',
      stderr: ['error: environment variable AUDIT_ACTOR must be 1 to 128 letters, digits, ., _, @, + or -'],
    });
    expect(await cli.clients.listClients(customerId)).toEqual([]);
  });

  it('keeps an event for the stage’s auditRetention: its expiresAt, the table’s TTL attribute, is its time plus the retention', async () => {
    const customerId = unique('C');
    const at = new Date('2026-05-01T08:00:00.000Z');
    const retention = readStageParams('local').auditRetentionSeconds;

    await adminOk(['client', 'add', customerId, '--scope', 'tracking:read'], as(at));
    await adminOk(['client', 'add', customerId, '--scope', 'tracking:read'], {
      ...as(at),
      stageParams: { auditRetentionSeconds: 86_400 },
    });

    const { Items = [] } = await cli.documentClient.send(
      new QueryCommand({
        TableName: tableNames('local').audit,
        KeyConditionExpression: 'customerId = :customer',
        ExpressionAttributeValues: { ':customer': customerId },
      }),
    );
    expect(retention).toBe(90 * 86_400);
    expect(readStageParams('prod').auditRetentionSeconds).toBe(365 * 86_400);
    expect(Items.map((item) => item.expiresAt).sort()).toEqual(
      [at.getTime() / 1000 + 86_400, at.getTime() / 1000 + retention].sort(),
    );
    expect(Items.map((item) => String(item.eventId))).toEqual([
      expect.stringMatching(/^2026-05-01T08:00:00\.000Z#[0-9a-f]{16}$/),
      expect.stringMatching(/^2026-05-01T08:00:00\.000Z#[0-9a-f]{16}$/),
    ]);
  });

  it('a trail that cannot be written leaves the change made and the secret printed, with a warning naming the event, exit 0', async () => {
    const customerId = unique('C');

    const run = await admin(['client', 'add', customerId, '--scope', 'tracking:read'], {
      auditTable: 'parcel-auth-local-no-such-table',
    });

    const { clientId, secretId, secret } = printed(run);
    expect(run.code).toBe(0);
    expect(secret).toMatch(/^pcs_/);
    expect(await cli.clients.findClient(clientId)).toMatchObject({ customerId });
    expect(run.stderr).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warning: the change is made, but its audit event \\(client\\.created, secret ${secretId} of client ${clientId} of customer ${customerId}\\) was not recorded: DynamoDB at http://127\\.0\\.0\\.1:\\d+ failed \\(ResourceNotFoundException`,
        ),
      ),
    ]);
    expect(run.stderr.join('\n')).not.toContain(secret);
  });
});

describe('admin CLI: audit list', () => {
  it('prints one customer’s events newest first, as JSON Lines, and no other customer’s', async () => {
    const [mine, theirs] = [unique('C'), unique('C')];
    const t0 = new Date('2026-06-01T08:00:00.000Z');
    await adminOk(['client', 'add', mine, '--scope', 'tracking:read'], as(later(t0, 2)));
    await adminOk(['client', 'add', theirs, '--scope', 'tracking:read'], as(later(t0, 3)));
    await adminOk(['client', 'add', mine, '--scope', 'tracking:read'], as(later(t0, 1)));

    const run = await admin(['audit', 'list', '--customer', mine]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout).every((line) => typeof JSON.parse(line) === 'object')).toBe(true);
    expect(listed(run).map(({ customerId, at }) => [customerId, at])).toEqual([
      [mine, later(t0, 2).toISOString()],
      [mine, later(t0, 1).toISOString()],
    ]);
  });

  it('without --customer prints every customer’s events newest first; --limit keeps the newest n', async () => {
    const [first, second] = [unique('C'), unique('C')];
    // Later than any other test's events: this file's events share the table.
    const t0 = new Date('2099-01-01T00:00:00.000Z');
    await adminOk(['client', 'add', first, '--scope', 'tracking:read'], as(later(t0, 1)));
    await adminOk(['client', 'add', second, '--scope', 'tracking:read'], as(later(t0, 3)));
    await adminOk(['client', 'add', first, '--scope', 'tracking:read'], as(later(t0, 2)));

    // Listed after they happened: an event dated later than the listing is not shown yet.
    const after = as(later(t0, 10));
    const all = await admin(['audit', 'list'], after);
    const newest = await admin(['audit', 'list', '--limit', '2'], after);
    const ofFirst = await admin(['audit', 'list', '--customer', first, '--limit', '1'], after);
    expect(listed(await admin(['audit', 'list', '--customer', first], as(later(t0, 1)))).length).toBe(1);

    const times = listed(all).map((event) => String(event.at));
    expect(times).toEqual([...times].sort().reverse());
    expect(
      listed(all)
        .slice(0, 3)
        .map(({ customerId }) => customerId),
    ).toEqual([second, first, first]);
    expect(listed(newest).map(({ customerId, at }) => [customerId, at])).toEqual([
      [second, later(t0, 3).toISOString()],
      [first, later(t0, 2).toISOString()],
    ]);
    expect(listed(ofFirst).map(({ at }) => at)).toEqual([later(t0, 2).toISOString()]);
  });

  it('prints nothing for a customer without events', async () => {
    expect(await admin(['audit', 'list', '--customer', unique('C')])).toMatchObject({
      code: 0,
      stdout: '',
      stderr: [],
    });
  });

  it('refuses a --limit outside 1 to 10000 and a malformed customer id with exit 2', async () => {
    for (const limit of ['0', '10001', 'ten', '-1']) {
      expect(await admin(['audit', 'list', '--limit', limit])).toMatchObject({
        code: 2,
        stderr: ['error: invalid --limit: must be a whole number from 1 to 10000'],
      });
    }
    expect((await admin(['audit', 'list', '--customer', 'C 1'])).code).toBe(2);
  });
});
