// The parts several functions' configs share: the variables of each (their schemas) and the settings
// the domain takes from them. The domain owns the shapes (`satisfies`), so config depends on the
// domain, never the reverse.
import type * as v from 'valibot';
import type { DataSettings } from '../aws/dynamodb.ts';
import type { QuotaPolicy } from '../quota.ts';
import type { SessionSettings } from '../sessions/sessions.ts';
import type { ThrottlePolicy, ThrottleSettings } from '../throttle/throttle.ts';
import type { KeySettings } from '../tokens/keys.ts';
import type { AccessTokenSettings, RefreshTokenSettings, TokenSettings } from '../tokens/settings.ts';
import type { Built, SchemaOf } from './environment.ts';
import {
  ACCESS_TOKEN_TTL,
  ACCOUNTS_TABLE,
  AUDIT_RETENTION,
  AUDIT_TABLE,
  AWS_REGION,
  CLIENT_IP_FAILURE_LIMIT,
  CLIENT_IP_FAILURE_WINDOW,
  DYNAMODB_ENDPOINT,
  FORMER_TOKEN_ISSUERS,
  IP_FAILURE_LIMIT,
  IP_FAILURE_WINDOW,
  KEY_RELOAD_INTERVAL,
  KNOWN_SOURCE_PERIOD,
  LOGIN_FAILURE_LIMIT,
  LOGIN_FAILURE_WINDOW,
  LOGIN_INFLIGHT_LIMIT,
  LOGIN_LOCKOUT_BASE,
  LOGIN_LOCKOUT_MAX,
  LOGIN_RATE_LIMIT,
  LOGIN_THROTTLE_TABLE,
  REFRESH_TOKEN_TTL,
  SESSION_MAX_LIFETIME,
  SESSIONS_TABLE,
  SIGNING_KEYRING,
  STAGE,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  WAF_ENABLED,
  WAF_LOGIN_RATE_LIMIT,
} from './schemas.ts';

/** What the variables `TFactories` builds the schemas of read as. */
type Read<TFactories extends Readonly<Record<string, SchemaOf>>> = v.InferOutput<
  v.ObjectSchema<Built<TFactories>, undefined>
>;

export const TOKEN = { TOKEN_ISSUER, FORMER_TOKEN_ISSUERS, TOKEN_AUDIENCE, ACCESS_TOKEN_TTL };
export const tokens = (env: Read<typeof TOKEN>) =>
  Object.freeze({
    issuer: env.TOKEN_ISSUER,
    formerIssuers: Object.freeze(env.FORMER_TOKEN_ISSUERS),
    audience: env.TOKEN_AUDIENCE,
    accessTtlSeconds: env.ACCESS_TOKEN_TTL,
  } satisfies TokenSettings);
// Refresh tokens are told from access tokens by audience as well as by type.
export const audienceDiffers = (env: { TOKEN_AUDIENCE: string; TOKEN_ISSUER: string }) =>
  env.TOKEN_AUDIENCE !== env.TOKEN_ISSUER;
export const AUDIENCE_IS_ISSUER = 'TOKEN_AUDIENCE must differ from TOKEN_ISSUER';

export const refreshTokens = (env: Read<typeof TOKEN> & { REFRESH_TOKEN_TTL: number }) =>
  Object.freeze({ ...tokens(env), refreshTtlSeconds: env.REFRESH_TOKEN_TTL } satisfies RefreshTokenSettings);

/** Access tokens as the authorizer verifies them: a client's lifetime is its own. */
export const accessTokens = (env: Read<typeof TOKEN> & { CLIENT_TOKEN_TTL: number }) =>
  Object.freeze({
    ...tokens(env),
    clientAccessTtlSeconds: env.CLIENT_TOKEN_TTL,
  } satisfies AccessTokenSettings);

