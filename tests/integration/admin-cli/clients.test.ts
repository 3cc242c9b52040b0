/**
 * The admin CLI's API client commands (client add, list, disable, enable, remove, show, unlock,
 * secret add, secret remove) with their secrets' last use, `user scopes`, and clients carried
 * by export and import, against the embedded DynamoDB.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchSecret, newClientSecret } from '../../../lib/clients/secrets.ts';
import { createLogger } from '../../../lib/log.ts';
import { revocationCutoff } from '../../../lib/revocation/revocation.ts';
import { ALL_SCOPES, GRANTABLE_SCOPES } from '../../../lib/scopes.ts';
import {
  clientCounterKey,
  clientSourceIpCounterKey,
  knownSourceCounterKey,
  knownSourceTag,
  lockSeconds,
} from '../../../lib/throttle/counters.ts';
import { createLoginThrottle } from '../../../lib/throttle/login-throttle.ts';
import type { ThrottlePolicy } from '../../../lib/throttle/throttle.ts';
import { type AdminRun, lines, unique, useAdminCli } from '../../support/admin-cli.ts';
import { captureServiceLogs } from '../../support/log-capture.ts';
import { noMetrics } from '../../support/memory-metrics.ts';

const cli = useAdminCli();
const { admin, adminOk, spawnAdmin } = cli;
const logs = captureServiceLogs();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parcel-auth-clients-'));
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** What `client add` and `client secret add` print: the labelled lines. */
function printed(run: Pick<AdminRun, 'stdout'>) {
  const value = (label: string) => {
    const line = lines(run.stdout).find((text) => text.startsWith(`${label}:`));
    if (line === undefined) throw new Error(`no "${label}:" line in ${JSON.stringify(run.stdout)}`);
    return line.slice(label.length + 1).trim();
  };
  return { clientId: value('client id'), secretId: value('secret id'), secret: value('secret') };
}

/** A new client of a new customer, as the operator creates it. */
async function newClient(scopes: readonly string[] = ['tracking:read']) {
  const customerId = unique('C');
  const run = await adminOk(['client', 'add', customerId, ...scopes.flatMap((scope) => ['--scope', scope])]);
  return { customerId, ...printed(run) };
}

const storedSecrets = async (clientId: string) => (await cli.clients.findClient(clientId))?.secrets ?? [];

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** A client id of the right form that no client has. */
const NO_SUCH_CLIENT = 'pcl_00000000000000000000';

