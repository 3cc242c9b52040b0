/**
 * Access and refresh tokens: JWTs signed with Ed25519 (`EdDSA`), each with a `kid` header.
 *
 * Both carry iss, aud, sub (the username), iat, exp and jti. They are told apart twice, so
 * neither can stand in for the other: by the `typ` header (`at+jwt`, RFC 9068, for access;
 * `rt+jwt` for refresh) and by the audience (the carrier API for access, this service's own
 * issuer URL for refresh). Verification pins the algorithm, issuer, audience and type; the
 * token's header never chooses the algorithm, and picks a key only among the known ones.
 */
import { randomUUID } from 'node:crypto';
import { type JWTHeaderParameters, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { TokenSettings } from '../config.ts';
import { SIGNING_ALGORITHM, type SigningKey, type VerificationKeys } from './keys.ts';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const REFRESH_TOKEN_TYPE = 'rt+jwt';
/** Seconds of clock skew tolerated between this service and the verifier. */
export const CLOCK_TOLERANCE_SECONDS = 5;
/** The private claim that carries the customer account of the caller (the auto-login context). */
export const CUSTOMER_CLAIM = 'customer_id';

export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

/** Whom a token speaks for. */
export interface TokenSubject {
  readonly username: string;
  /** The customer whose pickup addresses and shipments this login uses; null when it has none. */
  readonly customerId: string | null;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** The access token's `exp`, to the second. */
  readonly accessExpiresAt: Date;
}

export interface TokenIssuer {
  issue(subject: TokenSubject): Promise<IssuedTokens>;
}

export interface AccessTokenVerifier {
  /** Resolves with the token's subject, or rejects for any token that is not a valid access token. */
  verify(token: string): Promise<TokenSubject>;
}

const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

export function createTokenIssuer(deps: {
  readonly signingKey: SigningKey;
  readonly settings: TokenSettings & { readonly refreshTtlSeconds: number };
  readonly clock?: Clock;
}): TokenIssuer {
  const { signingKey, settings, clock = systemClock } = deps;

  const sign = (
    claims: JWTPayload,
    typ: string,
    audience: string,
    subject: string,
    issuedAt: number,
    ttlSeconds: number,
  ) => {
    const header: JWTHeaderParameters = { alg: SIGNING_ALGORITHM, typ, kid: signingKey.kid };
    return new SignJWT(claims)
      .setProtectedHeader(header)
      .setIssuer(settings.issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .setJti(randomUUID())
      .sign(signingKey.key);
  };

  return {
    async issue({ username, customerId }) {
      const issuedAt = epochSeconds(clock());
      const accessClaims = customerId === null ? {} : { [CUSTOMER_CLAIM]: customerId };
      const [accessToken, refreshToken] = await Promise.all([
        sign(
          accessClaims,
          ACCESS_TOKEN_TYPE,
          settings.audience,
          username,
          issuedAt,
          settings.accessTtlSeconds,
        ),
        sign({}, REFRESH_TOKEN_TYPE, settings.issuer, username, issuedAt, settings.refreshTtlSeconds),
      ]);
      return {
        accessToken,
        refreshToken,
        accessExpiresAt: new Date((issuedAt + settings.accessTtlSeconds) * 1000),
      };
    },
  };
}

export function createAccessTokenVerifier(deps: {
  readonly keys: VerificationKeys;
  readonly settings: TokenSettings;
  readonly clock?: Clock;
}): AccessTokenVerifier {
  const { keys, settings, clock } = deps;
  const getKey = (header: JWTHeaderParameters) => {
    const key = header.kid === undefined ? undefined : keys.get(header.kid);
    if (key === undefined) throw new Error('unknown kid');
    return key;
  };
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, getKey, {
        algorithms: [SIGNING_ALGORITHM],
        issuer: settings.issuer,
        audience: settings.audience,
        typ: ACCESS_TOKEN_TYPE,
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // Also rejects an `iat` in the future, and a token whose lifetime exceeds the stage's.
        maxTokenAge: settings.accessTtlSeconds,
        ...(clock && { currentDate: clock() }),
      });
      const customerId = payload[CUSTOMER_CLAIM];
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('sub is not a username');
      if (customerId !== undefined && (typeof customerId !== 'string' || customerId === '')) {
        throw new Error('customer claim is not a string');
      }
      return { username: payload.sub, customerId: customerId ?? null };
    },
  };
}
