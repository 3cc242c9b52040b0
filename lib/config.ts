/**
 * Stage settings, read from the environment once per container and validated with valibot.
 * A missing or malformed value fails the container at init with a message naming the
 * variable, never a request later. Each function reads only the section it needs, so the
 * authorizer does not depend on table names and the login functions do not depend on
 * the verification key set.
 */
import * as v from 'valibot';

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** A duration such as `90s`, `15m`, `24h` or `30d`, as whole seconds. */
export const DurationSchema = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,6}[smhd]$/, 'must be a positive duration such as 30s, 15m, 24h or 30d'),
  v.transform((text) => Number.parseInt(text.slice(0, -1), 10) * UNITS[text.slice(-1) as keyof typeof UNITS]),
);

/** A duration that may be zero (`0s`): a window or cache that can be switched off. */
export const OptionalDurationSchema = v.pipe(
  v.string(),
  v.regex(/^(0|[1-9]\d{0,6})[smhd]$/, 'must be a duration such as 0s, 30s, 15m or 24h'),
  v.transform((text) => Number.parseInt(text.slice(0, -1), 10) * UNITS[text.slice(-1) as keyof typeof UNITS]),
);

/** Where key material lives: a file (local stage) or an SSM parameter (AWS stages). */
export type KeySource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'ssm'; readonly name: string };

const KeySourceSchema = v.pipe(
  v.string(),
  v.regex(/^(file:\/.+|ssm:\/.+)$/, 'must be file:/absolute/path or ssm:/parameter/name'),
  v.transform((text): KeySource => {
    const [scheme, ...rest] = text.split(':');
    const value = rest.join(':');
    return scheme === 'file' ? { kind: 'file', path: value } : { kind: 'ssm', name: value };
  }),
);

const NonEmpty = v.pipe(v.string(), v.trim(), v.nonEmpty('must not be empty'));
const OptionalUrl = v.optional(
  v.union([v.literal(''), v.pipe(v.string(), v.url('must be a URL'))], 'must be empty or a URL'),
  '',
);

const TokenEnv = {
  STAGE: NonEmpty,
  TOKEN_ISSUER: v.pipe(NonEmpty, v.url('must be a URL')),
  TOKEN_AUDIENCE: NonEmpty,
  ACCESS_TOKEN_TTL: DurationSchema,
};

const RefreshTokenEnv = {
  ...TokenEnv,
  REFRESH_TOKEN_TTL: DurationSchema,
};

const DataEnv = {
  AWS_REGION: v.optional(NonEmpty, 'eu-central-1'),
  DYNAMODB_ENDPOINT: OptionalUrl,
};

/** How long a container keeps key material before it reads it again. */
const KeyReloadEnv = { KEY_RELOAD_INTERVAL: DurationSchema };

/** What every function that starts or continues a session needs. */
const SessionEnv = {
  ...RefreshTokenEnv,
  ...DataEnv,
  ...KeyReloadEnv,
  ACCOUNTS_TABLE: NonEmpty,
  SESSIONS_TABLE: NonEmpty,
  SIGNING_KEYRING: KeySourceSchema,
  SESSION_MAX_LIFETIME: DurationSchema,
};

/** A count such as a failure limit: a whole number, 0 turning the defence off. */
const CountSchema = v.pipe(
  v.string(),
  v.regex(/^\d{1,6}$/, 'must be a whole number (0 turns it off)'),
  v.transform(Number),
);

const LoginEnvSchema = v.object({
  ...SessionEnv,
  LOGIN_GUARD_TABLE: NonEmpty,
  LOGIN_FAILURE_LIMIT: CountSchema,
  LOGIN_FAILURE_WINDOW: DurationSchema,
  IP_FAILURE_LIMIT: CountSchema,
  IP_FAILURE_WINDOW: DurationSchema,
  LOGIN_LOCKOUT_BASE: DurationSchema,
  // A lock always ends, and soon: the longest is a day.
  LOGIN_LOCKOUT_MAX: v.pipe(DurationSchema, v.maxValue(86_400, 'must be at most 24h')),
  BCRYPT_COST: v.pipe(
    v.string(),
    v.regex(/^\d{1,2}$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(4, 'must be at least 4'),
    v.maxValue(15, 'must be at most 15'),
  ),
});

const RefreshEnvSchema = v.object({
  ...SessionEnv,
  VERIFICATION_KEYS: KeySourceSchema,
  // A grace window is for a lost answer's retry; a long one would let a thief in as well.
  REFRESH_REUSE_GRACE: v.pipe(OptionalDurationSchema, v.maxValue(60, 'must be at most 60s')),
});

const LogoutEnvSchema = v.object({
  ...RefreshTokenEnv,
  ...DataEnv,
  ...KeyReloadEnv,
  SESSIONS_TABLE: NonEmpty,
  VERIFICATION_KEYS: KeySourceSchema,
});

const AuthorizerEnvSchema = v.object({
  ...TokenEnv,
  ...DataEnv,
  ...KeyReloadEnv,
  ACCOUNTS_TABLE: NonEmpty,
  VERIFICATION_KEYS: KeySourceSchema,
  REVOCATION_CACHE_TTL: OptionalDurationSchema,
});

const JwksEnvSchema = v.object({
  AWS_REGION: DataEnv.AWS_REGION,
  ...KeyReloadEnv,
  VERIFICATION_KEYS: KeySourceSchema,
});

const ShipmentsEnvSchema = v.object({
  ...DataEnv,
  SHIPMENTS_TABLE: NonEmpty,
});

export type Env = Readonly<Record<string, string | undefined>>;

export interface TokenSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly accessTtlSeconds: number;
}

