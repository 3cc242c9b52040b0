// One schema per variable the functions read, named as it: its parsing, and its bounds from
// lib/settings.ts. Each is a function that builds it when a reader asks, not a schema built at
// import: esbuild keeps a module's top-level calls, so a function's bundle would carry them all.
import * as v from 'valibot';
import * as settings from '../settings.ts';
import type { Bounds, Value } from './shape.ts';

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** A duration such as `90s`, `15m`, `24h` or `30d` as whole seconds; a number as itself. */
export function inSeconds(value: Value): number {
  if (typeof value !== 'string') return Number(value);
  return Number.parseInt(value.slice(0, -1), 10) * UNITS[value.slice(-1) as keyof typeof UNITS];
}

/** `schema`'s output within `limits`, each refusal naming the bound as the manifest writes it. */
function bounded<TSchema extends v.GenericSchema<string, number>>(schema: TSchema, limits: Bounds) {
  const { min, max } = limits;
  return v.pipe(
    schema,
    v.check((value: number) => min === undefined || value >= inSeconds(min), `must be at least ${min}`),
    v.check((value: number) => max === undefined || value <= inSeconds(max), `must be at most ${max}`),
  );
}

/** A duration, positive unless its least bound is zero. */
export function duration(limits: Bounds = {}) {
  const text =
    limits.min !== undefined && inSeconds(limits.min) === 0
      ? v.regex<string, string>(/^(0|[1-9]\d{0,6})[smhd]$/, 'must be a duration such as 0s, 30s, 15m or 24h')
      : v.regex<string, string>(
          /^[1-9]\d{0,6}[smhd]$/,
          'must be a positive duration such as 30s, 15m, 24h or 30d',
        );
  return bounded(
    v.pipe(
      v.string(),
      text,
      v.transform((seconds: string) => inSeconds(seconds)),
    ),
    limits,
  );
}

/** The text of a whole number. */
export function wholeNumber(message: string, limits: Bounds = {}) {
  return bounded(v.pipe(v.string(), v.regex(/^\d{1,6}$/, message), v.transform(Number)), limits);
}

/** What a throttle counter allows; 0 turns the counter off. */
const count = () => wholeNumber('must be a whole number (0 turns it off)');

const keySource = () =>
  v.pipe(
    v.string(),
    v.regex(/^(file:\/.+|ssm:\/.+)$/, 'must be file:/absolute/path or ssm:/parameter/name'),
    v.transform((text) => {
      const [scheme, ...rest] = text.split(':');
      const value = rest.join(':');
      return scheme === 'file'
        ? { kind: 'file' as const, path: value }
        : { kind: 'ssm' as const, name: value };
    }),
  );

const nonEmpty = () => v.pipe(v.string(), v.trim(), v.nonEmpty('must not be empty'));

export const STAGE = nonEmpty;
// Lambda sets it; the tests and the bench run outside Lambda.
export const AWS_REGION = () => v.optional(nonEmpty(), 'eu-central-1');
// The local stage passes the shell's LOG_LEVEL on, a name other tools use too: anything else is `info`.
export const LOG_LEVEL = () =>
  v.fallback(v.pipe(v.string(), v.toLowerCase(), v.picklist(['debug', 'info', 'warn', 'error'])), 'info');

export const TOKEN_ISSUER = () => v.pipe(nonEmpty(), v.url('must be a URL'));
// Space-separated; empty for none.
export const FORMER_TOKEN_ISSUERS = () =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.transform((text) => (text === '' ? [] : text.split(/\s+/))),
      v.check((urls) => urls.every((url) => URL.canParse(url)), 'must be URLs separated by spaces'),
    ),
    '',
  );
export const TOKEN_AUDIENCE = nonEmpty;
export const ACCESS_TOKEN_TTL = () => duration();
export const REFRESH_TOKEN_TTL = () => duration();
export const CLIENT_TOKEN_TTL = () => duration(settings.CLIENT_TOKEN_TTL);
export const SESSION_MAX_LIFETIME = () => duration();
export const REFRESH_REUSE_GRACE = () => duration(settings.REFRESH_REUSE_GRACE);
export const REVOCATION_CACHE_TTL = () => duration(settings.REVOCATION_CACHE_TTL);
export const KEY_RELOAD_INTERVAL = () => duration();
export const SIGNING_KEYRING = keySource;
export const VERIFICATION_KEYS = keySource;
export const BCRYPT_COST = () => wholeNumber('must be a whole number', settings.BCRYPT_COST);

export const LOGIN_FAILURE_LIMIT = count;
export const LOGIN_FAILURE_WINDOW = () => duration();
export const IP_FAILURE_LIMIT = count;
export const IP_FAILURE_WINDOW = () => duration();
export const CLIENT_IP_FAILURE_LIMIT = count;
export const CLIENT_IP_FAILURE_WINDOW = () => duration();
export const LOGIN_INFLIGHT_LIMIT = () =>
  wholeNumber('must be a whole number', settings.LOGIN_INFLIGHT_LIMIT);
export const KNOWN_SOURCE_PERIOD = () => duration(settings.KNOWN_SOURCE_PERIOD);
export const LOGIN_LOCKOUT_BASE = () => duration();
export const LOGIN_LOCKOUT_MAX = () => duration(settings.LOGIN_LOCKOUT_MAX);

// The published limits (RateLimit-Policy) of API Gateway's login routes and the web ACL.
export const LOGIN_RATE_LIMIT = () =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,6}(\.\d{1,3})?$/, 'must be a number of requests per second'),
    v.transform(Number),
  );
export const WAF_ENABLED = () => v.picklist(['true', 'false'], "must be 'true' or 'false'");
export const WAF_LOGIN_RATE_LIMIT = count;

export const DYNAMODB_ENDPOINT = () =>
  v.optional(
    v.union([v.literal(''), v.pipe(v.string(), v.url('must be a URL'))], 'must be empty or a URL'),
    '',
  );
export const ACCOUNTS_TABLE = nonEmpty;
export const SESSIONS_TABLE = nonEmpty;
export const LOGIN_THROTTLE_TABLE = nonEmpty;
export const SHIPMENTS_TABLE = nonEmpty;
export const AUDIT_TABLE = nonEmpty;
export const AUDIT_RETENTION = () => duration(settings.AUDIT_RETENTION);