describe('admin CLI: client add', () => {
  it('creates an enabled client of the customer with its scopes, storing only the secret’s digest', async () => {
    const customerId = unique('C');

    const run = await admin([
      'client',
      'add',
      customerId,
      '--scope',
      'shipments:write',
      '--scope',
      'tracking:read',
    ]);

    expect(run).toMatchObject({ code: 0, stderr: [], passwordReads: 0 });
    const { clientId, secretId, secret } = printed(run);
    const stored = await cli.clients.findClient(clientId);
    expect(stored).toMatchObject({
      clientId,
      customerId,
      scopes: ['tracking:read', 'shipments:write'],
      enabled: true,
    });
    expect(stored?.secrets.map((stored) => stored.id)).toEqual([secretId]);
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(matchSecret(secret, stored?.secrets ?? [], new Date())).toBe(secretId);
  });

  it('prints the secret exactly once, on stdout, saying it is shown only this once, and logs nothing of it', async () => {
    const run = await admin(['client', 'add', unique('C'), '--scope', 'tracking:read']);

    const { secret } = printed(run);
    expect(secret).toMatch(/^pcs_[A-Za-z0-9]{49}$/);
    expect(occurrences(run.stdout, secret)).toBe(1);
    expect(run.stdout).toMatch(/shown only this once/);
    expect(run.stderr).toEqual([]);
    expect(JSON.stringify(logs.lines())).not.toContain(secret);
  });

  it('as a process writes the secret once to stdout and nothing to stderr', async () => {
    const run = await spawnAdmin(['client', 'add', unique('C'), '--scope', 'tracking:read']);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    const { clientId, secretId, secret } = printed(run);
    expect(occurrences(run.stdout, secret)).toBe(1);
    expect(matchSecret(secret, await storedSecrets(clientId), new Date())).toBe(secretId);
  });

  it('refuses no scope, an unknown scope and a scope twice with exit 2, creating no client', async () => {
    const customerId = unique('C');
    const invocations = [
      ['client', 'add', customerId],
      ['client', 'add', customerId, '--scope', 'tracking:write'],
      ['client', 'add', customerId, '--scope', 'tracking:read', '--scope', 'no-such-scope'],
      ['client', 'add', customerId, '--scope', 'tracking:read', '--scope', 'tracking:read'],
    ];

    const runs = [];
    for (const args of invocations) runs.push(await admin(args));

    expect(runs.map((run) => [run.code, run.stdout, run.stderr])).toEqual([
      [2, '', [`error: client add needs at least one --scope <scope> (${ALL_SCOPES.join(', ')})`]],
      [2, '', [`error: invalid --scope: must be one of the scopes ${GRANTABLE_SCOPES.join(', ')}`]],
      [2, '', [`error: invalid --scope: must be one of the scopes ${GRANTABLE_SCOPES.join(', ')}`]],
      [2, '', ['error: --scope tracking:read is given twice']],
    ]);
    expect(await cli.clients.listClients(customerId)).toEqual([]);
  });

  it('names the client with --name, which client list and show print', async () => {
    const customerId = unique('C');
    const run = await adminOk([
      'client',
      'add',
      customerId,
      '--scope',
      'tracking:read',
      '--name',
      'Warehouse sync',
    ]);
    const { clientId } = printed(run);

    expect((await cli.clients.findClient(clientId))?.name).toBe('Warehouse sync');
    const listed = JSON.parse((await adminOk(['client', 'list', '--customer', customerId])).stdout);
    expect(listed).toMatchObject({ clientId, name: 'Warehouse sync' });
    expect(JSON.parse((await adminOk(['client', 'show', clientId])).stdout)).toMatchObject({
      name: 'Warehouse sync',
    });
    const table = await admin(['client', 'list', '--customer', customerId], { stdoutIsTTY: true });
    expect(lines(table.stdout)[1]).toContain(`${customerId}  "Warehouse sync"  tracking:read`);
  });

  it('refuses a --name the customer API would refuse, or given twice, with exit 2, without echoing it, creating no client', async () => {
    const customerId = unique('C');
    const add = (...name: string[]) =>
      admin(['client', 'add', customerId, '--scope', 'tracking:read', ...name]);

    const runs = [
      await add('--name', ' padded'),
      await add('--name', 'two\nlines'),
      await add('--name', 'x'.repeat(101)),
      await add('--name', ''),
      await add('--name', 'one', '--name', 'two'),
    ];

    expect(runs.map((run) => [run.code, run.stdout, run.stderr])).toEqual([
      [2, '', ['error: invalid --name: must not begin or end with a space']],
      [2, '', ['error: invalid --name: must not hold a control, format or invisible character']],
      [2, '', ['error: invalid --name: must be at most 100 characters']],
      [2, '', ['error: invalid --name: must not be empty']],
      [2, '', ['error: option --name is given more than once']],
    ]);
    expect(await cli.clients.listClients(customerId)).toEqual([]);
  });

  it('refuses a customer id that user add --customer would refuse, with exit 2 and without echoing it', async () => {
    const run = await admin(['client', 'add', 'C 1001;', '--scope', 'tracking:read']);

    expect(run).toMatchObject({
      code: 2,
      stdout: '',
      stderr: ['error: invalid customerId: must be 1 to 64 letters, digits, - or _'],
    });
  });
});

