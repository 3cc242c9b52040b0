// Stage settings, validated once per container: a bad value fails init, never a request. The domain
// owns the shapes (`satisfies`), so config depends on the domain, never the reverse.
import * as v from 'valibot';
import type { DataSettings } from './aws/dynamodb.ts';
import type { QuotaPolicy } from './quota.ts';
import type { SessionSettings } from './sessions/sessions.ts';
import type { ThrottlePolicy, ThrottleSettings } from './throttle/throttle.ts';
import type { KeySettings, KeySource } from './tokens/keys.ts';
import type { AccessTokenSettings, RefreshTokenSettings, TokenSettings } from './tokens/settings.ts';

const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** A duration such as `90s`, `15m`, `24h` or `30d`, as whole seconds. */
export const DurationSchema = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,6}[smhd]$/, 'must be a positive duration such as 30s, 15m, 24h or 30d'),
  v.transform((text) => Number.parseInt(text.slice(0, -1), 10) * UNITS[text.slice(-1) as keyof typeof UNITS]),
);

export const OptionalDurationSchema = v.pipe(
  v.string(),
  v.regex(/^(0|[1-9]\d{0,6})[smhd]$/, 'must be a duration such as 0s, 30s, 15m or 24h'),
  v.transform((text) => Number.parseInt(text.slice(0, -1), 10) * UNITS[text.slice(-1) as keyof typeof UNITS]),
);

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

const CountSchema = v.pipe(
  v.string(),
  v.regex(/^\d{1,6}$/, 'must be a whole number (0 turns it off)'),
  v.transform(Number),
);

export type Env = Readonly<Record<string, string | undefined>>;

/** Each setting's bounds, stated once: functions pick from here; infra/stage-params.ts checks with it. */
export const SETTINGS = {
  STAGE: NonEmpty,
  AWS_REGION: v.optional(NonEmpty, 'eu-central-1'),
  TOKEN_ISSUER: v.pipe(NonEmpty, v.url('must be a URL')),
  // Space-separated; empty for none.
  FORMER_TOKEN_ISSUERS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.transform((text) => (text === '' ? [] : text.split(/\s+/))),
      v.check((urls) => urls.every((url) => URL.canParse(url)), 'must be URLs separated by spaces'),
    ),
    '',
  ),
  TOKEN_AUDIENCE: NonEmpty,
  ACCESS_TOKEN_TTL: DurationSchema,
  REFRESH_TOKEN_TTL: DurationSchema,
  // Short, as a client asks again with its secret: a stolen token is bounded by it.
  CLIENT_TOKEN_TTL: v.pipe(DurationSchema, v.maxValue(86_400, 'must be at most 24h')),
  SESSION_MAX_LIFETIME: DurationSchema,
  // A grace window is for a lost answer's retry; a long one would let a thief in as well.
  REFRESH_REUSE_GRACE: v.pipe(OptionalDurationSchema, v.maxValue(60, 'must be at most 60s')),
  REVOCATION_CACHE_TTL: OptionalDurationSchema,
  KEY_RELOAD_INTERVAL: DurationSchema,
  SIGNING_KEYRING: KeySourceSchema,
  VERIFICATION_KEYS: KeySourceSchema,
  BCRYPT_COST: v.pipe(
    v.string(),
    v.regex(/^\d{1,2}$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(4, 'must be at least 4'),
    v.maxValue(15, 'must be at most 15'),
  ),
  LOGIN_FAILURE_LIMIT: CountSchema,
  LOGIN_FAILURE_WINDOW: DurationSchema,
  IP_FAILURE_LIMIT: CountSchema,
  IP_FAILURE_WINDOW: DurationSchema,
  CLIENT_IP_FAILURE_LIMIT: CountSchema,
  CLIENT_IP_FAILURE_WINDOW: DurationSchema,
  // Attempts of one name being checked at once: well above a fleet's burst, bounded all the same.
  LOGIN_INFLIGHT_LIMIT: v.pipe(
    v.string(),
    v.regex(/^[1-9]\d{0,3}$/, 'must be a whole number from 1 to 9999'),
    v.transform(Number),
  ),
  KNOWN_SOURCE_PERIOD: v.pipe(OptionalDurationSchema, v.maxValue(90 * 86_400, 'must be at most 90d')),
  // The published limits (RateLimit-Policy) of API Gateway's login routes and the web ACL.
  LOGIN_RATE_LIMIT: v.pipe(
    v.string(),
    v.regex(/^\d{1,6}(\.\d{1,3})?$/, 'must be a number of requests per second'),
    v.transform(Number),
  ),
  WAF_ENABLED: v.picklist(['true', 'false'], "must be 'true' or 'false'"),
  WAF_LOGIN_RATE_LIMIT: CountSchema,
  LOGIN_LOCKOUT_BASE: DurationSchema,
  // A lock always ends, and soon: the longest is a day.
  LOGIN_LOCKOUT_MAX: v.pipe(DurationSchema, v.maxValue(86_400, 'must be at most 24h')),
  DYNAMODB_ENDPOINT: OptionalUrl,
  ACCOUNTS_TABLE: NonEmpty,
  SESSIONS_TABLE: NonEmpty,
  LOGIN_THROTTLE_TABLE: NonEmpty,
  SHIPMENTS_TABLE: NonEmpty,
  AUDIT_TABLE: NonEmpty,
  // Long enough that an event outlives the incident it documents.
  AUDIT_RETENTION: v.pipe(DurationSchema, v.minValue(86_400, 'must be at least 1d')),
};
type Setting = keyof typeof SETTINGS;

