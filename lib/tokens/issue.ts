/** Signing users' and API clients' tokens; the header names `alg` and `kid`, but verifiers pin `alg`. */

import { randomUUID } from 'node:crypto';
import { type JWTPayload, SignJWT } from 'jose';
import { isGrantableScope, type Scope, scopeString, userTokenScopes } from '../scopes.ts';
import {
  ACCESS_TOKEN_TYPE,
  AUTH_TIME_CLAIM,
  CLIENT_ID_CLAIM,
  CONFIRMATION_CLAIM,
  CONNECTION_CLAIM,
  CUSTOMER_CLAIM,
  LOGIN_CLIENT_ID,
  REFRESH_TOKEN_TYPE,
  SCOPE_CLAIM,
  SECRET_ID_CLAIM,
  SESSION_CLAIM,
  SIGN_IN_CLAIMS,
  type SignInMethod,
} from './claims.ts';
import { SIGNING_ALGORITHM, type SigningKey } from './keys.ts';
import type { RefreshTokenSettings, TokenSettings } from './settings.ts';
import type { ClientGrant } from './verify.ts';

export interface TokenUser {
  readonly username: string;
  /** Null: no customer (auto-login context). */
  readonly customerId: string | null;
  /** Null or absent: the default scopes (`DEFAULT_USER_SCOPES`). */
  readonly scopes?: readonly Scope[] | null;
  /** The user item's `admin`, as read for this login or refresh: only it adds `customer:admin`. */
  readonly admin?: boolean;
}

export interface TokenRequest {
  readonly subject: TokenUser;
  readonly sessionId: string;
  readonly refreshJti: string;
  /** Epoch seconds of the login that started the session. */
  readonly authTime: number;
  /** How that login was made: its tokens' `amr` and `acr`. */
  readonly method: SignInMethod;
  /** The `iat` of both tokens, epoch seconds: from when the user was read (`issuedAtFor`). */
  readonly issuedAt: number;
  /** Epoch seconds: no token outlives the session's absolute lifetime. */
  readonly notAfter: number;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  readonly accessExpiresAt: Date;
}

export interface TokenIssuer {
  issue(request: TokenRequest): Promise<IssuedTokens>;
}

export interface ClientTokenRequest {
  readonly clientId: string;
  /** The secret it was granted with, or the connection a platform acts through. */
  readonly grant: ClientGrant;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  /** Epoch seconds: from when the client was read (`issuedAtFor`). */
  readonly issuedAt: number;
  /** The thumbprint of the DPoP key the token is bound to (`cnf.jkt`); undefined: a bearer token. */
  readonly jkt?: string | undefined;
}

export interface IssuedClientToken {
  readonly accessToken: string;
  /** Seconds from `iat` to `exp`. */
  readonly expiresIn: number;
}

export interface ClientTokenIssuer {
  issue(request: ClientTokenRequest): Promise<IssuedClientToken>;
}

export interface TokenIssuerDeps {
  readonly signingKey: () => Promise<SigningKey>;
  readonly settings: RefreshTokenSettings;
}

interface Unsigned {
  readonly claims: JWTPayload;
  readonly typ: string;
  readonly audience: string;
  readonly subject: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly jti: string;
}

/** The one place a token is signed, so every kind has the same header and registered claims. */
const sign = (signingKey: SigningKey, issuer: string, token: Unsigned): Promise<string> =>
  new SignJWT(token.claims)
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: token.typ, kid: signingKey.kid })
    .setIssuer(issuer)
    .setAudience(token.audience)
    .setSubject(token.subject)
    .setIssuedAt(token.issuedAt)
    .setExpirationTime(token.expiresAt)
    .setJti(token.jti)
    .sign(signingKey.key);

export function createTokenIssuer(deps: TokenIssuerDeps): TokenIssuer {
  const { settings } = deps;

  return {
    async issue(request) {
      const { subject, sessionId, refreshJti, authTime, method, issuedAt, notAfter } = request;
      const signingKey = await deps.signingKey();
      const expiry = (ttlSeconds: number) => Math.min(issuedAt + ttlSeconds, notAfter);
      const common = { subject: subject.username, issuedAt };
      const accessExpiresAt = expiry(settings.accessTtlSeconds);
      const [accessToken, refreshToken] = await Promise.all([
        sign(signingKey, settings.issuer, {
          ...common,
          claims: {
            [CLIENT_ID_CLAIM]: LOGIN_CLIENT_ID,
            [SESSION_CLAIM]: sessionId,
            ...(subject.customerId !== null && { [CUSTOMER_CLAIM]: subject.customerId }),
            // Explicit, for resource servers other than ours: null (not narrowed) is the default scopes,
            // a scope no route needs (tokens:introspect) is an API client's, and customer:admin the admin's.
            [SCOPE_CLAIM]: scopeString(userTokenScopes(subject)),
            [AUTH_TIME_CLAIM]: authTime,
            ...SIGN_IN_CLAIMS[method],
          },
          typ: ACCESS_TOKEN_TYPE,
          audience: settings.audience,
          expiresAt: accessExpiresAt,
          jti: randomUUID(),
        }),
        sign(signingKey, settings.issuer, {
          ...common,
          claims: { [SESSION_CLAIM]: sessionId, [AUTH_TIME_CLAIM]: authTime, ...SIGN_IN_CLAIMS[method] },
          typ: REFRESH_TOKEN_TYPE,
          audience: settings.issuer,
          expiresAt: expiry(settings.refreshTtlSeconds),
          jti: refreshJti,
        }),
      ]);
      return { accessToken, refreshToken, issuedAt, accessExpiresAt: new Date(accessExpiresAt * 1000) };
    },
  };
}