describe('admin CLI: client list', () => {
  it('lists each client of a customer with its scopes, state and live secrets, never a digest', async () => {
    const first = await newClient(['tracking:read', 'shipments:write']);
    const second = await adminOk(['client', 'add', first.customerId, '--scope', 'tracking:read']);
    const other = printed(second);
    await adminOk(['client', 'disable', other.clientId]);
    const secrets = {
      [first.clientId]: await storedSecrets(first.clientId),
      [other.clientId]: await storedSecrets(other.clientId),
    };

    const run = await admin(['client', 'list', '--customer', first.customerId]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    const listed = lines(run.stdout).map((line) => JSON.parse(line));
    expect(listed).toEqual(
      [first.clientId, other.clientId].sort().map((clientId) => ({
        clientId,
        customerId: first.customerId,
        name: null,
        scopes: clientId === first.clientId ? ['tracking:read', 'shipments:write'] : ['tracking:read'],
        enabled: clientId === first.clientId,
        secrets: (secrets[clientId] ?? []).map(({ id, createdAt }) => ({
          id,
          createdAt,
          expiresAt: null,
          lastUsedAt: null,
        })),
        dpopBoundAccessTokens: false,
        createdAt: expect.any(String),
        lastUsedAt: null,
      })),
    );
    for (const stored of Object.values(secrets).flat()) expect(run.stdout).not.toContain(stored.digest);
  });

  it('lists every customer’s clients without --customer', async () => {
    const one = await newClient();
    const two = await newClient();

    const run = await admin(['client', 'list']);

    const ids = lines(run.stdout).map((line) => JSON.parse(line).clientId);
    expect(ids).toEqual(expect.arrayContaining([one.clientId, two.clientId]));
    expect(ids).toEqual([...ids].sort());
  });

  it('prints a table on a terminal: enabled or disabled, scopes, secret ids with their age and last use', async () => {
    const { customerId, clientId, secretId } = await newClient(['tracking:read', 'shipments:write']);
    const [stored] = await storedSecrets(clientId);

    const run = await admin(['client', 'list', '--customer', customerId], { stdoutIsTTY: true });

    const [header, row, count] = lines(run.stdout);
    expect(header?.trim().split(/\s+/)).toEqual([
      'clientId',
      'customerId',
      'name',
      'scopes',
      'enabled',
      'secrets',
      'createdAt',
      'lastUsedAt',
    ]);
    expect(row).toContain(`${clientId}  ${customerId}  -     tracking:read shipments:write  enabled`);
    expect(row).toContain(`${secretId} (${stored?.createdAt}, used never)`);
    expect(row?.trimEnd()).toMatch(/ never$/);
    expect(count).toBe('1 row');
  });

  it('shows each secret’s last use and the client’s, the latest of its secrets’, as grants recorded them', async () => {
    const first = await newClient();
    const second = printed(await adminOk(['client', 'secret', 'add', first.clientId]));
    await cli.clients.recordUse(first.clientId, first.secretId, new Date('2026-11-25T09:00:00.000Z'));
    await cli.clients.recordUse(first.clientId, second.secretId, new Date('2026-11-25T10:30:00.000Z'));
    const [stored] = await storedSecrets(first.clientId);

    const listed = JSON.parse((await adminOk(['client', 'list', '--customer', first.customerId])).stdout);
    const shown = JSON.parse((await adminOk(['client', 'show', first.clientId])).stdout);
    const table = await admin(['client', 'list', '--customer', first.customerId], { stdoutIsTTY: true });

    for (const client of [listed, shown]) {
      expect(client).toMatchObject({
        lastUsedAt: '2026-11-25T10:30:00.000Z',
        secrets: [
          { id: first.secretId, lastUsedAt: '2026-11-25T09:00:00.000Z' },
          { id: second.secretId, lastUsedAt: '2026-11-25T10:30:00.000Z' },
        ],
      });
    }
    const [, row] = lines(table.stdout);
    expect(row).toContain(
      `${first.secretId} (${stored?.createdAt}, used 2026-11-25T09:00:00.000Z), ${second.secretId}`,
    );
    expect(row?.trimEnd()).toMatch(/ 2026-11-25T10:30:00\.000Z$/);
  });
});

describe('admin CLI: client disable, enable, remove', () => {
  it('disable disables the client and revokes its tokens, saying within which bound', async () => {
    const { clientId } = await newClient();
    const later = new Date(Date.now() + 60_000);

    const run = await admin(['client', 'disable', clientId], { accountsClock: () => later });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toBe(
      `disabled client ${clientId}; its access tokens stop within the stage’s revocation bound ` +
        '(revocationCacheTtl + authorizerCacheTtl, docs/tokens-and-sessions.md)',
    );
    expect(await cli.clients.findClientStatus(clientId)).toMatchObject({
      enabled: false,
      revokedBefore: revocationCutoff(later),
    });
  });

  it('enable enables a disabled client again and revives none of its revoked tokens', async () => {
    const { clientId } = await newClient();
    await adminOk(['client', 'disable', clientId]);
    const revoked = (await cli.clients.findClientStatus(clientId))?.revokedBefore;

    const run = await admin(['client', 'enable', clientId]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(await cli.clients.findClientStatus(clientId)).toMatchObject({
      enabled: true,
      revokedBefore: revoked,
    });
  });

  it('remove deletes the client; removing it again fails with exit 1 naming it', async () => {
    const { clientId } = await newClient();

    const removed = await admin(['client', 'remove', clientId]);
    const again = await admin(['client', 'remove', clientId]);

    expect(removed).toMatchObject({ code: 0, stderr: [] });
    expect(removed.stdout).toMatch(new RegExp(`^removed client ${clientId}; its access tokens stop within`));
    expect(await cli.clients.findClient(clientId)).toBeNull();
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: [`error: client ${clientId} not found`] });
  });

  it('refuses an unknown client with exit 1 and a malformed client id with exit 2', async () => {
    const commands = [['disable'], ['enable'], ['remove'], ['show'], ['secret', 'add']];

    const unknown = [];
    const malformed = [];
    for (const command of commands) {
      unknown.push(await admin(['client', ...command, NO_SUCH_CLIENT]));
      malformed.push(await admin(['client', ...command, 'alice']));
    }

    for (const run of unknown)
      expect(run).toMatchObject({ code: 1, stderr: [`error: client ${NO_SUCH_CLIENT} not found`] });
    for (const run of malformed) {
      expect(run).toMatchObject({
        code: 2,
        stderr: ['error: invalid clientId: must be a client id (pcl_ and 20 hex digits)'],
      });
    }
  });
});

