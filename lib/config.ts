// Each function's stage settings, validated once per container: a bad value fails init, never a
// request. A function's variables are those lib/settings.ts says it reads (`variablesOf`), each
// parsed and bounded by its own schema (lib/config/schemas.ts). Each schema is built inside its
// reader, so a function's bundle carries its own reader and the schemas of its own variables only.
import * as v from 'valibot';
import { type Built, type Env, parse, variablesOf } from './config/environment.ts';
import {
  AUDIENCE_IS_ISSUER,
  AUDIT,
  accessTokens,
  audienceDiffers,
  audit,
  DATA,
  data,
  gatewayLimits,
  keys,
  LOCKOUT_UNORDERED,
  lockoutOrdered,
  PUBLISHED_LIMITS,
  refreshTokens,
  SESSION,
  session,
  THROTTLE,
  TOKEN,
  throttle,
} from './config/parts.ts';
import {
  ACCOUNTS_TABLE,
  AWS_REGION,
  BCRYPT_COST,
  CLIENT_TOKEN_TTL,
  FORMER_TOKEN_ISSUERS,
  KEY_RELOAD_INTERVAL,
  REFRESH_REUSE_GRACE,
  REFRESH_TOKEN_TTL,
  REVOCATION_CACHE_TTL,
  SESSIONS_TABLE,
  SHIPMENTS_TABLE,
  SIGNING_KEYRING,
  STAGE,
  TOKEN_AUDIENCE,
  TOKEN_ISSUER,
  VERIFICATION_KEYS,
} from './config/schemas.ts';
import type { SessionSettings } from './sessions/sessions.ts';
import type { RefreshTokenSettings } from './tokens/settings.ts';

export type { Env } from './config/environment.ts';

const loginSchema = () =>
  v.pipe(
    v.object(variablesOf('login', { ...SESSION, ...THROTTLE, ...PUBLISHED_LIMITS, BCRYPT_COST })),
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

/** Sign-in with a passkey: a login's sessions, without its password or throttle (lib/auth/passkey-login.ts). */
const passkeyLoginSchema = () =>
  v.pipe(
    v.object(variablesOf('passkeyLogin', SESSION)),
    v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
    v.transform((env) =>
      Object.freeze({ ...session(env, 0), keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }) }),
    ),
  );

const refreshSchema = () =>
  v.pipe(
    v.object(
      variablesOf('refresh', { ...SESSION, ...PUBLISHED_LIMITS, VERIFICATION_KEYS, REFRESH_REUSE_GRACE }),
    ),
    v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
    v.transform((env) =>
      Object.freeze({
        ...session(env, env.REFRESH_REUSE_GRACE),
        gatewayLimits: gatewayLimits(env),
        keys: keys(env, { signingKeyring: env.SIGNING_KEYRING, verificationKeys: env.VERIFICATION_KEYS }),
      }),
    ),
  );

