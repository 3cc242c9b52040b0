/**
 * The authorization page's sign-in (docs/platforms.md, "The authorization flow", 3): a password,
 * checked as a login, or a passkey, checked as the passkey sign-in; the form that carries either.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import * as v from 'valibot';
import type { UserRecord } from '../accounts/repository.ts';
import { type CredentialDeps, checkCredentials, LoginRequestSchema } from '../auth/login.ts';
import { checkPasskey, PASSKEY_NOT_ACCEPTED, type PasskeyCheckDeps } from '../auth/passkey-login.ts';
import { isAppError } from '../errors.ts';
import { AuthenticationResponseSchema, type RelyingParty } from '../passkeys/webauthn.ts';
import type { QuotaState } from '../quota.ts';

/** A request's id: 256 random bits, base64url. */
export const REQUEST_ID = /^[A-Za-z0-9_-]{43}$/;

/** The POST of the page: its request's id and what was pressed. */
export const PageFormSchema = v.variant('action', [
  v.object({
    action: v.literal('sign-in'),
    request: v.pipe(v.string(), v.regex(REQUEST_ID)),
    ...LoginRequestSchema.entries,
  }),
  v.object({
    action: v.literal('passkey'),
    request: v.pipe(v.string(), v.regex(REQUEST_ID)),
    /** The page's script posts navigator.credentials.get's answer as JSON (RFC 8259). */
    response: v.pipe(v.string(), v.maxLength(8192), v.parseJson(), AuthenticationResponseSchema),
  }),
  v.object({ action: v.picklist(['approve', 'deny']), request: v.pipe(v.string(), v.regex(REQUEST_ID)) }),
]);
export type PageForm = v.InferOutput<typeof PageFormSchema>;

/** A sign-in the page refuses: its status and its one alert. */
export interface SignInFailure {
  readonly status: 200 | 429;
  readonly error: string;
  readonly quota?: readonly QuotaState[];
  readonly retryAfterSeconds?: number;
}

type SignInForm = Extract<PageForm, { action: 'sign-in' | 'passkey' }>;

/**
 * The page's sign-in, by password (a login's checks) or by passkey (the passkey sign-in's): the
 * user and how it signed in, or the sign-in screen's failure (its view aside), one generic
 * answer for each kind as a login's.
 */
export async function signInOnPage(
  deps: { readonly credentials: CredentialDeps; readonly passkeys: PasskeyCheckDeps },
  input: { readonly form: SignInForm; readonly sourceIp: string; readonly relyingParty: RelyingParty },
): Promise<
  { readonly user: UserRecord; readonly method: 'password' | 'passkey' } | { readonly failure: SignInFailure }
> {
  const { form, sourceIp } = input;
  try {
    if (form.action === 'passkey') {
      const response = form.response as unknown as AuthenticationResponseJSON;
      const { user } = await checkPasskey(deps.passkeys, input.relyingParty, response, sourceIp);
      return { user, method: 'passkey' };
    }
    const { user } = await checkCredentials(deps.credentials, { ...form, sourceIp });
    return { user, method: 'password' };
  } catch (error) {
    if (!isAppError(error) || (error.code !== 'INVALID_CREDENTIALS' && error.code !== 'TOO_MANY_ATTEMPTS'))
      throw error;
    const locked = error.code === 'TOO_MANY_ATTEMPTS';
    return {
      failure: {
        status: locked ? 429 : 200,
        error: locked
          ? 'Too many failed sign-ins. Try again later.'
          : form.action === 'passkey'
            ? PASSKEY_NOT_ACCEPTED
            : 'The username or password is wrong.',
        ...(error.quota !== undefined && { quota: error.quota }),
        ...(error.retryAfterSeconds !== undefined && { retryAfterSeconds: error.retryAfterSeconds }),
      },
    };
  }
}
