/**
 * The admin CLI's platform commands (docs/platforms.md) against the embedded DynamoDB: the
 * registry, its redirect URI rules, and a platform beside the customers' API clients.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPlatform } from '../../../lib/clients/clients.ts';
import { matchSecret } from '../../../lib/clients/secrets.ts';
import { MAX_REDIRECT_URIS } from '../../../lib/platforms/redirect-uris.ts';
import { type AdminRun, lines, OTHER_STAGE, unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const value = (run: Pick<AdminRun, 'stdout'>, label: string) =>
  lines(run.stdout)
    .find((text) => text.startsWith(`${label}:`))
    ?.slice(label.length + 1)
    .trim() ?? '';

const CALLBACK = 'https://shop.example/oauth/callback';

async function newPlatform(uris: readonly string[] = [CALLBACK]) {
  const run = await adminOk([
    'platform',
    'add',
    unique('Shop app'),
    ...uris.flatMap((uri) => ['--redirect-uri', uri]),
    '--scope',
    'tracking:read',
  ]);
  return { clientId: value(run, 'client id'), secret: value(run, 'secret'), run };
}

describe('admin CLI: platform add', () => {
  it('registers an enabled platform of no customer, printing its secret once and storing its digest', async () => {
    const run = await admin([
      'platform',
      'add',
      'Shopify app',
      '--redirect-uri',
      CALLBACK,
      '--redirect-uri',
      'http://127.0.0.1:8080/callback',
      '--scope',
      'tracking:read',
      '--scope',
      'shipments:write',
    ]);

    expect(run).toMatchObject({ code: 0, stderr: [] });
    const clientId = value(run, 'client id');
    const stored = await cli.clients.findClient(clientId);
    expect(stored).toMatchObject({
      clientId,
      name: 'Shopify app',
      scopes: ['tracking:read', 'shipments:write'],
      platform: { redirectUris: [CALLBACK, 'http://127.0.0.1:8080/callback'] },
      enabled: true,
    });
    expect(stored?.customerId).toBeUndefined();
    expect(matchSecret(value(run, 'secret'), stored?.secrets ?? [], new Date())).toBe(
      value(run, 'secret id'),
    );
    expect(run.stdout.split(value(run, 'secret')).length - 1).toBe(1);
  });

  it.each([
    ['http://shop.example/callback', 'must be https'],
    ['https://shop.example/callback#done', 'must not have a fragment'],
    ['HTTPS://Shop.Example/callback', 'must be written as https://shop.example/callback'],
    ['https://user:pw@shop.example/callback', 'must not carry a user name or password'],
    ['http://127.0.0.1/callback', 'must name its port'],
    ['callback', 'must be an absolute URI'],
  ])('refuses the redirect URI %s (%s) as a usage error, exit 2, writing nothing', async (uri, reason) => {
    const before = (await cli.clients.listPlatforms()).length;
    const run = await admin(['platform', 'add', 'Shop', '--redirect-uri', uri, '--scope', 'tracking:read']);
    expect(run.code).toBe(2);
    expect(run.stderr).toEqual([expect.stringContaining(reason)]);
    expect(await cli.clients.listPlatforms()).toHaveLength(before);
  });

  it('refuses a loopback redirect URI for a deployed stage as a usage error, before reading anything', async () => {
    const run = await admin([
      'platform',
      'add',
      'Shop',
      '--redirect-uri',
      'http://127.0.0.1:8080/callback',
      '--scope',
      'tracking:read',
      '--stage',
      OTHER_STAGE,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toEqual([expect.stringContaining('a loopback http URI only on the local stage')]);
  });

  it('refuses a scope beyond a platform’s with exit 2: introspection is the carrier’s own', async () => {
    const run = await admin([
      'platform',
      'add',
      'Shop',
      '--redirect-uri',
      CALLBACK,
      '--scope',
      'tokens:introspect',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.join('\n')).toContain("a platform's must be one of tracking:read, shipments:write");
  });

  it('refuses a platform without a redirect URI or a scope with exit 2', async () => {
    const run = await admin(['platform', 'add', 'Shop', '--scope', 'tracking:read']);
    expect(run.code).toBe(2);
    expect(run.stderr.join('\n')).toContain('platform add needs at least one --redirect-uri');
  });
});

describe('admin CLI: platform list, show, redirect-uri, disable, enable, remove', () => {
  it('lists platforms alone, and the client commands neither list nor show them', async () => {
    const { clientId } = await newPlatform();
    const customerId = unique('C');
    await adminOk(['client', 'add', customerId, '--scope', 'tracking:read']);

    const listed = lines((await adminOk(['platform', 'list'])).stdout).map((line) => JSON.parse(line));
    expect(listed.map((platform) => platform.clientId)).toContain(clientId);
    expect(listed.every((platform) => platform.customerId === undefined)).toBe(true);
    const clients = lines((await adminOk(['client', 'list'])).stdout).map((line) => JSON.parse(line));
    expect(clients.map((client) => client.clientId)).not.toContain(clientId);

    const shown = JSON.parse((await adminOk(['platform', 'show', clientId])).stdout);
    expect(shown).toMatchObject({ clientId, redirectUris: [CALLBACK], enabled: true });
    expect(JSON.stringify(shown)).not.toContain('digest');
    const asClient = await admin(['client', 'show', clientId]);
    expect(asClient.code).toBe(1);
    expect(asClient.stderr).toEqual([`error: client ${clientId} is a platform: see platform show`]);
    const disabledAsClient = await admin(['client', 'disable', clientId]);
    expect(disabledAsClient.code).toBe(1);
    expect((await cli.clients.findClient(clientId))?.enabled).toBe(true);
  });

  it('adds and removes redirect URIs, one there already as nothing, refusing the last one', async () => {
    const { clientId } = await newPlatform();
    const other = 'https://shop.example/other';

    await adminOk(['platform', 'redirect-uri', 'add', clientId, other]);
    const again = await adminOk(['platform', 'redirect-uri', 'add', clientId, other]);
    expect(again.stdout).toBe(`platform ${clientId} redirects to: ${CALLBACK} ${other}`);
    await adminOk(['platform', 'redirect-uri', 'remove', clientId, CALLBACK]);
    const last = await admin(['platform', 'redirect-uri', 'remove', clientId, other]);
    expect(last.code).toBe(1);
    expect(last.stderr[0]).toContain('last redirect URI');

    const stored = await cli.clients.findClient(clientId);
    expect(stored?.platform?.redirectUris).toEqual([other]);
  });

  it('refuses an eleventh redirect URI', async () => {
    const uris = Array.from({ length: MAX_REDIRECT_URIS }, (_, index) => `https://shop.example/cb${index}`);
    const { clientId } = await newPlatform(uris);
    const run = await admin([
      'platform',
      'redirect-uri',
      'add',
      clientId,
      `https://shop.example/cb${MAX_REDIRECT_URIS}`,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr[0]).toContain(`has ${MAX_REDIRECT_URIS} redirect URIs: remove one first`);
  });

  it('disables, enables and removes a platform; a customer’s API client is no platform', async () => {
    const { clientId } = await newPlatform();
    await adminOk(['platform', 'disable', clientId]);
    const disabled = await cli.clients.findClient(clientId);
    expect(disabled?.enabled).toBe(false);
    expect(disabled?.revokedBefore).toBeGreaterThan(0);
    await adminOk(['platform', 'enable', clientId]);
    expect((await cli.clients.findClient(clientId))?.enabled).toBe(true);
    await adminOk(['platform', 'remove', clientId]);
    expect(await cli.clients.findClient(clientId)).toBeNull();
    const gone = await admin(['platform', 'show', clientId]);
    expect(gone).toMatchObject({ code: 1, stderr: [`error: platform ${clientId} not found`] });

    const customerClient = value(
      await adminOk(['client', 'add', unique('C'), '--scope', 'tracking:read']),
      'client id',
    );
    const notPlatform = await admin(['platform', 'remove', customerClient]);
    expect(notPlatform).toMatchObject({ code: 1, stderr: [`error: platform ${customerClient} not found`] });
    expect(await cli.clients.findClient(customerClient)).not.toBeNull();
  });

  it('rolls a platform’s secret with the client secret commands', async () => {
    const { clientId } = await newPlatform();
    const added = await adminOk(['client', 'secret', 'add', clientId]);
    const stored = await cli.clients.findClient(clientId);
    expect(stored !== null && isPlatform(stored)).toBe(true);
    expect(stored?.secrets.map((secret) => secret.id)).toContain(value(added, 'secret id'));
  });
});

describe('admin CLI: a platform exported and imported', () => {
  it('carries its redirect URIs and name, and an import of the export leaves it unchanged', async () => {
    const { clientId } = await newPlatform(['https://shop.example/a', 'https://shop.example/b']);
    const records = lines((await adminOk(['export', '--include-password-hashes'])).stdout).map((line) =>
      JSON.parse(line),
    );
    const exported = records.find((record) => record.clientId === clientId);
    expect(exported).toMatchObject({
      type: 'client',
      clientId,
      redirectUris: ['https://shop.example/a', 'https://shop.example/b'],
    });
    expect(exported.customerId).toBeUndefined();

    const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-platforms-'));
    try {
      const file = join(dir, 'platform.jsonl');
      await writeFile(file, `${JSON.stringify(exported)}\n`);
      const imported = await adminOk(['import', file]);
      expect(imported.stdout).toContain('unchanged 1');
      await cli.clients.removeClient(clientId);
      await adminOk(['import', file]);
      expect(await cli.clients.findClient(clientId)).toMatchObject({
        clientId,
        name: exported.name,
        platform: { redirectUris: exported.redirectUris },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a client record with both a customer and redirect URIs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-platforms-'));
    try {
      const file = join(dir, 'both.jsonl');
      const record = {
        type: 'client',
        clientId: 'pcl_0123456789abcdef0123',
        customerId: 'C-1',
        redirectUris: [CALLBACK],
        name: 'Both',
        scopes: ['tracking:read'],
        secrets: [{ id: '0a1b2c3d', digest: 'A'.repeat(43), createdAt: '2026-01-01T00:00:00.000Z' }],
      };
      await writeFile(file, `${JSON.stringify(record)}\n`);
      const run = await admin(['import', file]);
      expect(run.code).toBe(1);
      expect(`${run.stdout}\n${run.stderr.join('\n')}`).toContain('needs exactly one of customerId');
      expect(await cli.clients.findClient(record.clientId)).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
