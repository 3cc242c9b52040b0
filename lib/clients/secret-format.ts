/**
 * The text of a client secret, published so that secret scanners find a leaked one with no false
 * positives (docs/clients.md, "Secret scanning"): `pcs_`, 43 base62 characters of randomness and
 * 6 base62 characters of the CRC32 of the 47 before them, 53 in all. A scanner's regex finds the
 * candidates and the checksum confirms them; the token endpoint refuses a mistyped or made-up one
 * without a read. Secrets issued before the checksum (`pcs_` and 43 base64url characters, 47 in
 * all) keep working until they are removed: their length tells them apart.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const CLIENT_SECRET_PREFIX = 'pcs_';

/** Digits, then upper case, then lower case: a digit's value is its index. */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 × log2(62) = 256.03 bits. */
const RANDOM_LENGTH = 43;
/** 62^6 > 2^32: every CRC32 fits. */
const CHECKSUM_LENGTH = 6;

/** What secret scanners match; the checksum then tells a secret from a look-alike. */
export const CLIENT_SECRET_PATTERN = /\bpcs_[0-9A-Za-z]{43}[0-9A-Za-z]{6}\b/;

const CURRENT = /^pcs_[0-9A-Za-z]{49}$/;
const LEGACY = /^pcs_[0-9A-Za-z_-]{43}$/;

/** The CRC32 (IEEE, as zlib's) of the prefix and the random part, in base62, zero-padded to 6 digits. */
export function secretChecksum(prefixAndRandom: string): string {
  let value = crc32(prefixAndRandom);
  let digits = '';
  for (let place = 0; place < CHECKSUM_LENGTH; place++) {
    digits = `${BASE62[value % 62]}${digits}`;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** Uniform base62 characters: a byte of 248 or more (4 × 62) is drawn again, so none is likelier. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < 248 && text.length < length) text += BASE62[byte % 62];
    }
  }
  return text;
}

/** A new secret: 256 random bits, prefixed and checksummed. */
export function generateSecretText(): string {
  const body = `${CLIENT_SECRET_PREFIX}${randomBase62(RANDOM_LENGTH)}`;
  return `${body}${secretChecksum(body)}`;
}

/**
 * What a presented secret is: `current` (the format above, checksum right), `legacy` (issued
 * before the checksum), `malformed` (`pcs_` and neither: no secret we issued, refused unread),
 * or `foreign` (no `pcs_`: left to the digest comparison, as an imported client may hold one).
 */
export function secretFormat(presented: string): 'current' | 'legacy' | 'malformed' | 'foreign' {
  if (!presented.startsWith(CLIENT_SECRET_PREFIX)) return 'foreign';
  if (CURRENT.test(presented)) {
    const body = presented.slice(0, -CHECKSUM_LENGTH);
    return presented.slice(-CHECKSUM_LENGTH) === secretChecksum(body) ? 'current' : 'malformed';
  }
  return LEGACY.test(presented) ? 'legacy' : 'malformed';
}