const logoutSchema = () =>
  v.pipe(
    v.object(
      variablesOf('logout', {
        STAGE,
        ...TOKEN,
        REFRESH_TOKEN_TTL,
        ...DATA,
        KEY_RELOAD_INTERVAL,
        SESSIONS_TABLE,
        ACCOUNTS_TABLE,
        VERIFICATION_KEYS,
      }),
    ),
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

const authorizerSchema = () =>
  v.pipe(
    v.object(
      variablesOf('authorizer', {
        STAGE,
        ...TOKEN,
        CLIENT_TOKEN_TTL,
        ...DATA,
        KEY_RELOAD_INTERVAL,
        ACCOUNTS_TABLE,
        VERIFICATION_KEYS,
        REVOCATION_CACHE_TTL,
      }),
    ),
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

const oauthTokenSchema = () =>
  v.pipe(
    v.object(
      variablesOf('oauthToken', {
        STAGE,
        TOKEN_ISSUER,
        FORMER_TOKEN_ISSUERS,
        TOKEN_AUDIENCE,
        CLIENT_TOKEN_TTL,
        REFRESH_TOKEN_TTL,
        REFRESH_REUSE_GRACE,
        ...DATA,
        KEY_RELOAD_INTERVAL,
        ...THROTTLE,
        ...PUBLISHED_LIMITS,
        ...AUDIT,
        ACCOUNTS_TABLE,
        SESSIONS_TABLE,
        SIGNING_KEYRING,
        VERIFICATION_KEYS,
      }),
    ),
    v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
    v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
    v.transform((env) =>
      Object.freeze({
        stage: env.STAGE,
        // A client's and a platform's access tokens live CLIENT_TOKEN_TTL; a platform's refresh tokens REFRESH_TOKEN_TTL.
        tokens: Object.freeze({
          issuer: env.TOKEN_ISSUER,
          formerIssuers: Object.freeze(env.FORMER_TOKEN_ISSUERS),
          audience: env.TOKEN_AUDIENCE,
          accessTtlSeconds: env.CLIENT_TOKEN_TTL,
          refreshTtlSeconds: env.REFRESH_TOKEN_TTL,
        } satisfies RefreshTokenSettings),
        // A connection's chain of refresh tokens ends after REFRESH_TOKEN_TTL unused (docs/platforms.md).
        connections: Object.freeze({
          maxLifetimeSeconds: env.REFRESH_TOKEN_TTL,
          reuseGraceSeconds: env.REFRESH_REUSE_GRACE,
        } satisfies SessionSettings),
        data: data(env),
        accountsTable: env.ACCOUNTS_TABLE,
        sessionsTable: env.SESSIONS_TABLE,
        keys: keys(env, { signingKeyring: env.SIGNING_KEYRING, verificationKeys: env.VERIFICATION_KEYS }),
        loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
        throttle: throttle(env),
        gatewayLimits: gatewayLimits(env),
        audit: audit(env),
      }),
    ),
  );

/** The authorization endpoint and PAR (docs/platforms.md): a login's sign-in, a client's authentication. */
const oauthAuthorizeSchema = () =>
  v.pipe(
    v.object(
      variablesOf('oauthAuthorize', {
        STAGE,
        TOKEN_ISSUER,
        ...DATA,
        KEY_RELOAD_INTERVAL,
        ...THROTTLE,
        ...AUDIT,
        BCRYPT_COST,
        ACCOUNTS_TABLE,
        SESSIONS_TABLE,
        SIGNING_KEYRING,
      }),
    ),
    v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
    v.transform((env) =>
      Object.freeze({
        stage: env.STAGE,
        issuer: env.TOKEN_ISSUER,
        data: data(env),
        accountsTable: env.ACCOUNTS_TABLE,
        sessionsTable: env.SESSIONS_TABLE,
        keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }),
        bcryptCost: env.BCRYPT_COST,
        loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
        throttle: throttle(env),
        audit: audit(env),
      }),
    ),
  );

const clientTokenQueryVariables = () => ({
  STAGE,
  ...TOKEN,
  CLIENT_TOKEN_TTL,
  ...DATA,
  KEY_RELOAD_INTERVAL,
  ...THROTTLE,
  ...AUDIT,
  ACCOUNTS_TABLE,
  // private_key_jwt's spent assertions (lib/replay/dynamodb.ts).
  SESSIONS_TABLE,
  SIGNING_KEYRING,
  VERIFICATION_KEYS,
});
type ClientTokenQueryVars = v.InferOutput<
  v.ObjectSchema<Built<ReturnType<typeof clientTokenQueryVariables>>, undefined>
>;
const clientTokenQuery = (env: ClientTokenQueryVars) => ({
  stage: env.STAGE,
  tokens: accessTokens(env),
  data: data(env),
  accountsTable: env.ACCOUNTS_TABLE,
  sessionsTable: env.SESSIONS_TABLE,
  keys: keys(env, { signingKeyring: env.SIGNING_KEYRING, verificationKeys: env.VERIFICATION_KEYS }),
  loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
  throttle: throttle(env),
  audit: audit(env),
});

const oauthRevokeSchema = () =>
  v.pipe(
    v.object(variablesOf('oauthRevoke', { ...clientTokenQueryVariables(), REFRESH_TOKEN_TTL })),
    v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
    v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
    // A platform's refresh tokens verify as the token endpoint signs them.
    v.transform((env) =>
      Object.freeze({ ...clientTokenQuery(env), refreshTtlSeconds: env.REFRESH_TOKEN_TTL }),
    ),
  );

const oauthIntrospectSchema = () =>
  v.pipe(
    v.object(variablesOf('oauthIntrospect', { ...clientTokenQueryVariables(), REVOCATION_CACHE_TTL })),
    v.check((env) => audienceDiffers(env), AUDIENCE_IS_ISSUER),
    v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
    v.transform((env) =>
      Object.freeze({ ...clientTokenQuery(env), revocationCacheTtlMs: env.REVOCATION_CACHE_TTL * 1000 }),
    ),
  );

const oauthMetadataSchema = () =>
  v.pipe(
    v.object(variablesOf('oauthMetadata', { TOKEN_ISSUER })),
    v.transform((env) => Object.freeze({ issuer: env.TOKEN_ISSUER })),
  );

const jwksSchema = () =>
  v.pipe(
    v.object(variablesOf('jwks', { AWS_REGION, KEY_RELOAD_INTERVAL, VERIFICATION_KEYS })),
    v.transform((env) =>
      Object.freeze({ region: env.AWS_REGION, keys: keys(env, { verificationKeys: env.VERIFICATION_KEYS }) }),
    ),
  );

