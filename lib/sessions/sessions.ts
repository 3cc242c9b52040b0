// Sessions (docs/tokens-and-sessions.md, "Sessions: rotation, reuse detection, logout and revocation").
// Every refusal is one INVALID_REFRESH_TOKEN, answered like a failed login: "log in again".
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { UserReader, UserRecord } from '../accounts/repository.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { SessionTokenRevoker } from '../revocation/revocation.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import { type Clock, epochSeconds, systemClock } from '../time.ts';
import type { SignInMethod } from '../tokens/claims.ts';
import type { IssuedTokens, TokenIssuer } from '../tokens/issue.ts';
import type { RefreshClaims, RefreshTokenVerifier } from '../tokens/verify.ts';
import type { RefreshStep, Session, SessionStore } from './repository.ts';

export interface SessionSettings {
  /** Absolute, from the login. */
  readonly maxLifetimeSeconds: number;
  /** How long the immediately previous refresh token may be presented again; 0 = never. */
  readonly reuseGraceSeconds: number;
}

export interface SessionDeps {
  readonly store: SessionStore;
  readonly tokens: TokenIssuer;
  readonly settings: SessionSettings;
  readonly clock?: Clock;
}

export interface RefreshDeps extends SessionDeps {
  readonly users: UserReader & SessionTokenRevoker;
  /** A session revoked for reuse is remembered this long. */
  readonly accessTtlSeconds: number;
  readonly refreshTokens: RefreshTokenVerifier;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

const invalidRefreshToken = (cause?: unknown) => new AppError('INVALID_REFRESH_TOKEN', { cause });

/** `readAt` is when the user was read, so a revocation after it still reaches the session. */
export async function startSession(
  deps: SessionDeps,
  user: UserRecord,
  readAt: Date,
  method: SignInMethod = 'password',
): Promise<IssuedTokens> {
  const authTime = issuedAtFor(user, readAt);
  const sessionId = randomUUID();
  const refreshJti = randomUUID();
  const expiresAt = authTime + deps.settings.maxLifetimeSeconds;
  const tokens = await deps.tokens.issue({
    subject: user,
    sessionId,
    refreshJti,
    authTime,
    method,
    issuedAt: authTime,
    notAfter: expiresAt,
  });
  // Tokens leave only after their session is stored: a failed write answers 503, no token.
  await deps.store.create({
    sessionId,
    username: user.username,
    createdAt: authTime,
    expiresAt,
    currentJti: refreshJti,
  });
  return tokens;
}

export async function refreshSession(deps: RefreshDeps, refreshToken: string): Promise<IssuedTokens> {
  const clock = deps.clock ?? systemClock;
  const refused = (reason: string, cause?: unknown) => {
    deps.logger.info('refresh refused', { reason });
    return invalidRefreshToken(cause);
  };
  let claims: RefreshClaims;
  try {
    claims = await deps.refreshTokens.verify(refreshToken);
  } catch (error) {
    throw refused('invalid token', error);
  }
  const readAt = clock();
  const user = await deps.users.findByUsername(claims.username);
  if (user === null || !user.enabled) throw refused('user unknown or disabled');
  if (claims.authTime < user.revokedBefore) throw refused('user revoked the session');

  const step = {
    sessionId: claims.sessionId,
    username: user.username,
    fromJti: claims.jti,
    toJti: randomUUID(),
    now: clock(),
  };
  const outcome = await rotateSession(deps, step, async (session) => {
    // The access tokens first: if the session's revocation then fails, the client's retry
    // finds the session still live, detects the reuse again and finishes both.
    const revoked = await deps.users.revokeSessionTokens(
      step.username,
      step.sessionId,
      lastTokenExpiry(step.now, deps.accessTtlSeconds),
    );
    if (revoked === 'cutoff') signedOutEverywhere(deps.logger, step.username);
    await deps.store.revoke(step.sessionId, 'reuse', step.now);
    deps.logger.warn('refresh token reuse: session revoked', {
      sessionId: step.sessionId,
      username: step.username,
      generation: session.generation,
    });
  });
  if (outcome === null) throw refused('not the current token of a live session');

  // The user as read now: its scopes and `admin` make the new access token's scope; the login time stays.
  const tokens = await deps.tokens.issue({
    subject: user,
    sessionId: outcome.session.sessionId,
    refreshJti: outcome.jti,
    authTime: outcome.session.createdAt,
    method: claims.method,
    issuedAt: issuedAtFor(user, readAt),
    notAfter: outcome.session.expiresAt,
  });
  deps.metrics.count({ name: 'Refresh' });
  return tokens;
}

/**
 * One step of a refresh-token chain, a user's session's or a platform's connection's: the current
 * token moves on, in one conditional write. Not current: our own lost-answer refresh (carry on),
 * the previous token within the grace window (the current one again, no write, so the window
 * never grows), or reuse (`onReuse` ends what the chain reaches, and null).
 */
export async function rotateSession(
  deps: Pick<RefreshDeps, 'store' | 'settings' | 'metrics'>,
  step: RefreshStep,
  onReuse: (session: Session) => Promise<void>,
): Promise<{ session: Session; jti: string } | null> {
  const refreshed = await deps.store.refresh(step);
  if (refreshed !== null) return { session: refreshed, jti: step.toJti };
  const session = await deps.store.get(step.sessionId);
  if (session === null || session.username !== step.username) return null;
  if (session.revokedAt !== null || session.expiresAt <= epochSeconds(step.now)) return null;
  if (session.currentJti === step.toJti) return { session, jti: step.toJti };
  const graceMs = deps.settings.reuseGraceSeconds * 1000;
  if (
    graceMs > 0 &&
    session.previousJti === step.fromJti &&
    session.previousSpentAt !== null &&
    step.now.getTime() - session.previousSpentAt <= graceMs
  ) {
    return { session, jti: session.currentJti };
  }
  await onReuse(session);
  deps.metrics.count({ name: 'RefreshReuseDetected' });
  return null;
}

export interface LogoutDeps
  extends Pick<RefreshDeps, 'store' | 'refreshTokens' | 'clock' | 'metrics' | 'logger'> {
  readonly users: SessionTokenRevoker;
  /** The session's access tokens are listed as revoked this long: the last one issued expires by then. */
  readonly accessTtlSeconds: number;
}

/**
 * A current or spent refresh token ends its session, its access tokens too (the authorizer
 * refuses them within the revocation bound, as after reuse); silent about an invalid one
 * (RFC 7009 §2.2).
 */
export async function endSession(deps: LogoutDeps, refreshToken: string): Promise<void> {
  let claims: RefreshClaims;
  try {
    claims = await deps.refreshTokens.verify(refreshToken);
  } catch {
    return;
  }
  const now = (deps.clock ?? systemClock)();
  // The access tokens first, as for reuse: if ending the session then fails, the answer is a
  // 503 and the client's retry finishes both.
  const revoked = await deps.users.revokeSessionTokens(
    claims.username,
    claims.sessionId,
    lastTokenExpiry(now, deps.accessTtlSeconds),
  );
  if (revoked === 'cutoff') signedOutEverywhere(deps.logger, claims.username);
  await deps.store.revoke(claims.sessionId, 'logout', now);
  deps.metrics.count({ name: 'Logout' });
}

/** A refresh in flight when its session ends is answered within API Gateway's 29 s integration timeout. */
export const REFRESH_IN_FLIGHT_SECONDS = 30;

/**
 * Until when a session ended at `now` may hold a live access token: one issued now lives
 * `accessTtlSeconds`, one a refresh in flight issues REFRESH_IN_FLIGHT_SECONDS later at most.
 */
export const lastTokenExpiry = (now: Date, accessTtlSeconds: number) =>
  epochSeconds(now) + accessTtlSeconds + REFRESH_IN_FLIGHT_SECONDS;

/** MAX_REVOKED_SESSIONS listed already: the user's cutoff moved instead, ending every session of it. */
const signedOutEverywhere = (logger: Pick<Logger, 'warn'>, username: string) =>
  logger.warn('revoked sessions full: every session of the user ended', { username });

/** The body of /token/refresh and /logout. The limit bounds the work a request can cause. */
export const RefreshRequestSchema = v.object({
  refreshToken: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(4096, 'must be at most 4096 characters'),
  ),
});

export const toRefreshResponse = (tokens: IssuedTokens) => ({
  token: tokens.accessToken,
  refreshToken: tokens.refreshToken,
  expireAt: tokens.accessExpiresAt.toISOString(),
});