export const DATA = { AWS_REGION, DYNAMODB_ENDPOINT };
export const data = (env: Read<typeof DATA>) =>
  Object.freeze({
    region: env.AWS_REGION,
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT === '' ? undefined : env.DYNAMODB_ENDPOINT,
  } satisfies DataSettings);

export const keys = <TSources>(env: { KEY_RELOAD_INTERVAL: number }, sources: TSources) =>
  Object.freeze({
    sources: Object.freeze(sources),
    reloadMs: env.KEY_RELOAD_INTERVAL * 1000,
  } satisfies KeySettings<TSources>);

/** What starts and refreshes sessions: login and refresh. */
// Written out, not spread: a spread at module scope would keep it in every bundle.
export const SESSION = {
  STAGE,
  TOKEN_ISSUER,
  FORMER_TOKEN_ISSUERS,
  TOKEN_AUDIENCE,
  ACCESS_TOKEN_TTL,
  REFRESH_TOKEN_TTL,
  AWS_REGION,
  DYNAMODB_ENDPOINT,
  KEY_RELOAD_INTERVAL,
  ACCOUNTS_TABLE,
  SESSIONS_TABLE,
  SIGNING_KEYRING,
  SESSION_MAX_LIFETIME,
};
export const session = (env: Read<typeof SESSION>, grace: number) => ({
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

export const THROTTLE = {
  LOGIN_THROTTLE_TABLE,
  LOGIN_FAILURE_LIMIT,
  LOGIN_FAILURE_WINDOW,
  IP_FAILURE_LIMIT,
  IP_FAILURE_WINDOW,
  CLIENT_IP_FAILURE_LIMIT,
  CLIENT_IP_FAILURE_WINDOW,
  LOGIN_LOCKOUT_BASE,
  LOGIN_LOCKOUT_MAX,
  LOGIN_INFLIGHT_LIMIT,
  KNOWN_SOURCE_PERIOD,
};
type ThrottleVars = Read<typeof THROTTLE>;
const policy = (env: ThrottleVars, limit: number, windowSeconds: number, inflightLimit: number) =>
  Object.freeze({
    limit,
    windowSeconds,
    baseLockSeconds: env.LOGIN_LOCKOUT_BASE,
    maxLockSeconds: env.LOGIN_LOCKOUT_MAX,
    // Never below the failure limit: attempts in flight would refuse before failures do.
    inflightLimit: Math.max(inflightLimit, limit),
  } satisfies ThrottlePolicy);
export const throttle = (env: ThrottleVars) =>
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
export const lockoutOrdered = (env: { LOGIN_LOCKOUT_BASE: number; LOGIN_LOCKOUT_MAX: number }) =>
  env.LOGIN_LOCKOUT_BASE <= env.LOGIN_LOCKOUT_MAX;
export const LOCKOUT_UNORDERED = 'LOGIN_LOCKOUT_BASE must not exceed LOGIN_LOCKOUT_MAX';

export const PUBLISHED_LIMITS = { LOGIN_RATE_LIMIT, WAF_ENABLED, WAF_LOGIN_RATE_LIMIT };
/** The limits in front of the functions that a login route publishes beside its counters' (RateLimit-Policy). */
export const gatewayLimits = (env: Read<typeof PUBLISHED_LIMITS>) =>
  Object.freeze([
    { name: 'route', quota: env.LOGIN_RATE_LIMIT, windowSeconds: 1 },
    ...(env.WAF_ENABLED === 'true'
      ? [{ name: 'address-requests', quota: env.WAF_LOGIN_RATE_LIMIT, windowSeconds: 300 }]
      : []),
  ] satisfies QuotaPolicy[]);

export const AUDIT = { AUDIT_TABLE, AUDIT_RETENTION };
/** Where the OAuth endpoints and the self-service API record credentials' events, and for how long. */
export const audit = (env: Read<typeof AUDIT>) =>
  Object.freeze({ table: env.AUDIT_TABLE, retentionSeconds: env.AUDIT_RETENTION });
