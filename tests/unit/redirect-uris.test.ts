/** A platform's redirect URIs: lib/platforms/redirect-uris.ts (docs/platforms.md, "Redirect URIs"). */
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  MAX_REDIRECT_URI_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUriChangeApplied,
  redirectUriProblem,
  redirectUrisAfter,
  redirectUrisSchema,
} from '../../lib/platforms/redirect-uris.ts';

const DEPLOYED = { allowLoopback: false };
const LOCAL = { allowLoopback: true };

describe('a redirect URI', () => {
  it.each(['https://shop.example/callback', 'https://shop.example:8443/oauth/callback?tenant=7'])(
    'takes %s on every stage',
    (uri) => {
      expect(redirectUriProblem(uri, DEPLOYED)).toBeUndefined();
    },
  );

  it.each(['http://127.0.0.1:8080/callback', 'http://localhost:3000/cb', 'http://[::1]:9000/cb'])(
    'takes the loopback %s on the local stage only',
    (uri) => {
      expect(redirectUriProblem(uri, LOCAL)).toBeUndefined();
      expect(redirectUriProblem(uri, DEPLOYED)).toMatch(/only on the local stage/);
    },
  );

  it.each([
    ['https://shop.example', 'must be written as https://shop.example/'],
    ['https://SHOP.example/cb', 'must be written as https://shop.example/cb'],
    ['https://shop.example/cb#x', 'must not have a fragment'],
    ['https://shop.example/cb#', 'must not have a fragment'],
    ['custom-scheme:/cb', 'must be https'],
    ['http://shop.example/cb', 'must be https'],
    ['javascript:alert(1)', 'must be https'],
    [`https://shop.example/${'a'.repeat(2000)}`, 'must be at most 2000 characters'],
  ])('refuses %s: %s', (uri, problem) => {
    expect(redirectUriProblem(uri, LOCAL)).toContain(problem);
  });

  it('refuses a list with none, one twice, or more than the limit', () => {
    const schema = redirectUrisSchema(DEPLOYED);
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://shop.example/${i}`);
    expect(v.safeParse(schema, uris(MAX_REDIRECT_URIS)).success).toBe(true);
    expect(v.safeParse(schema, []).success).toBe(false);
    expect(v.safeParse(schema, uris(MAX_REDIRECT_URIS + 1)).success).toBe(false);
    expect(v.safeParse(schema, ['https://shop.example/a', 'https://shop.example/a']).success).toBe(false);
  });
});

describe('a change of a platform’s redirect URIs', () => {
  const a = 'https://shop.example/a';
  const b = 'https://shop.example/b';

  it('adds at the end and removes one, each then applied', () => {
    expect(redirectUrisAfter([a], { add: b })).toEqual([a, b]);
    expect(redirectUrisAfter([a, b], { remove: a })).toEqual([b]);
    expect(redirectUriChangeApplied([a, b], { add: b })).toBe(true);
    expect(redirectUriChangeApplied([b], { remove: a })).toBe(true);
    expect(redirectUriChangeApplied([a], { add: b })).toBe(false);
  });

  it('adds one there already as nothing, on a full list too', () => {
    const full = Array.from({ length: MAX_REDIRECT_URIS }, (_, i) => `https://shop.example/${i}`);
    expect(redirectUrisAfter([a], { add: a })).toEqual([a]);
    expect(redirectUrisAfter(full, { add: full[0] ?? '' })).toEqual(full);
  });

  it('refuses by a typed reason: one not there, the eleventh, the last', () => {
    const full = Array.from({ length: MAX_REDIRECT_URIS }, (_, i) => `https://shop.example/${i}`);
    expect(() => redirectUrisAfter([a], { remove: b })).toThrow(
      expect.objectContaining({ reason: 'no-such-redirect-uri' }),
    );
    expect(() => redirectUrisAfter(full, { add: b })).toThrow(
      expect.objectContaining({ reason: 'redirect-uris-full' }),
    );
    expect(() => redirectUrisAfter([a], { remove: a })).toThrow(
      expect.objectContaining({ reason: 'last-redirect-uri' }),
    );
  });
});

describe('docs/platforms.md, "Redirect URIs"', () => {
  it('states the limits the code holds', () => {
    const doc = readFileSync(new URL('../../docs/platforms.md', import.meta.url), 'utf8');
    expect(doc).toContain(
      `at most ${MAX_REDIRECT_URI_LENGTH} characters and ${MAX_REDIRECT_URIS} URIs a platform`,
    );
  });
});
