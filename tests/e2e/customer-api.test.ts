/**
 * The self-service API end to end: serverless-offline's API Gateway with the real authorizer in
 * front of the real function, administrators granted by the admin CLI as an operator does, and
 * every answer held to docs/openapi.yaml (tests/support/http.ts). The console drives the same
 * routes from a browser (tests/e2e/console.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { bearer, send } from '../support/http.ts';
import { addStackClient, stackAdmin } from '../support/stack-admin.ts';

const PASSWORD = 'a-long-e2e-password';
let stack: LocalStack;

const admin = (args: readonly string[], stdin?: string) => stackAdmin(stack, args, stdin);

async function user(username: string, customerId: string, administrator: boolean) {
  await admin(['user', 'add', username, '--customer', customerId], `${PASSWORD}\n`);
  if (administrator) await admin(['user', 'admin', 'grant', username]);
}

async function tokenOf(username: string) {
  const answer = await send(stack, 'POST', '/login', { body: { username, password: PASSWORD } });
  expect(answer.status).toBe(200);
  return String(answer.json.token);
}

beforeAll(async () => {
  stack = await startLocalStack();
  await user('e2e-admin-a', 'C-SELF-1', true);
  await user('e2e-admin-b', 'C-SELF-2', true);
  await user('e2e-plain', 'C-SELF-1', false);
});
afterAll(() => stack?.stop());

describe('the self-service API through the gateway', () => {
  it('gives an administrator a client whose secret works at the token endpoint and on the API, and lists it with its last use', async () => {
    const token = await tokenOf('e2e-admin-a');
    const made = await send(stack, 'POST', '/customer/clients', {
      body: { name: 'Shop backend', scopes: ['tracking:read', 'shipments:write'] },
      headers: bearer(token),
    });
    expect(made.status).toBe(201);
    const { client, clientSecret } = made.json as { client: { clientId: string }; clientSecret: string };
    expect(made.headers.get('location')).toBe(`${stack.baseUrl}/customer/clients/${client.clientId}`);

    const grant = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(grant.status).toBe(200);
    const machine = String(((await grant.json()) as { access_token: string }).access_token);
    expect((await send(stack, 'GET', '/tracking/00000000000000', { headers: bearer(machine) })).status).toBe(
      404,
    );

    // A client's token never administers, whatever its scopes.
    const byMachine = await send(stack, 'GET', '/customer/clients', { headers: bearer(machine) });
    expect(byMachine.status).toBe(403);

    const listed = await send(stack, 'GET', '/customer/clients', { headers: bearer(token) });
    expect(listed.status).toBe(200);
    const mine = (listed.json.clients as { clientId: string; lastUsedAt: string | null }[]).find(
      (entry) => entry.clientId === client.clientId,
    );
    expect(mine?.lastUsedAt).toEqual(expect.any(String));
  });

  it('shows an administrator of another customer nothing of this one’s: 404 as for an unknown id', async () => {
    const theirs = await addStackClient(stack, 'C-SELF-1', ['tracking:read']);
    const other = await tokenOf('e2e-admin-b');
    const answer = await send(stack, 'DELETE', `/customer/clients/${theirs.clientId}`, {
      headers: bearer(other),
    });
    expect(answer.status).toBe(404);
    const unknown = await send(stack, 'DELETE', '/customer/clients/pcl_00000000000000000000', {
      headers: bearer(other),
    });
    expect(answer.text).toBe(unknown.text);
    const audit = await send(stack, 'GET', '/customer/audit-events', { headers: bearer(other) });
    expect(JSON.stringify(audit.json)).not.toContain(theirs.clientId);
  });

  it('refuses a user the operator made no administrator with 403, and a request without a token with the gateway’s 401', async () => {
    const plain = await tokenOf('e2e-plain');
    const refused = await send(stack, 'GET', '/customer/clients', { headers: bearer(plain) });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('scope="customer:admin"');
    expect((await send(stack, 'GET', '/customer/audit-events')).status).toBe(401);
  });

  it('lets a token granted right after its client is enabled again work at once, though the authorizer had read it disabled', async () => {
    const token = await tokenOf('e2e-admin-a');
    const made = await send(stack, 'POST', '/customer/clients', {
      body: { name: 'Back again', scopes: ['tracking:read'] },
      headers: bearer(token),
    });
    const { client, clientSecret } = made.json as { client: { clientId: string }; clientSecret: string };
    const grant = async () => {
      const answer = await fetch(`${stack.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      });
      expect(answer.status).toBe(200);
      return String(((await answer.json()) as { access_token: string }).access_token);
    };
    const track = async (machine: string) =>
      (await send(stack, 'GET', '/tracking/00000000000000', { headers: bearer(machine) })).status;
    const setEnabled = async (enabled: boolean) =>
      expect(
        (
          await send(stack, 'PATCH', `/customer/clients/${client.clientId}`, {
            body: { enabled },
            headers: bearer(token),
          })
        ).status,
      ).toBe(200);
    const before = await grant();
    expect(await track(before)).toBe(404);
    await setEnabled(false);
    // Refused once the authorizer has read the client disabled: that state is now in its cache.
    await expect.poll(() => track(before), { timeout: 5_000, interval: 100 }).toBe(401);
    await setEnabled(true);
    expect(await track(await grant())).toBe(404);
  });

  it('ends an administration at the next call once the operator revokes it', async () => {
    await user('e2e-admin-c', 'C-SELF-3', true);
    const token = await tokenOf('e2e-admin-c');
    expect((await send(stack, 'GET', '/customer/clients', { headers: bearer(token) })).status).toBe(200);
    await admin(['user', 'admin', 'revoke', 'e2e-admin-c']);
    const after = await send(stack, 'GET', '/customer/clients', { headers: bearer(token) });
    // Revoking also revokes the user's tokens: 401 once the authorizer sees it, 403 from the function before.
    expect([401, 403]).toContain(after.status);
  });
});
