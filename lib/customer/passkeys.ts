/**
 * An administrator's own passkeys (docs/administrators.md, "Passkeys"): listed, registered and
 * removed through the self-service API, each change in the customer's audit trail. A
 * registration adds a way to sign in as the administrator, so, as what shows a secret, it needs a
 * recent login: a stolen session alone cannot make itself a lasting credential.
 */
import { randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import type { ChallengeStore, Passkey, PasskeyStore } from '../passkeys/store.ts';
import {
  CHALLENGE_SECONDS,
  challengeOf,
  creationOptions,
  PasskeyIdSchema,
  RegistrationResponseSchema,
  type RelyingParty,
  verifyRegistration,
} from '../passkeys/webauthn.ts';
import { epochSeconds } from '../time.ts';
import type { AdministrationDeps } from './administration.ts';
import { type Administrator, recordChange, requireRecentLogin } from './administrator.ts';

/** An administrator's passkeys at most: room for a phone, a laptop and spare keys, and a bound on the list. */
export const MAX_PASSKEYS = 10;

export interface PasskeyDeps extends Pick<AdministrationDeps, 'clock' | 'metrics' | 'recorder' | 'logger'> {
  readonly passkeys: PasskeyStore;
  readonly challenges: ChallengeStore;
}

export const PASSKEY_REFUSALS = {
  full: `You have ${MAX_PASSKEYS} passkeys: remove one first.`,
  noSuchPasskey: 'No such passkey.',
  challenge: 'The registration answers no challenge of yours that is still open: start it again.',
  notVerified: 'The passkey could not be verified: its authenticator must verify you (a PIN or biometrics).',
  exists: 'This passkey is registered already.',
} as const;

export const AddPasskeySchema = v.strictObject(
  {
    name: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.nonEmpty('must not be empty'),
      v.maxLength(64, 'must be at most 64 characters'),
    ),
    response: RegistrationResponseSchema,
  },
  'must be an object of name and response only',
);

export const PasskeyParamsSchema = v.object({ passkeyId: PasskeyIdSchema });

/** A passkey as its administrator sees it: never its key. */
export const passkeyView = (passkey: Passkey) => ({
  passkeyId: passkey.passkeyId,
  name: passkey.name,
  createdAt: passkey.createdAt,
  lastUsedAt: passkey.lastUsedAt ?? null,
  synced: passkey.backedUp,
});

export async function listPasskeys(deps: PasskeyDeps, admin: Administrator) {
  return (await deps.passkeys.list(admin.username)).map(passkeyView);
}

/** The options of navigator.credentials.create, their challenge open for CHALLENGE_SECONDS. */
export async function registrationOptions(deps: PasskeyDeps, admin: Administrator, rp: RelyingParty) {
  requireRecentLogin(deps, admin);
  const [handle, existing] = await Promise.all([
    deps.passkeys.userHandle(admin.username),
    deps.passkeys.list(admin.username),
  ]);
  // Gone since administratorOf read it.
  if (handle === null) throw new AppError('UNAUTHORIZED');
  if (existing.length >= MAX_PASSKEYS) throw new AppError('CONFLICT', { detail: PASSKEY_REFUSALS.full });
  const options = await creationOptions(rp, { username: admin.username, handle }, existing);
  await deps.challenges.create(
    options.challenge,
    { kind: 'registration', username: admin.username },
    epochSeconds(deps.clock()) + CHALLENGE_SECONDS,
  );
  return options;
}

/** Verifies and stores the passkey the browser made on the administrator's open challenge. */
export async function addPasskey(
  deps: PasskeyDeps,
  admin: Administrator,
  rp: RelyingParty,
  body: v.InferOutput<typeof AddPasskeySchema>,
) {
  requireRecentLogin(deps, admin);
  const refuse = (reason: string, detail: string) => {
    deps.logger.info('passkey registration refused', { reason, username: admin.username });
    return new AppError('VALIDATION_FAILED', { detail });
  };
  const response = body.response as unknown as RegistrationResponseJSON;
  const challenge = challengeOf(response.response.clientDataJSON);
  if (challenge === undefined) throw refuse('no challenge in the client data', PASSKEY_REFUSALS.challenge);
  const ceremony = await deps.challenges.spend(challenge, randomUUID(), deps.clock());
  if (ceremony?.kind !== 'registration' || ceremony.username !== admin.username)
    throw refuse('challenge unknown, expired, spent or another’s', PASSKEY_REFUSALS.challenge);
  const verified = await verifyRegistration(rp, response, challenge);
  if ('refused' in verified) throw refuse(verified.refused, PASSKEY_REFUSALS.notVerified);
  const existing = await deps.passkeys.list(admin.username);
  if (existing.length >= MAX_PASSKEYS) throw new AppError('CONFLICT', { detail: PASSKEY_REFUSALS.full });
  const passkey: Passkey = {
    ...verified.credential,
    username: admin.username,
    name: body.name,
    createdAt: deps.clock().toISOString(),
  };
  if (!(await deps.passkeys.add(passkey)))
    throw new AppError('ALREADY_EXISTS', { detail: PASSKEY_REFUSALS.exists });
  await recordChange(deps, admin, 'passkey.registered', { passkeyId: passkey.passkeyId, name: passkey.name });
  return passkeyView(passkey);
}

export async function removePasskey(deps: PasskeyDeps, admin: Administrator, passkeyId: string) {
  if (!(await deps.passkeys.remove(admin.username, passkeyId)))
    throw new AppError('NOT_FOUND', { detail: PASSKEY_REFUSALS.noSuchPasskey });
  await recordChange(deps, admin, 'passkey.removed', { passkeyId });
}
