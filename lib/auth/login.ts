/**
 * Login: exchanges a username and password for an access and a refresh token.
 *
 * Every failed login (unknown username, a username in the wrong case, wrong password,
 * disabled user) is the same INVALID_CREDENTIALS with the same body, after the same bcrypt
 * work, so neither the answer nor its timing tells an attacker which usernames exist.
 */
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import type { UserReader, UserRecord } from '../users/repository.ts';
import type { PasswordVerifier } from './passwords.ts';
import { type SessionDeps, startSession } from './sessions.ts';
import { type IssuedTokens, systemClock } from './tokens.ts';

/** The body of both login operations. Limits bound the work a request can cause. */
export const LoginRequestSchema = v.object({
  username: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
  ),
  password: v.pipe(
    v.string('must be a string'),
    v.nonEmpty('must not be empty'),
    v.maxLength(1024, 'must be at most 1024 characters'),
  ),
});

export type Credentials = v.InferOutput<typeof LoginRequestSchema>;

export interface LoginDeps {
  readonly users: UserReader;
  readonly passwords: PasswordVerifier;
  /** Each login starts a session (a refresh-token family). */
  readonly sessions: SessionDeps;
}

export interface LoginResult {
  readonly user: UserRecord;
  readonly tokens: IssuedTokens;
}

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS');

/**
 * The user these credentials belong to and when it was read, or INVALID_CREDENTIALS.
 * Always one bcrypt compare.
 */
async function authenticate(deps: LoginDeps, credentials: Credentials) {
  const readAt = (deps.sessions.clock ?? systemClock)();
  const user = await deps.users.findByUsername(credentials.username);
  const matches = await deps.passwords.verify(credentials.password, user?.passwordHash ?? null);
  if (user === null || !matches || !user.enabled) throw invalidCredentials();
  return { user, readAt };
}

/** POST /login: credentials in, tokens out. */
export async function login(deps: LoginDeps, credentials: Credentials): Promise<LoginResult> {
  const { user, readAt } = await authenticate(deps, credentials);
  return { user, tokens: await startSession(deps.sessions, user, readAt) };
}

/**
 * POST /login-extended: the same login, for a user that has an auto-login context (a linked
 * customer). Credentials are checked first (401), then the context (403), so a 403 is only
 * ever told to the owner of the password. No token is signed for a 403.
 */
export async function loginWithContext(deps: LoginDeps, credentials: Credentials): Promise<LoginResult> {
  const { user, readAt } = await authenticate(deps, credentials);
  if (user.customerId === null) throw new AppError('CONTEXT_MISSING');
  return { user, tokens: await startSession(deps.sessions, user, readAt) };
}

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
