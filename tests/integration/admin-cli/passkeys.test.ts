/**
 * The admin CLI's `user passkeys list|remove` and `customer policy` against the embedded
 * DynamoDB: an operator's recovery for an administrator who lost a passkey, or a customer its
 * own passkey policy locked out. Each change is an event of the customer's audit trail.
 */
import { describe, expect, it } from 'vitest';
import { createDynamoSecurityPolicies } from '../../../lib/accounts/dynamodb-policies.ts';
import { createDynamoPasskeyStore } from '../../../lib/passkeys/dynamodb.ts';
import { tableNames } from '../../../lib/stage.ts';
import { lines, unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const accounts = () => ({ client: cli.documentClient, tableName: tableNames('local').accounts });
const eventsOf = async (customerId: string) => (await cli.audit.list({ customerId, limit: 100 })).events;

/** An administrator with two passkeys, registered as the console registers them (the store's writes). */
async function administratorWithPasskeys() {
  const username = unique('passkey-admin');
  const customerId = unique('C');
  await adminOk(['user', 'add', username, '--customer', customerId], { password: 'correct horse battery' });
  await adminOk(['user', 'admin', 'grant', username]);
  const store = createDynamoPasskeyStore(accounts());
  await store.userHandle(username);
  for (const [passkeyId, name] of [
    ['bGFwdG9wLXBhc3NrZXktaWQ', 'Laptop'],
    ['cGhvbmUtcGFzc2tleS1pZA', 'Phone'],
  ] as const)
    await store.add({
      passkeyId,
      username,
      name,
      publicKey: 'cHVibGljLWtleQ',
      counter: 0,
      transports: ['internal'],
      backedUp: name === 'Phone',
      createdAt: new Date().toISOString(),
    });
  return { username, customerId };
}

describe('admin CLI: user passkeys', () => {
  it('lists a user’s passkeys as JSON Lines, never a key', async () => {
    const { username } = await administratorWithPasskeys();

    const listed = lines((await adminOk(['user', 'passkeys', 'list', username])).stdout).map((line) =>
      JSON.parse(line),
    );

    expect(listed).toEqual([
      {
        passkeyId: 'bGFwdG9wLXBhc3NrZXktaWQ',
        name: 'Laptop',
        createdAt: expect.any(String),
        lastUsedAt: null,
        synced: false,
      },
      {
        passkeyId: 'cGhvbmUtcGFzc2tleS1pZA',
        name: 'Phone',
        createdAt: expect.any(String),
        lastUsedAt: null,
        synced: true,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain('cHVibGljLWtleQ');
  });

  it('removes one passkey, or --all, each in the customer’s trail; an unknown one fails and changes nothing', async () => {
    const { username, customerId } = await administratorWithPasskeys();

    const one = await admin(['user', 'passkeys', 'remove', username, 'bGFwdG9wLXBhc3NrZXktaWQ'], {
      env: { AUDIT_ACTOR: 'jane.doe@carrier.example' },
    });
    expect(one).toMatchObject({ code: 0, stderr: [] });
    expect(one.stdout).toBe(`removed passkey bGFwdG9wLXBhc3NrZXktaWQ (Laptop) of user "${username}"`);
    const unknown = await admin(['user', 'passkeys', 'remove', username, 'bGFwdG9wLXBhc3NrZXktaWQ']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.join('\n')).toContain('has no passkey bGFwdG9wLXBhc3NrZXktaWQ');

    await adminOk(['user', 'passkeys', 'remove', username, '--all']);
    expect((await adminOk(['user', 'passkeys', 'list', username])).stdout).toBe('');
    expect(
      (await eventsOf(customerId))
        .filter((event) => event.type === 'passkey.removed')
        .map((event) => [event.passkeyId, event.actor]),
    ).toEqual([
      ['cGhvbmUtcGFzc2tleS1pZA', expect.stringMatching(/^operator:/)],
      ['bGFwdG9wLXBhc3NrZXktaWQ', 'operator:jane.doe@carrier.example'],
    ]);
  });

  it('takes either a passkey id or --all, and refuses an unknown user', async () => {
    const { username } = await administratorWithPasskeys();
    for (const args of [
      ['user', 'passkeys', 'remove', username],
      ['user', 'passkeys', 'remove', username, 'bGFwdG9wLXBhc3NrZXktaWQ', '--all'],
    ]) {
      const run = await admin(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.join('\n')).toContain('takes either <passkeyId> or --all');
    }
    expect((await admin(['user', 'passkeys', 'list', unique('nobody')])).code).toBe(1);
    expect(lines((await adminOk(['user', 'passkeys', 'list', username])).stdout)).toHaveLength(2);
  });
});

describe('admin CLI: customer policy', () => {
  it('turns a customer’s passkey policy off (and on), in its trail, and says when nothing changes', async () => {
    const { customerId } = await administratorWithPasskeys();
    const policies = createDynamoSecurityPolicies(accounts());
    await policies.set(
      customerId,
      { administratorsRequirePasskey: true, shipmentsWriteRequiresDpop: false },
      { actor: 'user:x', at: new Date() },
    );

    const off = await admin(['customer', 'policy', customerId, '--require-passkey', 'false']);
    expect(off).toMatchObject({ code: 0, stderr: [] });
    expect(off.stdout).toBe(`customer ${customerId}'s administrators may sign in with a password again`);
    await expect(policies.find(customerId)).resolves.toEqual({
      administratorsRequirePasskey: false,
      shipmentsWriteRequiresDpop: false,
    });
    const again = await adminOk(['customer', 'policy', customerId, '--require-passkey', 'false']);
    expect(again.stdout).toBe(`customer ${customerId}'s policy is already that; nothing changed`);
    await adminOk(['customer', 'policy', customerId, '--require-passkey', 'true']);
    await expect(policies.find(customerId)).resolves.toEqual({
      administratorsRequirePasskey: true,
      shipmentsWriteRequiresDpop: false,
    });

    expect(
      (await eventsOf(customerId))
        .filter((event) => event.type.startsWith('policy.'))
        .map((event) => event.type),
    ).toEqual(['policy.passkeys.required', 'policy.passkeys.optional']);
  });

  it('needs --require-passkey true or false', async () => {
    for (const args of [
      ['customer', 'policy', 'C-1'],
      ['customer', 'policy', 'C-1', '--require-passkey', 'yes'],
    ])
      expect((await admin(args)).code, args.join(' ')).toBe(2);
  });
});
