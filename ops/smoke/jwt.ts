/**
 * What the smoke test can see of a token without a key: its shape (three base64url segments,
 * a JSON header and payload) and the header's alg, typ and kid. The signature is judged by
 * the authorizer (checks 3 to 5), not here. Messages name header values, never the token.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { SIGNING_ALGORITHM } from '../../lib/tokens/keys.ts';

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** What one of jose's decoders (no key, no verification) makes of a token, or undefined. */
function decoded<T>(decode: () => T): T | undefined {
  try {
    return decode();
  } catch {
    return undefined;
  }
}

/** Why `value` is not a JWT of type `typ` signed with EdDSA, or null when it looks right. */
export function jwtProblem(field: string, value: unknown, typ: string): string | null {
  if (typeof value !== 'string') return `${field} is ${value === undefined ? 'missing' : 'not a string'}`;
  const segments = value.split('.');
  if (segments.length !== 3) return `${field} has ${segments.length} segments, not 3`;
  if (!SEGMENT.test(segments[2] ?? '')) return `${field}'s signature is not base64url`;
  const header = decoded(() => decodeProtectedHeader(value));
  if (header === undefined) return `${field}'s header is not a base64url JSON object`;
  if (decoded(() => decodeJwt(value)) === undefined)
    return `${field}'s payload is not a base64url JSON object`;
  const show = (name: string) => JSON.stringify(header[name]) ?? 'missing';
  if (header.alg !== SIGNING_ALGORITHM) return `${field}'s alg is ${show('alg')}, not "${SIGNING_ALGORITHM}"`;
  if (header.typ !== typ) return `${field}'s typ is ${show('typ')}, not "${typ}"`;
  if (typeof header.kid !== 'string' || header.kid === '') return `${field} has no kid`;
  return null;
}

/**
 * The token with the first character of its signature changed to another base64url
 * character. The first character carries six bits of the signature's first byte (the last
 * one carries padding bits too, which a lenient decoder may ignore), so the signature
 * decodes to different bytes and must fail verification. Null if there is no signature.
 */
export function tamperSignature(token: string): string | null {
  const segments = token.split('.');
  const signature = segments[2];
  if (segments.length !== 3 || signature === undefined || !SEGMENT.test(signature)) return null;
  const flipped = signature.startsWith('A') ? 'B' : 'A';
  return `${segments[0]}.${segments[1]}.${flipped}${signature.slice(1)}`;
}