describe('admin CLI: client secrets', () => {
  it('secret add gives the client a second live secret, printed once; both secrets match', async () => {
    const first = await newClient();

    const run = await admin(['client', 'secret', 'add', first.clientId]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    const second = printed(run);
    expect(second.clientId).toBe(first.clientId);
    expect(second.secretId).not.toBe(first.secretId);
    expect(occurrences(run.stdout, second.secret)).toBe(1);
    expect(run.stdout).toMatch(/shown only this once/);
    expect(JSON.stringify(logs.lines())).not.toContain(second.secret);
    const secrets = await storedSecrets(first.clientId);
    expect(matchSecret(first.secret, secrets, new Date())).toBe(first.secretId);
    expect(matchSecret(second.secret, secrets, new Date())).toBe(second.secretId);
  });

  it('secret add refuses a third live secret with exit 1, printing no secret and storing none', async () => {
    const { clientId } = await newClient();
    await adminOk(['client', 'secret', 'add', clientId]);
    const before = await storedSecrets(clientId);

    const run = await admin(['client', 'secret', 'add', clientId]);

    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr: [
        `error: cannot add a secret to client ${clientId}: the client has 2 live secrets: ` +
          'remove one (client secret remove) first',
      ],
    });
    expect(await storedSecrets(clientId)).toEqual(before);
  });

  it('secret remove ends the old secret of a rotation: the successor matches, the old one no longer', async () => {
    const old = await newClient();
    const successor = printed(await adminOk(['client', 'secret', 'add', old.clientId]));

    const run = await admin(['client', 'secret', 'remove', old.clientId, old.secretId]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toMatch(
      new RegExp(
        `^removed secret ${old.secretId} of client ${old.clientId}; the access tokens granted with it stop`,
      ),
    );
    const secrets = await storedSecrets(old.clientId);
    expect(matchSecret(old.secret, secrets, new Date())).toBeNull();
    expect(matchSecret(successor.secret, secrets, new Date())).toBe(successor.secretId);
  });

  it('secret remove refuses the last live secret with exit 1 and keeps it', async () => {
    const { clientId, secretId, secret } = await newClient();

    const run = await admin(['client', 'secret', 'remove', clientId, secretId]);

    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toEqual([
      `error: cannot remove secret ${secretId} of client ${clientId}: this is the client’s last live secret: ` +
        'add its successor first, or disable or remove the client',
    ]);
    expect(matchSecret(secret, await storedSecrets(clientId), new Date())).toBe(secretId);
  });

  it('prints when each live secret of a roll-over ends, and no expired secret', async () => {
    const { customerId, clientId, secretId } = await newClient();
    const end = new Date(Date.now() + 60 * 60 * 1000);
    const next = newClientSecret(new Date(Date.now() + 1));
    await cli.clients.addClientSecret(clientId, next.stored, { expireOthersAt: end });
    const [first, second] = await storedSecrets(clientId);

    const listed = JSON.parse((await adminOk(['client', 'list', '--customer', customerId])).stdout);
    const table = await admin(['client', 'list', '--customer', customerId], { stdoutIsTTY: true });

    expect(listed.secrets).toEqual([
      { id: secretId, createdAt: first?.createdAt, expiresAt: end.toISOString(), lastUsedAt: null },
      { id: next.stored.id, createdAt: second?.createdAt, expiresAt: null, lastUsedAt: null },
    ]);
    expect(lines(table.stdout)[1]).toContain(
      `${secretId} (${first?.createdAt}, used never, expires ${end.toISOString()}), ${next.stored.id} (`,
    );
    // Once ended, the secret is listed no more.
    const later = await admin(['client', 'show', clientId], { now: () => new Date(end.getTime() + 1) });
    expect(JSON.parse(later.stdout).secrets.map((secret: { id: string }) => secret.id)).toEqual([
      next.stored.id,
    ]);
  });

  it('secret remove refuses a secret the client does not have and an unknown client with exit 1', async () => {
    const { clientId } = await newClient();

    const noSecret = await admin(['client', 'secret', 'remove', clientId, '0badf00d']);
    const noClient = await admin(['client', 'secret', 'remove', NO_SUCH_CLIENT, '0badf00d']);

    expect(noSecret).toMatchObject({
      code: 1,
      stderr: [
        `error: cannot remove secret 0badf00d of client ${clientId}: the client has no live secret with this id`,
      ],
    });
    expect(noClient).toMatchObject({
      code: 1,
      stderr: [`error: cannot remove secret 0badf00d of client ${NO_SUCH_CLIENT}: no such client`],
    });
  });

  it('secret remove takes a client id and a secret id as client list prints them', async () => {
    const { clientId } = await newClient();

    const missing = await admin(['client', 'secret', 'remove', clientId]);
    const malformed = await admin(['client', 'secret', 'remove', clientId, 'pcs_not-an-id']);
    const noAction = await admin(['client', 'secret']);

    expect(missing).toMatchObject({
      code: 2,
      stderr: ['error: client secret remove takes <clientId> <secretId>'],
    });
    expect(malformed).toMatchObject({
      code: 2,
      stderr: ['error: invalid secretId: must be a secret id (8 hex digits)'],
    });
    expect(noAction).toMatchObject({
      code: 2,
      stderr: ['error: client secret needs an action (see: npm run admin -- help)'],
    });
  });
});

