/**
 * How the admin CLI fails: one line on stderr and an exit status, never a stack trace and
 * never a value that might be a password. Usage errors (a bad argument, an invalid value,
 * a refused password) exit 2; an operation that could not be done exits 1.
 */
import { isAppError } from '../../lib/errors.ts';

export class CliError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** The command line or an input value is not acceptable: exit 2. */
export const usageError = (message: string) => new CliError(message, 2);

/** The operation was refused or could not be done: exit 1. */
export const failure = (message: string) => new CliError(message, 1);

/**
 * A name for a message: JSON-quoted, with every control or format character escaped, so a
 * crafted name cannot move the cursor or hide text in an operator's terminal.
 */
export const quote = (text: string) =>
  JSON.stringify(text).replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (char) =>
    Array.from(
      { length: char.length },
      (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`,
    ).join(''),
  );

/**
 * A name from the input (a field, a column) for a message: as it is when it is letters,
 * digits and `_` only, else {@link quote}d; the segments of a path joined by dots.
 */
export const fieldName = (path: string | readonly string[]) =>
  (typeof path === 'string' ? [path] : path)
    .map((name) => (/^[A-Za-z0-9_]+$/.test(name) ? name : quote(name)))
    .join('.');

/** `Name (code): message` of an SDK or system error, on one line. */
export function oneLine(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code =
    'code' in error && typeof error.code === 'string' && error.code !== error.name ? error.code : '';
  const text = `${error.name}${code === '' ? '' : ` (${code})`}: ${error.message}`;
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
]);

/** True for a failure to reach a server at all, as opposed to an answer that refuses the call. */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TimeoutError') return true;
  const code = 'code' in error ? error.code : undefined;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return error instanceof AggregateError && error.errors.some(isUnreachable);
}

/** Where the accounts live, for the message of a DynamoDB failure. */
export interface DynamoPlace {
  /** Set for the local stack. */
  readonly endpoint?: string;
  readonly stage: string;
  readonly region: string;
}

/** The one line an operator sees for a failure that no command turned into a CliError. */
export function describeFailure(error: unknown, place: DynamoPlace | undefined): string {
  if (error instanceof CliError) return error.message;
  if (isAppError(error) && error.code === 'DEPENDENCY_UNAVAILABLE') {
    const cause = error.cause;
    if (place?.endpoint !== undefined) {
      return isUnreachable(cause)
        ? `DynamoDB is unavailable at ${place.endpoint} (is npm start running?)`
        : `DynamoDB at ${place.endpoint} failed (${oneLine(cause)}); is npm start running?`;
    }
    const where = place === undefined ? 'DynamoDB' : `DynamoDB of stage ${place.stage} (${place.region})`;
    return `${where} is unavailable: ${oneLine(cause)}`;
  }
  if (isAppError(error)) return error.detail ?? error.reason ?? error.code;
  return `unexpected failure: ${oneLine(error)}`;
}