const pick = <TName extends Setting>(...names: TName[]) =>
  Object.fromEntries(names.map((name) => [name, SETTINGS[name]])) as Pick<typeof SETTINGS, TName>;

const Stage = pick('STAGE');

const TokenEnv = pick('TOKEN_ISSUER', 'FORMER_TOKEN_ISSUERS', 'TOKEN_AUDIENCE', 'ACCESS_TOKEN_TTL');
type TokenVars = v.InferOutput<v.ObjectSchema<typeof TokenEnv, undefined>>;
const tokens = (env: TokenVars) =>
  Object.freeze({
    issuer: env.TOKEN_ISSUER,
    formerIssuers: Object.freeze(env.FORMER_TOKEN_ISSUERS),
    audience: env.TOKEN_AUDIENCE,
    accessTtlSeconds: env.ACCESS_TOKEN_TTL,
  } satisfies TokenSettings);
// Refresh tokens are told from access tokens by audience as well as by type.
const audienceDiffers = (env: TokenVars) => env.TOKEN_AUDIENCE !== env.TOKEN_ISSUER;
const AUDIENCE_IS_ISSUER = 'TOKEN_AUDIENCE must differ from TOKEN_ISSUER';

const RefreshTokenEnv = { ...TokenEnv, ...pick('REFRESH_TOKEN_TTL') };
const refreshTokens = (env: v.InferOutput<v.ObjectSchema<typeof RefreshTokenEnv, undefined>>) =>
  Object.freeze({ ...tokens(env), refreshTtlSeconds: env.REFRESH_TOKEN_TTL } satisfies RefreshTokenSettings);

const DataEnv = pick('AWS_REGION', 'DYNAMODB_ENDPOINT');
const data = (env: { AWS_REGION: string; DYNAMODB_ENDPOINT: string }) =>
  Object.freeze({
    region: env.AWS_REGION,
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT === '' ? undefined : env.DYNAMODB_ENDPOINT,
  } satisfies DataSettings);

const KeyReloadEnv = pick('KEY_RELOAD_INTERVAL');
const keys = <TSources>(env: { KEY_RELOAD_INTERVAL: number }, sources: TSources) =>
  Object.freeze({
    sources: Object.freeze(sources),
    reloadMs: env.KEY_RELOAD_INTERVAL * 1000,
  } satisfies KeySettings<TSources>);

