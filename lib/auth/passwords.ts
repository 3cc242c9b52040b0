/**
 * Password hashing with bcrypt (bcryptjs).
 *
 * `verify` always spends one bcrypt compare at the stage's cost, whether or not the user
 * exists: an unknown username is compared against a dummy hash of the same cost, so response
 * time does not tell an attacker which usernames exist.
 *
 * A hash made at a lower cost than the stage's is upgraded on the user's next successful
 * login, when the password is at hand.
 *
 * bcrypt reads only the first 72 bytes of a password. A longer password can never match:
 * otherwise two passwords sharing their first 72 bytes would both log in.
 */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';

export const BCRYPT_MAX_BYTES = 72;

export const passwordBytes = (password: string) => Buffer.byteLength(password, 'utf8');

export interface PasswordVerifier {
  /**
   * True only when `password` matches `hash`. With `hash` null (no such user) it compares
   * against the dummy hash and resolves false, taking as long as a real compare.
   */
  verify(password: string, hash: string | null): Promise<boolean>;
  /** True when `hash` was made at a lower cost than the stage's: upgrade it on the next login. */
  needsUpgrade(hash: string): boolean;
  /** A hash of `password` at the stage's cost. */
  hash(password: string): Promise<string>;
}

/** A bcrypt hash of `password` at `cost` (the stage's cost: see serverless.yml `bcryptCost`). */
export const hashPassword = (password: string, cost: number): Promise<string> => bcrypt.hash(password, cost);

/** bcrypt's own base64 alphabet. */
const BCRYPT_BASE64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A well-formed hash at `cost` that no password is known to match: a random salt and a random
 * 31-character digest. A compare against it costs exactly what a real one does (bcrypt
 * derives the digest from the salt and cost, then compares), and building it costs nothing:
 * hashing a throwaway password at init would add a whole bcrypt run to every cold start.
 */
export function dummyHashAt(cost: number): string {
  const digest = Array.from(randomBytes(31), (byte) => BCRYPT_BASE64[byte & 63]).join('');
  return `${bcrypt.genSaltSync(cost)}${digest}`;
}

export function createPasswordVerifier({ cost }: { readonly cost: number }): PasswordVerifier {
  const dummyHash = dummyHashAt(cost);
  return {
    async verify(password, hash) {
      const tooLong = passwordBytes(password) > BCRYPT_MAX_BYTES;
      const matches = await bcrypt.compare(password, hash === null || tooLong ? dummyHash : hash);
      return matches && hash !== null && !tooLong;
    },
    needsUpgrade: (hash) => bcrypt.getRounds(hash) < cost,
    hash: (password) => hashPassword(password, cost),
  };
}