describe('admin CLI: user scopes', () => {
  const newUser = async () => {
    const username = unique('scoped');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    return username;
  };

  it('narrows a user to the scopes given and revokes its sessions and access tokens, saying so', async () => {
    const username = await newUser();
    const later = new Date(Date.now() + 60_000);

    const run = await admin(['user', 'scopes', username, '--scope', 'tracking:read'], {
      accountsClock: () => later,
    });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toBe(
      `narrowed user "${username}" to the scopes tracking:read and revoked its sessions and access tokens; ` +
        'it logs in again for tokens with these scopes',
    );
    expect(await cli.local.findByUsername(username)).toMatchObject({
      scopes: ['tracking:read'],
      revokedBefore: revocationCutoff(later),
    });
    expect(JSON.parse((await adminOk(['user', 'show', username])).stdout).scopes).toEqual(['tracking:read']);
  });

  it('--all gives a narrowed user every scope again, and revokes its tokens', async () => {
    const username = await newUser();
    await adminOk(['user', 'scopes', username, '--scope', 'tracking:read']);
    const later = new Date(Date.now() + 120_000);

    const run = await admin(['user', 'scopes', username, '--all'], { accountsClock: () => later });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(run.stdout).toMatch(
      new RegExp(`^gave user "${username}" every scope again and revoked its sessions and access tokens`),
    );
    expect(await cli.local.findByUsername(username)).toMatchObject({
      scopes: null,
      revokedBefore: revocationCutoff(later),
    });
  });

  it('refuses an unknown scope, both --scope and --all, or neither, with exit 2, changing nothing', async () => {
    const username = await newUser();
    const invocations = [
      ['user', 'scopes', username, '--scope', 'admin'],
      ['user', 'scopes', username, '--scope', 'tracking:read', '--all'],
      ['user', 'scopes', username],
    ];

    const runs = [];
    for (const args of invocations) runs.push(await admin(args));

    expect(runs.map((run) => [run.code, run.stderr])).toEqual([
      [2, [`error: invalid --scope: must be one of the scopes ${GRANTABLE_SCOPES.join(', ')}`]],
      [2, ['error: user scopes takes either --scope <scope> (one or more) or --all']],
      [2, ['error: user scopes takes either --scope <scope> (one or more) or --all']],
    ]);
    expect((await cli.local.findByUsername(username))?.scopes).toBeNull();
  });

  it('fails for an unknown user with exit 1, naming it', async () => {
    const run = await admin(['user', 'scopes', 'nobody-here', '--scope', 'tracking:read']);

    expect(run).toMatchObject({ code: 1, stderr: ['error: user "nobody-here" not found'] });
  });
});

