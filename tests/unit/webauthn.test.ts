/**
 * The service's WebAuthn checks (lib/passkeys/webauthn.ts) on @simplewebauthn/server's own test
 * vectors (tests/fixtures/webauthn.ts): real authenticators' answers, so nothing here is signed by
 * the code it tests.
 */
import { describe, expect, it } from 'vitest';
import type { Passkey } from '../../lib/passkeys/store.ts';
import {
  challengeOf,
  relyingPartyOf,
  verifyAssertion,
  verifyRegistration,
} from '../../lib/passkeys/webauthn.ts';
import {
  ASSERTION,
  ASSERTION_COUNTER,
  ASSERTION_KEY,
  REGISTRATION,
  REGISTRATION_CHALLENGE,
  REGISTRATION_KEY,
  UNVERIFIED_ASSERTION,
  UNVERIFIED_COUNTER,
  UNVERIFIED_KEY,
} from '../fixtures/webauthn.ts';

const registration = REGISTRATION;
const registrationChallenge = REGISTRATION_CHALLENGE;
const DONTNEEDA = relyingPartyOf('https://dev.dontneeda.pw');
const verified = ASSERTION;
const LOCALHOST = relyingPartyOf('http://localhost:8000/api/v1');
const verifiedPasskey: Passkey = {
  passkeyId: verified.id,
  username: 'alice',
  name: 'Laptop',
  publicKey: ASSERTION_KEY,
  counter: 0,
  transports: [],
  backedUp: false,
  createdAt: '2026-12-01T00:00:00.000Z',
};
const VERIFIED_COUNTER = ASSERTION_COUNTER;
const unverified = UNVERIFIED_ASSERTION;
const unverifiedPasskey: Passkey = {
  ...verifiedPasskey,
  passkeyId: unverified.id,
  publicKey: UNVERIFIED_KEY,
  counter: UNVERIFIED_COUNTER,
};

const challengeOfResponse = (response: { response: { clientDataJSON: string } }) => {
  const challenge = challengeOf(response.response.clientDataJSON);
  if (challenge === undefined) throw new Error('no challenge');
  return challenge;
};

describe('the relying party', () => {
  it('is the host the pages are served from, and their origin: localhost locally, with its port', () => {
    expect(relyingPartyOf('http://localhost:3000')).toEqual({
      id: 'localhost',
      origin: 'http://localhost:3000',
    });
    expect(relyingPartyOf('https://abc123.execute-api.eu-central-1.amazonaws.com/prod')).toEqual({
      id: 'abc123.execute-api.eu-central-1.amazonaws.com',
      origin: 'https://abc123.execute-api.eu-central-1.amazonaws.com',
    });
  });
});

describe('a challenge in client data', () => {
  it('is read from the client data JSON', () => {
    expect(challengeOfResponse(registration)).toBe(registrationChallenge);
  });

  it('is none in client data that is not base64url JSON, or whose challenge could be no challenge of ours', () => {
    expect(challengeOf('not base64url JSON')).toBeUndefined();
    const data = (challenge: unknown) =>
      Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge })).toString('base64url');
    expect(challengeOf(data('short'))).toBeUndefined();
    expect(challengeOf(data('x'.repeat(129)))).toBeUndefined();
    expect(challengeOf(data('has spaces in it, many'))).toBeUndefined();
    expect(challengeOf(data(42))).toBeUndefined();
  });
});

describe('a registration', () => {
  it('verifies an attestation made with user verification, giving the key as it is stored', async () => {
    const result = await verifyRegistration(DONTNEEDA, registration, registrationChallenge);
    expect(result).toEqual({
      credential: {
        passkeyId: registration.id,
        publicKey: REGISTRATION_KEY,
        counter: 0,
        transports: [],
        backedUp: false,
      },
    });
  });

  it('is refused for another challenge, another origin or another relying party', async () => {
    await expect(
      verifyRegistration(DONTNEEDA, registration, 'c29tZSBvdGhlciBjaGFsbGVuZ2U'),
    ).resolves.toHaveProperty('refused');
    await expect(
      verifyRegistration(relyingPartyOf('https://evil.example'), registration, registrationChallenge),
    ).resolves.toHaveProperty('refused');
    await expect(
      verifyRegistration(
        { id: 'other.example', origin: DONTNEEDA.origin },
        registration,
        registrationChallenge,
      ),
    ).resolves.toHaveProperty('refused');
  });
});

describe('an assertion', () => {
  it('verifies a signature made with user verification, giving the counter to record', async () => {
    await expect(
      verifyAssertion(LOCALHOST, verified, challengeOfResponse(verified), verifiedPasskey),
    ).resolves.toEqual({ verified: true, counter: VERIFIED_COUNTER });
  });

  it('is refused without user verification, even with a valid signature', async () => {
    const result = await verifyAssertion(
      DONTNEEDA,
      unverified,
      challengeOfResponse(unverified),
      unverifiedPasskey,
    );
    expect(result).toMatchObject({ verified: false, reason: expect.stringMatching(/verif/i) });
  });

  it('is refused from another origin, for another challenge, or with another passkey’s key', async () => {
    const challenge = challengeOfResponse(verified);
    for (const attempt of [
      verifyAssertion(relyingPartyOf('http://localhost:8001'), verified, challenge, verifiedPasskey),
      verifyAssertion(LOCALHOST, verified, 'c29tZSBvdGhlciBjaGFsbGVuZ2U', verifiedPasskey),
      verifyAssertion(LOCALHOST, verified, challenge, {
        ...verifiedPasskey,
        publicKey: unverifiedPasskey.publicKey,
      }),
    ])
      await expect(attempt).resolves.toMatchObject({ verified: false });
  });

  it('is refused, as a cloned authenticator’s, when the counter does not grow past the stored one', async () => {
    const challenge = challengeOfResponse(verified);
    for (const counter of [VERIFIED_COUNTER, VERIFIED_COUNTER + 1])
      await expect(
        verifyAssertion(LOCALHOST, verified, challenge, { ...verifiedPasskey, counter }),
      ).resolves.toEqual({
        verified: false,
        reason: 'signature counter did not grow',
        counterWentBack: true,
      });
    await expect(
      verifyAssertion(LOCALHOST, verified, challenge, { ...verifiedPasskey, counter: VERIFIED_COUNTER - 1 }),
    ).resolves.toEqual({ verified: true, counter: VERIFIED_COUNTER });
  });
});
