/**
 * Sign-in with a passkey (docs/administrators.md, "Passkeys"): no username, no password. The
 * browser asks for a challenge, the authenticator signs it with a discoverable credential after
 * verifying its user, and the session that starts says so (`amr`, `acr`, lib/tokens/claims.ts).
 * Every refusal is one INVALID_CREDENTIALS, as a failed login's, so an answer tells nobody which
 * passkeys, handles or users exist; the log says why.
 */
import { randomUUID } from 'node:crypto';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import * as v from 'valibot';
import type { UserReader, UserRecord } from '../accounts/repository.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { ChallengeStore, PasskeyStore } from '../passkeys/store.ts';
import {
  AuthenticationResponseSchema,
  CHALLENGE_SECONDS,
  challengeOf,
  type RelyingParty,
  requestOptions,
  verifyAssertion,
} from '../passkeys/webauthn.ts';
import { type SessionDeps, startSession } from '../sessions/sessions.ts';
import { type Clock, epochSeconds, systemClock } from '../time.ts';
import type { IssuedTokens } from '../tokens/issue.ts';

export interface PasskeyLoginDeps {
  readonly users: UserReader;
  readonly passkeys: Pick<PasskeyStore, 'findByHandle' | 'recordUse'>;
  readonly challenges: ChallengeStore;
  readonly sessions: SessionDeps;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

/** The detail of every refused passkey sign-in. */
export const PASSKEY_NOT_ACCEPTED = 'The passkey was not accepted.';

/** The body of POST /api/v1/passkey-login. */
export const PasskeyLoginSchema = v.object({ response: AuthenticationResponseSchema });

/** The options of navigator.credentials.get: any of the stage's passkeys, its user verified. */
export async function passkeyLoginOptions(
  deps: Pick<PasskeyLoginDeps, 'challenges' | 'sessions'>,
  rp: RelyingParty,
) {
  const options = await requestOptions(rp);
  const now = (deps.sessions.clock ?? systemClock)();
  await deps.challenges.create(options.challenge, { kind: 'sign-in' }, epochSeconds(now) + CHALLENGE_SECONDS);
  return options;
}

export interface PasskeyLoginResult {
  readonly user: UserRecord;
  readonly tokens: IssuedTokens;
}

/** What a passkey sign-in checks: the challenge, the passkey, its user and its counter. */
export type PasskeyCheckDeps = Pick<
  PasskeyLoginDeps,
  'users' | 'passkeys' | 'challenges' | 'logger' | 'metrics'
> & {
  readonly clock?: Clock;
};

/**
 * The enabled user whose passkey signed the sign-in's challenge, with when it was read (a
 * session's or a sign-in's start); INVALID_CREDENTIALS for every refusal, logged with its
 * reason. The page of platform connections asks it as the passkey sign-in does.
 */
export async function checkPasskey(
  deps: PasskeyCheckDeps,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  sourceIp: string,
): Promise<{ readonly user: UserRecord; readonly readAt: Date }> {
  const clock = deps.clock ?? systemClock;
  const refused = (reason: string) => {
    deps.logger.info('login failed', { reason, method: 'passkey', sourceIp });
    deps.metrics.count({ name: 'LoginFailed', reason: 'Passkey' });
    return new AppError('INVALID_CREDENTIALS', { detail: PASSKEY_NOT_ACCEPTED });
  };
  const challenge = challengeOf(response.response.clientDataJSON);
  if (challenge === undefined) throw refused('no challenge in the client data');
  const ceremony = await deps.challenges.spend(challenge, randomUUID(), clock());
  if (ceremony?.kind !== 'sign-in') throw refused('challenge unknown, expired or spent');
  const handle = response.response.userHandle;
  // A discoverable credential always answers its user handle.
  if (handle === undefined || handle === '') throw refused('no user handle');
  const passkey = await deps.passkeys.findByHandle(handle, response.id);
  if (passkey === null) throw refused('unknown passkey');
  const readAt = clock();
  const user = await deps.users.findByUsername(passkey.username);
  if (user === null || !user.enabled) throw refused('user unknown or disabled');
  const assertion = await verifyAssertion(rp, response, challenge, passkey);
  if (!assertion.verified) {
    if (assertion.counterWentBack === true)
      deps.logger.warn('passkey signature counter went back: a cloned authenticator?', {
        username: user.username,
        passkeyId: passkey.passkeyId,
        sourceIp,
      });
    throw refused(assertion.reason);
  }
  // Another sign-in with the same counter value won: one of the two was a clone's.
  if (!(await deps.passkeys.recordUse(passkey, { to: assertion.counter, at: readAt.toISOString() })))
    throw refused('signature counter moved since it was read');
  return { user, readAt };
}

/** POST /api/v1/passkey-login: the session of the passkey's user, signed in by it. */
export async function passkeyLogin(
  deps: PasskeyLoginDeps,
  rp: RelyingParty,
  body: v.InferOutput<typeof PasskeyLoginSchema>,
  sourceIp: string,
): Promise<PasskeyLoginResult> {
  const response = body.response as unknown as AuthenticationResponseJSON;
  const checks = deps.sessions.clock === undefined ? deps : { ...deps, clock: deps.sessions.clock };
  const { user, readAt } = await checkPasskey(checks, rp, response, sourceIp);
  const tokens = await startSession(deps.sessions, user, readAt, 'passkey');
  deps.logger.info('login succeeded', { username: user.username, method: 'passkey', sourceIp });
  deps.metrics.count({ name: 'LoginSucceeded' });
  return { user, tokens };
}

/** The body of a passkey sign-in's answer: /login's, and whom the passkey signed in (the page asked no name). */
export const toPasskeyLoginResponse = ({ user, tokens }: PasskeyLoginResult) => ({
  token: tokens.accessToken,
  refreshToken: tokens.refreshToken,
  userName: user.username,
  expireAt: tokens.accessExpiresAt.toISOString(),
});
