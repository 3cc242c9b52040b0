/** The admin CLI's pickup address commands, and the depot code they give a customer's users. */
import { describe, expect, it } from 'vitest';
import { unique, useAdminCli } from '../../support/admin-cli.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

const depotCodeOf = async (username: string) => (await cli.local.findByUsername(username))?.depotCode;

describe('admin CLI: pickup addresses', () => {
  it('address add appends a first address, an empty depot allowed, at position 1', async () => {
    const customer = unique('CUST');

    const first = await admin(['address', 'add', customer, '--depot', '']);

    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ customerId: customer, position: 1, depotCode: '' });
  });

  it('user add gives a user of a customer with no non-empty depot no depot code', async () => {
    const customer = unique('CUST');
    await adminOk(['address', 'add', customer, '--depot', '']);
    const username = unique('grace');

    await admin(['user', 'add', username, '--customer', customer], { password: 'good pass word' });

    expect(await depotCodeOf(username)).toBeNull();
  });

  it('address list lists the addresses in the order they were added, either --depot form', async () => {
    const customer = unique('CUST');
    await adminOk(['address', 'add', customer, '--depot', '']);
    await adminOk(['address', 'add', customer, '--depot=PRG01']);
    await adminOk(['address', 'add', customer, '--depot', 'BRN02']);

    const listed = await admin(['address', 'list', customer]);

    expect(listed.code).toBe(0);
    const addresses = JSON.parse(listed.stdout) as { position: number; depotCode: string }[];
    expect(addresses.map(({ position, depotCode }) => [position, depotCode])).toEqual([
      [1, ''],
      [2, 'PRG01'],
      [3, 'BRN02'],
    ]);
  });

  it('address add gives the customer’s existing users the first non-empty depot', async () => {
    const customer = unique('CUST');
    await adminOk(['address', 'add', customer, '--depot', '']);
    const username = unique('grace');
    await adminOk(['user', 'add', username, '--customer', customer], { password: 'good pass word' });

    await admin(['address', 'add', customer, '--depot=PRG01']);

    expect(await depotCodeOf(username)).toBe('PRG01');
  });

  it('address add of a later depot leaves the users the first non-empty one', async () => {
    const customer = unique('CUST');
    await adminOk(['address', 'add', customer, '--depot', '']);
    const username = unique('grace');
    await adminOk(['user', 'add', username, '--customer', customer], { password: 'good pass word' });
    await adminOk(['address', 'add', customer, '--depot=PRG01']);

    await admin(['address', 'add', customer, '--depot', 'BRN02']);

    expect(await depotCodeOf(username)).toBe('PRG01');
  });

  it('address add requires --depot and refuses an invalid customer or depot code with exit 2', async () => {
    const invocations = [
      ['address', 'add', 'C-1'],
      ['address', 'add', 'C-1', '--depot'],
      ['address', 'add', 'C 1', '--depot', 'X'],
      ['address', 'add', 'C-1', '--depot', 'no spaces'],
    ];

    const runs = [];
    for (const args of invocations) runs.push(await admin(args));

    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
    }
    expect(JSON.parse((await admin(['address', 'list', 'C-1'])).stdout)).toEqual([]);
  });
});
