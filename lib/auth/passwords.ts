/** Password hashing with bcrypt (bcryptjs); the password rules are in docs/behaviour.md. */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { foldUsername } from '../accounts/repository.ts';

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
   * against a dummy hash of the stage's cost, so timing does not tell which usernames exist.
   * A password over 72 bytes never matches: bcrypt would ignore the rest.
   */
  verify(password: string, hash: string | null): Promise<boolean>;
  /**
   * True when `hash` was made at another cost than the stage's: a lower one is weaker, a
   * higher one slower than the dummy hash's compare (telling the username apart).
   */
  needsUpgrade(hash: string): boolean;
  /** A hash of `password` at the stage's cost. */
  hash(password: string): Promise<string>;
}

/** The fewest characters of a password set by an operator or an import, counted in code points. */
export const MIN_PASSWORD_CHARACTERS = 12;

/**
 * Why a new password (`user add`, `user passwd`, an import) is refused, or undefined. Login
 * checks only the control-character and 72-byte rules, so older passwords keep working. The
 * message never mentions the password or its length.
 */
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

/**
 * A well-formed hash at `cost` that no password is known to match. A compare against it costs
 * what a real one does; building it costs nothing, unlike hashing a throwaway at cold start.
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
