/** What the browser's WebAuthn ceremony (@simplewebauthn/browser) refused, in the administrator's words. */
import { WebAuthnError } from '@simplewebauthn/browser';

/** The browser's own refusal (the person cancelled, or the authenticator has this passkey) in words. */
export function ceremonyFailure(error: unknown): string | undefined {
  if (error instanceof WebAuthnError) {
    if (error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED')
      return 'This authenticator holds a passkey of yours already.';
    return 'The browser or the authenticator refused the passkey.';
  }
  if (error instanceof Error && error.name === 'NotAllowedError')
    return 'Cancelled, or the authenticator did not answer in time.';
  return undefined;
}
