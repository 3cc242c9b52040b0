/**
 * The contract of the API client store (lib/clients/dynamodb.ts), on each DynamoDB
 * implementation and on the in-memory fake the unit tests use; then a user's narrowed scopes
 * on the account store.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { revocationCutoff } from '../../lib/revocation/revocation.ts';
import type { Clock } from '../../lib/time.ts';
import {
  describeEachDynamo,
  interceptSends,
  recordSends,
  startTestDynamo,
  type TestDynamo,
} from '../support/dynamo.ts';
import { codeOf } from '../support/errors.ts';
import { ACCOUNT_STORES, CLIENT_STORES, describeStoreContract } from '../support/stores.ts';

describeStoreContract('client repository', CLIENT_STORES, (store) => {
  const clients = (): ClientRepository => store();
  const newClient = async (customerId = 'C-1', scopes = ['tracking:read'] as const) => {
    const clientId = newClientId();
    const secret = newClientSecret(new Date());
    await clients().createClient({ clientId, customerId, scopes: [...scopes], secret: secret.stored });
    return { clientId, secret };
  };

  it('finds a client it created, enabled, with its one secret’s digest and not the secret', async () => {
    const { clientId, secret } = await newClient('C-find', ['tracking:read']);
    const found = await clients().findClient(clientId);
    expect(found).toMatchObject({
      clientId,
      customerId: 'C-find',
      scopes: ['tracking:read'],
      enabled: true,
      secrets: [secret.stored],
      revokedBefore: 0,
    });
    expect(JSON.stringify(found)).not.toContain(secret.secret);
    expect(await clients().findClient(newClientId())).toBeNull();
    expect(await clients().findClientStatus(clientId)).toEqual({
      enabled: true,
      revokedBefore: 0,
      secretIds: new Set([secret.stored.id]),
      revokedTokens: new Set(),
    });
    expect(await clients().findClientStatus(newClientId())).toBeNull();
  });

  it('keeps a platform apart from the customers’ clients: listed alone, of no customer, its redirect URIs changed one at a time', async () => {
    const clientId = newClientId();
    const secret = newClientSecret(new Date());
    const a = 'https://shop.example/a';
    const b = 'https://shop.example/b';
    const created = await clients().createPlatform({
      clientId,
      name: 'Shop app',
      scopes: ['tracking:read'],
      redirectUris: [a],
      secret: secret.stored,
    });
    expect(await clients().findClient(clientId)).toEqual(created);
    expect(created).toMatchObject({ name: 'Shop app', platform: { redirectUris: [a] }, enabled: true });
    expect(created.customerId).toBeUndefined();
    expect((await clients().listPlatforms()).map((found) => found.clientId)).toContain(clientId);
    expect((await clients().listClients()).map((found) => found.clientId)).not.toContain(clientId);

    expect((await clients().changeRedirectUris(clientId, { add: b })).platform.redirectUris).toEqual([a, b]);
    expect((await clients().changeRedirectUris(clientId, { remove: a })).platform.redirectUris).toEqual([b]);
    expect(await codeOf(clients().changeRedirectUris(clientId, { remove: a }))).toBe('NOT_FOUND');
    expect(await codeOf(clients().changeRedirectUris(clientId, { remove: b }))).toBe('CONFLICT');
    expect((await clients().changeRedirectUris(clientId, { add: b })).platform.redirectUris).toEqual([b]);
    expect((await clients().findClient(clientId))?.platform?.redirectUris).toEqual([b]);

    const { clientId: customerClient } = await newClient('C-platform');
    expect(await codeOf(clients().changeRedirectUris(customerClient, { add: a }))).toBe('NOT_FOUND');
    expect(
      await codeOf(
        clients().createPlatform({
          ...created,
          redirectUris: [a],
          secret: newClientSecret(new Date()).stored,
        }),
      ),
    ).toBe('ALREADY_EXISTS');
  });

  it('refuses a client id that exists, with another secret', async () => {
    const { clientId } = await newClient();
    const other = newClientSecret(new Date());
    const again = clients().createClient({
      clientId,
      customerId: 'C-1',
      scopes: ['tracking:read'],
      secret: other.stored,
    });
    expect(await codeOf(again)).toBe('ALREADY_EXISTS');
  });

  it('lists every client, or a customer’s, ordered by id', async () => {
    const a = await newClient('C-list');
    const b = await newClient('C-list');
    await newClient('C-other');
    const listed = (await clients().listClients('C-list')).map((client) => client.clientId);
    expect(listed).toEqual([a.clientId, b.clientId].sort());
    const all = (await clients().listClients()).map((client) => client.clientId);
    expect(all).toEqual(expect.arrayContaining([a.clientId, b.clientId]));
    expect(all).toEqual([...all].sort());
    // The export carries the platforms too (docs/platforms.md), which no client list holds.
    const platforms = await clients().listPlatforms();
    expect(await clients().exportClients()).toHaveLength(all.length + platforms.length);
  });

  it('holds two live secrets at most, and never fewer than one: CONFLICT beyond either', async () => {
    const { clientId, secret } = await newClient();
    const second = newClientSecret(new Date(Date.now() + 1000));
    await clients().addClientSecret(clientId, second.stored);
    expect((await clients().findClient(clientId))?.secrets.map((s) => s.id)).toEqual([
      secret.stored.id,
      second.stored.id,
    ]);
    expect(await codeOf(clients().addClientSecret(clientId, newClientSecret(new Date()).stored))).toBe(
      'CONFLICT',
    );
    await clients().removeClientSecret(clientId, secret.stored.id);
    expect((await clients().findClientStatus(clientId))?.secretIds).toEqual(new Set([second.stored.id]));
    expect(await codeOf(clients().removeClientSecret(clientId, second.stored.id))).toBe('CONFLICT');
    expect(await codeOf(clients().removeClientSecret(clientId, secret.stored.id))).toBe('NOT_FOUND');
  });

  it('answers an added secret with the client before and after, as a read then finds it', async () => {
    const { clientId, secret } = await newClient();
    const before = await clients().findClient(clientId);
    const next = newClientSecret(new Date(Date.now() + 1000));

    const change = await clients().addClientSecret(clientId, next.stored);

    expect(change.before).toEqual(before);
    expect(change.after).toEqual(await clients().findClient(clientId));
    expect(change.after.secrets).toEqual([secret.stored, next.stored]);
    expect(change.after.updatedAt > change.before.updatedAt).toBe(true);
  });

  it('rolls over: the other live secret ends at the roll-over’s time, or earlier where it ends earlier already', async () => {
    const { clientId, secret } = await newClient();
    const hour = 60 * 60 * 1000;
    const inAnHour = new Date(Date.now() + hour);
    const second = newClientSecret(new Date(Date.now() + 1000));
    const rolled = await clients().addClientSecret(clientId, second.stored, { expireOthersAt: inAnHour });
    expect(rolled.after.secrets.map((s) => [s.id, s.expiresAt])).toEqual([
      [secret.stored.id, inAnHour.toISOString()],
      [second.stored.id, undefined],
    ]);
    // The first alone, ending in an hour: a later roll-over leaves its end, an earlier one moves it.
    await clients().removeClientSecret(clientId, second.stored.id);
    const third = newClientSecret(new Date(Date.now() + 2000));
    await clients().addClientSecret(clientId, third.stored, {
      expireOthersAt: new Date(Date.now() + 2 * hour),
    });
    expect((await clients().findClient(clientId))?.secrets[0]?.expiresAt).toBe(inAnHour.toISOString());
    await clients().removeClientSecret(clientId, third.stored.id);
    const inAMinute = new Date(Date.now() + 60_000);
    const fourth = newClientSecret(new Date(Date.now() + 3000));
    const earlier = await clients().addClientSecret(clientId, fourth.stored, { expireOthersAt: inAMinute });

    expect(earlier.before.secrets.map((s) => s.expiresAt)).toEqual([inAnHour.toISOString()]);
    expect((await clients().findClient(clientId))?.secrets.map((s) => [s.id, s.expiresAt])).toEqual([
      [secret.stored.id, inAMinute.toISOString()],
      [fourth.stored.id, undefined],
    ]);
  });

  it('counts only live secrets: an expired one leaves room for a new one, and the write that adds it prunes it', async () => {
    const { clientId, secret } = await newClient();
    const second = newClientSecret(new Date(Date.now() + 1000));
    // Ended at once: the first expired.
    await clients().addClientSecret(clientId, second.stored, { expireOthersAt: new Date(Date.now() - 1000) });
    expect((await clients().findClient(clientId))?.secrets.map((s) => s.id)).toEqual([
      secret.stored.id,
      second.stored.id,
    ]);
    expect((await clients().findClientStatus(clientId))?.secretIds).toEqual(new Set([second.stored.id]));
    expect(await codeOf(clients().removeClientSecret(clientId, secret.stored.id))).toBe('NOT_FOUND');
    expect(await codeOf(clients().removeClientSecret(clientId, second.stored.id))).toBe('CONFLICT');

    const third = newClientSecret(new Date(Date.now() + 2000));
    const change = await clients().addClientSecret(clientId, third.stored);

    expect(change.before.secrets.map((s) => s.id)).toEqual([secret.stored.id, second.stored.id]);
    expect((await clients().findClient(clientId))?.secrets.map((s) => s.id)).toEqual([
      second.stored.id,
      third.stored.id,
    ]);
    expect(await codeOf(clients().addClientSecret(clientId, newClientSecret(new Date()).stored))).toBe(
      'CONFLICT',
    );
  });

  it('names a client at its creation and renames it, moving updatedAt; NOT_FOUND for no client', async () => {
    const clientId = newClientId();
    const { stored } = newClientSecret(new Date());
    await clients().createClient({
      clientId,
      customerId: 'C-name',
      name: 'Warehouse sync',
      scopes: ['tracking:read'],
      secret: stored,
    });
    const created = await clients().findClient(clientId);
    expect(created?.name).toBe('Warehouse sync');

    await new Promise((resolve) => setTimeout(resolve, 2));
    await clients().renameClient(clientId, 'ERP export');

    const renamed = await clients().findClient(clientId);
    expect(renamed?.name).toBe('ERP export');
    expect(renamed?.updatedAt).not.toBe(created?.updatedAt);
    expect((await clients().listClients('C-name')).map((client) => client.name)).toEqual(['ERP export']);
    expect(await codeOf(clients().renameClient(newClientId(), 'x'))).toBe('NOT_FOUND');
  });

  it('has no name for a client created without one', async () => {
    const { clientId } = await newClient();
    expect(await clients().findClient(clientId)).not.toHaveProperty('name');
  });

  it('disabling moves the revocation cutoff past now; enabling keeps it', async () => {
    const { clientId } = await newClient();
    const before = revocationCutoff(new Date());
    await clients().setClientEnabled(clientId, false);
    const disabled = await clients().findClientStatus(clientId);
    expect(disabled?.enabled).toBe(false);
    expect(disabled?.revokedBefore).toBeGreaterThanOrEqual(before);
    await clients().setClientEnabled(clientId, true);
    expect(await clients().findClientStatus(clientId)).toMatchObject({
      enabled: true,
      revokedBefore: disabled?.revokedBefore,
    });
  });

  it('records a secret’s last use and the client’s, at most once an hour, leaving updatedAt as it was', async () => {
    const { clientId, secret } = await newClient();
    const before = await clients().findClient(clientId);
    const at = new Date('2026-11-25T10:00:00.000Z');
    const lastUse = async () => {
      const found = await clients().findClient(clientId);
      return { client: found?.lastUsedAt, secret: found?.secrets[0]?.lastUsedAt };
    };

    expect(await lastUse()).toEqual({ client: undefined, secret: undefined });
    expect(await clients().recordUse(clientId, secret.stored.id, at)).toBe(true);
    expect(await lastUse()).toEqual({ client: at.toISOString(), secret: at.toISOString() });
    const within = new Date(at.getTime() + 60 * 60 * 1000 - 1);
    expect(await clients().recordUse(clientId, secret.stored.id, within)).toBe(false);
    expect(await lastUse()).toEqual({ client: at.toISOString(), secret: at.toISOString() });
    const hourOn = new Date(at.getTime() + 60 * 60 * 1000);
    expect(await clients().recordUse(clientId, secret.stored.id, hourOn)).toBe(true);
    expect(await lastUse()).toEqual({ client: hourOn.toISOString(), secret: hourOn.toISOString() });
    expect((await clients().findClient(clientId))?.updatedAt).toBe(before?.updatedAt);
  });

  it('writes one of the last uses sent at once', async () => {
    const { clientId, secret } = await newClient();
    const at = new Date();
    const written = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        clients().recordUse(clientId, secret.stored.id, new Date(at.getTime() + i)),
      ),
    );
    expect(written.filter(Boolean)).toHaveLength(1);
  });

  it('never writes the last use of a removed secret back, nor of a client that does not exist', async () => {
    const { clientId, secret } = await newClient();
    const next = newClientSecret(new Date(Date.now() + 1000));
    await clients().addClientSecret(clientId, next.stored);
    await clients().removeClientSecret(clientId, secret.stored.id);

    expect(await clients().recordUse(clientId, secret.stored.id, new Date())).toBe(false);
    expect((await clients().findClient(clientId))?.secrets.map((s) => s.id)).toEqual([next.stored.id]);
    expect((await clients().findClientStatus(clientId))?.secretIds).toEqual(new Set([next.stored.id]));
    expect(await clients().recordUse(newClientId(), secret.stored.id, new Date())).toBe(false);
    expect(await clients().findClient(newClientId())).toBeNull();
  });

  it('keeps the client’s last use the latest of its secrets’, a removed secret’s included', async () => {
    const { clientId, secret } = await newClient();
    const next = newClientSecret(new Date(Date.now() + 1000));
    await clients().addClientSecret(clientId, next.stored);
    await clients().recordUse(clientId, secret.stored.id, new Date('2026-11-25T10:00:00.000Z'));
    await clients().recordUse(clientId, secret.stored.id, new Date('2026-11-25T11:00:00.000Z'));
    // Written late: an earlier grant's write with the other secret landing after the later one's.
    await clients().recordUse(clientId, next.stored.id, new Date('2026-11-25T10:30:00.000Z'));
    const both = await clients().findClient(clientId);
    expect(both?.secrets.map((s) => s.lastUsedAt)).toEqual([
      '2026-11-25T11:00:00.000Z',
      '2026-11-25T10:30:00.000Z',
    ]);
    expect(both?.lastUsedAt).toBe('2026-11-25T11:00:00.000Z');

    await clients().recordUse(clientId, next.stored.id, new Date('2026-11-25T12:00:00.000Z'));
    await clients().removeClientSecret(clientId, next.stored.id);
    expect((await clients().findClient(clientId))?.lastUsedAt).toBe('2026-11-25T12:00:00.000Z');
  });

  it('removes a client, and answers NOT_FOUND for one that does not exist', async () => {
    const { clientId } = await newClient();
    await clients().removeClient(clientId);
    expect(await clients().findClient(clientId)).toBeNull();
    for (const attempt of [
      () => clients().removeClient(clientId),
      () => clients().setClientEnabled(clientId, false),
      () => clients().setClientEnabled(clientId, true),
      () => clients().addClientSecret(clientId, newClientSecret(new Date()).stored),
      () => clients().removeClientSecret(clientId, 'deadbeef'),
      () => clients().renameClient(clientId, 'gone'),
    ]) {
      expect(await codeOf(attempt())).toBe('NOT_FOUND');
    }
  });
});

describeEachDynamo('the client store’s reads and writes on DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  const clientsOn = (client = dynamo.documentClient, clock?: Clock) =>
    createDynamoClientRepository({ client, tableName: dynamo.tables.accounts, ...(clock && { clock }) });
  const newClient = async (customerId: string) => {
    const clientId = newClientId();
    const secret = newClientSecret(new Date());
    await clientsOn().createClient({
      clientId,
      customerId,
      scopes: ['tracking:read'],
      secret: secret.stored,
    });
    return { clientId, secret };
  };
  const secretIds = async (clientId: string) =>
    (await clientsOn().findClient(clientId))?.secrets.map((secret) => secret.id);

  it('lists a customer’s clients by Queries of the byCustomer index, page after page: not another customer’s, nor its users', async () => {
    await createDynamoAccountRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.accounts,
    }).createUser({ username: 'gsi-member', passwordHash: '$2b$04$hash', customerId: 'C-gsi' });
    const ids = [(await newClient('C-gsi')).clientId, (await newClient('C-gsi')).clientId].sort();
    await newClient('C-gsi-other');
    // One client a page, so that the listing has to follow LastEvaluatedKey.
    const { sent, client } = recordSends(dynamo.documentClient, (command) => {
      if (command instanceof QueryCommand) {
        expect(command.input).toMatchObject({ IndexName: 'byCustomer' });
        command.input.Limit = 1;
      }
    });

    const listed = await clientsOn(client).listClients('C-gsi');

    expect(listed.map((found) => found.clientId)).toEqual(ids);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent)).toEqual(new Set(['QueryCommand']));
  });

  it('takes an added secret’s write the SDK sent again after its answer was lost as done: no refusal, one secret more', async () => {
    const { clientId, secret } = await newClient('C-resend');
    const next = newClientSecret(new Date(Date.now() + 1000));
    let lost = false;
    // The write applied, its answer lost: the SDK sends the same command again.
    const resending = interceptSends(dynamo.documentClient, async (command) => {
      if (lost || !(command instanceof UpdateCommand)) return;
      lost = true;
      await dynamo.documentClient.send(command);
    });

    const change = await clientsOn(resending).addClientSecret(clientId, next.stored);

    expect(lost).toBe(true);
    expect(change.after.secrets.map((stored) => stored.id)).toEqual([secret.stored.id, next.stored.id]);
    expect(await secretIds(clientId)).toEqual([secret.stored.id, next.stored.id]);
  });

  it('refuses a secret when another was added between its read and its write: CONFLICT, two live secrets stored', async () => {
    const { clientId, secret } = await newClient('C-race');
    const theirs = newClientSecret(new Date(Date.now() + 1000));
    const ours = newClientSecret(new Date(Date.now() + 2000));
    let raced = false;
    const racing = interceptSends(dynamo.documentClient, async (command) => {
      if (raced || !(command instanceof UpdateCommand)) return;
      raced = true;
      await clientsOn().addClientSecret(clientId, theirs.stored);
    });

    expect(await codeOf(clientsOn(racing).addClientSecret(clientId, ours.stored))).toBe('CONFLICT');
    expect(await secretIds(clientId)).toEqual([secret.stored.id, theirs.stored.id]);
  });

  it('keeps a live secret when both are removed at once: the removal that loses the race is refused CONFLICT', async () => {
    const { clientId, secret } = await newClient('C-race-remove');
    const next = newClientSecret(new Date(Date.now() + 1000));
    await clientsOn().addClientSecret(clientId, next.stored);
    let raced = false;
    const racing = interceptSends(dynamo.documentClient, async (command) => {
      if (raced || !(command instanceof UpdateCommand)) return;
      raced = true;
      await clientsOn().removeClientSecret(clientId, next.stored.id);
    });

    expect(await codeOf(clientsOn(racing).removeClientSecret(clientId, secret.stored.id))).toBe('CONFLICT');
    expect(await secretIds(clientId)).toEqual([secret.stored.id]);
  });

  it('writes a secret again once another change of the client beat its first write', async () => {
    const { clientId, secret } = await newClient('C-retry');
    const next = newClientSecret(new Date(Date.now() + 1000));
    const anHourOn = () => new Date(Date.now() + 3_600_000);
    let updates = 0;
    const racing = interceptSends(dynamo.documentClient, async (command) => {
      if (!(command instanceof UpdateCommand)) return;
      updates += 1;
      if (updates === 1) await clientsOn(dynamo.documentClient, anHourOn).renameClient(clientId, 'renamed');
    });

    const change = await clientsOn(racing).addClientSecret(clientId, next.stored);

    expect(updates).toBe(2);
    expect(change.before.name).toBe('renamed');
    expect(change.after).toEqual(await clientsOn().findClient(clientId));
    expect(await secretIds(clientId)).toEqual([secret.stored.id, next.stored.id]);
  });

  it('tells the authorizer the live secrets at its clock’s now: a secret drops out once its expiresAt passes', async () => {
    const { clientId, secret } = await newClient('C-status');
    const next = newClientSecret(new Date(Date.now() + 1000));
    const end = new Date(Date.now() + 60_000);
    await clientsOn().addClientSecret(clientId, next.stored, { expireOthersAt: end });
    const statusAt = async (at: Date) =>
      (await clientsOn(dynamo.documentClient, () => at).findClientStatus(clientId))?.secretIds;

    expect(await statusAt(new Date(end.getTime() - 1))).toEqual(new Set([secret.stored.id, next.stored.id]));
    expect(await statusAt(end)).toEqual(new Set([next.stored.id]));
  });
});

describeStoreContract('a user’s scopes on the account repository', ACCOUNT_STORES, (store) => {
  it('narrows a user’s scopes and gives every scope back, revoking the user’s tokens each time', async () => {
    const accounts = store()();
    await accounts.createUser({ username: 'scoped', passwordHash: '$2b$04$hash', customerId: null });
    const created = await accounts.findByUsername('scoped');
    expect(created?.scopes).toBeNull();
    await accounts.setUserScopes('scoped', ['tracking:read']);
    const narrowed = await accounts.findByUsername('scoped');
    expect(narrowed?.scopes).toEqual(['tracking:read']);
    expect(narrowed?.revokedBefore).toBeGreaterThan(created?.revokedBefore ?? 0);
    await accounts.setUserScopes('scoped', null);
    const restored = await accounts.findByUsername('scoped');
    expect(restored?.scopes).toBeNull();
    expect(restored?.revokedBefore).toBeGreaterThan(narrowed?.revokedBefore ?? 0);
    expect(await codeOf(accounts.setUserScopes('nobody-here', null))).toBe('NOT_FOUND');
  });
});
