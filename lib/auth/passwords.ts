/**
 * Password hashing with bcrypt (bcryptjs).
 *
 * `verify` always spends one bcrypt compare at the stage's cost, whether or not the user
 * exists: an unknown username is compared against a dummy hash of the same cost, so response
 * time does not tell an attacker which usernames exist.
 *
 * A hash made at another cost than the stage's is re-hashed at the stage's cost on the user's
 * next successful login, when the password is at hand: a lower cost is weaker, and a higher
 * one makes that user's compares slower than the dummy hash's (telling the username apart
 * from unknown ones) and, far enough above, slower than the login timeout.
 *
 * bcrypt reads only the first 72 bytes of a password. A longer password can never match:
 * otherwise two passwords sharing their first 72 bytes would both log in.
 */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { foldUsername } from '../users/repository.ts';

export const BCRYPT_MAX_BYTES = 72;

/**
 * Control characters (NUL included), U+FFFD, which stands in for bytes that were not valid
 * UTF-8, and lone surrogates (`\ud800` in JSON), which are not text at all: no username or
 * password contains them, so they are refused before any hashing or lookup.
 */
export const NO_CONTROL_OR_INVALID = /^[^\p{Cc}\p{Cs}\uFFFD]*$/u;

export const passwordBytes = (password: string) => Buffer.byteLength(password, 'utf8');

export interface PasswordVerifier {
  /**
   * True only when `password` matches `hash`. With `hash` null (no such user) it compares
   * against the dummy hash and resolves false, taking as long as a real compare.
   */
  verify(password: string, hash: string | null): Promise<boolean>;
  /** True when `hash` was made at another cost than the stage's: re-hash it on the next login. */
  needsUpgrade(hash: string): boolean;
  /** A hash of `password` at the stage's cost. */
  hash(password: string): Promise<string>;
}

/** The fewest characters of a password set by an operator or an import, counted in code points. */
export const MIN_PASSWORD_CHARACTERS = 12;

/**
 * Why a new password (set by `user add`, `user passwd` or an import) is refused, or undefined:
 * - a control character or U+FFFD: login refuses such a password, so it could never be used;
 * - over 72 bytes in UTF-8: bcrypt reads only the first 72, so the rest would be silently
 *   ignored (login refuses such a password too);
 * - under 12 characters, counted in Unicode code points (what a person counts, not UTF-16 units);
 * - the username itself in any letter case or compatibility form: the first guess of anyone
 *   who knows the username.
 * Only passwords set here are held to the length and username rules; login checks neither,
 * so passwords set before them keep working. Never mentions the password or its length.
 */
export function newPasswordProblem(password: string, username: string): string | undefined {
  if (password === '') return 'the password is empty';
  // The same rule login applies (lib/auth/login.ts): a control character, or U+FFFD.
  if (!NO_CONTROL_OR_INVALID.test(password)) {
    return 'the password contains a control character or U+FFFD (login refuses such a password)';
  }
  if (passwordBytes(password) > BCRYPT_MAX_BYTES) {
    return (
      `the password is longer than ${BCRYPT_MAX_BYTES} bytes in UTF-8 (bcrypt would ignore the rest; ` +
      'a character outside ASCII takes 2 to 4 bytes)'
    );
  }
  if (Array.from(password).length < MIN_PASSWORD_CHARACTERS) {
    return `the password is shorter than ${MIN_PASSWORD_CHARACTERS} characters`;
  }
  if (foldUsername(password) === foldUsername(username)) {
    return 'the password is the username (compared ignoring letter case)';
  }
  return undefined;
}

/**
 * An existing bcrypt hash as another system stored it: `$2a$`, `$2b$` or `$2y$` (PHP's name
 * for `$2b$`), cost 4 to 31, 22 characters of salt and 31 of digest in bcrypt's base64.
 */
export const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** The cost a bcrypt hash was made at (the number after its prefix). */
export const bcryptCostOf = (hash: string): number => bcrypt.getRounds(hash);

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
    needsUpgrade: (hash) => bcryptCostOf(hash) !== cost,
    hash: (password) => hashPassword(password, cost),
  };
}