const SessionEnv = {
  ...Stage,
  ...RefreshTokenEnv,
  ...DataEnv,
  ...KeyReloadEnv,
  ...pick('ACCOUNTS_TABLE', 'SESSIONS_TABLE', 'SIGNING_KEYRING', 'SESSION_MAX_LIFETIME'),
};
const session = (env: v.InferOutput<v.ObjectSchema<typeof SessionEnv, undefined>>, grace: number) => ({
  stage: env.STAGE,
  tokens: refreshTokens(env),
  data: data(env),
  accountsTable: env.ACCOUNTS_TABLE,
  sessionsTable: env.SESSIONS_TABLE,
  sessions: Object.freeze({
    maxLifetimeSeconds: env.SESSION_MAX_LIFETIME,
    reuseGraceSeconds: grace,
  } satisfies SessionSettings),
});

const ThrottleEnv = pick(
  'LOGIN_THROTTLE_TABLE',
  'LOGIN_FAILURE_LIMIT',
  'LOGIN_FAILURE_WINDOW',
  'IP_FAILURE_LIMIT',
  'IP_FAILURE_WINDOW',
  'CLIENT_IP_FAILURE_LIMIT',
  'CLIENT_IP_FAILURE_WINDOW',
  'LOGIN_LOCKOUT_BASE',
  'LOGIN_LOCKOUT_MAX',
  'LOGIN_INFLIGHT_LIMIT',
  'KNOWN_SOURCE_PERIOD',
);
type ThrottleVars = v.InferOutput<v.ObjectSchema<typeof ThrottleEnv, undefined>>;
const policy = (env: ThrottleVars, limit: number, windowSeconds: number, inflightLimit: number) =>
  Object.freeze({
    limit,
    windowSeconds,
    baseLockSeconds: env.LOGIN_LOCKOUT_BASE,
    maxLockSeconds: env.LOGIN_LOCKOUT_MAX,
    // Never below the failure limit: attempts in flight would refuse before failures do.
    inflightLimit: Math.max(inflightLimit, limit),
  } satisfies ThrottlePolicy);
const throttle = (env: ThrottleVars) =>
  Object.freeze({
    username: policy(env, env.LOGIN_FAILURE_LIMIT, env.LOGIN_FAILURE_WINDOW, env.LOGIN_INFLIGHT_LIMIT),
    // An address is shared by many people or machines: its attempts in flight are bounded by its limit.
    sourceIp: policy(env, env.IP_FAILURE_LIMIT, env.IP_FAILURE_WINDOW, env.IP_FAILURE_LIMIT),
    clientSourceIp: policy(
      env,
      env.CLIENT_IP_FAILURE_LIMIT,
      env.CLIENT_IP_FAILURE_WINDOW,
      env.CLIENT_IP_FAILURE_LIMIT,
    ),
    knownSourceSeconds: env.KNOWN_SOURCE_PERIOD,
  } satisfies ThrottleSettings);

const PublishedLimitsEnv = pick('LOGIN_RATE_LIMIT', 'WAF_ENABLED', 'WAF_LOGIN_RATE_LIMIT');
/** The limits in front of the functions that a login route publishes beside its counters' (RateLimit-Policy). */
const gatewayLimits = (env: v.InferOutput<v.ObjectSchema<typeof PublishedLimitsEnv, undefined>>) =>
  Object.freeze([
    { name: 'route', quota: env.LOGIN_RATE_LIMIT, windowSeconds: 1 },
    ...(env.WAF_ENABLED === 'true'
      ? [{ name: 'address-requests', quota: env.WAF_LOGIN_RATE_LIMIT, windowSeconds: 300 }]
      : []),
  ] satisfies QuotaPolicy[]);

