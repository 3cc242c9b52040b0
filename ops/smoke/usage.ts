/**
 * The smoke test's command line, parsed by commander: `--base-url`, `--timeout`,
 * `--allow-insecure-http`, `--help`. Credentials come from the environment only; commander's
 * own messages are replaced by ours, since some repeat an argument and a mistaken invocation
 * may carry a password.
 */
import { Command, type CommanderError } from 'commander';
import { ACCESS_TOKEN_TYPE, REFRESH_TOKEN_TYPE } from '../../lib/tokens/claims.ts';
import { MISSING_PARCEL_NUMBER } from './checks.ts';

export const DEFAULT_TIMEOUT_SECONDS = 10;

const CHECKS = `A non-destructive smoke test of a deployed parcel-auth stage (or of npm start). It logs in as
a test user and runs these checks, in order:
  1 login                   POST /api/v1/login answers 200 with token and refreshToken: JWTs
                            whose header has alg EdDSA and typ ${ACCESS_TOKEN_TYPE}, ${REFRESH_TOKEN_TYPE}
  2 login-extended          POST /api/v1/login-extended answers 200 with both tokens, userName
                            equal to SMOKE_USERNAME, a depotCode string, an expireAt in the future
  3 access token allowed    GET /api/v1/tracking/${MISSING_PARCEL_NUMBER} with the access token gets
                            past the authorizer to the function's own 404 problem+json (parcel
                            numbers never start with 0: nothing is found, nothing is created)
  4 refresh token refused   the same call with the refresh token as Bearer token: 401
  5 tampered token refused  the same call with one character of the access token's signature
                            changed: 401`;

const AFTER = `
Environment (credentials are never arguments)
  SMOKE_USERNAME            the test user, exact case; it needs a customer with a depot code
                            (login-extended answers 403 without a customer)
  SMOKE_PASSWORD            its password; never printed

What it does not do
  - It never tries a wrong password: a failed login counts towards the test user's lockout
    and its source address's. If the first login is refused (401) or throttled (429), it
    does not log in again, so a run with bad credentials costs one failed attempt.
  - It logs in exactly twice per run (login is rate-limited per user and per address), so it
    starts two sessions, and leaves them to expire on their own: it calls neither refresh
    (which rotates the refresh token, a write) nor logout. It creates no shipment. The only
    writes are those of every login (the session, the attempt counters, and the upgrade of a
    password hash made at a lower bcrypt cost).

Example
  export SMOKE_USERNAME=smoke-prod
  read -rs SMOKE_PASSWORD && export SMOKE_PASSWORD     # typed, not echoed, not in the history
  npm run smoke -- --base-url https://abc123.execute-api.eu-central-1.amazonaws.com/prod

Output: one line per check (pass, FAIL or skip; the check; the HTTP status; the duration in
ms; a reason), never a token or the password.
Exit status: 0 every check passed, 1 a check failed or was skipped, 2 a usage error.`;

export interface SmokeSettings {
  /** The API root: the base URL's origin and path, ending in /api/v1, no trailing slash. */
  readonly api: string;
  readonly username: string;
  readonly password: string;
  readonly timeoutMs: number;
  /** True when credentials would cross the network unencrypted (http to a non-loopback host). */
  readonly plainHttp: boolean;
}

export type Invocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string }
  | { readonly kind: 'run'; readonly settings: SmokeSettings };

const usageError = (message: string): Invocation => ({ kind: 'usage-error', message });

/** Thrown from commander's exit: a usage error's message, or help shown (message ''). */
class Stop extends Error {}

/** A value option given once, not empty (commander keeps the last, and takes '' as a value). */
const once = (name: string) => (value: string, previous: string | undefined) => {
  if (value === '') throw new Stop(`--${name} needs a value`);
  if (previous !== undefined) throw new Stop(`--${name} is given twice`);
  return value;
};

/** Our message for commander's error, never repeating an argument. */
function translate(error: CommanderError): never {
  switch (error.code) {
    case 'commander.helpDisplayed':
      throw new Stop('');
    case 'commander.excessArguments':
      throw new Stop(
        'unexpected argument; credentials go in SMOKE_USERNAME and SMOKE_PASSWORD, never in arguments',
      );
    case 'commander.optionMissingArgument':
      throw new Stop(`${/--[a-z-]+/.exec(error.message)?.[0] ?? 'an option'} needs a value`);
    case 'commander.unknownOption': {
      const given = /^error: unknown option '(.*)'$/s.exec(error.message)?.[1] ?? '';
      const name = given.split('=')[0] ?? '';
      if (given.includes('=') && (name === '--help' || name === '--allow-insecure-http'))
        throw new Stop(`${name} takes no value`);
      throw new Stop(`unknown option ${/^-{1,2}[\w-]{1,40}$/.test(name) ? name : ''}`.trim());
    }
    default:
      throw new Stop('the command line is not valid');
  }
}

