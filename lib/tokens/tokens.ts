/**
 * Access and refresh tokens (docs/tokens-and-sessions.md "Tokens"). The two are told apart by
 * `typ` and by audience, so neither stands in for the other; the token's header never picks
 * the algorithm, and picks a key only among the known ones.
 */

import { randomUUID } from 'node:crypto';
import { errors, type JWTHeaderParameters, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { ALL_SCOPES, isScope, type Scope, scopeString, sortScopes } from '../scopes.ts';
import { type Clock, hasExpired, systemClock } from '../time.ts';
import { SIGNING_ALGORITHM, type SigningKey, type VerificationKeys } from './keys.ts';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const REFRESH_TOKEN_TYPE = 'rt+jwt';
/** The stage's token rules (lib/config.ts reads them from TOKEN_* and *_TOKEN_TTL). */
export interface TokenSettings {
  readonly issuer: string;
  /** The carrier's API; must differ from the issuer, the refresh tokens' audience. */
  readonly audience: string;
  readonly accessTtlSeconds: number;
}

/** What a verifier of access tokens needs besides: the lifetime of API clients' tokens. */
export type AccessTokenSettings = TokenSettings & { readonly clientAccessTtlSeconds: number };

export type RefreshTokenSettings = TokenSettings & { readonly refreshTtlSeconds: number };

/**
 * Clock skew tolerated on `iat` and `nbf`: the signing container's clock may run ahead of the
 * verifier's. Never on `exp`, which is the `expireAt` login-extended promised (`hasExpired`).
 */
export const CLOCK_TOLERANCE_SECONDS = 5;
/** The private claim that carries the customer account of the caller (the auto-login context). */
export const CUSTOMER_CLAIM = 'customer_id';
/** The session id, in both tokens (`sid`): a session revoked for reuse stops its access tokens too. */
export const SESSION_CLAIM = 'sid';
/** An API client's token: its client id (RFC 9068 section 2.2), also its `sub`. Never in a user's token. */
export const CLIENT_ID_CLAIM = 'client_id';
/** An API client's token: the id of the secret it was granted with, so removing that secret stops it. */
export const SECRET_ID_CLAIM = 'secret_id';
/** The scopes of a token (RFC 9068 section 2.2.3): a client's always, a user's only when narrowed. */
export const SCOPE_CLAIM = 'scope';

/** The user a login token speaks for. */
export interface TokenUser {
  readonly username: string;
  /** The customer whose pickup addresses and shipments this login uses; null when it has none. */
  readonly customerId: string | null;
  /** The scopes an operator narrowed the user to; null or absent: every scope (the seed's contract). */
  readonly scopes?: readonly Scope[] | null;
}

/** Whom a token speaks for. */
export type Subject =
  | { readonly kind: 'user'; readonly username: string }
  | { readonly kind: 'client'; readonly clientId: string };

/** The caller of a protected route: whom its token speaks for, the customer, and what it may do. */
export interface Caller {
  readonly subject: Subject;
  /** The customer whose shipments the caller works with; null when it has none. */
  readonly customerId: string | null;
  readonly scopes: readonly Scope[];
}

/** What to sign: the subject, its session, and the bounds the session sets on every token. */
export interface TokenRequest {
  readonly subject: TokenUser;
  /** The session the refresh token belongs to. */
  readonly sessionId: string;
  /** The refresh token's `jti`, chosen by the session before it is signed. */
  readonly refreshJti: string;
  /** Epoch seconds of the login that started the session. */
  readonly authTime: number;
  /** The `iat` of both tokens, epoch seconds: from when the user was read (`issuedAtFor`). */
  readonly issuedAt: number;
  /** Epoch seconds: no token outlives the session's absolute lifetime. */
  readonly notAfter: number;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** The `iat` of both tokens, epoch seconds. */
  readonly issuedAt: number;
  /** The access token's `exp`, to the second. */
  readonly accessExpiresAt: Date;
}

export interface TokenIssuer {
  issue(request: TokenRequest): Promise<IssuedTokens>;
}

interface VerifiedAccess {
  readonly customerId: string | null;
  /** What the token may do: a user's token without a `scope` claim may do everything. */
  readonly scopes: readonly Scope[];
  /** `iat`, epoch seconds. */
  readonly issuedAt: number;
  /** `exp`, epoch seconds: the token is valid strictly before this instant. */
  readonly expiresAt: number;
}

/** A verified access token of a user's login. */
export interface UserAccessClaims extends VerifiedAccess {
  readonly kind: 'user';
  readonly username: string;
  /** The session the token was issued for; undefined in tokens signed before `sid` was added. */
  readonly sessionId: string | undefined;
}

/** A verified access token of an API client (the client credentials grant). */
export interface ClientAccessClaims extends VerifiedAccess {
  readonly kind: 'client';
  readonly clientId: string;
  /** The secret the token was granted with. */
  readonly secretId: string;
}

export type AccessClaims = UserAccessClaims | ClientAccessClaims;

/** What to sign for an API client that has just proven a secret. */
export interface ClientTokenRequest {
  readonly clientId: string;
  readonly secretId: string;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  /** The `iat`, epoch seconds: from when the client was read (`issuedAtFor`). */
  readonly issuedAt: number;
}

export interface IssuedClientToken {
  readonly accessToken: string;
  /** Seconds from `iat` to `exp`: the `expires_in` of the answer. */
  readonly expiresIn: number;
}

export interface ClientTokenIssuer {
  issue(request: ClientTokenRequest): Promise<IssuedClientToken>;
}

/** A verified refresh token. */
export interface RefreshClaims {
  readonly username: string;
  readonly sessionId: string;
  readonly jti: string;
  /** Epoch seconds of the login that started the session. */
  readonly authTime: number;
}

export interface TokenVerifier<TClaims> {
  /** Resolves with the token's claims, or rejects for any token that is not valid for this use. */
  verify(token: string): Promise<TClaims>;
}
export type AccessTokenVerifier = TokenVerifier<AccessClaims>;
export type RefreshTokenVerifier = TokenVerifier<RefreshClaims>;

export interface TokenIssuerDeps {
  readonly signingKey: () => Promise<SigningKey>;
  readonly settings: RefreshTokenSettings;
}

export function createTokenIssuer(deps: TokenIssuerDeps): TokenIssuer {
  const { settings } = deps;

  return {
    async issue(request) {
      const { subject, sessionId, refreshJti, authTime, issuedAt, notAfter } = request;
      const signingKey = await deps.signingKey();
      const expiry = (ttlSeconds: number) => Math.min(issuedAt + ttlSeconds, notAfter);
      const sign = (claims: JWTPayload, typ: string, audience: string, expiresAt: number, jti: string) => {
        const header: JWTHeaderParameters = { alg: SIGNING_ALGORITHM, typ, kid: signingKey.kid };
        return new SignJWT(claims)
          .setProtectedHeader(header)
          .setIssuer(settings.issuer)
          .setAudience(audience)
          .setSubject(subject.username)
          .setIssuedAt(issuedAt)
          .setExpirationTime(expiresAt)
          .setJti(jti)
          .sign(signingKey.key);
      };
      const accessClaims = {
        [SESSION_CLAIM]: sessionId,
        ...(subject.customerId !== null && { [CUSTOMER_CLAIM]: subject.customerId }),
        ...(subject.scopes != null && { [SCOPE_CLAIM]: scopeString(subject.scopes) }),
      };
      const accessExpiresAt = expiry(settings.accessTtlSeconds);
      const [accessToken, refreshToken] = await Promise.all([
        sign(accessClaims, ACCESS_TOKEN_TYPE, settings.audience, accessExpiresAt, randomUUID()),
        sign(
          { [SESSION_CLAIM]: sessionId, auth_time: authTime },
          REFRESH_TOKEN_TYPE,
          settings.issuer,
          expiry(settings.refreshTtlSeconds),
          refreshJti,
        ),
      ]);
      return { accessToken, refreshToken, issuedAt, accessExpiresAt: new Date(accessExpiresAt * 1000) };
    },
  };
}

/**
 * Access tokens for API clients: the key set, issuer, audience and `typ` of a user's access
 * token, with `client_id` (= `sub`), `scope` and the secret's id, and no session: nothing to refresh.
 */
export function createClientTokenIssuer(deps: {
  readonly signingKey: () => Promise<SigningKey>;
  readonly settings: TokenSettings;
}): ClientTokenIssuer {
  const { settings } = deps;
  return {
    async issue({ clientId, secretId, customerId, scopes, issuedAt }) {
      const signingKey = await deps.signingKey();
      const accessToken = await new SignJWT({
        [CLIENT_ID_CLAIM]: clientId,
        [SCOPE_CLAIM]: scopeString(scopes),
        [CUSTOMER_CLAIM]: customerId,
        [SECRET_ID_CLAIM]: secretId,
      })
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid: signingKey.kid })
        .setIssuer(settings.issuer)
        .setAudience(settings.audience)
        .setSubject(clientId)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + settings.accessTtlSeconds)
        .setJti(randomUUID())
        .sign(signingKey.key);
      return { accessToken, expiresIn: settings.accessTtlSeconds };
    },
  };
}

