/** PKCE S256 (lib/authorization/pkce.ts) against RFC 7636's own example. */
import { describe, expect, it } from 'vitest';
import { CODE_CHALLENGE, CODE_VERIFIER, challengeOf } from '../../lib/authorization/pkce.ts';

describe('PKCE S256', () => {
  it('makes the challenge of RFC 7636 appendix B from its verifier', () => {
    expect(challengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('takes a verifier of 43 to 128 unreserved characters and nothing else', () => {
    expect(CODE_VERIFIER.test('a'.repeat(43))).toBe(true);
    expect(CODE_VERIFIER.test(`${'a'.repeat(40)}-._~`)).toBe(true);
    expect(CODE_VERIFIER.test('a'.repeat(128))).toBe(true);
    expect(CODE_VERIFIER.test('a'.repeat(42))).toBe(false);
    expect(CODE_VERIFIER.test('a'.repeat(129))).toBe(false);
    expect(CODE_VERIFIER.test(`${'a'.repeat(42)}+`)).toBe(false);
  });

  it('takes a challenge only in the shape S256 makes', () => {
    expect(CODE_CHALLENGE.test(challengeOf('a'.repeat(43)))).toBe(true);
    expect(CODE_CHALLENGE.test(`${challengeOf('a'.repeat(43))}=`)).toBe(false);
    expect(CODE_CHALLENGE.test('a'.repeat(42))).toBe(false);
  });
});
