/**
 * WebAuthn by @simplewebauthn/server (no CBOR or COSE of our own), with the service's rules
 * (docs/administrators.md, "Passkeys"): discoverable credentials, user verification required,
 * no attestation asked (a passkey is trusted by its registration in a recent session, not by its
 * maker), EdDSA, ES256 and RS256 keys; and a signature counter that does not move forward, when
 * either side has one, is refused.
 */
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import * as v from 'valibot';
import type { Passkey } from './store.ts';

/** How long a ceremony's challenge lives, and the browser's timeout for it: five minutes. */
export const CHALLENGE_SECONDS = 300;
/** COSE algorithms: EdDSA, ES256, RS256 (what Windows Hello still makes). */
const ALGORITHMS = [-8, -7, -257];

/** Base64url of at most `max` characters, with the padding some browsers keep. */
const Base64UrlSchema = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.regex(/^[A-Za-z0-9_-]*={0,2}$/, 'must be base64url'),
    v.maxLength(max, 'is too long'),
  );

/** A credential id: base64url, as long as WebAuthn allows (1023 bytes). */
export const PasskeyIdSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9_-]{16,1364}$/, 'must be a passkey id (base64url)'),
);

/** What every WebAuthn answer of the browser holds, as @simplewebauthn/browser encodes it; `response` its own. */
const publicKeyCredential = <TResponse extends v.ObjectEntries>(response: TResponse) =>
  v.looseObject({
    id: PasskeyIdSchema,
    rawId: PasskeyIdSchema,
    type: v.literal('public-key', 'must be "public-key"'),
    response: v.looseObject({ clientDataJSON: Base64UrlSchema(4096), ...response }),
    clientExtensionResults: v.looseObject({}),
  });

/** The browser's answer to navigator.credentials.create. */
export const RegistrationResponseSchema = publicKeyCredential({
  attestationObject: Base64UrlSchema(16384),
  transports: v.optional(v.array(v.pipe(v.string(), v.maxLength(32)))),
});

/** The browser's answer to navigator.credentials.get. */
export const AuthenticationResponseSchema = publicKeyCredential({
  authenticatorData: Base64UrlSchema(4096),
  signature: Base64UrlSchema(2048),
  userHandle: v.optional(Base64UrlSchema(128)),
});

/** The relying party: the stage's host (WebAuthn takes no IP address: `localhost` locally) and the page's origin. */
export interface RelyingParty {
  readonly id: string;
  readonly origin: string;
}

/** The relying party of pages served at `baseUrl` (the stage's public base URL, lib/http/endpoint.ts). */
export function relyingPartyOf(baseUrl: string): RelyingParty {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin };
}

/** The name an authenticator shows beside the username. */
const RP_NAME = 'Parcel carrier API';

export const creationOptions = (
  rp: RelyingParty,
  user: { readonly username: string; readonly handle: string },
  existing: readonly Passkey[],
): Promise<PublicKeyCredentialCreationOptionsJSON> =>
  generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: user.username,
    userID: isoBase64URL.toBuffer(user.handle),
    timeout: CHALLENGE_SECONDS * 1000,
    attestationType: 'none',
    // One passkey per authenticator: a second registration on it would replace the first.
    excludeCredentials: existing.map((passkey) => ({
      id: passkey.passkeyId,
      transports: [...passkey.transports],
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  });

export const requestOptions = (rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> =>
  generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: CHALLENGE_SECONDS * 1000,
  });

/**
 * The challenge a response answers, as its client data says: undefined when the client data is
 * not a WebAuthn client data JSON with a challenge a challenge of ours could be.
 */
export function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const { challenge } = decodeClientDataJSON(clientDataJSON);
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(challenge) ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** A registration verified: the passkey's key material, as it is stored. */
export type NewCredential = Pick<Passkey, 'passkeyId' | 'publicKey' | 'counter' | 'transports' | 'backedUp'>;

/** The credential a registration response makes, or undefined when it does not verify (any reason: the library's message is logged). */
export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<{ credential: NewCredential } | { refused: string }> {
  try {
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!verification.verified) return { refused: 'not verified' };
    const { credential, credentialBackedUp } = verification.registrationInfo;
    return {
      credential: {
        passkeyId: credential.id,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? response.response.transports ?? [],
        backedUp: credentialBackedUp,
      },
    };
  } catch (error) {
    return { refused: error instanceof Error ? error.message : 'not verified' };
  }
}

/** What an assertion proves: the counter to record. */
export type AssertionResult =
  | { readonly verified: true; readonly counter: number }
  | { readonly verified: false; readonly reason: string; readonly counterWentBack?: true };

/**
 * An assertion of `passkey` on `challenge`, user verified. The counter is checked here, not by
 * the library, so a counter that went back is told apart from any other failure (a cloned
 * authenticator, logged as such).
 */
export async function verifyAssertion(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: Passkey,
): Promise<AssertionResult> {
  let counter: number;
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      // 0: the library compares nothing (below).
      credential: {
        id: passkey.passkeyId,
        publicKey: isoBase64URL.toBuffer(passkey.publicKey),
        counter: 0,
        transports: [],
      },
    });
    if (!verification.verified) return { verified: false, reason: 'not verified' };
    counter = verification.authenticationInfo.newCounter;
  } catch (error) {
    return { verified: false, reason: error instanceof Error ? error.message : 'not verified' };
  }
  // WebAuthn §7.2 step 21: a counter either side keeps must grow.
  if ((counter > 0 || passkey.counter > 0) && counter <= passkey.counter)
    return { verified: false, reason: 'signature counter did not grow', counterWentBack: true };
  return { verified: true, counter };
}