const AuditEnv = pick('AUDIT_TABLE', 'AUDIT_RETENTION');
/** Where the OAuth endpoints record failed client authentications, and for how long. */
const audit = (env: v.InferOutput<v.ObjectSchema<typeof AuditEnv, undefined>>) =>
  Object.freeze({ table: env.AUDIT_TABLE, retentionSeconds: env.AUDIT_RETENTION });

const lockoutOrdered = (env: ThrottleVars) => env.LOGIN_LOCKOUT_BASE <= env.LOGIN_LOCKOUT_MAX;
const LOCKOUT_UNORDERED = 'LOGIN_LOCKOUT_BASE must not exceed LOGIN_LOCKOUT_MAX';

const LoginConfigSchema = v.pipe(
  v.object({
    ...SessionEnv,
    ...ThrottleEnv,
    ...PublishedLimitsEnv,
    ...pick('BCRYPT_COST'),
  }),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
  v.transform((env) =>
    Object.freeze({
      // Login starts sessions only; the grace window matters to refresh alone.
      ...session(env, 0),
      keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }),
      bcryptCost: env.BCRYPT_COST,
      loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
      throttle: throttle(env),
      gatewayLimits: gatewayLimits(env),
    }),
  ),
);

const RefreshConfigSchema = v.pipe(
  v.object({
    ...SessionEnv,
    ...PublishedLimitsEnv,
    ...pick('VERIFICATION_KEYS', 'REFRESH_REUSE_GRACE'),
  }),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.transform((env) =>
    Object.freeze({
      ...session(env, env.REFRESH_REUSE_GRACE),
      gatewayLimits: gatewayLimits(env),
      keys: keys(env, { signingKeyring: env.SIGNING_KEYRING, verificationKeys: env.VERIFICATION_KEYS }),
    }),
  ),
);

const LogoutConfigSchema = v.pipe(
  v.object({
    ...Stage,
    ...RefreshTokenEnv,
    ...DataEnv,
    ...KeyReloadEnv,
    ...pick('SESSIONS_TABLE', 'ACCOUNTS_TABLE', 'VERIFICATION_KEYS'),
  }),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.transform((env) =>
    Object.freeze({
      stage: env.STAGE,
      tokens: refreshTokens(env),
      data: data(env),
      sessionsTable: env.SESSIONS_TABLE,
      accountsTable: env.ACCOUNTS_TABLE,
      keys: keys(env, { verificationKeys: env.VERIFICATION_KEYS }),
    }),
  ),
);

const ClientTokenEnv = pick('CLIENT_TOKEN_TTL');
/** Access tokens as the authorizer verifies them: a client's lifetime is its own. */
const AccessTokenEnv = { ...TokenEnv, ...ClientTokenEnv };
const accessTokens = (env: v.InferOutput<v.ObjectSchema<typeof AccessTokenEnv, undefined>>) =>
  Object.freeze({
    ...tokens(env),
    clientAccessTtlSeconds: env.CLIENT_TOKEN_TTL,
  } satisfies AccessTokenSettings);

const AuthorizerConfigSchema = v.pipe(
  v.object({
    ...Stage,
    ...AccessTokenEnv,
    ...DataEnv,
    ...KeyReloadEnv,
    ...pick('ACCOUNTS_TABLE', 'VERIFICATION_KEYS', 'REVOCATION_CACHE_TTL'),
  }),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.transform((env) =>
    Object.freeze({
      stage: env.STAGE,
      tokens: accessTokens(env),
      data: data(env),
      accountsTable: env.ACCOUNTS_TABLE,
      keys: keys(env, { verificationKeys: env.VERIFICATION_KEYS }),
      revocationCacheTtlMs: env.REVOCATION_CACHE_TTL * 1000,
    }),
  ),
);

