/** Pinned algorithm, known keys only (docs/tokens-and-sessions.md, "Tokens" and "Signing keys"). */

import { errors, type JWTHeaderParameters, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { DEFAULT_USER_SCOPES, isGrantableScope, isScope, type Scope, sortScopes } from '../scopes.ts';
import { type Clock, hasExpired, systemClock } from '../time.ts';
import {
  ACCESS_TOKEN_TYPE,
  ACR_CLAIM,
  AUTH_TIME_CLAIM,
  CLIENT_ID_CLAIM,
  CONFIRMATION_CLAIM,
  CONNECTION_CLAIM,
  CUSTOMER_CLAIM,
  LOGIN_CLIENT_ID,
  PASSKEY_ACR,
  REFRESH_TOKEN_TYPE,
  SCOPE_CLAIM,
  SECRET_ID_CLAIM,
  SESSION_CLAIM,
  type SignInMethod,
} from './claims.ts';
import { SIGNING_ALGORITHM, type VerificationKeys } from './keys.ts';
import type { AccessTokenSettings, RefreshTokenSettings, TokenSettings } from './settings.ts';

/** Skew between containers, on `iat` and `nbf` only: `exp` is the exact `expireAt` promised. */
export const CLOCK_TOLERANCE_SECONDS = 5;

interface VerifiedAccess {
  /** The token's own id: a client's revoked token is listed by it (RFC 7009). */
  readonly jti: string;
  /** `iss` and `aud` as signed (a former issuer's, for its tokens still live): introspection answers them. */
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly customerId: string | null;
  /** A user's token without a `scope` claim has the default scopes; a client's never `customer:admin`. */
  readonly scopes: readonly Scope[];
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** Epoch seconds: the token is valid strictly before this instant. */
  readonly expiresAt: number;
}

export interface UserAccessClaims extends VerifiedAccess {
  readonly kind: 'user';
  readonly username: string;
  /** Undefined in tokens signed before `sid` was added. */
  readonly sessionId: string | undefined;
  /**
   * Epoch seconds of the session's login (`auth_time`). Undefined in tokens signed before access
   * tokens had it: such a token never counts as a recent login.
   */
  readonly authTime: number | undefined;
  /** How the session's user signed in (`acr`); a token signed before `acr` was a password's. */
  readonly method: SignInMethod;
}

/** What a client's token was granted with: a secret, or a platform's connection to the customer. */
export type ClientGrant = { readonly secretId: string } | { readonly connectionId: string };

export interface ClientAccessClaims extends VerifiedAccess {
  readonly kind: 'client';
  readonly clientId: string;
  readonly grant: ClientGrant;
  /** The thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449); undefined for a bearer token. */
  readonly jkt?: string | undefined;
  /** A client never logs in. */
  readonly authTime?: undefined;
}

export type AccessClaims = UserAccessClaims | ClientAccessClaims;

export interface RefreshClaims {
  readonly username: string;
  readonly sessionId: string;
  readonly jti: string;
  /** Epoch seconds of the login that started the session. */
  readonly authTime: number;
  /** How that login was made (`acr`): a refresh keeps it. A token signed before `acr` was a password's. */
  readonly method: SignInMethod;
}

/** A platform's refresh token of a connection (docs/platforms.md). */
export interface ConnectionRefreshClaims {
  readonly connectionId: string;
  readonly clientId: string;
  readonly customerId: string;
  readonly sessionId: string;
  readonly jti: string;
  readonly authTime: number;
}

export interface TokenVerifier<TClaims> {
  verify(token: string): Promise<TClaims>;
}
export type AccessTokenVerifier = TokenVerifier<AccessClaims>;
export type RefreshTokenVerifier = TokenVerifier<RefreshClaims>;
export type ConnectionRefreshTokenVerifier = TokenVerifier<ConnectionRefreshClaims>;

interface VerifyOptions {
  readonly keys: () => Promise<VerificationKeys>;
  readonly issuer: string | string[];
  readonly clock: Clock | undefined;
}

/** Why we refused a token jose accepted: a stable `code`, like jose's, for the `authorizer denied` line. */
export type TokenErrorCode =
  | 'ERR_TOKEN_NOT_CANONICAL'
  | 'ERR_TOKEN_UNKNOWN_KID'
  | 'ERR_TOKEN_KEY_RETIRED'
  | 'ERR_TOKEN_LIFETIME'
  | 'ERR_TOKEN_SUBJECT'
  | 'ERR_TOKEN_JTI'
  | 'ERR_TOKEN_CUSTOMER'
  | 'ERR_TOKEN_SESSION'
  | 'ERR_TOKEN_AUTH_TIME'
  | 'ERR_TOKEN_SCOPE'
  | 'ERR_TOKEN_CLIENT';

export class TokenError extends Error {
  readonly code: TokenErrorCode;
  constructor(code: TokenErrorCode, message: string) {
    super(message);
    this.name = 'TokenError';
    this.code = code;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Without decoding: the last character of a segment 2 or 3 long modulo 4 has 4 or 2 bits that must be 0. */
export function isCanonicalBase64url(segment: string): boolean {
  const tail = segment.length % 4;
  if (tail === 1 || !BASE64URL.test(segment)) return false;
  if (tail === 0) return true;
  const value = BASE64URL_ALPHABET.indexOf(segment.charAt(segment.length - 1));
  return (value & (tail === 2 ? 0x0f : 0x03)) === 0;
}

// Only the issued spelling, before any cryptography: jose decodes leniently, and API Gateway caches
// decisions per raw header (docs/tokens-and-sessions.md, "Tokens").
function assertCanonical(token: string): void {
  for (const segment of token.split('.')) {
    if (!isCanonicalBase64url(segment))
      throw new TokenError('ERR_TOKEN_NOT_CANONICAL', 'a segment is not canonical base64url');
  }
}

interface Expected {
  typ: string;
  audience: string | string[];
  maxAgeSeconds: number;
  claims: string[];
  lifetimeOf?: (payload: JWTPayload) => number;
}

/** jose's options for `expected`, built once per verifier: the hot path allocates none of them. */
const joseOptions = (issuer: string | string[], expected: Expected): JWTVerifyOptions => ({
  algorithms: [SIGNING_ALGORITHM],
  issuer,
  audience: expected.audience,
  typ: expected.typ,
  requiredClaims: ['sub', 'jti', 'iat', 'exp', ...expected.claims],
  clockTolerance: CLOCK_TOLERANCE_SECONDS,
  // Also rejects an `iat` in the future, and a token whose lifetime exceeds the stage's.
  maxTokenAge: expected.maxAgeSeconds,
});

async function verifyToken(
  token: string,
  { keys, clock }: VerifyOptions,
  expected: Expected,
  options: JWTVerifyOptions,
): Promise<JWTPayload & { sub: string; jti: string; iat: number }> {
  assertCanonical(token);
  const known = await keys();
  const getKey = (header: JWTHeaderParameters) => {
    const key = header.kid === undefined ? undefined : known.get(header.kid);
    if (key === undefined) throw new TokenError('ERR_TOKEN_UNKNOWN_KID', 'unknown kid');
    return key;
  };
  const { payload, protectedHeader } = await jwtVerify(
    token,
    getKey,
    clock === undefined ? options : { ...options, currentDate: clock() },
  );
  const { sub, jti, iat, exp } = payload;
  // A retired key may have leaked with the keyring: what it signs after retirement is forged.
  const signedUntil = known.signedUntil.get(protectedHeader.kid ?? '');
  if (signedUntil !== undefined && (iat as number) > signedUntil + CLOCK_TOLERANCE_SECONDS)
    throw new TokenError('ERR_TOKEN_KEY_RETIRED', 'iat after the key retired');
  // jose applied the tolerance to exp as well; the contract allows none there.
  if (hasExpired(exp as number, (clock ?? systemClock)())) {
    throw new errors.JWTExpired('"exp" claim timestamp check failed', payload, 'exp', 'check_failed');
  }
  // maxTokenAge bounds the age; this bounds the claimed lifetime (a far-future exp), by the token's kind.
  const lifetime = expected.lifetimeOf?.(payload) ?? expected.maxAgeSeconds;
  if ((exp as number) - (iat as number) > lifetime)
    throw new TokenError('ERR_TOKEN_LIFETIME', 'exp too far after iat');
  if (typeof sub !== 'string' || sub === '')
    throw new TokenError('ERR_TOKEN_SUBJECT', 'sub is not a non-empty string');
  if (typeof jti !== 'string' || jti === '') throw new TokenError('ERR_TOKEN_JTI', 'jti is not a string');
  return { ...payload, sub, jti, iat: iat as number };
}

export interface TokenVerifierDeps<TSettings> {
  readonly keys: () => Promise<VerificationKeys>;
  readonly settings: TSettings;
  readonly clock?: Clock;
}

type VerifiedPayload = Awaited<ReturnType<typeof verifyToken>>;

function createVerifier<TClaims>(
  deps: TokenVerifierDeps<TokenSettings>,
  expected: Expected,
  toClaims: (payload: VerifiedPayload) => TClaims,
): TokenVerifier<TClaims> {
  const issuers = [deps.settings.issuer, ...(deps.settings.formerIssuers ?? [])];
  const options = { keys: deps.keys, issuer: issuers, clock: deps.clock };
  const jose = joseOptions(issuers, expected);
  return { verify: async (token) => toClaims(await verifyToken(token, options, expected, jose)) };
}

/** Known scopes only: a retired one allows nothing, so a user narrowed to retired scopes gets 403s. */
function scopesOf(claim: unknown, emptyAllowed: boolean, known: (name: string) => boolean): Scope[] {
  if (typeof claim !== 'string' || (claim === '' && !emptyAllowed))
    throw new TokenError('ERR_TOKEN_SCOPE', 'scope is not a string');
  return sortScopes(claim.split(' ').filter(known) as Scope[]);
}

const isEpochSeconds = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0;

const isClientToken = (payload: JWTPayload) =>
  payload[CLIENT_ID_CLAIM] !== undefined && payload[CLIENT_ID_CLAIM] !== LOGIN_CLIENT_ID;

const isId = (value: unknown): value is string => typeof value === 'string' && value !== '';

const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/** `cnf` absent, or `{ jkt }` of a SHA-256 thumbprint and nothing else this service would have to honour. */
function boundKeyOf(payload: JWTPayload): string | undefined {
  const cnf = payload[CONFIRMATION_CLAIM];
  if (cnf === undefined) return undefined;
  const jkt = (cnf as { jkt?: unknown } | null)?.jkt;
  if (
    typeof cnf !== 'object' ||
    Object.keys(cnf as object).length !== 1 ||
    typeof jkt !== 'string' ||
    !THUMBPRINT.test(jkt)
  )
    throw new TokenError('ERR_TOKEN_CLIENT', 'cnf is not one jkt');
  return jkt;
}

/** Exactly one of `secret_id` and `connection_id`. */
function grantOf(payload: JWTPayload): ClientGrant {
  const secretId = payload[SECRET_ID_CLAIM];
  const connectionId = payload[CONNECTION_CLAIM];
  if (isId(secretId) && connectionId === undefined) return { secretId };
  if (isId(connectionId) && secretId === undefined) return { connectionId };
  throw new TokenError('ERR_TOKEN_CLIENT', 'client token without one secret id or connection id');
}

/**
 * The kind comes from the signed `client_id`: LOGIN_CLIENT_ID is a user's, any other a client's,
 * so a client id equal to a username is still a client. A user's token without one was signed
 * before user tokens had it (its lack of `scope` means every scope) and expires within accessTtl.
 */
export const createAccessTokenVerifier = (
  deps: TokenVerifierDeps<AccessTokenSettings>,
): AccessTokenVerifier => {
  const { accessTtlSeconds, clientAccessTtlSeconds } = deps.settings;
  return createVerifier(
    deps,
    {
      typ: ACCESS_TOKEN_TYPE,
      audience: deps.settings.audience,
      maxAgeSeconds: Math.max(accessTtlSeconds, clientAccessTtlSeconds),
      lifetimeOf: (payload) => (isClientToken(payload) ? clientAccessTtlSeconds : accessTtlSeconds),
      claims: [],
    },
    (payload): AccessClaims => {
      const customerId = payload[CUSTOMER_CLAIM];
      if (customerId !== undefined && (typeof customerId !== 'string' || customerId === '')) {
        throw new TokenError('ERR_TOKEN_CUSTOMER', 'customer claim is not a string');
      }
      const registered = {
        jti: payload.jti,
        issuer: payload.iss as string,
        audience: payload.aud as string | string[],
        issuedAt: payload.iat,
        expiresAt: payload.exp as number,
      };
      if (isClientToken(payload)) {
        if (payload[CLIENT_ID_CLAIM] !== payload.sub || payload[SESSION_CLAIM] !== undefined)
          throw new TokenError('ERR_TOKEN_CLIENT', 'client_id is not the subject, or a session');
        if (customerId === undefined)
          throw new TokenError('ERR_TOKEN_CLIENT', 'client token without a customer');
        return {
          kind: 'client',
          clientId: payload.sub,
          grant: grantOf(payload),
          jkt: boundKeyOf(payload),
          customerId,
          // No client is given customer:admin; one that says it has it is not believed.
          scopes: scopesOf(payload[SCOPE_CLAIM], false, isGrantableScope),
          ...registered,
        };
      }
      const sessionId = payload[SESSION_CLAIM];
      if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
        throw new TokenError('ERR_TOKEN_SESSION', 'sid is not a string');
      }
      const authTime = payload[AUTH_TIME_CLAIM];
      if (authTime !== undefined && !isEpochSeconds(authTime))
        throw new TokenError('ERR_TOKEN_AUTH_TIME', 'auth_time is not an integer');
      const scope = payload[SCOPE_CLAIM];
      if (payload[CONFIRMATION_CLAIM] !== undefined)
        throw new TokenError('ERR_TOKEN_CLIENT', 'a user token bound to a key');
      if (payload[CLIENT_ID_CLAIM] === LOGIN_CLIENT_ID && scope === undefined)
        throw new TokenError('ERR_TOKEN_SCOPE', 'a user token with client_id has no scope');
      return {
        kind: 'user',
        username: payload.sub,
        customerId: customerId ?? null,
        scopes: scope === undefined ? DEFAULT_USER_SCOPES : scopesOf(scope, true, isScope),
        sessionId,
        authTime,
        method: payload[ACR_CLAIM] === PASSKEY_ACR ? 'passkey' : 'password',
        ...registered,
      };
    },
  );
};

export const createRefreshTokenVerifier = (
  deps: TokenVerifierDeps<RefreshTokenSettings>,
): RefreshTokenVerifier =>
  createVerifier(
    deps,
    {
      typ: REFRESH_TOKEN_TYPE,
      // A refresh token's audience is the issuer that signed it, a former one included.
      audience: [deps.settings.issuer, ...(deps.settings.formerIssuers ?? [])],
      maxAgeSeconds: deps.settings.refreshTtlSeconds,
      claims: [SESSION_CLAIM, AUTH_TIME_CLAIM],
    },
    (payload) => {
      const sessionId = payload[SESSION_CLAIM];
      const authTime = payload[AUTH_TIME_CLAIM];
      if (typeof sessionId !== 'string' || sessionId === '')
        throw new TokenError('ERR_TOKEN_SESSION', 'sid is not a string');
      if (typeof authTime !== 'number' || !Number.isInteger(authTime))
        throw new TokenError('ERR_TOKEN_AUTH_TIME', 'auth_time is not an integer');
      // A platform's refresh token of a connection: never a user's, whatever its `sub` spells.
      if (payload[CLIENT_ID_CLAIM] !== undefined)
        throw new TokenError('ERR_TOKEN_CLIENT', 'a client refresh token');
      const method: SignInMethod = payload[ACR_CLAIM] === PASSKEY_ACR ? 'passkey' : 'password';
      return { username: payload.sub, sessionId, jti: payload.jti, authTime, method };
    },
  );

/** A platform's refresh token (createConnectionTokenIssuer): `sub` the connection, with `client_id` and `customer_id`. */
export const createConnectionRefreshTokenVerifier = (
  deps: TokenVerifierDeps<RefreshTokenSettings>,
): ConnectionRefreshTokenVerifier =>
  createVerifier(
    deps,
    {
      typ: REFRESH_TOKEN_TYPE,
      audience: [deps.settings.issuer, ...(deps.settings.formerIssuers ?? [])],
      maxAgeSeconds: deps.settings.refreshTtlSeconds,
      claims: [SESSION_CLAIM, AUTH_TIME_CLAIM, CLIENT_ID_CLAIM, CUSTOMER_CLAIM],
    },
    (payload) => {
      const { [SESSION_CLAIM]: sessionId, [AUTH_TIME_CLAIM]: authTime } = payload;
      const { [CLIENT_ID_CLAIM]: clientId, [CUSTOMER_CLAIM]: customerId } = payload;
      if (!isId(sessionId) || !isId(clientId) || !isId(customerId) || !isEpochSeconds(authTime))
        throw new TokenError('ERR_TOKEN_CLIENT', 'not a connection refresh token');
      return { connectionId: payload.sub, clientId, customerId, sessionId, jti: payload.jti, authTime };
    },
  );
