/**
 * How integrators/client/parcel-auth-client.ts reads the rate limits an answer publishes
 * (RateLimit-Policy and RateLimit, draft-ietf-httpapi-ratelimit-headers-10, Structured Field
 * Lists of RFC 9651): what the service sends, what a lenient reader accepts besides, and that
 * no field, however broken or hostile, ever throws. The client's use of them is in
 * client-library.test.ts and client-hostile-server.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRateLimit, parseRateLimitPolicy } from '../../integrators/client/parcel-auth-client.ts';

const parsers = [parseRateLimitPolicy, parseRateLimit];

describe('RateLimit-Policy and RateLimit', () => {
  it('reads the fields the service sends', () => {
    expect(parseRateLimitPolicy('"username";q=5;w=86400, "address";q=100;w=3600, "route";q=50;w=1')).toEqual([
      { name: 'username', quota: 5, windowSeconds: 86_400 },
      { name: 'address', quota: 100, windowSeconds: 3600 },
      { name: 'route', quota: 50, windowSeconds: 1 },
    ]);
    expect(parseRateLimit('"username";r=4;t=172740, "address";r=99;t=7140')).toEqual([
      { name: 'username', remaining: 4, resetSeconds: 172_740 },
      { name: 'address', remaining: 99, resetSeconds: 7140 },
    ]);
  });

  it('reads tokens for names, whitespace around separators, upper-case keys and escaped quotes', () => {
    expect(parseRateLimitPolicy(' username ; Q = 5 ;w=86400 ,\t"add\\"ress\\\\";q=100\t')).toEqual([
      { name: 'username', quota: 5, windowSeconds: 86_400 },
      { name: 'add"ress\\', quota: 100 },
    ]);
    // A field sent on two lines, as Headers.get joins them.
    expect(parseRateLimit('"a";r=1;t=2, b;r=0')).toEqual([
      { name: 'a', remaining: 1, resetSeconds: 2 },
      { name: 'b', remaining: 0 },
    ]);
  });

  it('gives no window or reset when w or t is missing or no whole number', () => {
    expect(parseRateLimitPolicy('"a";q=5, "b";q=5;w=-1, "c";q=5;w="60", "d";q=5;w')).toEqual([
      { name: 'a', quota: 5 },
      { name: 'b', quota: 5 },
      { name: 'c', quota: 5 },
      { name: 'd', quota: 5 },
    ]);
    expect(parseRateLimit('"a";r=5;t=1.5')).toEqual([{ name: 'a', remaining: 5 }]);
  });

  it('skips a member without a whole, non-negative q or r, or whose name is no string or token', () => {
    expect(
      parseRateLimitPolicy(
        '"none", "negative";q=-1, "decimal";q=1.5, "string";q="5", "bare";q, 42;q=1, ?1;q=1, ("a");q=1, "ok";q=0',
      ),
    ).toEqual([{ name: 'ok', quota: 0 }]);
    expect(parseRateLimit('"a";q=5, "b";r=-0, "c";r=3')).toEqual([
      { name: 'b', remaining: 0 },
      { name: 'c', remaining: 3 },
    ]);
  });

  it('ignores the parameters and members it does not know, of any Structured Field type', () => {
    const field =
      '"a";q=1;qu="requests";pk=:Y2xpZW50:;x=?1;y=@1700000000;z=%"f%c3%bc";d=1.5;e=tok/en:x, ' +
      '("x" "y";p=1);q=3, :AAE=:;q=4, @1;q=5, "b";q=2;flag';

    expect(parseRateLimitPolicy(field)).toEqual([
      { name: 'a', quota: 1 },
      { name: 'b', quota: 2 },
    ]);
  });

  it('ignores a malformed field whole, as RFC 9651 says, and never throws', () => {
    const malformed = [
      '"unterminated;q=5',
      '"a";q=5,',
      ',"a";q=5',
      '"a";q=5,,"b";q=6',
      '"a";q=5 "b";q=6',
      '"a";q=',
      '"a";=5',
      '"a";q=5;',
      '"a";q=1234567890123456',
      '"a";q=1.2345',
      '"é";q=1',
      '"a\\x";q=1',
      '"a";q=5)',
      '("a" "b"',
      '"a";q=?2',
      '"a";q=:not base64!:',
      '"a";q=%x',
      'ümlaut;q=1',
      '-;q=1',
      '"a";q=5\n',
    ];
    for (const field of malformed)
      for (const parse of parsers)
        expect({ field, parsed: parse(field) }).toEqual({ field, parsed: undefined });
  });

  it('has nothing for an absent or empty field', () => {
    for (const field of [null, '', '   ', '\t'])
      for (const parse of parsers) expect(parse(field)).toBeUndefined();
  });

  it('reads a field of two hundred thousand members in linear time', () => {
    const field = Array.from({ length: 200_000 }, (_, index) => `"p${index}";q=${index};w=1`).join(', ');
    const started = performance.now();

    const policies = parseRateLimitPolicy(field);

    expect(policies).toHaveLength(200_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

/** A whole number of at least 0, or absent. */
const countOrAbsent = (value: unknown) =>
  value === undefined || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);

/** Strings built from the field's own pieces, which reach deeper into the reader than random text. */
const fieldLike = fc
  .array(
    fc.constantFrom(
      '"a"',
      'tok',
      '"',
      '\\',
      ';',
      ',',
      '=',
      ' ',
      '\t',
      '(',
      ')',
      ':',
      '?1',
      '@',
      '%"',
      'q',
      'r',
      'w',
      't',
      '5',
      '-1',
      '1.5',
      '9999999999999999',
      'é',
      '\u0000',
    ),
    { maxLength: 40 },
  )
  .map((pieces) => pieces.join(''));

describe('any field a server could send', () => {
  it('reads every string without throwing, into named whole-number entries or nothing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fieldLike), (field) => {
        const policies = parseRateLimitPolicy(field);
        const remaining = parseRateLimit(field);
        for (const policy of policies ?? [])
          expect(
            typeof policy.name === 'string' &&
              countOrAbsent(policy.quota) &&
              countOrAbsent(policy.windowSeconds),
          ).toBe(true);
        for (const limit of remaining ?? [])
          expect(
            typeof limit.name === 'string' &&
              countOrAbsent(limit.remaining) &&
              countOrAbsent(limit.resetSeconds),
          ).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads back any policies written as the draft writes them', () => {
    const policy = fc.record(
      {
        name: fc.string({
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
        }),
        quota: fc.nat(),
        windowSeconds: fc.nat(),
      },
      { requiredKeys: ['name', 'quota'] },
    );
    fc.assert(
      fc.property(fc.array(policy, { minLength: 1, maxLength: 8 }), (policies) => {
        const field = policies
          .map(
            ({ name, quota, windowSeconds }) =>
              `"${name.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}";q=${quota}${windowSeconds === undefined ? '' : `;w=${windowSeconds}`}`,
          )
          .join(', ');
        expect(parseRateLimitPolicy(field)).toEqual(policies);
      }),
    );
  });
});
