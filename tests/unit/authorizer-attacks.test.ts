/**
 * Attacks on the authorizer: forged, confused, malformed and out-of-time tokens, each of
 * which must end in exactly `Unauthorized` (API Gateway's 401), and generated Authorization
 * headers, of which only a genuinely valid token may pass.
 *
 * Forgeries are signed with the real key wherever that isolates the check under test: a
 * token the service's own key signed, refused only because of its `kid`, its claims or its
 * header, shows that this one check holds on its own.
 */
import { createHmac, createPublicKey } from 'node:crypto';
import fc from 'fast-check';
import {
  base64url,
  type CryptoKey,
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import { createLogger } from '../../lib/log.ts';
import { createRevocationCheck } from '../../lib/revocation/revocation.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import {
  type AccessTokenVerifier,
  CLOCK_TOLERANCE_SECONDS,
  createAccessTokenVerifier,
} from '../../lib/tokens/verify.ts';
import { authorizerEvent } from '../fixtures/events.ts';
import { authorizeEvent } from '../support/authorizer.ts';
import { TOKEN_SETTINGS, testKeys, tokenRequest } from '../support/keys.ts';
import { memoryClients, noConnections } from '../support/memory-clients.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { memoryStatuses } from '../support/memory-statuses.ts';
import { respellings } from '../support/spellings.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const NOW_S = NOW.getTime() / 1000;
const OTHER_STAGE = {
  issuer: 'https://auth.parcel-carrier.example/dev',
  audience: 'https://api.parcel-carrier.example/dev',
  accessTtlSeconds: 3600,
  refreshTtlSeconds: 86_400,
} as const;

let keys: Awaited<ReturnType<typeof testKeys>>;
let attacker: { key: CryptoKey; publicJwk: JWK; kid: string };
let verifier: AccessTokenVerifier;
/** A genuine access token of alice, issued at NOW. */
let valid: string;

const logLines: string[] = [];
const logger = createLogger('debug', (line) => logLines.push(line));

const users = memoryStatuses();
const { statuses } = users;
const revocation = createRevocationCheck({
  clients: memoryClients(),
  connections: noConnections,
  metrics: noMetrics,
  users: users.reader,
  cacheTtlMs: 0,
});

/** No key is ever fetched: not for `jku`, `x5u` or an unknown `kid`. */
const fetchSpy = vi.spyOn(globalThis, 'fetch');

beforeAll(async () => {
  keys = await testKeys();
  verifier = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => NOW });
  valid = (
    await createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }).issue(
      tokenRequest({ username: 'alice', customerId: 'C-1001' }, NOW),
    )
  ).accessToken;
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  attacker = { key: pair.privateKey, publicJwk, kid: await calculateJwkThumbprint(publicJwk) };
});

beforeEach(() => {
  statuses.clear();
  statuses.set('alice', { enabled: true, revokedBefore: 0 });
});

afterAll(() => {
  expect(fetchSpy).not.toHaveBeenCalled();
  fetchSpy.mockRestore();
});

const decide = (authorizationToken: string) =>
  authorizeEvent({ metrics: noMetrics, verifier, revocation, logger }, authorizerEvent(authorizationToken));

/** The error the authorizer threw, or the policy it returned. */
const outcome = (authorizationToken: string) =>
  decide(authorizationToken).then(
    (policy) => ({ allowed: true as const, policy }),
    (error: unknown) => ({ allowed: false as const, error }),
  );

/** Exactly the plain `Error('Unauthorized')` API Gateway turns into a 401. */
function expectExactlyUnauthorized(error: unknown) {
  expect(error).toBeInstanceOf(Error);
  expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
  expect((error as Error).message).toBe('Unauthorized');
}

const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: TOKEN_SETTINGS.issuer,
  aud: TOKEN_SETTINGS.audience,
  sub: 'alice',
  iat: NOW_S,
  exp: NOW_S + 600,
  jti: 'j-attack',
  customer_id: 'C-1001',
  ...overrides,
});

const without = (...names: string[]) =>
  Object.fromEntries(Object.entries(claims()).filter(([name]) => !names.includes(name)));

/** Signs with jose: the real key unless another is given; the header is ours to choose. */
const signed = (
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key: CryptoKey = keys.signingKey.key,
) =>
  new SignJWT(payload)
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.signingKey.kid, ...header })
    .sign(key);

const segment = (value: unknown) => base64url.encode(JSON.stringify(value));

/** A compact JWS built by hand, so that header and signature can be anything. */
const compact = (header: Record<string, unknown>, payload: Record<string, unknown>, signature = '') =>
  `${segment(header)}.${segment(payload)}.${signature}`;

