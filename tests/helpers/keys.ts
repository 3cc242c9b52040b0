/** Real Ed25519 keys for tests, made by the same code the service uses. */
import {
  generateSigningJwk,
  importSigningKey,
  importVerificationKeys,
  toPublicJwk,
} from '../../lib/auth/keys.ts';

export async function testKeys() {
  const jwk = await generateSigningJwk();
  const signingKey = await importSigningKey(jwk);
  const verificationKeys = await importVerificationKeys({ keys: [toPublicJwk(jwk)] });
  return { jwk, signingKey, verificationKeys };
}

export const TOKEN_SETTINGS = {
  issuer: 'https://auth.test.example/unit',
  audience: 'https://api.test.example/unit',
  accessTtlSeconds: 3600,
  refreshTtlSeconds: 86_400,
} as const;
