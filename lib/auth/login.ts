/**
 * Login. Every failure (unknown username, wrong case, wrong password, disabled user) is the
 * same INVALID_CREDENTIALS after the same bcrypt work: neither answer nor timing tells which
 * usernames exist.
 */
import * as v from 'valibot';
import type { PasswordHashUpgrader, UserReader, UserRecord } from '../accounts/repository.ts';
import { foldUsername, MAX_FOLDED_USERNAME_BYTES } from '../accounts/username-key.ts';
import { AppError } from '../errors.ts';
import { describeError, type Logger } from '../log.ts';
import type { LoginFailureReason, MetricsRecorder } from '../metrics/metrics.ts';
import type { QuotaState } from '../quota.ts';
import { type SessionDeps, startSession } from '../sessions/sessions.ts';
import { beginAlongside, type FailureReason, type LoginThrottle } from '../throttle/throttle.ts';
import { systemClock } from '../time.ts';
import type { IssuedTokens } from '../tokens/issue.ts';
import { NO_CONTROL_OR_INVALID, type PasswordVerifier } from './passwords.ts';

/** The body of both login operations. Limits bound the work a request can cause. */
export const LoginRequestSchema = v.object({
  username: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
    v.regex(NO_CONTROL_OR_INVALID, 'must not contain control characters or invalid UTF-8'),
    // Normalisation can multiply a length (U+FDFA becomes 18 letters): the key must fit DynamoDB.
    v.check((name) => Buffer.byteLength(foldUsername(name)) <= MAX_FOLDED_USERNAME_BYTES, 'is too long'),
  ),
  password: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(1024, 'must be at most 1024 characters'),
    v.regex(NO_CONTROL_OR_INVALID, 'must not contain control characters or invalid UTF-8'),
  ),
});

export type Credentials = v.InferOutput<typeof LoginRequestSchema>;

export interface LoginDeps {
  readonly users: UserReader & PasswordHashUpgrader;
  readonly passwords: PasswordVerifier;
  readonly sessions: SessionDeps;
  readonly throttle: LoginThrottle;
  readonly logger: Logger;
  /** Counts logins by outcome and hash upgrades. */
  readonly metrics: MetricsRecorder;
}

/** What checking credentials takes: a login's dependencies but its sessions' store. */
export type CredentialDeps = Omit<LoginDeps, 'sessions'> & { readonly sessions: Pick<SessionDeps, 'clock'> };

/** A login request: the credentials, and the address it came from (for throttling). */
export interface LoginRequest extends Credentials {
  readonly sourceIp: string;
}

export interface LoginResult {
  readonly user: UserRecord;
  readonly tokens: IssuedTokens;
  /** What is left of the login's published limits (the RateLimit field). */
  readonly quota: readonly QuotaState[];
}

/** Why a login failed (the throttle also counts API clients' failures). */
type UserFailure = Extract<FailureReason, 'unknown user' | 'bad password' | 'disabled'>;

const invalidCredentials = (quota: readonly QuotaState[]) => new AppError('INVALID_CREDENTIALS', { quota });

const FAILURE_METRIC: Record<UserFailure, LoginFailureReason> = {
  'unknown user': 'UnknownUser',
  'bad password': 'BadPassword',
  disabled: 'Disabled',
};

/**
 * The user these credentials belong to and when it was read, or INVALID_CREDENTIALS, or
 * TOO_MANY_ATTEMPTS (the password unchecked). `settled` is the bookkeeping (counters, a hash
 * upgrade), which the caller awaits with the session's start.
 */