describe('admin CLI: clients in export and import', () => {
  const file = async (name: string, records: readonly unknown[]) => {
    const path = join(dir, name);
    await writeFile(path, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
    return path;
  };

  /** The client records of one customer in an export. */
  const exportedClients = async (customerId: string, options: string[] = []) =>
    lines((await adminOk(['export', ...options])).stdout)
      .map((line) => JSON.parse(line))
      .filter((record) => record.type === 'client' && record.customerId === customerId);

  it('carries a client with its secrets’ digests through export and import: its secrets still match', async () => {
    const { customerId, clientId, secretId, secret } = await newClient(['tracking:read', 'shipments:write']);
    const successor = printed(await adminOk(['client', 'secret', 'add', clientId]));
    await adminOk(['client', 'disable', clientId]);
    const before = await cli.clients.findClient(clientId);
    const records = await exportedClients(customerId, ['--include-password-hashes']);
    await adminOk(['client', 'remove', clientId]);

    const imported = await admin(['import', await file('clients.jsonl', records)]);

    expect(imported.code).toBe(0);
    expect(lines(imported.stdout).at(-1)).toBe('created 1, unchanged 0, updated 0, skipped 0, failed 0');
    const after = await cli.clients.findClient(clientId);
    expect(after).toMatchObject({
      clientId,
      customerId,
      scopes: before?.scopes,
      enabled: false,
      secrets: before?.secrets,
      createdAt: before?.createdAt,
    });
    expect(matchSecret(secret, after?.secrets ?? [], new Date())).toBe(secretId);
    expect(matchSecret(successor.secret, after?.secrets ?? [], new Date())).toBe(successor.secretId);
    // An export again writes the same record.
    expect(await exportedClients(customerId, ['--include-password-hashes'])).toEqual(records);
  });

  it('carries a client of keys through export and import, its public keys always (never a secret: it has none), and through rotation by client secret add --jwks', async () => {
    const customerId = unique('C');
    const jwksOf = async (kid: string) => {
      const { publicKey } = await generateKeyPair('Ed25519');
      return file(`${kid}.json`, [{ keys: [{ ...(await exportJWK(publicKey)), kid }] }]);
    };
    const made = await adminOk([
      'client',
      'add',
      customerId,
      '--scope',
      'tracking:read',
      '--jwks',
      await jwksOf('k1'),
    ]);
    const clientId = /^client id: +(\S+)$/m.exec(made.stdout)?.[1] ?? '';
    expect(made.stdout).not.toMatch(/^secret:/m);
    // A secret for it is refused; its next key is taken, and a kid it has is not.
    expect((await admin(['client', 'secret', 'add', clientId])).code).toBe(1);
    await adminOk(['client', 'secret', 'add', clientId, '--jwks', await jwksOf('k2')]);
    expect((await admin(['client', 'secret', 'add', clientId, '--jwks', await jwksOf('k2')])).code).toBe(1);
    const before = await cli.clients.findClient(clientId);
    expect(before?.secrets.map((slot) => slot.key?.kid)).toEqual(['k1', 'k2']);
    const records = await exportedClients(customerId);
    expect(records[0].secrets.map((slot: { kid: string }) => slot.kid)).toEqual(['k1', 'k2']);
    await adminOk(['client', 'remove', clientId]);

    const imported = await admin(['import', await file('keys.jsonl', records)]);

    expect(lines(imported.stdout).at(-1)).toBe('created 1, unchanged 0, updated 0, skipped 0, failed 0');
    expect((await cli.clients.findClient(clientId))?.secrets).toEqual(before?.secrets);
    // Imported again, unchanged.
    expect(lines((await admin(['import', await file('keys.jsonl', records)])).stdout).at(-1)).toContain(
      'created 0, unchanged 1, updated 0, skipped 0, failed 0',
    );
  });

  it('carries a client’s name and its secrets’ ends through export and import, and leaves an expired secret behind', async () => {
    const customerId = unique('C');
    const { clientId, secretId } = printed(
      await adminOk(['client', 'add', customerId, '--scope', 'tracking:read', '--name', 'ERP export']),
    );
    const end = new Date(Date.now() + 60 * 60 * 1000);
    const next = newClientSecret(new Date(Date.now() + 1));
    await cli.clients.addClientSecret(clientId, next.stored, { expireOthersAt: end });
    const before = await cli.clients.findClient(clientId);
    const records = await exportedClients(customerId, ['--include-password-hashes']);
    await adminOk(['client', 'remove', clientId]);

    expect(records).toMatchObject([
      {
        name: 'ERP export',
        secrets: [{ id: secretId, expiresAt: end.toISOString() }, { id: next.stored.id }],
      },
    ]);
    expect(await admin(['import', await file('named.jsonl', records)])).toMatchObject({ code: 0 });
    expect(await cli.clients.findClient(clientId)).toMatchObject({
      name: 'ERP export',
      secrets: before?.secrets,
    });
    expect(lines((await admin(['import', await file('named-again.jsonl', records)])).stdout).at(-1)).toBe(
      'nothing to change: created 0, unchanged 1, updated 0, skipped 0, failed 0',
    );

    // Its first secret ended: the export holds the successor alone.
    const successor = newClientSecret(new Date(Date.now() + 2));
    await cli.clients.removeClientSecret(clientId, next.stored.id);
    await cli.clients.addClientSecret(clientId, successor.stored, {
      expireOthersAt: new Date(Date.now() - 1),
    });
    expect(
      (await exportedClients(customerId))[0]?.secrets.map((secret: { id: string }) => secret.id),
    ).toEqual([successor.stored.id]);
  });

  it('exports a client as one record of type client, its digests only with --include-password-hashes', async () => {
    const { customerId, clientId, secretId } = await newClient();
    const [stored] = await storedSecrets(clientId);

    const plain = await exportedClients(customerId);
    const withDigests = await exportedClients(customerId, ['--include-password-hashes']);

    const record = {
      type: 'client',
      clientId,
      customerId,
      scopes: ['tracking:read'],
      enabled: true,
      createdAt: (await cli.clients.findClient(clientId))?.createdAt,
    };
    expect(plain).toEqual([{ ...record, secrets: [{ id: secretId, createdAt: stored?.createdAt }] }]);
    expect(withDigests).toEqual([
      { ...record, secrets: [{ id: secretId, digest: stored?.digest, createdAt: stored?.createdAt }] },
    ]);
  });

  it('leaves an existing client as it is: the same one unchanged, one changed since the export failed', async () => {
    const { customerId, clientId } = await newClient();
    const path = await file(
      'existing.jsonl',
      await exportedClients(customerId, ['--include-password-hashes']),
    );

    const same = await admin(['import', path]);
    await adminOk(['client', 'secret', 'add', clientId]);
    const before = await cli.clients.findClient(clientId);
    const changed = await admin(['import', path]);

    expect(same.code).toBe(0);
    expect(lines(same.stdout).at(-1)).toBe(
      'nothing to change: created 0, unchanged 1, updated 0, skipped 0, failed 0',
    );
    expect(changed.code).toBe(1);
    expect(lines(changed.stdout)).toEqual([
      'line 1: client exists with other data (left as it is)',
      'created 0, unchanged 0, updated 0, skipped 0, failed 1',
    ]);
    expect(await cli.clients.findClient(clientId)).toEqual(before);
  });

  it('with --dry-run counts a client it would create and writes none', async () => {
    const { customerId, clientId } = await newClient();
    const path = await file(
      'dry-run.jsonl',
      await exportedClients(customerId, ['--include-password-hashes']),
    );
    await adminOk(['client', 'remove', clientId]);

    const run = await admin(['import', path, '--dry-run']);

    expect(run.code).toBe(0);
    expect(lines(run.stdout).at(-1)).toBe(
      'dry run, nothing written: would have created 1, unchanged 0, updated 0, skipped 0, failed 0',
    );
    expect(await cli.clients.findClient(clientId)).toBeNull();
  });

  it('refuses client records without digests, with an unknown scope, a third secret, or twice, writing nothing', async () => {
    const { customerId, clientId } = await newClient();
    const [exported] = await exportedClients(customerId, ['--include-password-hashes']);
    const [withoutDigest] = await exportedClients(customerId);
    await adminOk(['client', 'remove', clientId]);
    const secret = exported.secrets[0];
    const path = await file('bad-clients.jsonl', [
      withoutDigest,
      { ...exported, scopes: ['tracking:read', 'admin'] },
      { ...exported, secrets: [secret, { ...secret, id: '0000aaaa' }, { ...secret, id: '0000bbbb' }] },
      exported,
      exported,
    ]);

    const run = await admin(['import', path]);

    expect(run.code).toBe(1);
    expect(lines(run.stdout)).toEqual([
      "line 1: secrets.0 needs a digest (a secret's), or a kid and a jwk (a key's)",
      `line 2: scopes must name only the scopes ${GRANTABLE_SCOPES.join(', ')}`,
      'line 3: secrets must hold at most 2 secrets',
      `line 5: client ${clientId} is also on line 4`,
    ]);
    expect(run.stderr).toEqual([
      'error: 4 invalid records; nothing was written (fix them, or add --skip-invalid to import the valid records)',
    ]);
    expect(await cli.clients.findClient(clientId)).toBeNull();
  });
});

describe('admin CLI: client show and unlock', () => {
  const POLICY: ThrottlePolicy = {
    limit: 3,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 10,
  };
  const KNOWN_SOURCE_SECONDS = 30 * 86_400;
  const stageParams = { usernameThrottle: POLICY, knownSourceSeconds: KNOWN_SOURCE_SECONDS };
  const LOCK_MS = lockSeconds(POLICY, POLICY.limit) * 1000;
  const PLANT = '198.51.100.23';
  const STRANGER = '203.0.113.99';

  /** The token endpoint's throttle on the CLI's table, at `at`. */
  const throttleAt = async (at: Date) =>
    createLoginThrottle({
      metrics: noMetrics,
      store: cli.throttleStore,
      settings: {
        username: POLICY,
        sourceIp: { ...POLICY, limit: 100 },
        clientSourceIp: { ...POLICY, limit: 100 },
        knownSourceSeconds: KNOWN_SOURCE_SECONDS,
      },
      counterSecret: await cli.counterSecret(),
      clock: () => at,
      logger: createLogger('error', () => {}),
    });
  const attemptOf = (clientId: string, sourceIp: string) =>
    ({ username: clientId, sourceIp, client: true }) as const;
  /** Fails `times` authentications of the client from `sourceIp` at `at`. */
  const failFrom = async (clientId: string, sourceIp: string, times: number, at: Date) => {
    const throttle = await throttleAt(at);
    const attempt = attemptOf(clientId, sourceIp);
    for (let i = 0; i < times; i++)
      await throttle.failed(attempt, 'bad secret', await throttle.begin(attempt));
    return throttle;
  };
  /**
   * A client that authenticated from PLANT, then was locked by a stranger at `at` and, failing
   * from PLANT 5 s later, on PLANT's own counter too.
   */
  const lockedBothWays = async (at: Date) => {
    const { clientId } = await newClient();
    const throttle = await throttleAt(at);
    await throttle.succeeded(await throttle.begin(attemptOf(clientId, PLANT)));
    await failFrom(clientId, STRANGER, POLICY.limit, at);
    const later = new Date(at.getTime() + 5000);
    await failFrom(clientId, PLANT, POLICY.limit, later);
    const secret = await cli.counterSecret();
    const nameKey = clientCounterKey(clientId, secret);
    const tag = knownSourceTag(nameKey, PLANT, secret);
    return {
      clientId,
      nameKey,
      plantKey: knownSourceCounterKey(nameKey, tag),
      plantTag: tag.slice(0, 8),
      nameUntil: new Date(at.getTime() + LOCK_MS).toISOString(),
      plantUntil: new Date(later.getTime() + LOCK_MS).toISOString(),
    };
  };

  it('show prints the client as client list does, with its failed authentications, never a digest', async () => {
    const { clientId, customerId, secretId } = await newClient();
    const [stored] = await storedSecrets(clientId);

    const run = await admin(['client', 'show', clientId], { stageParams });

    expect(run).toMatchObject({ code: 0, stderr: [], passwordReads: 0 });
    expect(JSON.parse(run.stdout)).toEqual({
      clientId,
      customerId,
      name: null,
      scopes: ['tracking:read'],
      enabled: true,
      secrets: [{ id: secretId, createdAt: stored?.createdAt, expiresAt: null, lastUsedAt: null }],
      dpopBoundAccessTokens: false,
      createdAt: expect.any(String),
      lastUsedAt: null,
      failedAuthentications: {
        failures: 0,
        lastAttemptAt: null,
        lockedUntil: null,
        knownSources: 0,
        knownSourcesLocked: [],
      },
    });
    expect(run.stdout).not.toContain(stored?.digest);
  });

  it('show reports the client id locked for unknown sources, its known source spared, and how many it knows', async () => {
    const { clientId } = await newClient();
    const at = new Date(Date.now() - 1000);
    const throttle = await throttleAt(at);
    await throttle.succeeded(await throttle.begin(attemptOf(clientId, PLANT)));
    await failFrom(clientId, STRANGER, POLICY.limit, at);

    const run = await admin(['client', 'show', clientId], { stageParams });

    expect(JSON.parse(run.stdout).failedAuthentications).toEqual({
      failures: POLICY.limit,
      lastAttemptAt: at.toISOString(),
      lockedUntil: new Date(at.getTime() + LOCK_MS).toISOString(),
      knownSources: 1,
      knownSourcesLocked: [],
    });
    await expect(throttle.begin(attemptOf(clientId, PLANT))).resolves.toMatchObject({ spared: true });
  });

  it('show reports a known source locked on its own, by the start of its tag', async () => {
    const { clientId, nameUntil, plantTag, plantUntil } = await lockedBothWays(new Date(Date.now() - 1000));

    const run = await admin(['client', 'show', clientId], { stageParams });

    expect(JSON.parse(run.stdout).failedAuthentications).toMatchObject({
      lockedUntil: nameUntil,
      knownSources: 1,
      knownSourcesLocked: [{ source: plantTag, lockedUntil: plantUntil }],
    });
    expect(run.stdout).not.toContain(PLANT);
  });

  it('unlock ends the client id’s lock and its known source’s, keeps the source known and the address’s counter', async () => {
    const at = new Date(Date.now() - 1000);
    const { clientId, nameKey, plantKey, plantTag, nameUntil, plantUntil } = await lockedBothWays(at);
    const addressKey = clientSourceIpCounterKey(STRANGER);
    const address = (await cli.throttleStore.read([addressKey])).get(addressKey);

    const run = await admin(['client', 'unlock', clientId], { stageParams });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      `cleared the failed authentications of client ${clientId} and of each of its known sources (1, kept as known)`,
      `ended its lock for unknown sources (until ${nameUntil})`,
      `ended the lock of known source ${plantTag} (until ${plantUntil})`,
    ]);
    const left = await cli.throttleStore.read([nameKey, plantKey, addressKey]);
    expect(left.has(plantKey)).toBe(false);
    expect(left.get(nameKey)).toMatchObject({ failures: 0, lockedUntil: 0 });
    expect(left.get(nameKey)?.knownSources.size).toBe(1);
    expect(address?.failures).toBeGreaterThanOrEqual(POLICY.limit);
    expect(left.get(addressKey)).toEqual(address);
    // A stranger's new lock still spares the known source.
    const later = new Date(at.getTime() + 10_000);
    const throttle = await failFrom(clientId, STRANGER, POLICY.limit, later);
    await expect(throttle.begin(attemptOf(clientId, STRANGER))).rejects.toMatchObject({
      code: 'TOO_MANY_ATTEMPTS',
    });
    await expect(throttle.begin(attemptOf(clientId, PLANT))).resolves.toMatchObject({
      spared: true,
      counted: [{ kind: 'known source', failures: 0 }, { kind: 'source address' }],
    });
  });

  it('unlock of a client with nothing to clear says no lock was running', async () => {
    const { clientId } = await newClient();

    const run = await admin(['client', 'unlock', clientId], { stageParams });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      `cleared the failed authentications of client ${clientId} (no known sources)`,
      'no lock was running',
    ]);
  });

  it('refuses a client that does not exist with exit 1, clearing nothing', async () => {
    const run = await admin(['client', 'unlock', NO_SUCH_CLIENT]);
    expect(run).toMatchObject({ code: 1, stderr: [`error: client ${NO_SUCH_CLIENT} not found`] });
  });
});
