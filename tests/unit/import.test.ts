/**
 * How an import decides about a user the table holds already (ops/accounts/bulk.ts planUser),
 * with real bcrypt at its lowest cost: never overwritten, and a password changed or re-hashed
 * here since is no failure.
 */
import bcrypt from 'bcryptjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { passwordHashDigest } from '../../lib/accounts/repository.ts';
import { type ExistingUser, emptySummary, planUser, type UserImportRecord } from '../../ops/accounts/bulk.ts';

const PASSWORD = 'legacy-password-1';
const samePassword = (password: string, hash: string) => bcrypt.compare(password, hash);

let legacy: string;
let upgraded: string;
let changed: string;
beforeAll(async () => {
  // A legacy PHP hash, the same password re-hashed by a login, and a password set since.
  legacy = (await bcrypt.hash(PASSWORD, 4)).replace(/^\$2b\$/, '$2y$');
  upgraded = await bcrypt.hash(PASSWORD, 5);
  changed = await bcrypt.hash('a-password-set-here', 5);
});

const record = (fields: Partial<UserImportRecord> = {}): UserImportRecord => ({
  type: 'user',
  username: 'eshop-brno',
  customerId: 'C-2001',
  enabled: true,
  passwordHash: legacy,
  ...fields,
});

const stored = (fields: Partial<ExistingUser> = {}): ExistingUser => ({
  username: 'eshop-brno',
  passwordHash: legacy,
  upgradedFromHash: null,
  passwordSet: false,
  enabled: true,
  customerId: 'C-2001',
  hasMembership: true,
  ...fields,
});

const KEPT = { outcome: 'kept', reason: 'user exists with a password set since (left as it is)' };
const ANOTHER = { outcome: 'failed', reason: 'user exists with another password (left as it is)' };

describe('an imported user met again', () => {
  it('is unchanged when the table holds the record’s hash', async () => {
    expect(await planUser(record(), stored(), samePassword)).toEqual({ outcome: 'unchanged' });
  });

  it('is unchanged when a login re-hashed the record’s hash: the user keeps the digest of the hash replaced', async () => {
    const afterLogin = stored({ passwordHash: upgraded, upgradedFromHash: passwordHashDigest(legacy) });

    expect(await planUser(record(), afterLogin, samePassword)).toEqual({ outcome: 'unchanged' });
  });

  it('is kept, not failed, when its password was set here since, whatever the login re-hashed before', async () => {
    const afterPasswd = stored({ passwordHash: changed, passwordSet: true });
    // A digest of another hash than the record's names another password.
    const afterOtherUpgrade = stored({
      passwordHash: upgraded,
      upgradedFromHash: passwordHashDigest(changed),
      passwordSet: true,
    });

    expect(await planUser(record(), afterPasswd, samePassword)).toEqual({
      ...KEPT,
      completesMembership: false,
    });
    expect(await planUser(record(), afterOtherUpgrade, samePassword)).toMatchObject(KEPT);
  });

  it('takes the digest for the hash it is made of only, never for a hash itself', async () => {
    const digestAsHash = stored({ passwordHash: upgraded, upgradedFromHash: legacy });

    expect(await planUser(record(), digestAsHash, samePassword)).toEqual(ANOTHER);
  });

  it('fails a user whose password differs though none was set here since: another file, or another stage', async () => {
    expect(await planUser(record(), stored({ passwordHash: changed }), samePassword)).toEqual(ANOTHER);
  });

  it('compares a plain password with the stored hash, re-hashed or set since', async () => {
    const plain = record({ passwordHash: undefined, password: PASSWORD });

    expect(await planUser(plain, stored({ passwordHash: upgraded }), samePassword)).toEqual({
      outcome: 'unchanged',
    });
    expect(
      await planUser(plain, stored({ passwordHash: changed, passwordSet: true }), samePassword),
    ).toMatchObject(KEPT);
  });

  it('completes the missing membership of a user it keeps, and of one unchanged', async () => {
    const interrupted = { hasMembership: false };

    expect(
      await planUser(
        record(),
        stored({ ...interrupted, passwordHash: changed, passwordSet: true }),
        samePassword,
      ),
    ).toEqual({
      ...KEPT,
      completesMembership: true,
    });
    expect(await planUser(record(), stored(interrupted), samePassword)).toEqual({ outcome: 'updated' });
  });

  it('fails a user with another enabled or customer, also when its password was set since', async () => {
    const failed = { outcome: 'failed', reason: 'user exists with other data (left as it is)' };

    for (const other of [{ enabled: false }, { customerId: 'C-2002' }, { customerId: null }]) {
      expect(await planUser(record(), stored(other), samePassword)).toEqual(failed);
      expect(await planUser(record(), stored({ ...other, passwordHash: changed }), samePassword)).toEqual(
        failed,
      );
    }
  });

  it('fails the same name in another letter case, whatever its password', async () => {
    const other = stored({ username: 'Eshop-Brno', passwordHash: changed });

    expect(await planUser(record(), other, samePassword)).toEqual({
      outcome: 'failed',
      reason: 'username exists in another letter case (Eshop-Brno)',
    });
  });

  it('counts kept users in the summary from zero, apart from the failed ones', () => {
    expect(emptySummary()).toEqual({ created: 0, unchanged: 0, updated: 0, skipped: 0, failed: 0, kept: 0 });
  });
});
