/**
 * The service's WebAuthn checks (lib/passkeys/webauthn.ts) on @simplewebauthn/server's own test
 * vectors (packages/server/src/*: verifyRegistrationResponse.test.ts `attestationNone`,
 * verifyAuthenticationResponse.test.ts the localhost assertion and `assertionResponse`): real
 * authenticators' answers, so nothing here is signed by the code it tests.
 */
import { describe, expect, it } from 'vitest';
import type { Passkey } from '../../lib/passkeys/store.ts';
import {
  challengeOf,
  relyingPartyOf,
  verifyAssertion,
  verifyRegistration,
} from '../../lib/passkeys/webauthn.ts';

/** A "none" attestation made with user verification, for https://dev.dontneeda.pw. */
const registration = {
  id: 'AdKXJEch1aV5Wo7bj7qLHskVY4OoNaj9qu8TPdJ7kSAgUeRxWNngXlcNIGt4gexZGKVGcqZpqqWordXb_he1izY',
  rawId: 'AdKXJEch1aV5Wo7bj7qLHskVY4OoNaj9qu8TPdJ7kSAgUeRxWNngXlcNIGt4gexZGKVGcqZpqqWordXb_he1izY',
  response: {
    attestationObject:
      'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjFPdxHEOnAiLIp26idVjIguzn3I' +
      'pr_RlsKZWsa-5qK-KBFAAAAAAAAAAAAAAAAAAAAAAAAAAAAQQHSlyRHIdWleVqO24-6ix7JFWODqDWo_arvEz3Se' +
      '5EgIFHkcVjZ4F5XDSBreIHsWRilRnKmaaqlqK3V2_4XtYs2pQECAyYgASFYID5PQTZQQg6haZFQWFzqfAOyQ_ENs' +
      'MH8xxQ4GRiNPsqrIlggU8IVUOV8qpgk_Jh-OTaLuZL52KdX1fTht07X4DiQPow',
    clientDataJSON:
      'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiYUVWalkxQlhkWHBw' +
      'VURBd1NEQndOV2Q0YURKZmRUVmZVRU0wVG1WWloyUSIsIm9yaWdpbiI6Imh0dHBzOlwvXC9kZXYuZG9udG5lZWRh' +
      'LnB3IiwiYW5kcm9pZFBhY2thZ2VOYW1lIjoib3JnLm1vemlsbGEuZmlyZWZveCJ9',
    transports: [] as string[],
  },
  type: 'public-key',
  clientExtensionResults: {},
} as const;
const registrationChallenge = Buffer.from('hEccPWuziP00H0p5gxh2_u5_PC4NeYgd').toString('base64url');
const DONTNEEDA = relyingPartyOf('https://dev.dontneeda.pw');

/** An assertion made with user verification, for http://localhost:8000. */
const verified = {
  id: 'AaIBxnYfL2pDWJmIii6CYgHBruhVvFGHheWamphVioG_TnEXxKA9MW4FWnJh21zsbmRpRJso9i2JmAtWOtXfVd4oXTgYVusXwhWWsA',
  rawId:
    'AaIBxnYfL2pDWJmIii6CYgHBruhVvFGHheWamphVioG_TnEXxKA9MW4FWnJh21zsbmRpRJso9i2JmAtWOtXfVd4oXTgYVusXwhWWsA',
  response: {
    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFYftypQ',
    clientDataJSON:
      'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiZXlKaFkzUjFZV3hEYUdGc2JHVnVaMlVpT2lKTE0xRjRUMnB1VmtwTWFVZHNibFpGY0RWMllUVlJTbVZOVmxkT1psODNVRmxuZFhSbllrRjBRVlZCSWl3aVlYSmlhWFJ5WVhKNVJHRjBZU0k2SW5OcFoyNU5aVkJzWldGelpTSjkiLCJvcmlnaW4iOiJodHRwOi8vbG9jYWxob3N0OjgwMDAiLCJjcm9zc09yaWdpbiI6ZmFsc2V9',
    signature:
      'MEUCIByFAVGfkoKPEzynp-37BX_HOXSaC6-58-ELjB7BG9opAiEAyD_1mN9YAPrphcwpzK3ym2Xx8EjAapgQ326mKgQ1pW0',
    userHandle: 'internalUserId',
  },
  type: 'public-key',
  clientExtensionResults: {},
} as const;
const LOCALHOST = relyingPartyOf('http://localhost:8000/api/v1');
const verifiedPasskey: Passkey = {
  passkeyId: verified.id,
  username: 'alice',
  name: 'Laptop',
  publicKey:
    'pQECAyYgASFYILTrxTUQv3X4DRM6L_pk65FSMebenhCx3RMsTKoBm-AxIlggEf3qk5552QLNSh1T1oQs7_2C2qysDwN4r4fCp52Hsqs',
  counter: 0,
  transports: [],
  backedUp: false,
  createdAt: '2026-12-01T00:00:00.000Z',
};
/** Its signature counter, as its authenticator data says. */
const VERIFIED_COUNTER = 0x61fb72a5;

/** An assertion made without user verification (user presence only), for https://dev.dontneeda.pw. */
const unverified = {
  id: 'KEbWNCc7NgaYnUyrNeFGX9_3Y-8oJ3KwzjnaiD1d1LVTxR7v3CaKfCz2Vy_g_MHSh7yJ8yL0Pxg6jo_o0hYiew',
  rawId: 'KEbWNCc7NgaYnUyrNeFGX9_3Y-8oJ3KwzjnaiD1d1LVTxR7v3CaKfCz2Vy_g_MHSh7yJ8yL0Pxg6jo_o0hYiew',
  response: {
    authenticatorData: 'PdxHEOnAiLIp26idVjIguzn3Ipr_RlsKZWsa-5qK-KABAAAAkA==',
    clientDataJSON:
      'eyJjaGFsbGVuZ2UiOiJkRzkwWVd4c2VWVnVhWEYxWlZaaGJIVmxSWFpsY25sVWFXMWwiLCJj' +
      'bGllbnRFeHRlbnNpb25zIjp7fSwiaGFzaEFsZ29yaXRobSI6IlNIQS0yNTYiLCJvcmlnaW4iOiJodHRwczovL2Rldi5k' +
      'b250bmVlZGEucHciLCJ0eXBlIjoid2ViYXV0aG4uZ2V0In0=',
    signature:
      'MEUCIQDYXBOpCWSWq2Ll4558GJKD2RoWg958lvJSB_GdeokxogIgWuEVQ7ee6AswQY0OsuQ6y8Ks6' + 'jhd45bDx92wjXKs900=',
  },
  type: 'public-key',
  clientExtensionResults: {},
} as const;
const unverifiedPasskey: Passkey = {
  ...verifiedPasskey,
  passkeyId: unverified.id,
  publicKey:
    'pQECAyYgASFYIIheFp-u6GvFT2LNGovf3ZrT0iFVBsA_76rRysxRG9A1Ilgg8WGeA6hPmnab0HAViUYVRkwTNcN77QBf_RR0dv3lIvQ',
  counter: 143,
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
        publicKey:
          'pQECAyYgASFYID5PQTZQQg6haZFQWFzqfAOyQ_ENsMH8xxQ4GRiNPsqrIlggU8IVUOV8qpgk_Jh-OTaLuZL52KdX1fTht07X4DiQPow',
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