export type RefreshTokenSettings = TokenSettings & { readonly refreshTtlSeconds: number };

export interface DataSettings {
  readonly region: string;
  /** Set on the local stage only; empty means the regional AWS endpoint. */
  readonly dynamodbEndpoint: string | undefined;
}

/** Key material and how often a container reads it again. */
export interface KeySettings<TSources> {
  readonly sources: TSources;
  readonly reloadMs: number;
}

/** A session's bounds (lib/auth/sessions.ts). */
export interface SessionSettings {
  /** The absolute lifetime of a family, from its login. */
  readonly maxLifetimeSeconds: number;
  /** How long the immediately previous refresh token may be presented again; 0 = never. */
  readonly reuseGraceSeconds: number;
}

/** One failed-login counter's rule (lib/auth/throttle.ts). */
export interface ThrottlePolicy {
  /** Failures before the first lock; 0 turns this counter off. */
  readonly limit: number;
  /** A counter whose last failure is older than this starts again from zero. */
  readonly windowSeconds: number;
  /** The first lock; each further failure doubles it. */
  readonly baseLockSeconds: number;
  readonly maxLockSeconds: number;
}

export interface ThrottleSettings {
  readonly username: ThrottlePolicy;
  readonly sourceIp: ThrottlePolicy;
}

export interface LoginConfig {
  readonly stage: string;
  readonly tokens: RefreshTokenSettings;
  readonly data: DataSettings;
  readonly accountsTable: string;
  readonly sessionsTable: string;
  readonly sessions: SessionSettings;
  readonly keys: KeySettings<{ readonly signingKeyring: KeySource }>;
  readonly bcryptCost: number;
  readonly loginGuardTable: string;
  readonly throttle: ThrottleSettings;
}

export interface RefreshConfig
  extends Omit<LoginConfig, 'bcryptCost' | 'keys' | 'loginGuardTable' | 'throttle'> {
  readonly keys: KeySettings<{ readonly signingKeyring: KeySource; readonly verificationKeys: KeySource }>;
}

export interface LogoutConfig {
  readonly stage: string;
  readonly tokens: RefreshTokenSettings;
  readonly data: DataSettings;
  readonly sessionsTable: string;
  readonly keys: KeySettings<{ readonly verificationKeys: KeySource }>;
}

export interface AuthorizerConfig {
  readonly stage: string;
  readonly tokens: TokenSettings;
  readonly data: DataSettings;
  readonly accountsTable: string;
  readonly keys: KeySettings<{ readonly verificationKeys: KeySource }>;
  readonly revocationCacheTtlMs: number;
}

export interface JwksConfig {
  readonly region: string;
  readonly keys: KeySettings<{ readonly verificationKeys: KeySource }>;
}

export interface ShipmentsConfig {
  readonly data: DataSettings;
  readonly shipmentsTable: string;
}

