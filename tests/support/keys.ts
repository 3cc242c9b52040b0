/** Real Ed25519 keys for tests, made by the same code the service uses. */
import { randomUUID } from 'node:crypto';
import type { TokenRequest, TokenUser } from '../../lib/tokens/issue.ts';
import { importSigningKey, importVerificationKeys } from '../../lib/tokens/keys.ts';
import { generateKeyring, publishedKeys } from '../../ops/keys/keyring.ts';

export async function testKeys() {
  const keyring = await generateKeyring(new Date());
  const jwk = keyring.active;
  const jwks = publishedKeys(keyring);
  const signingKey = await importSigningKey(jwk);
  const verificationKeys = await importVerificationKeys(jwks);
  return {
    keyring,
    jwk,
    jwks,
    signingKey,
    verificationKeys,
    /** The key getters the issuer and the verifiers take. */
    signer: async () => signingKey,
    verifiers: async () => verificationKeys,
  };
}

/** A counter secret for the login throttles of unit tests. */
export const COUNTER_SECRET = new Uint8Array(32).fill(7);

export const TOKEN_SETTINGS = {
  issuer: 'https://auth.test.example/unit',
  audience: 'https://api.test.example/unit',
  accessTtlSeconds: 3600,
  refreshTtlSeconds: 86_400,
  clientAccessTtlSeconds: 3600,
} as const;

/** A token request for `subject` in a fresh session that started at `at` and lasts 90 days. */
export const tokenRequest = (subject: TokenUser, at: Date, overrides: Partial<TokenRequest> = {}) => {
  const seconds = Math.floor(at.getTime() / 1000);
  return {
    subject,
    sessionId: randomUUID(),
    refreshJti: randomUUID(),
    authTime: seconds,
    method: 'password',
    issuedAt: seconds,
    notAfter: seconds + 90 * 86_400,
    ...overrides,
  } as const satisfies TokenRequest;
};