const OAuthTokenConfigSchema = v.pipe(
  v.object({
    ...Stage,
    ...pick('TOKEN_ISSUER', 'TOKEN_AUDIENCE'),
    ...ClientTokenEnv,
    ...DataEnv,
    ...KeyReloadEnv,
    ...ThrottleEnv,
    ...PublishedLimitsEnv,
    ...AuditEnv,
    ...pick('ACCOUNTS_TABLE', 'SIGNING_KEYRING'),
  }),
  v.check((env) => env.TOKEN_AUDIENCE !== env.TOKEN_ISSUER, AUDIENCE_IS_ISSUER),
  v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
  v.transform((env) =>
    Object.freeze({
      stage: env.STAGE,
      tokens: Object.freeze({
        issuer: env.TOKEN_ISSUER,
        audience: env.TOKEN_AUDIENCE,
        accessTtlSeconds: env.CLIENT_TOKEN_TTL,
      } satisfies TokenSettings),
      data: data(env),
      accountsTable: env.ACCOUNTS_TABLE,
      keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }),
      loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
      throttle: throttle(env),
      gatewayLimits: gatewayLimits(env),
      audit: audit(env),
    }),
  ),
);

// Revocation and introspection: client authentication as the token endpoint's (its throttle, whose
// counter secret is in the signing keyring) and the authorizer's verification of the token asked about.
const ClientTokenQueryEnv = {
  ...Stage,
  ...AccessTokenEnv,
  ...DataEnv,
  ...KeyReloadEnv,
  ...ThrottleEnv,
  ...AuditEnv,
  ...pick('ACCOUNTS_TABLE', 'SIGNING_KEYRING', 'VERIFICATION_KEYS'),
};
const clientTokenQuery = (env: v.InferOutput<v.ObjectSchema<typeof ClientTokenQueryEnv, undefined>>) => ({
  stage: env.STAGE,
  tokens: accessTokens(env),
  data: data(env),
  accountsTable: env.ACCOUNTS_TABLE,
  keys: keys(env, { signingKeyring: env.SIGNING_KEYRING, verificationKeys: env.VERIFICATION_KEYS }),
  loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
  throttle: throttle(env),
  audit: audit(env),
});

const OAuthRevokeConfigSchema = v.pipe(
  v.object(ClientTokenQueryEnv),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
  v.transform((env) => Object.freeze(clientTokenQuery(env))),
);

const OAuthIntrospectConfigSchema = v.pipe(
  v.object({ ...ClientTokenQueryEnv, ...pick('REVOCATION_CACHE_TTL') }),
  v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
  v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
  v.transform((env) =>
    Object.freeze({ ...clientTokenQuery(env), revocationCacheTtlMs: env.REVOCATION_CACHE_TTL * 1000 }),
  ),
);

const OAuthMetadataConfigSchema = v.pipe(
  v.object(pick('TOKEN_ISSUER')),
  v.transform((env) => Object.freeze({ issuer: env.TOKEN_ISSUER })),
);

const JwksConfigSchema = v.pipe(
  v.object(pick('AWS_REGION', 'KEY_RELOAD_INTERVAL', 'VERIFICATION_KEYS')),
  v.transform((env) =>
    Object.freeze({ region: env.AWS_REGION, keys: keys(env, { verificationKeys: env.VERIFICATION_KEYS }) }),
  ),
);

const ShipmentsConfigSchema = v.pipe(
  v.object({ ...DataEnv, ...pick('SHIPMENTS_TABLE') }),
  v.transform((env) => Object.freeze({ data: data(env), shipmentsTable: env.SHIPMENTS_TABLE })),
);

// The self-service API: clients, their counters (unlock: the counter secret is in the keyring) and the trail.
const CustomerApiConfigSchema = v.pipe(
  v.object({
    ...Stage,
    ...DataEnv,
    ...KeyReloadEnv,
    ...ThrottleEnv,
    ...AuditEnv,
    ...pick('ACCOUNTS_TABLE', 'SIGNING_KEYRING'),
  }),
  v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
  v.transform((env) =>
    Object.freeze({
      stage: env.STAGE,
      data: data(env),
      accountsTable: env.ACCOUNTS_TABLE,
      keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }),
      loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
      throttle: throttle(env),
      audit: audit(env),
    }),
  ),
);

