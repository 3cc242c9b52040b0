/** PKCE (RFC 7636) with S256 alone: `plain` would hand the verifier to whoever reads the request. */
import { createHash } from 'node:crypto';

export const S256 = 'S256';

/** Section 4.2: BASE64URL(SHA256(verifier)), 43 characters. */
export const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Section 4.1: 43 to 128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The challenge `verifier` makes: a code's binding stores it and an exchange presents its own. */
export const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
