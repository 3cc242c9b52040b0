/** The admin CLI's pickup address commands, and the depot code they give a customer's users. */
import { describe, expect, it } from 'vitest';
import { unique, useAdminCli } from '../../helpers/admin-cli.ts';

const cli = useAdminCli();
const { admin } = cli;

describe('admin CLI: pickup addresses', () => {
  it('appends addresses in order, an empty depot allowed, and users get the first non-empty depot', async () => {
    const customer = unique('CUST');
    const first = await admin(['address', 'add', customer, '--depot', '']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ customerId: customer, position: 1, depotCode: '' });

    const username = unique('grace');
    await admin(['user', 'add', username, '--customer', customer], { password: 'good pass word' });
    expect((await cli.local.findByUsername(username))?.depotCode).toBeNull();

    expect((await admin(['address', 'add', customer, '--depot=PRG01'])).code).toBe(0);
    expect((await admin(['address', 'add', customer, '--depot', 'BRN02'])).code).toBe(0);

    const listed = await admin(['address', 'list', customer]);
    expect(listed.code).toBe(0);
    const addresses = JSON.parse(listed.stdout) as { position: number; depotCode: string }[];
    expect(addresses.map(({ position, depotCode }) => [position, depotCode])).toEqual([
      [1, ''],
      [2, 'PRG01'],
      [3, 'BRN02'],
    ]);
    expect((await cli.local.findByUsername(username))?.depotCode).toBe('PRG01');
  });

  it('requires --depot and refuses an invalid customer or depot code with exit 2', async () => {
    for (const args of [
      ['address', 'add', 'C-1'],
      ['address', 'add', 'C-1', '--depot'],
      ['address', 'add', 'C 1', '--depot', 'X'],
      ['address', 'add', 'C-1', '--depot', 'no spaces'],
    ]) {
      const run = await admin(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toHaveLength(1);
    }
    expect(JSON.parse((await admin(['address', 'list', 'C-1'])).stdout)).toEqual([]);
  });
});