export type LoginConfig = v.InferOutput<typeof LoginConfigSchema>;
export type CustomerApiConfig = v.InferOutput<typeof CustomerApiConfigSchema>;
export type RefreshConfig = v.InferOutput<typeof RefreshConfigSchema>;
export type LogoutConfig = v.InferOutput<typeof LogoutConfigSchema>;
export type AuthorizerConfig = v.InferOutput<typeof AuthorizerConfigSchema>;
export type JwksConfig = v.InferOutput<typeof JwksConfigSchema>;
export type OAuthTokenConfig = v.InferOutput<typeof OAuthTokenConfigSchema>;
export type OAuthRevokeConfig = v.InferOutput<typeof OAuthRevokeConfigSchema>;
export type OAuthIntrospectConfig = v.InferOutput<typeof OAuthIntrospectConfigSchema>;
export type OAuthMetadataConfig = v.InferOutput<typeof OAuthMetadataConfigSchema>;
export type ShipmentsConfig = v.InferOutput<typeof ShipmentsConfigSchema>;

/** The variables a function's config reads, for the tests' and the template's checks. */
export const CONFIG_VARIABLES = {
  login: Object.keys(LoginConfigSchema.pipe[0].entries),
  refresh: Object.keys(RefreshConfigSchema.pipe[0].entries),
  logout: Object.keys(LogoutConfigSchema.pipe[0].entries),
  authorizer: Object.keys(AuthorizerConfigSchema.pipe[0].entries),
  jwks: Object.keys(JwksConfigSchema.pipe[0].entries),
  oauthToken: Object.keys(OAuthTokenConfigSchema.pipe[0].entries),
  oauthRevoke: Object.keys(OAuthRevokeConfigSchema.pipe[0].entries),
  oauthIntrospect: Object.keys(OAuthIntrospectConfigSchema.pipe[0].entries),
  oauthMetadata: Object.keys(OAuthMetadataConfigSchema.pipe[0].entries),
  shipments: Object.keys(ShipmentsConfigSchema.pipe[0].entries),
  customerApi: Object.keys(CustomerApiConfigSchema.pipe[0].entries),
} as const;

function parse<TSchema extends v.GenericSchema>(schema: TSchema, env: Env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path === null ? issue.message : `${path} ${issue.message}`;
  });
  throw new Error(`Invalid configuration: ${problems.join('; ')}`);
}

export const readLoginConfig = (env: Env = process.env): LoginConfig => parse(LoginConfigSchema, env);
export const readRefreshConfig = (env: Env = process.env): RefreshConfig => parse(RefreshConfigSchema, env);
export const readLogoutConfig = (env: Env = process.env): LogoutConfig => parse(LogoutConfigSchema, env);
export const readAuthorizerConfig = (env: Env = process.env): AuthorizerConfig =>
  parse(AuthorizerConfigSchema, env);
export const readJwksConfig = (env: Env = process.env): JwksConfig => parse(JwksConfigSchema, env);
export const readOAuthTokenConfig = (env: Env = process.env): OAuthTokenConfig =>
  parse(OAuthTokenConfigSchema, env);
export const readOAuthRevokeConfig = (env: Env = process.env): OAuthRevokeConfig =>
  parse(OAuthRevokeConfigSchema, env);
export const readOAuthIntrospectConfig = (env: Env = process.env): OAuthIntrospectConfig =>
  parse(OAuthIntrospectConfigSchema, env);
export const readOAuthMetadataConfig = (env: Env = process.env): OAuthMetadataConfig =>
  parse(OAuthMetadataConfigSchema, env);
export const readShipmentsConfig = (env: Env = process.env): ShipmentsConfig =>
  parse(ShipmentsConfigSchema, env);
export const readCustomerApiConfig = (env: Env = process.env): CustomerApiConfig =>
  parse(CustomerApiConfigSchema, env);
