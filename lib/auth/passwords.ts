/** Password hashing with bcrypt (bcryptjs); the password rules are in docs/behaviour.md. */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { foldUsername } from '../accounts/username-key.ts';

export const BCRYPT_MAX_BYTES = 72;

// Control characters, U+FFFD (bytes that were not UTF-8) and lone surrogates: in no username or
// password, so refused before any hashing or lookup (docs/behaviour.md, "Request limits").
export const NO_CONTROL_OR_INVALID = /^[^\p{Cc}\p{Cs}\uFFFD]*$/u;

export const passwordBytes = (password: string) => Buffer.byteLength(password, 'utf8');

export interface PasswordVerifier {
  /**
   * A null `hash` (no such user) is compared against a dummy of the stage's cost, so timing hides which
   * usernames exist; over 72 bytes never matches, as bcrypt would ignore the rest.
   */
  verify(password: string, hash: string | null): Promise<boolean>;
  /** Another cost than the stage's: a lower is weaker, a higher slower than the dummy's compare. */
  needsUpgrade(hash: string): boolean;
  hash(password: string): Promise<string>;
}

/** For passwords set by an operator or an import; counted in code points. */
export const MIN_PASSWORD_CHARACTERS = 12;

/** Never quotes the password. Login checks only control characters and 72 bytes: old passwords still work. */
export function newPasswordProblem(password: string, username: string): string | undefined {
  if (password === '') return 'the password is empty';
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

/** An imported bcrypt hash: `$2a$`, `$2b$` or `$2y$` (PHP's `$2b$`), cost 4 to 31. */
export const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

export const bcryptCostOf = (hash: string): number => bcrypt.getRounds(hash);

export const hashPassword = (password: string, cost: number): Promise<string> => bcrypt.hash(password, cost);

const BCRYPT_BASE64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** No password is known to match; compares as slowly as a real hash, but costs nothing to build at init. */
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