function parse<TSchema extends v.GenericSchema>(schema: TSchema, env: Env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? '(environment)'} ${issue.message}`);
  throw new Error(`Invalid configuration: ${problems.join('; ')}`);
}

function tokenSettings(env: v.InferOutput<v.ObjectSchema<typeof TokenEnv, undefined>>): TokenSettings {
  // Refresh tokens are told from access tokens by audience as well as by type.
  if (env.TOKEN_AUDIENCE === env.TOKEN_ISSUER) {
    throw new Error('Invalid configuration: TOKEN_AUDIENCE must differ from TOKEN_ISSUER');
  }
  return { issuer: env.TOKEN_ISSUER, audience: env.TOKEN_AUDIENCE, accessTtlSeconds: env.ACCESS_TOKEN_TTL };
}

const refreshTokenSettings = (
  env: v.InferOutput<v.ObjectSchema<typeof RefreshTokenEnv, undefined>>,
): RefreshTokenSettings => Object.freeze({ ...tokenSettings(env), refreshTtlSeconds: env.REFRESH_TOKEN_TTL });

const dataSettings = (env: { AWS_REGION: string; DYNAMODB_ENDPOINT: string }): DataSettings =>
  Object.freeze({
    region: env.AWS_REGION,
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT === '' ? undefined : env.DYNAMODB_ENDPOINT,
  });

const keySettings = <TSources>(env: { KEY_RELOAD_INTERVAL: number }, sources: TSources) =>
  Object.freeze({ sources: Object.freeze(sources), reloadMs: env.KEY_RELOAD_INTERVAL * 1000 });

function sessionConfig(parsed: v.InferOutput<v.ObjectSchema<typeof SessionEnv, undefined>>, grace: number) {
  return {
    stage: parsed.STAGE,
    tokens: refreshTokenSettings(parsed),
    data: dataSettings(parsed),
    accountsTable: parsed.ACCOUNTS_TABLE,
    sessionsTable: parsed.SESSIONS_TABLE,
    sessions: Object.freeze({ maxLifetimeSeconds: parsed.SESSION_MAX_LIFETIME, reuseGraceSeconds: grace }),
  };
}

export function readLoginConfig(env: Env = process.env): LoginConfig {
  const parsed = parse(LoginEnvSchema, env);
  if (parsed.LOGIN_LOCKOUT_BASE > parsed.LOGIN_LOCKOUT_MAX) {
    throw new Error('Invalid configuration: LOGIN_LOCKOUT_BASE must not exceed LOGIN_LOCKOUT_MAX');
  }
  return Object.freeze({
    // Login starts families only; the grace window matters to refresh alone.
    ...sessionConfig(parsed, 0),
    keys: keySettings(parsed, { signingKeyring: parsed.SIGNING_KEYRING }),
    bcryptCost: parsed.BCRYPT_COST,
    loginGuardTable: parsed.LOGIN_GUARD_TABLE,
    throttle: Object.freeze({
      username: Object.freeze({
        limit: parsed.LOGIN_FAILURE_LIMIT,
        windowSeconds: parsed.LOGIN_FAILURE_WINDOW,
        baseLockSeconds: parsed.LOGIN_LOCKOUT_BASE,
        maxLockSeconds: parsed.LOGIN_LOCKOUT_MAX,
      }),
      sourceIp: Object.freeze({
        limit: parsed.IP_FAILURE_LIMIT,
        windowSeconds: parsed.IP_FAILURE_WINDOW,
        baseLockSeconds: parsed.LOGIN_LOCKOUT_BASE,
        maxLockSeconds: parsed.LOGIN_LOCKOUT_MAX,
      }),
    }),
  });
}

export function readRefreshConfig(env: Env = process.env): RefreshConfig {
  const parsed = parse(RefreshEnvSchema, env);
  return Object.freeze({
    ...sessionConfig(parsed, parsed.REFRESH_REUSE_GRACE),
    keys: keySettings(parsed, {
      signingKeyring: parsed.SIGNING_KEYRING,
      verificationKeys: parsed.VERIFICATION_KEYS,
    }),
  });
}

export function readLogoutConfig(env: Env = process.env): LogoutConfig {
  const parsed = parse(LogoutEnvSchema, env);
  return Object.freeze({
    stage: parsed.STAGE,
    tokens: refreshTokenSettings(parsed),
    data: dataSettings(parsed),
    sessionsTable: parsed.SESSIONS_TABLE,
    keys: keySettings(parsed, { verificationKeys: parsed.VERIFICATION_KEYS }),
  });
}

export function readAuthorizerConfig(env: Env = process.env): AuthorizerConfig {
  const parsed = parse(AuthorizerEnvSchema, env);
  return Object.freeze({
    stage: parsed.STAGE,
    tokens: Object.freeze(tokenSettings(parsed)),
    data: dataSettings(parsed),
    accountsTable: parsed.ACCOUNTS_TABLE,
    keys: keySettings(parsed, { verificationKeys: parsed.VERIFICATION_KEYS }),
    revocationCacheTtlMs: parsed.REVOCATION_CACHE_TTL * 1000,
  });
}

export function readJwksConfig(env: Env = process.env): JwksConfig {
  const parsed = parse(JwksEnvSchema, env);
  return Object.freeze({
    region: parsed.AWS_REGION,
    keys: keySettings(parsed, { verificationKeys: parsed.VERIFICATION_KEYS }),
  });
}

export function readShipmentsConfig(env: Env = process.env): ShipmentsConfig {
  const parsed = parse(ShipmentsEnvSchema, env);
  return Object.freeze({ data: dataSettings(parsed), shipmentsTable: parsed.SHIPMENTS_TABLE });
}