// createShipment and trackShipment read the same (a test holds it).
const shipmentsSchema = () =>
  v.pipe(
    v.object(variablesOf('createShipment', { ...DATA, SHIPMENTS_TABLE, SESSIONS_TABLE })),
    v.transform((env) =>
      Object.freeze({
        data: data(env),
        shipmentsTable: env.SHIPMENTS_TABLE,
        // The spent DPoP proofs of bound tokens (lib/replay/dynamodb.ts).
        sessionsTable: env.SESSIONS_TABLE,
      }),
    ),
  );

// The self-service API: clients, their counters (unlock: the counter secret is in the keyring) and the trail.
const customerApiSchema = () =>
  v.pipe(
    v.object(
      variablesOf('customerApi', {
        STAGE,
        CLIENT_TOKEN_TTL,
        ...DATA,
        KEY_RELOAD_INTERVAL,
        ...THROTTLE,
        ...AUDIT,
        ACCOUNTS_TABLE,
        SESSIONS_TABLE,
        SIGNING_KEYRING,
      }),
    ),
    v.check((env) => lockoutOrdered(env), LOCKOUT_UNORDERED),
    v.transform((env) =>
      Object.freeze({
        stage: env.STAGE,
        data: data(env),
        accountsTable: env.ACCOUNTS_TABLE,
        // The passkey registrations' challenges, and the spent DPoP proofs of bound tokens.
        sessionsTable: env.SESSIONS_TABLE,
        // How long an ended connection's platform tokens are listed as revoked.
        clientAccessTtlSeconds: env.CLIENT_TOKEN_TTL,
        keys: keys(env, { signingKeyring: env.SIGNING_KEYRING }),
        loginThrottleTable: env.LOGIN_THROTTLE_TABLE,
        throttle: throttle(env),
        audit: audit(env),
      }),
    ),
  );

export type LoginConfig = v.InferOutput<ReturnType<typeof loginSchema>>;
export type PasskeyLoginConfig = v.InferOutput<ReturnType<typeof passkeyLoginSchema>>;
export type CustomerApiConfig = v.InferOutput<ReturnType<typeof customerApiSchema>>;
export type RefreshConfig = v.InferOutput<ReturnType<typeof refreshSchema>>;
export type LogoutConfig = v.InferOutput<ReturnType<typeof logoutSchema>>;
export type AuthorizerConfig = v.InferOutput<ReturnType<typeof authorizerSchema>>;
export type JwksConfig = v.InferOutput<ReturnType<typeof jwksSchema>>;
export type OAuthTokenConfig = v.InferOutput<ReturnType<typeof oauthTokenSchema>>;
export type OAuthAuthorizeConfig = v.InferOutput<ReturnType<typeof oauthAuthorizeSchema>>;
export type OAuthRevokeConfig = v.InferOutput<ReturnType<typeof oauthRevokeSchema>>;
export type OAuthIntrospectConfig = v.InferOutput<ReturnType<typeof oauthIntrospectSchema>>;
export type OAuthMetadataConfig = v.InferOutput<ReturnType<typeof oauthMetadataSchema>>;
export type ShipmentsConfig = v.InferOutput<ReturnType<typeof shipmentsSchema>>;

export const readLoginConfig = (env: Env = process.env): LoginConfig => parse(loginSchema(), env);
export const readPasskeyLoginConfig = (env: Env = process.env): PasskeyLoginConfig =>
  parse(passkeyLoginSchema(), env);
export const readRefreshConfig = (env: Env = process.env): RefreshConfig => parse(refreshSchema(), env);
export const readLogoutConfig = (env: Env = process.env): LogoutConfig => parse(logoutSchema(), env);
export const readAuthorizerConfig = (env: Env = process.env): AuthorizerConfig =>
  parse(authorizerSchema(), env);
export const readJwksConfig = (env: Env = process.env): JwksConfig => parse(jwksSchema(), env);
export const readOAuthTokenConfig = (env: Env = process.env): OAuthTokenConfig =>
  parse(oauthTokenSchema(), env);
export const readOAuthAuthorizeConfig = (env: Env = process.env): OAuthAuthorizeConfig =>
  parse(oauthAuthorizeSchema(), env);
export const readOAuthRevokeConfig = (env: Env = process.env): OAuthRevokeConfig =>
  parse(oauthRevokeSchema(), env);
export const readOAuthIntrospectConfig = (env: Env = process.env): OAuthIntrospectConfig =>
  parse(oauthIntrospectSchema(), env);
export const readOAuthMetadataConfig = (env: Env = process.env): OAuthMetadataConfig =>
  parse(oauthMetadataSchema(), env);
export const readShipmentsConfig = (env: Env = process.env): ShipmentsConfig => parse(shipmentsSchema(), env);
export const readCustomerApiConfig = (env: Env = process.env): CustomerApiConfig =>
  parse(customerApiSchema(), env);
