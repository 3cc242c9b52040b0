/**
 * The client secret's published format (docs/clients.md, "Secret scanning"): what is generated,
 * what the checksum is, and what the token endpoint takes for a secret we issued.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SECRET_PATTERN,
  generateSecretText,
  secretChecksum,
  secretFormat,
} from '../../lib/clients/secret-format.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A secret issued before the checksum: `pcs_` and 32 random bytes in base64url. */
const LEGACY = `pcs_${Buffer.alloc(32, 0xfb).toString('base64url')}`;

describe('a new client secret', () => {
  it('is pcs_, 43 base62 characters and their 6-character checksum: 53 characters the published pattern finds', () => {
    const secret = generateSecretText();
    expect(secret).toMatch(/^pcs_[0-9A-Za-z]{49}$/);
    expect(secret.slice(-6)).toBe(secretChecksum(secret.slice(0, -6)));
    expect(secretFormat(secret)).toBe('current');
    expect(`token=${secret}&x=1`.match(CLIENT_SECRET_PATTERN)?.[0]).toBe(secret);
    expect(newClientSecret(new Date()).secret).toMatch(/^pcs_[0-9A-Za-z]{49}$/);
  });

  it('draws 256 bits: 2000 are distinct, every base62 character turns up at every place, none likelier', () => {
    const secrets = Array.from({ length: 2000 }, generateSecretText);
    expect(new Set(secrets).size).toBe(2000);
    expect(Math.log2(62) * 43).toBeGreaterThanOrEqual(256);
    const places = Array.from({ length: 43 }, (_, place) => new Set(secrets.map((s) => s[4 + place])));
    for (const seen of places) expect(seen.size).toBe(62);
    // A byte taken modulo 62 without drawing 248..255 again makes 0-7 a quarter likelier.
    const counts = new Map<string, number>();
    for (const secret of secrets)
      for (const character of secret.slice(4, 47)) counts.set(character, (counts.get(character) ?? 0) + 1);
    const mean = (characters: string) =>
      [...characters].reduce((sum, character) => sum + (counts.get(character) ?? 0), 0) / characters.length;
    expect(mean(BASE62.slice(0, 8)) / mean(BASE62.slice(8))).toBeLessThan(1.1);
  });

  it('checksums the prefix and random part as docs/clients.md says: CRC32 in base62, zero-padded to 6', () => {
    // The vectors docs/clients.md publishes.
    expect(secretChecksum(`pcs_${'0'.repeat(43)}`)).toBe('1cLNBa');
    expect(secretChecksum(`pcs_${'A'.repeat(43)}`)).toBe('0ny8hH');
  });
});

describe('telling a presented secret apart', () => {
  const secret = generateSecretText();
  const at = (text: string, place: number, character: string) =>
    `${text.slice(0, place)}${character}${text.slice(place + 1)}`;

  it.each([
    ['a secret as issued', secret, 'current'],
    ['a legacy secret (pcs_ and 43 base64url characters)', LEGACY, 'legacy'],
    ['a legacy secret of base62 characters only', `pcs_${'a'.repeat(43)}`, 'legacy'],
    ['one character of the random part changed', at(secret, 10, secret[10] === 'x' ? 'y' : 'x'), 'malformed'],
    ['one character of the checksum changed', at(secret, 52, secret[52] === 'x' ? 'y' : 'x'), 'malformed'],
    [
      'the checksum of another secret',
      `${secret.slice(0, -6)}${generateSecretText().slice(-6)}`,
      'malformed',
    ],
    ['the new format cut short by one', secret.slice(0, -1), 'malformed'],
    ['the new format with a character more', `${secret}x`, 'malformed'],
    ['the legacy length with a character base64url lacks', `pcs_${'a'.repeat(42)}+`, 'malformed'],
    ['a legacy secret cut short', LEGACY.slice(0, -1), 'malformed'],
    ['the new length with a base64url character', at(secret, 20, '-'), 'malformed'],
    ['pcs_ alone', 'pcs_', 'malformed'],
    ['another prefix', `pcx_${secret.slice(4)}`, 'foreign'],
    ['no prefix at all', 'not-a-pcs-secret', 'foreign'],
  ])('%s', (_name, presented, format) => {
    expect(secretFormat(presented)).toBe(format);
  });

  it('never takes a secret with any one character changed for one we issued', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Array.from({ length: 20 }, generateSecretText)),
        fc.nat({ max: 52 }),
        fc.oneof(fc.constantFrom(...BASE62), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })),
        (issued, place, character) => {
          fc.pre(issued[place] !== character);
          const changed = at(issued, place, character);
          expect(secretFormat(changed)).not.toBe('current');
          expect(secretFormat(changed)).not.toBe('legacy');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('finds no candidate in a legacy secret nor in text that merely runs into one', () => {
    expect(CLIENT_SECRET_PATTERN.test(LEGACY)).toBe(false);
    expect(CLIENT_SECRET_PATTERN.test(`${secret}0`)).toBe(false);
    expect(CLIENT_SECRET_PATTERN.test(`xpcs_${secret.slice(4)}`)).toBe(false);
  });
});
