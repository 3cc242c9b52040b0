/**
 * The contract of the API client store (lib/clients/dynamodb.ts), on each DynamoDB
 * implementation and on the in-memory fake the unit tests use; then a user's narrowed scopes
 * on the account store.
 */
import { expect, it } from 'vitest';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import { newClientId, newClientSecret } from '../../lib/clients/clients.ts';
import { revocationCutoff } from '../../lib/revocation/revocation.ts';
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
    expect(await clients().exportClients()).toHaveLength(all.length);
  });

  it('holds two live secrets at most, and never fewer than one', async () => {
    const { clientId, secret } = await newClient();
    const second = newClientSecret(new Date(Date.now() + 1000));
    await clients().addClientSecret(clientId, second.stored);
    expect((await clients().findClient(clientId))?.secrets.map((s) => s.id)).toEqual([
      secret.stored.id,
      second.stored.id,
    ]);
    expect(await codeOf(clients().addClientSecret(clientId, newClientSecret(new Date()).stored))).toBe(
      'VALIDATION_FAILED',
    );
    await clients().removeClientSecret(clientId, secret.stored.id);
    expect((await clients().findClientStatus(clientId))?.secretIds).toEqual(new Set([second.stored.id]));
    expect(await codeOf(clients().removeClientSecret(clientId, second.stored.id))).toBe('VALIDATION_FAILED');
    expect(await codeOf(clients().removeClientSecret(clientId, secret.stored.id))).toBe('NOT_FOUND');
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
    ]) {
      expect(await codeOf(attempt())).toBe('NOT_FOUND');
    }
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
