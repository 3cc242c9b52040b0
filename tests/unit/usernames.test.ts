/**
 * The username rule (docs/behaviour.md, "Usernames"): the key under which names are unique
 * (full case folding).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldUsername } from '../../lib/users/repository.ts';

/** Characters whose case mapping toLowerCase alone gets wrong, or that NFKC changes. */
const SPECIAL_CASES = [...'ßẞſKÅﬀﬃŉǅǆǄΣσςͅιᾳᾼᾀἀΐİıǰЁёᲀвΩΩꭰᎠ𐐀𐐨'];

/** Strings drawn mostly from SPECIAL_CASES, so that the properties meet them often. */
const caseHeavy = fc.string({
  unit: fc.oneof(
    fc.constantFrom(...SPECIAL_CASES),
    fc.constantFrom(...'aZ-1\u0300\u0301\u0313\u0342'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

describe('foldUsername', () => {
  it.each([
    ['straße', 'STRASSE', 'Strasse', 'STRAẞE', 'strasse'],
    ['ΟΔΟΣ', 'οδοσ', 'οδος', 'Οδος'],
    ['ǅ', 'ǆ', 'Ǆ', 'DŽ', 'dž'],
    ['ſ', 's', 'S'],
    ['\u212A', 'k', 'K'],
    ['ﬀ', 'ff', 'FF', 'Ff'],
    ['ᾳ', 'ᾼ', 'αι', 'ΑΙ', 'ᾳ'],
    ['ᲀ', 'в', 'В'],
    // ᾇ is ἇ with an iota subscript, whose upper case is an Ι after it: a mark written after
    // ᾇ belongs to the ἇ, before that Ι.
    ['ᾇ\u0300', 'Ἇ\u0300Ι', 'ἇ\u0300ι'],
  ])('gives %s and its other spellings in any letter case one key', (...spellings) => {
    expect(new Set(spellings.map(foldUsername)).size).toBe(1);
  });

  it('keeps apart names that differ in more than case', () => {
    expect(foldUsername('strasse')).not.toBe(foldUsername('strase'));
    expect(foldUsername('é')).not.toBe(foldUsername('e'));
    expect(foldUsername('ä')).not.toBe(foldUsername('ae'));
  });

  it('keys an ASCII name by its lower case, as before full folding', () => {
    expect(foldUsername('Alice.Smith-01_X')).toBe('alice.smith-01_x');
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (name) => {
        expect(foldUsername(name)).toBe(name.toLowerCase());
      }),
    );
  });

  it('is idempotent and gives a name and the upper and lower case of its decomposed form one key', () => {
    fc.assert(
      fc.property(fc.oneof(caseHeavy, fc.string({ unit: 'binary' })), (name) => {
        const key = foldUsername(name);
        const decomposed = name.normalize('NFD');
        expect(foldUsername(key)).toBe(key);
        expect(foldUsername(decomposed.toUpperCase())).toBe(key);
        expect(foldUsername(decomposed.toLowerCase())).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });
});