/** The smoke test's program: its options, and its help (USAGE). */
function smokeProgram(write: (text: string) => void): Command {
  return (
    new Command('npm run smoke --')
      .usage('--base-url <url> [--timeout <seconds>] [--allow-insecure-http]')
      .description(CHECKS)
      .option(
        '--base-url <url>',
        "the stage's address, http or https: the API Gateway invoke URL with its stage " +
          '(https://<id>.execute-api.<region>.amazonaws.com/<stage>), a custom domain, or ' +
          'http://127.0.0.1:3000 for npm start; a trailing /api/v1 and trailing slashes are accepted',
        once('base-url'),
      )
      .option(
        '--timeout <seconds>',
        `the limit of each request (default ${DEFAULT_TIMEOUT_SECONDS})`,
        once('timeout'),
      )
      .option(
        '--allow-insecure-http',
        'send the credentials over plain http to a host that is not loopback; refused without it, ' +
          'since the password would cross the network unencrypted',
      )
      .helpOption('-h, --help', 'this text')
      .addHelpText('after', AFTER)
      // Our messages name the option alone (translate reads it from commander's, unsuggested).
      .showSuggestionAfterError(false)
      .configureHelp({ helpWidth: 100 })
      .configureOutput({ writeOut: write, writeErr: write, outputError: () => {} })
      .exitOverride(translate)
  );
}

/** The help text. */
export const USAGE: string = (() => {
  let text = '';
  const program = smokeProgram((out) => {
    text += out;
  });
  program.outputHelp();
  return text.trimEnd();
})();

/** Parses argv and the credentials from env; never puts an argument's value in a message. */
export function parseInvocation(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Invocation {
  const program = smokeProgram(() => {});
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    return error.message === '' ? { kind: 'help' } : usageError(error.message);
  }
  const values = program.opts<{ baseUrl?: string; timeout?: string; allowInsecureHttp?: boolean }>();
  const allowInsecureHttp = values.allowInsecureHttp === true;

  if (values.baseUrl === undefined) return usageError('--base-url is required');
  const target = parseBaseUrl(values.baseUrl);
  if (typeof target === 'string') return usageError(target);
  if (target.plainHttp && !allowInsecureHttp) {
    return usageError(
      'plain http to a host that is not loopback would send the password unencrypted: use https, or --allow-insecure-http',
    );
  }

  let timeoutMs = DEFAULT_TIMEOUT_SECONDS * 1000;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!/^\d+(\.\d+)?$/.test(values.timeout) || !(seconds > 0 && seconds <= 300)) {
      return usageError('--timeout must be a number of seconds, more than 0 and at most 300');
    }
    timeoutMs = Math.round(seconds * 1000);
  }

  const username = env.SMOKE_USERNAME;
  const password = env.SMOKE_PASSWORD;
  const missing = [
    ...(username === undefined || username === '' ? ['SMOKE_USERNAME'] : []),
    ...(password === undefined || password === '' ? ['SMOKE_PASSWORD'] : []),
  ];
  if (username === undefined || password === undefined || missing.length > 0) {
    return usageError(`set ${missing.join(' and ')} in the environment (the test user's credentials)`);
  }
  return { kind: 'run', settings: { ...target, username, password, timeoutMs } };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** The API root of a base URL, or why the URL is not acceptable. */
export function parseBaseUrl(text: string): Pick<SmokeSettings, 'api' | 'plainHttp'> | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return '--base-url is not a URL (expected e.g. https://api.example.com/prod)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return '--base-url must be http or https';
  if (url.username !== '' || url.password !== '') {
    return '--base-url must not contain credentials; use SMOKE_USERNAME and SMOKE_PASSWORD';
  }
  if (url.search !== '' || url.hash !== '') return '--base-url must not have a query or a fragment';
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return {
    api: `${url.origin}${path}/api/v1`,
    plainHttp: url.protocol === 'http:' && !LOOPBACK.test(url.hostname),
  };
}
