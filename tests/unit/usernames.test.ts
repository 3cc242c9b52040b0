/**
 * The username rule (docs/behaviour.md, "Usernames"): the key under which names are unique
 * (full case folding), and the names an operator may create (one script, UTS #39).
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { USERNAME_SCRIPTS, UsernameSchema } from '../../lib/accounts/repository.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import { LoginRequestSchema } from '../../lib/auth/login.ts';

const MIXES_SCRIPTS = 'must not mix scripts (e.g. Latin and Cyrillic letters)';

/** The messages UsernameSchema gives `name`; empty when it may be created. */
const refusals = (name: string) =>
  v.safeParse(UsernameSchema, name).issues?.map((issue) => issue.message) ?? [];

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

describe('UsernameSchema: one script', () => {
  it.each([
    ['a Cyrillic а in a Latin name', 'pаypal'],
    ['a Greek ο in a Latin name', 'gοogle'],
    ['a Latin o in a Cyrillic name', 'вoва'],
    ['a Common look-alike that NFKC turns into a Latin letter', '𝐚дмин'],
    ['a Greek tonos in a Latin name, though NFKC turns it into a space and a mark', 'cafe\u0384'],
    ['Hiragana with Hangul', 'たなか한국'],
    ['Katakana with Bopomofo', 'タナカㄅ'],
    ['a Katakana-Hiragana sign (Script_Extensions Hira, Kana) in a Latin name', 'abー'],
    ['a private-use character (script Unknown) in a Latin name', 'alice\uE000'],
  ])('refuses %s', (_, name) => {
    expect(refusals(name)).toEqual([MIXES_SCRIPTS]);
  });

  it.each([
    ['Latin with digits and ASCII punctuation', 'alice.smith-01_x'],
    ['Latin with a combining mark (Inherited)', 'alex\u0301'],
    ['Cyrillic', 'иван.2024'],
    ['Greek', 'οδος'],
    ['Han, Hiragana and Katakana (Japanese)', '山田たろうタロウ'],
    ['Han and Hangul (Korean)', '한국語'],
    ['Han and Bopomofo (Chinese)', 'ㄅㄆ中文'],
    ['a sign shared by Hiragana and Katakana with either', 'らーめん'],
    ['digits and punctuation alone (Common)', '2024-01'],
  ])('accepts %s', (_, name) => {
    expect(refusals(name)).toEqual([]);
  });

  it('knows the script of every character the JavaScript engine knows one of', () => {
    const known = new RegExp(
      `[${[...USERNAME_SCRIPTS, 'Zyyy', 'Zinh'].map((script) => `\\p{scx=${script}}`).join('')}]`,
      'u',
    );
    const unknown: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (!known.test(String.fromCodePoint(codePoint))) unknown.push(codePoint.toString(16));
    }
    expect(unknown).toEqual([]);
  });

  it('leaves login to compare exactly: a stored name that mixes scripts still logs in', () => {
    expect(v.is(LoginRequestSchema, { username: 'pаypal', password: 'a-password' })).toBe(true);
  });
});

describe('UsernameSchema: no colon', () => {
  const NO_COLON = 'must not contain a colon (the access log names API clients client:<id>)';

  it.each([
    ['an API client’s principal', 'client:abc'],
    ['the prefix in another case', 'Client:abc'],
    ['a colon anywhere', 'eshop:brno'],
    ['a fullwidth colon, which NFKC makes a colon', 'client\uFF1Aabc'],
    ['a small colon, which NFKC makes a colon', 'client\uFE55abc'],
  ])('refuses %s', (_, name) => {
    expect(refusals(name)).toEqual([NO_COLON]);
  });

  it('accepts a name that only begins like a client’s principal', () => {
    expect(refusals('client-abc')).toEqual([]);
    expect(refusals('clientabc')).toEqual([]);
  });

  it('leaves login to answer such a name as any unknown one: no 400 that tells it apart', () => {
    expect(v.is(LoginRequestSchema, { username: 'client:abc', password: 'a-password' })).toBe(true);
  });
});
