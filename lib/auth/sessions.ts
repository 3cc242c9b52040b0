/**
 * Sessions: token families with refresh-token rotation and reuse detection (RFC 9700 §4.14).
 *
 * - Every login starts a family. Refreshing spends the presented refresh token and returns
 *   a new access token and a new refresh token of the same family; one conditional write
 *   decides it, so of two refreshes with one token exactly one succeeds.
 * - A spent token presented again is reuse: a sign that the token leaked. The whole family
 *   is revoked, its newest refresh token included. Only the immediately previous token
 *   may be presented again, and only within the stage's grace window (default: none).
 * - A family ends at its absolute lifetime, however often it is refreshed, and when the
 *   user is disabled, removed, changes password or is logged out (the user's cutoff).
 * - Every refusal is INVALID_CREDENTIALS, the same answer as a failed login.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Family, FamilyStore } from '../sessions/repository.ts';
import type { UserReader, UserRecord } from '../users/repository.ts';
import {
  type Clock,
  epochSeconds,
  type IssuedTokens,
  type RefreshClaims,
  type RefreshTokenVerifier,
  systemClock,
  type TokenIssuer,
} from './tokens.ts';

export interface SessionSettings {
  /** The absolute lifetime of a family, from its login. */
  readonly maxLifetimeSeconds: number;
  /** How long the immediately previous refresh token may be presented again; 0 = never. */
  readonly reuseGraceSeconds: number;
}

export interface SessionDeps {
  readonly families: FamilyStore;
  readonly tokens: TokenIssuer;
  readonly settings: SessionSettings;
  readonly clock?: Clock;
}

export interface RefreshDeps extends SessionDeps {
  readonly users: UserReader;
  readonly refreshTokens: RefreshTokenVerifier;
  readonly logger: Logger;
}

const invalidCredentials = (cause?: unknown) => new AppError('INVALID_CREDENTIALS', { cause });

/** Starts a family for a user who has just proven their password, and issues its first tokens. */
export async function startSession(deps: SessionDeps, user: UserRecord): Promise<IssuedTokens> {
  const now = epochSeconds((deps.clock ?? systemClock)());
  const authTime = Math.max(now, user.revokedBefore);
  const familyId = randomUUID();
  const refreshJti = randomUUID();
  const expiresAt = authTime + deps.settings.maxLifetimeSeconds;
  const tokens = await deps.tokens.issue({
    subject: user,
    familyId,
    refreshJti,
    authTime,
    notBefore: user.revokedBefore,
    notAfter: expiresAt,
  });
  // Tokens leave only after their family is stored: a failed write answers 503, no token.
  await deps.families.create({
    familyId,
    username: user.username,
    createdAt: authTime,
    expiresAt,
    currentJti: refreshJti,
  });
  return tokens;
}

/** POST /token/refresh: a live, current refresh token in; a new access and refresh token out. */
export async function refreshSession(deps: RefreshDeps, refreshToken: string): Promise<IssuedTokens> {
  const clock = deps.clock ?? systemClock;
  let claims: RefreshClaims;
  try {
    claims = await deps.refreshTokens.verify(refreshToken);
  } catch (error) {
    throw invalidCredentials(error);
  }
  const user = await deps.users.findByUsername(claims.username);
  if (user === null || !user.enabled || claims.authTime < user.revokedBefore) throw invalidCredentials();

  const now = clock();
  const rotation = { familyId: claims.familyId, fromJti: claims.jti, toJti: randomUUID(), now };
  const family = (await deps.families.rotate(rotation)) ?? (await rotateWithinGrace(deps, rotation, claims));
  if (family === null || family.username !== user.username) throw invalidCredentials();

  return deps.tokens.issue({
    subject: user,
    familyId: family.familyId,
    refreshJti: rotation.toJti,
    authTime: family.createdAt,
    notBefore: user.revokedBefore,
    notAfter: family.expiresAt,
  });
}

/**
 * The presented token is not the current one of a live family. Within the grace window the
 * immediately previous token rotates again; any other spent token revokes the family.
 */
async function rotateWithinGrace(
  deps: RefreshDeps,
  rotation: { familyId: string; fromJti: string; toJti: string; now: Date },
  claims: RefreshClaims,
): Promise<Family | null> {
  const family = await deps.families.get(rotation.familyId);
  const nowMs = rotation.now.getTime();
  if (family === null || family.revokedAt !== null || family.expiresAt <= epochSeconds(rotation.now)) {
    return null;
  }
  if (family.currentJti === rotation.fromJti) return null; // lost a race with a revocation or expiry
  const graceMs = deps.settings.reuseGraceSeconds * 1000;
  if (
    graceMs > 0 &&
    family.previousJti === rotation.fromJti &&
    family.previousSpentAt !== null &&
    nowMs - family.previousSpentAt <= graceMs
  ) {
    const again = await deps.families.rotateAgain({
      ...rotation,
      seenCurrentJti: family.currentJti,
      spentSince: nowMs - graceMs,
    });
    if (again !== null) return again;
  }
  await deps.families.revoke(rotation.familyId, 'reuse', rotation.now);
  deps.logger.warn('refresh token reuse: family revoked', {
    familyId: rotation.familyId,
    username: claims.username,
    generation: family.generation,
  });
  return null;
}

/**
 * POST /logout: revokes the family of a refresh token. Idempotent, and silent about the
 * token (RFC 7009 §2.2): an expired, revoked, spent or unverifiable token changes nothing
 * and gets the same answer.
 */
export async function endSession(
  deps: Pick<RefreshDeps, 'families' | 'refreshTokens' | 'clock'>,
  refreshToken: string,
): Promise<void> {
  let claims: RefreshClaims;
  try {
    claims = await deps.refreshTokens.verify(refreshToken);
  } catch {
    return;
  }
  await deps.families.revoke(claims.familyId, 'logout', (deps.clock ?? systemClock)());
}

/** The body of /token/refresh and /logout. The limit bounds the work a request can cause. */
export const RefreshRequestSchema = v.object({
  refreshToken: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(4096, 'must be at most 4096 characters'),
  ),
});