/** HS256 over header.payload with `secret`: the algorithm-confusion forgery. */
function hmacForgery(secret: string | Buffer) {
  const input = `${segment({ alg: 'HS256', typ: 'at+jwt', kid: keys.signingKey.kid })}.${segment(claims())}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const publicJwk = () => ({ kty: keys.jwk.kty, crv: keys.jwk.crv, x: keys.jwk.x });
const publicKeyObject = () => createPublicKey({ key: publicJwk(), format: 'jwk' });

describe('authorizer under attack', () => {
  it('allows a token forged with the real key and valid claims, so every refusal below is for its one flaw', async () => {
    const result = await outcome(`Bearer ${await signed(claims())}`);
    expect(result).toMatchObject({ allowed: true, policy: { principalId: 'alice' } });
  });

  it.each(['none', 'None', 'NONE', 'nOnE'])(
    'refuses alg %s, unsigned, with exactly Unauthorized',
    async (alg) => {
      const header = { alg, typ: 'at+jwt', kid: keys.signingKey.kid };
      for (const signature of ['', valid.split('.')[2] ?? '']) {
        const result = await outcome(`Bearer ${compact(header, claims(), signature)}`);
        expect(result.allowed).toBe(false);
        if (!result.allowed) expectExactlyUnauthorized(result.error);
      }
    },
  );

  const hmacSecrets: [string, () => string | Buffer][] = [
    ['the raw public key bytes (JWK x, decoded)', () => Buffer.from(keys.jwk.x, 'base64url')],
    ['the JWK x member as text', () => keys.jwk.x],
    ['the SPKI public key as PEM', () => String(publicKeyObject().export({ type: 'spki', format: 'pem' }))],
    ['the SPKI public key as DER', () => publicKeyObject().export({ type: 'spki', format: 'der' })],
    ['the public JWK as JSON', () => JSON.stringify(publicJwk())],
  ];

  it.each(hmacSecrets)('refuses an HS256 token keyed with %s', async (_name, secret) => {
    const result = await outcome(`Bearer ${hmacForgery(secret())}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  const embeddedKeys: [string, () => Promise<string>][] = [
    ['an attacker key embedded as jwk, with its own kid', () => attackerSigned({ jwk: attacker.publicJwk })],
    [
      'an attacker key embedded as jwk, claiming the service kid',
      () => attackerSigned({ jwk: attacker.publicJwk, kid: keys.signingKey.kid }),
    ],
    ['a jku pointing at the attacker', () => attackerSigned({ jku: 'https://attacker.example/jwks.json' })],
    [
      'a jku pointing at the attacker, claiming the service kid',
      () => attackerSigned({ jku: 'https://attacker.example/jwks.json', kid: keys.signingKey.kid }),
    ],
    ['an x5u pointing at the attacker', () => attackerSigned({ x5u: 'https://attacker.example/cert.pem' })],
    [
      'an x5c chain of the attacker',
      () => attackerSigned({ x5c: [Buffer.from('not a certificate').toString('base64')] }),
    ],
  ];

  /** Signed with the attacker's private key; the header names the attacker's key somehow. */
  const attackerSigned = (header: Record<string, unknown>) =>
    signed(claims(), { kid: attacker.kid, ...header }, attacker.key);

  it.each(embeddedKeys)('refuses a token signed by %s, and fetches nothing', async (_name, forge) => {
    const result = await outcome(`Bearer ${await forge()}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  const kids: [string, unknown][] = [
    ['path traversal', '../../etc/passwd'],
    ['an absolute path', '/dev/null'],
    ['an SQL fragment', "' OR 1=1 --"],
    ['an unknown thumbprint', 'dGhpcyBpcyBub3QgYSBrbm93biBraWQgYXQgYWxsIDEyMw'],
    ['an empty kid', ''],
    ['a URL', 'https://attacker.example/key'],
    ['a number', 1],
    ['an object', { kid: 'x' }],
    ['__proto__', '__proto__'],
  ];

  it.each(kids)('refuses a token signed with the real key but a kid of %s', async (_name, kid) => {
    const result = await outcome(`Bearer ${await signed(claims(), { kid })}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it('refuses a token signed with the real key but without any kid', async () => {
    const token = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt' })
      .sign(keys.signingKey.key);
    const result = await outcome(`Bearer ${token}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it('refuses a token signed by another key that claims the service kid', async () => {
    const result = await outcome(`Bearer ${await signed(claims(), {}, attacker.key)}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  const tolerance = CLOCK_TOLERANCE_SECONDS;
  const timeAttacks: [string, Record<string, unknown>][] = [
    ['an exp that is now: expireAt is exact, with no clock tolerance', { exp: NOW_S, iat: NOW_S - 600 }],
    ['an exp one second ago', { exp: NOW_S - 1, iat: NOW_S - 600 }],
    ['an nbf one second beyond the clock tolerance', { nbf: NOW_S + tolerance + 1 }],
    ['an iat a year in the future', { iat: NOW_S + 365 * 86_400, exp: NOW_S + 365 * 86_400 + 600 }],
    ['an iat one second beyond the clock tolerance', { iat: NOW_S + tolerance + 1 }],
    [
      'an iat older than the stage’s access lifetime, however late its exp',
      { iat: NOW_S - TOKEN_SETTINGS.accessTtlSeconds - tolerance - 1, exp: NOW_S + 10 * 365 * 86_400 },
    ],
    ['an exp that is not a number', { exp: String(NOW_S + 600) }],
    ['an iat that is not a number', { iat: String(NOW_S) }],
  ];

  it.each(timeAttacks)('refuses a token with %s', async (_name, overrides) => {
    const result = await outcome(`Bearer ${await signed(claims(overrides))}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it.each([
    ['that expires one second from now', { exp: NOW_S + 1, iat: NOW_S - 600 }],
    ['an nbf at the edge of the clock tolerance', { nbf: NOW_S + tolerance }],
  ])('allows a token %s, so the refusals above are one second past the edge', async (_name, overrides) => {
    const result = await outcome(`Bearer ${await signed(claims(overrides))}`);
    expect(result).toMatchObject({ allowed: true });
  });

  const claimAttacks: [string, () => Record<string, unknown>][] = [
    ['no exp', () => without('exp')],
    ['no sub', () => without('sub')],
    ['no jti', () => without('jti')],
    ['no iat', () => without('iat')],
    ['an empty sub', () => claims({ sub: '' })],
    ['a sub that is not a string', () => claims({ sub: 42 })],
    ['an empty jti', () => claims({ jti: '' })],
    ['a wrong iss', () => claims({ iss: 'https://attacker.example/' })],
    ['the iss with a trailing slash', () => claims({ iss: `${TOKEN_SETTINGS.issuer}/` })],
    ['a wrong aud', () => claims({ aud: 'https://api.attacker.example/' })],
    ['the service’s own issuer as aud (a refresh token’s)', () => claims({ aud: TOKEN_SETTINGS.issuer })],
    ['an aud list without the API', () => claims({ aud: ['https://a.example', 'https://b.example'] })],
    [
      'the iss and aud of another stage',
      () => claims({ iss: OTHER_STAGE.issuer, aud: OTHER_STAGE.audience }),
    ],
    ['a customer_id that is not a string', () => claims({ customer_id: 1001 })],
    ['an empty customer_id', () => claims({ customer_id: '' })],
  ];

  it.each(claimAttacks)('refuses a token signed with the real key with %s', async (_name, payload) => {
    const result = await outcome(`Bearer ${await signed(payload())}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it('refuses a token of another stage, with its own keys, issuer and audience', async () => {
    const otherKeys = await testKeys();
    const { accessToken } = await createTokenIssuer({
      signingKey: otherKeys.signer,
      settings: OTHER_STAGE,
    }).issue(tokenRequest({ username: 'alice', customerId: 'C-1001' }, NOW));
    const result = await outcome(`Bearer ${accessToken}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  const headerAttacks: [string, Record<string, unknown>][] = [
    ['typ JWT', { typ: 'JWT' }],
    ['typ rt+jwt (a refresh token’s)', { typ: 'rt+jwt' }],
    ['an unknown critical extension', { crit: ['x-attack'], 'x-attack': true }],
    ['b64 false (an unencoded payload)', { b64: false, crit: ['b64'] }],
  ];

  it.each(headerAttacks)(
    'refuses a token signed with the real key with a header of %s',
    async (_name, header) => {
      const [, payload] = (await signed(claims())).split('.');
      const input = `${segment({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.signingKey.kid, ...header })}.${payload}`;
      const signature = Buffer.from(
        await crypto.subtle.sign('Ed25519', keys.signingKey.key, new TextEncoder().encode(input)),
      ).toString('base64url');
      const result = await outcome(`Bearer ${input}.${signature}`);
      expect(result.allowed).toBe(false);
      if (!result.allowed) expectExactlyUnauthorized(result.error);
    },
  );

  /** `token` with its segment `index` taken from `from`. */
  const splice = (token: string, index: number, from: string) =>
    token
      .split('.')
      .map((part, i) => (i === index ? (from.split('.')[index] ?? '') : part))
      .join('.');
  const mallory = () => signed(claims({ sub: 'mallory', jti: 'other' }));
  /** A genuine token in the standard base64 alphabet: one that has a `-` or `_` to change. */
  async function standardBase64() {
    for (let attempt = 0; ; attempt++) {
      const token = await signed(claims({ jti: `j-${attempt}` }));
      if (/[-_]/.test(token)) return token.replaceAll('-', '+').replaceAll('_', '/');
    }
  }

  const shapeAttacks: [string, () => Promise<string> | string][] = [
    ['one segment', () => valid.split('.')[0] ?? ''],
    ['two segments (header.payload)', () => valid.split('.').slice(0, 2).join('.')],
    ['four segments (a valid token plus its signature again)', () => `${valid}.${valid.split('.')[2]}`],
    ['four segments (a valid token and an empty one)', () => `${valid}.`],
    ['five segments (JWE-shaped)', () => `${valid}.AAAA.BBBB`],
    ['an empty signature', () => `${valid.split('.').slice(0, 2).join('.')}.`],
    ['the signature of another genuine token spliced in', async () => splice(valid, 2, await mallory())],
    ['the payload of another genuine token spliced in', async () => splice(valid, 1, await mallory())],
    ['a 16 KB token of junk', () => 'A'.repeat(16 * 1024)],
    ['a 16 KB token of three junk segments', () => ['e', 'e', 'e'].map((s) => s.repeat(5461)).join('.')],
    [
      'a 16 KB payload under the genuine signature',
      () => splice(valid, 1, `.${segment({ ...decodeJwt(valid), pad: 'x'.repeat(16 * 1024) })}`),
    ],
    ['standard base64 instead of base64url', () => standardBase64()],
    [
      'base64 padding on every segment',
      () =>
        valid
          .split('.')
          .map((part) => `${part}${'='.repeat((4 - (part.length % 4)) % 4)}`)
          .join('.'),
    ],
  ];

  it.each(shapeAttacks)('refuses %s', async (_name, token) => {
    const result = await outcome(`Bearer ${await token()}`);
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it('refuses every other spelling of a genuine token’s signature, naming the reason, and allows the issued one', async () => {
    const others = respellings(valid);
    expect(others).toHaveLength(15);
    for (const token of others) {
      const linesBefore = logLines.length;
      const result = await outcome(`Bearer ${token}`);
      expect(result.allowed, token.slice(-2)).toBe(false);
      if (!result.allowed) expectExactlyUnauthorized(result.error);
      expect(logLines.slice(linesBefore).map((line) => JSON.parse(line))).toEqual([
        expect.objectContaining({ event: 'authorizer denied', reason: 'ERR_TOKEN_NOT_CANONICAL' }),
      ]);
    }
    expect(await outcome(`Bearer ${valid}`)).toMatchObject({ allowed: true });
  });

  it.each([
    ['lowercase bearer', 'bearer'],
    ['uppercase BEARER', 'BEARER'],
    ['mixed case bEaReR', 'bEaReR'],
  ])('allows a valid token after the scheme in %s: the scheme is case-insensitive', async (_name, scheme) => {
    const result = await outcome(`${scheme} ${valid}`);
    expect(result).toMatchObject({ allowed: true, policy: { principalId: 'alice' } });
  });

  it.each([
    ['a tab after the scheme', `Bearer\t<token>`],
    ['no space after the scheme', 'Bearer<token>'],
    ['a trailing newline', 'Bearer <token>\n'],
    ['a second token after a comma', 'Bearer <token>, Bearer <token>'],
    ['a second token after a space', 'Bearer <token> <token>'],
    ['a non-breaking space after the scheme', 'Bearer\u00a0<token>'],
  ])('refuses a valid token with %s', async (_name, template) => {
    const result = await outcome(template.replaceAll('<token>', valid));
    expect(result.allowed).toBe(false);
    if (!result.allowed) expectExactlyUnauthorized(result.error);
  });

  it('never reads the user store for a forged token', async () => {
    const readsBefore = users.reads();
    await outcome(`Bearer ${hmacForgery(Buffer.from(keys.jwk.x, 'base64url'))}`);
    await outcome(`Bearer ${await signed(claims(), {}, attacker.key)}`);
    await outcome(`Bearer ${compact({ alg: 'none', typ: 'at+jwt' }, claims())}`);
    expect(users.reads()).toBe(readsBefore);
  });
});

describe('authorizer with generated Authorization headers', () => {
  /** The genuine token character for character: another spelling of its bytes is not it. */
  const isGenuine = (header: string) => /^bearer +(.*)$/is.exec(header)?.[1] === valid;

  const headers = () => {
    const alphabet = [...'ABCXYZabcxyz0189-_.=+/~ \t'];
    const oneChar = fc.oneof(
      fc.constantFrom(...alphabet),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const mutated = fc
      .tuple(fc.constantFrom('replace', 'insert', 'delete'), fc.nat({ max: valid.length }), oneChar)
      .map(([kind, at, char]) => {
        const keep = kind === 'insert' ? at : at + 1;
        return `${valid.slice(0, at)}${kind === 'delete' ? '' : char}${valid.slice(keep)}`;
      });
    const segments = fc
      .array(fc.constantFrom(...valid.split('.'), '', 'e30', 'eyJhbGciOiJub25lIn0'), {
        minLength: 1,
        maxLength: 5,
      })
      .map((parts) => parts.join('.'));
    const claimLike = fc.record(
      {
        iss: fc.constantFrom(TOKEN_SETTINGS.issuer, OTHER_STAGE.issuer, ''),
        aud: fc.constantFrom(TOKEN_SETTINGS.audience, TOKEN_SETTINGS.issuer, OTHER_STAGE.audience),
        sub: fc.oneof(fc.constant('alice'), fc.string({ unit: 'binary' })),
        iat: fc.integer({ min: NOW_S - 10 * 86_400, max: NOW_S + 10 * 86_400 }),
        exp: fc.integer({ min: NOW_S - 10 * 86_400, max: NOW_S + 10 * 86_400 }),
        jti: fc.string(),
      },
      { requiredKeys: [] },
    );
    const jwtShaped = fc
      .tuple(
        fc.record(
          {
            alg: fc.constantFrom('none', 'None', 'EdDSA', 'HS256', 'RS256', 'ES256', ''),
            typ: fc.constantFrom('at+jwt', 'JWT', 'rt+jwt'),
            kid: fc.oneof(fc.constant(keys.signingKey.kid), fc.string()),
          },
          { requiredKeys: [] },
        ),
        fc.oneof(claimLike, fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 })),
        fc.oneof(fc.constant(valid.split('.')[2] ?? ''), fc.base64String(), fc.constant('')),
      )
      .map(([header, payload, signature]) => compact(header, payload, signature.replaceAll('=', '')));
    const token = fc.oneof(
      { arbitrary: fc.constant(valid), weight: 2 },
      { arbitrary: mutated, weight: 4 },
      { arbitrary: segments, weight: 2 },
      { arbitrary: jwtShaped, weight: 3 },
      { arbitrary: fc.string({ unit: 'binary' }), weight: 1 },
      { arbitrary: fc.base64String({ maxLength: 400 }), weight: 1 },
    );
    const scheme = fc.constantFrom(
      'Bearer',
      'bearer',
      'BEARER',
      'bEaReR',
      'Basic',
      'Token',
      'JWT',
      'Bearer:',
      '',
    );
    const separator = fc.constantFrom(' ', '  ', '\t', '', '\n', '\u00a0', ' \r\n ');
    return fc.oneof(
      { arbitrary: fc.tuple(scheme, separator, token).map((parts) => parts.join('')), weight: 8 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 300 }), weight: 1 },
      { arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 300 }), weight: 1 },
    );
  };

  it('throws exactly Unauthorized, or allows only the genuine token, for 2000 generated headers', async () => {
    let allowed = 0;
    await fc.assert(
      fc.asyncProperty(headers(), async (header) => {
        const readsBefore = users.reads();
        const linesBefore = logLines.length;
        const result = await outcome(header);
        if (result.allowed) {
          allowed += 1;
          expect(isGenuine(header)).toBe(true);
          expect(result.policy.principalId).toBe('alice');
        } else {
          expectExactlyUnauthorized(result.error);
          if (!isGenuine(header)) expect(users.reads()).toBe(readsBefore);
        }
        // The scheme in any case, the token character for character: the genuine token must pass.
        if (isGenuine(header)) expect(result.allowed).toBe(true);
        const presented = header.trim();
        if (presented.length >= 16) {
          expect(logLines.slice(linesBefore).join('\n')).not.toContain(presented);
        }
      }),
      { numRuns: 2000 },
    );
    // The generator reaches the Allow branch too, so the oracle above is not vacuous.
    expect(allowed).toBeGreaterThan(0);
  });
});