/**
 * Like a user's access token, plus `client_id` (= `sub`), `scope` and `secret_id`; no session to
 * refresh, no `auth_time`. Never `customer:admin`, whatever the client's record says.
 */
export function createClientTokenIssuer(deps: {
  readonly signingKey: () => Promise<SigningKey>;
  readonly settings: TokenSettings;
}): ClientTokenIssuer {
  const { settings } = deps;
  return {
    async issue(request) {
      const accessToken = await sign(
        await deps.signingKey(),
        settings.issuer,
        clientAccess(settings, request),
      );
      return { accessToken, expiresIn: settings.accessTtlSeconds };
    },
  };
}

const clientAccess = (settings: TokenSettings, request: ClientTokenRequest): Unsigned => ({
  claims: {
    [CLIENT_ID_CLAIM]: request.clientId,
    [SCOPE_CLAIM]: scopeString(request.scopes.filter(isGrantableScope)),
    [CUSTOMER_CLAIM]: request.customerId,
    ...('secretId' in request.grant
      ? { [SECRET_ID_CLAIM]: request.grant.secretId }
      : { [CONNECTION_CLAIM]: request.grant.connectionId }),
    ...(request.jkt !== undefined && { [CONFIRMATION_CLAIM]: { jkt: request.jkt } }),
  },
  typ: ACCESS_TOKEN_TYPE,
  audience: settings.audience,
  subject: request.clientId,
  issuedAt: request.issuedAt,
  expiresAt: request.issuedAt + settings.accessTtlSeconds,
  jti: randomUUID(),
});

export interface ConnectionTokenRequest {
  readonly clientId: string;
  readonly connectionId: string;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  readonly sessionId: string;
  readonly refreshJti: string;
  /** Epoch seconds of the approval the session started from. */
  readonly authTime: number;
  /** Epoch seconds: from when the platform was read (`issuedAtFor`). */
  readonly issuedAt: number;
  /** Epoch seconds: the session's end, which no refresh token outlives. */
  readonly notAfter: number;
  /** The access token's DPoP key (`cnf.jkt`); the refresh token stays bound to the platform's credentials. */
  readonly jkt?: string | undefined;
}

export interface IssuedConnectionTokens extends IssuedClientToken {
  readonly refreshToken: string;
}

export interface ConnectionTokenIssuer {
  issue(request: ConnectionTokenRequest): Promise<IssuedConnectionTokens>;
}

/**
 * A platform's tokens of a connection: the access token a client's (RFC 9068, `client_id` the
 * platform, `customer_id` the customer, `connection_id` in place of `secret_id`), and a refresh
 * token whose `sub` is the connection, with `client_id` (so no user's refresh takes it).
 */
export function createConnectionTokenIssuer(deps: {
  readonly signingKey: () => Promise<SigningKey>;
  readonly settings: TokenSettings & { readonly refreshTtlSeconds: number };
}): ConnectionTokenIssuer {
  const { settings } = deps;
  return {
    async issue(request) {
      const signingKey = await deps.signingKey();
      const [accessToken, refreshToken] = await Promise.all([
        sign(
          signingKey,
          settings.issuer,
          clientAccess(settings, { ...request, grant: { connectionId: request.connectionId } }),
        ),
        sign(signingKey, settings.issuer, {
          claims: {
            [CLIENT_ID_CLAIM]: request.clientId,
            [CUSTOMER_CLAIM]: request.customerId,
            [SESSION_CLAIM]: request.sessionId,
            [AUTH_TIME_CLAIM]: request.authTime,
          },
          typ: REFRESH_TOKEN_TYPE,
          audience: settings.issuer,
          subject: request.connectionId,
          issuedAt: request.issuedAt,
          expiresAt: Math.min(request.issuedAt + settings.refreshTtlSeconds, request.notAfter),
          jti: request.refreshJti,
        }),
      ]);
      return { accessToken, refreshToken, expiresIn: settings.accessTtlSeconds };
    },
  };
}
