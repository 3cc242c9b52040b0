import bcrypt from 'bcryptjs';
import { describe, expect, it } from 'vitest';
import {
  createPasswordVerifier,
  dummyHashAt,
  hashPassword,
  newPasswordProblem,
} from '../../lib/auth/passwords.ts';

const COST = 4;
const verifier = createPasswordVerifier({ cost: COST });

describe('password verifier', () => {
  it('accepts the password a hash was made from', async () => {
    await expect(
      verifier.verify('correct horse battery', await hashPassword('correct horse battery', COST)),
    ).resolves.toBe(true);
  });

  it('rejects any other password', async () => {
    await expect(
      verifier.verify('Correct horse battery', await hashPassword('correct horse battery', COST)),
    ).resolves.toBe(false);
  });

  it('rejects when there is no user, after a compare at the same cost', async () => {
    const compared: string[] = [];
    const original = bcrypt.compare;
    bcrypt.compare = ((password: string, hash: string) => {
      compared.push(hash);
      return original(password, hash);
    }) as typeof bcrypt.compare;
    try {
      await expect(verifier.verify('anything', null)).resolves.toBe(false);
    } finally {
      bcrypt.compare = original;
    }
    expect(compared).toHaveLength(1);
    expect(bcrypt.getRounds(compared[0] ?? '')).toBe(COST);
  });

  it('builds the dummy hash without hashing: well-formed, at the cost, matching nothing', async () => {
    const hashed: unknown[] = [];
    const original = bcrypt.hashSync;
    bcrypt.hashSync = ((...args: Parameters<typeof original>) => {
      hashed.push(args);
      return original(...args);
    }) as typeof bcrypt.hashSync;
    let dummy: string;
    try {
      createPasswordVerifier({ cost: 12 });
      dummy = dummyHashAt(12);
    } finally {
      bcrypt.hashSync = original;
    }
    expect(hashed).toEqual([]);
    expect(dummy).toMatch(/^\$2b\$12\$[./A-Za-z0-9]{53}$/);
    expect(bcrypt.getRounds(dummy)).toBe(12);
    expect(dummyHashAt(12)).not.toBe(dummy);
    const cheap = dummyHashAt(COST);
    for (const password of ['', 'password', 'a-long-test-password']) {
      await expect(bcrypt.compare(password, cheap)).resolves.toBe(false);
    }
  });

  it('never accepts a password over 72 bytes, even against its own hash', async () => {
    // 24 three-byte characters fill bcrypt's 72 bytes; bcrypt ignores what follows.
    const prefix = '€'.repeat(24);
    const hash = await bcrypt.hash(`${prefix}first`, COST);
    await expect(bcrypt.compare(`${prefix}second`, hash)).resolves.toBe(true);
    await expect(verifier.verify(`${prefix}second`, hash)).resolves.toBe(false);
    await expect(verifier.verify(`${prefix}first`, hash)).resolves.toBe(false);
  });

  it('accepts a multi-byte password of exactly 72 bytes', async () => {
    const password = `${'€'.repeat(23)}abc`;
    expect(Buffer.byteLength(password)).toBe(72);
    await expect(verifier.verify(password, await hashPassword(password, COST))).resolves.toBe(true);
  });

  it('asks to re-hash a hash made at any cost but the stage’s, lower or higher', async () => {
    const stage = createPasswordVerifier({ cost: COST + 1 });
    expect(stage.needsUpgrade(await hashPassword('some-password-here', COST))).toBe(true);
    expect(stage.needsUpgrade(await hashPassword('some-password-here', COST + 1))).toBe(false);
    expect(stage.needsUpgrade(await hashPassword('some-password-here', COST + 2))).toBe(true);
    expect(bcrypt.getRounds(await stage.hash('some-password-here'))).toBe(COST + 1);
  });
});

describe('new password rules', () => {
  it('refuses an empty password as empty, not as too short', () => {
    expect(newPasswordProblem('', 'alice')).toBe('the password is empty');
  });
});