async function authenticate(deps: CredentialDeps, request: LoginRequest) {
  const { metrics } = deps;
  const attempt = { username: request.username, sourceIp: request.sourceIp };
  const readAt = (deps.sessions.clock ?? systemClock)();
  const { reservation, found: user } = await beginAlongside(
    deps.throttle,
    attempt,
    () => deps.users.findByUsername(request.username),
    () => {
      deps.logger.info('login failed', { reason: 'locked', sourceIp: request.sourceIp });
      metrics.count({ name: 'LoginFailed', reason: 'Locked' });
    },
  );
  const matches = await deps.passwords.verify(request.password, user?.passwordHash ?? null);
  if (user === null || !matches || !user.enabled) {
    const reason: UserFailure = user === null ? 'unknown user' : !matches ? 'bad password' : 'disabled';
    const quota = await deps.throttle.failed(attempt, reason, reservation);
    // The username only of a user that exists: a mistyped password pasted into the username
    // field must not end up in the log.
    deps.logger.info('login failed', {
      reason,
      ...(user !== null && { username: user.username }),
      sourceIp: request.sourceIp,
    });
    metrics.count({ name: 'LoginFailed', reason: FAILURE_METRIC[reason] });
    throw invalidCredentials(quota);
  }
  // The counters and a hash upgrade are settled alongside the session's start, not before it.
  // Nothing may be awaited between here and the caller's await of `settled`.
  const settled = Promise.all([
    deps.throttle.succeeded(reservation),
    upgradeHash(deps, user, request.password),
  ]).then(([quota]) => quota);
  return { user, readAt, settled };
}

/** Re-hashes a password stored at another cost than the stage's; a failure costs only the upgrade. */
async function upgradeHash(deps: CredentialDeps, user: UserRecord, password: string) {
  if (!deps.passwords.needsUpgrade(user.passwordHash)) return;
  try {
    await deps.users.upgradePasswordHash(
      user.username,
      user.passwordHash,
      await deps.passwords.hash(password),
    );
    deps.logger.info('password hash upgraded', { username: user.username });
    deps.metrics.count({ name: 'PasswordHashUpgraded' });
  } catch (error) {
    deps.logger.warn('password hash upgrade failed', {
      username: user.username,
      error: describeError(error),
    });
  }
}

/**
 * POST /login. With `requireContext` (login-extended) the user must also have a customer:
 * credentials are checked first (401), then the context (403), so only the password's owner
 * ever learns of a 403.
 */
export async function login(
  deps: LoginDeps,
  request: LoginRequest,
  options: { readonly requireContext: boolean } = { requireContext: false },
): Promise<LoginResult> {
  const { user, readAt, settled } = await authenticate(deps, request);
  if (options.requireContext && user.customerId === null) {
    throw new AppError('CONTEXT_MISSING', { quota: await settled });
  }
  const [tokens, quota] = await Promise.all([startSession(deps.sessions, user, readAt), settled]);
  deps.logger.info('login succeeded', {
    username: user.username,
    sourceIp: request.sourceIp,
    ...(options.requireContext && { extended: true }),
  });
  deps.metrics.count({ name: 'LoginSucceeded' });
  return { user, tokens, quota };
}

/**
 * The credentials' user, checked exactly as a login checks them (the same throttle, known sources
 * and generic failure), without a session: the authorization page's sign-in.
 */
export async function checkCredentials(
  deps: CredentialDeps,
  request: LoginRequest,
): Promise<{ readonly user: UserRecord; readonly quota: readonly QuotaState[] }> {
  const { user, settled } = await authenticate(deps, request);
  return { user, quota: await settled };
}

export const loginExtended = (deps: LoginDeps, request: LoginRequest) =>
  login(deps, request, { requireContext: true });

/** The body of a /login answer. */
export const toLoginResponse = ({ tokens }: LoginResult) => ({
  token: tokens.accessToken,
  refreshToken: tokens.refreshToken,
});

/** The body of a /login-extended answer: the /login body plus who, where and until when. */
export const toExtendedLoginResponse = (result: LoginResult) => ({
  ...toLoginResponse(result),
  userName: result.user.username,
  depotCode: result.user.depotCode,
  expireAt: result.tokens.accessExpiresAt.toISOString(),
});