interface VerifyOptions {
  readonly keys: () => Promise<VerificationKeys>;
  readonly issuer: string;
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

/**
 * Whether `segment` re-encodes to itself as unpadded base64url, without decoding it: the last
 * character of a segment 2 or 3 long modulo 4 carries 4 or 2 unused bits, which must be zero.
 */
export function isCanonicalBase64url(segment: string): boolean {
  const tail = segment.length % 4;
  if (tail === 1 || !BASE64URL.test(segment)) return false;
  if (tail === 0) return true;
  const value = BASE64URL_ALPHABET.indexOf(segment.charAt(segment.length - 1));
  return (value & (tail === 2 ? 0x0f : 0x03)) === 0;
}

/**
 * Refuses a token in any spelling but the issued one, before any cryptography: jose decodes
 * leniently, and API Gateway caches decisions per raw header (docs/tokens-and-sessions.md).
 */
function assertCanonical(token: string): void {
  for (const segment of token.split('.')) {
    if (!isCanonicalBase64url(segment))
      throw new TokenError('ERR_TOKEN_NOT_CANONICAL', 'a segment is not canonical base64url');
  }
}

/** Verifies a token of one type and audience: pinned algorithm, issuer, type, required claims. */
async function verifyToken(
  token: string,
  { keys, issuer, clock }: VerifyOptions,
  expected: {
    typ: string;
    audience: string;
    maxAgeSeconds: number;
    claims: string[];
    /** The longest lifetime of this token, by its payload (a client's differs from a user's). */
    lifetimeOf?: (payload: JWTPayload) => number;
  },
): Promise<JWTPayload & { sub: string; jti: string; iat: number }> {
  assertCanonical(token);
  const known = await keys();
  const getKey = (header: JWTHeaderParameters) => {
    const key = header.kid === undefined ? undefined : known.get(header.kid);
    if (key === undefined) throw new TokenError('ERR_TOKEN_UNKNOWN_KID', 'unknown kid');
    return key;
  };
  const { payload, protectedHeader } = await jwtVerify(token, getKey, {
    algorithms: [SIGNING_ALGORITHM],
    issuer,
    audience: expected.audience,
    typ: expected.typ,
    requiredClaims: ['sub', 'jti', 'iat', 'exp', ...expected.claims],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    // Also rejects an `iat` in the future, and a token whose lifetime exceeds the stage's.
    maxTokenAge: expected.maxAgeSeconds,
    ...(clock && { currentDate: clock() }),
  });
  const { sub, jti, iat, exp } = payload;
  // A retired key's private half may have leaked with the keyring: whatever it signs after its
  // retirement (and the containers' reload) is forged (docs/tokens-and-sessions.md "Signing keys").
  const signedUntil = known.signedUntil.get(protectedHeader.kid ?? '');
  if (signedUntil !== undefined && (iat as number) > signedUntil + CLOCK_TOLERANCE_SECONDS)
    throw new TokenError('ERR_TOKEN_KEY_RETIRED', 'iat after the key retired');
  // jose applied the tolerance to exp as well; the contract allows none there.
  if (hasExpired(exp as number, (clock ?? systemClock)())) {
    throw new errors.JWTExpired('"exp" claim timestamp check failed', payload, 'exp', 'check_failed');
  }
  // maxTokenAge bounds the age; this bounds the claimed lifetime (a far-future exp).
  const lifetime = expected.lifetimeOf?.(payload) ?? expected.maxAgeSeconds;
  // An unexpired token's age is below its lifetime: this bounds both by the token's own kind.
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

/** A verifier for one kind of token: what to expect of it, and what to make of its payload. */
function createVerifier<TClaims>(
  deps: TokenVerifierDeps<TokenSettings>,
  expected: Parameters<typeof verifyToken>[2],
  toClaims: (payload: VerifiedPayload) => TClaims,
): TokenVerifier<TClaims> {
  const options = { keys: deps.keys, issuer: deps.settings.issuer, clock: deps.clock };
  return { verify: async (token) => toClaims(await verifyToken(token, options, expected)) };
}

/**
 * The scopes of a `scope` claim: the ones this service knows (a retired scope allows nothing).
 * A user narrowed to scopes since retired has an empty one, which allows no route (a 403).
 */
function scopesOf(claim: unknown, emptyAllowed: boolean): Scope[] {
  if (typeof claim !== 'string' || (claim === '' && !emptyAllowed))
    throw new TokenError('ERR_TOKEN_SCOPE', 'scope is not a string');
  return sortScopes(claim.split(' ').filter(isScope));
}

const isClientToken = (payload: JWTPayload) => payload[CLIENT_ID_CLAIM] !== undefined;

/**
 * Access tokens of both kinds: a user's (no `client_id`) and an API client's (`client_id` = `sub`,
 * a `scope`, a secret id, a customer, no session). The kind is read from the signed claims, so
 * neither can pass for the other: a client id equal to a username is still a client.
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
      const times = { issuedAt: payload.iat, expiresAt: payload.exp as number };
      if (isClientToken(payload)) {
        const secretId = payload[SECRET_ID_CLAIM];
        if (payload[CLIENT_ID_CLAIM] !== payload.sub || payload[SESSION_CLAIM] !== undefined)
          throw new TokenError('ERR_TOKEN_CLIENT', 'client_id is not the subject, or a session');
        if (typeof secretId !== 'string' || secretId === '' || customerId === undefined)
          throw new TokenError('ERR_TOKEN_CLIENT', 'client token without a secret id or a customer');
        return {
          kind: 'client',
          clientId: payload.sub,
          secretId,
          customerId,
          scopes: scopesOf(payload[SCOPE_CLAIM], false),
          ...times,
        };
      }
      const sessionId = payload[SESSION_CLAIM];
      if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
        throw new TokenError('ERR_TOKEN_SESSION', 'sid is not a string');
      }
      const scope = payload[SCOPE_CLAIM];
      return {
        kind: 'user',
        username: payload.sub,
        customerId: customerId ?? null,
        scopes: scope === undefined ? ALL_SCOPES : scopesOf(scope, true),
        sessionId,
        ...times,
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
      // Refresh tokens are for this service alone: its own issuer URL is their audience.
      audience: deps.settings.issuer,
      maxAgeSeconds: deps.settings.refreshTtlSeconds,
      claims: [SESSION_CLAIM, 'auth_time'],
    },
    (payload) => {
      const sessionId = payload[SESSION_CLAIM];
      const authTime = payload.auth_time;
      if (typeof sessionId !== 'string' || sessionId === '')
        throw new TokenError('ERR_TOKEN_SESSION', 'sid is not a string');
      if (typeof authTime !== 'number' || !Number.isInteger(authTime))
        throw new TokenError('ERR_TOKEN_AUTH_TIME', 'auth_time is not an integer');
      return { username: payload.sub, sessionId, jti: payload.jti, authTime };
    },
  );
