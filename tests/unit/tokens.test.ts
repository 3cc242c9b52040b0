import { createHmac, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { base64url, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPE, DEFAULT_USER_SCOPES, GRANTABLE_SCOPES } from '../../lib/scopes.ts';
import { ACCESS_TOKEN_TYPE, LOGIN_CLIENT_ID, REFRESH_TOKEN_TYPE } from '../../lib/tokens/claims.ts';
import { createClientTokenIssuer, createTokenIssuer, type TokenIssuer } from '../../lib/tokens/issue.ts';
import { importSigningKey, importVerificationKeys } from '../../lib/tokens/keys.ts';
import {
  type AccessTokenVerifier,
  CLOCK_TOLERANCE_SECONDS,
  createAccessTokenVerifier,
  createRefreshTokenVerifier,
  isCanonicalBase64url,
} from '../../lib/tokens/verify.ts';
import { generateSigningJwk, toPublicJwk } from '../../ops/keys/keyring.ts';
import { TOKEN_SETTINGS, testKeys, tokenRequest } from '../support/keys.ts';
import { respellings } from '../support/spellings.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const alice = { username: 'alice', customerId: 'C-1001' };
const NOW_SECONDS = NOW.getTime() / 1000;
const verifiedAlice = {
  kind: 'user',
  ...alice,
  scopes: DEFAULT_USER_SCOPES,
  jti: expect.any(String),
  issuer: TOKEN_SETTINGS.issuer,
  audience: TOKEN_SETTINGS.audience,
  issuedAt: NOW_SECONDS,
  expiresAt: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds,
  sessionId: expect.any(String),
  authTime: NOW_SECONDS,
  method: 'password',
};

let keys: Awaited<ReturnType<typeof testKeys>>;
let issuer: TokenIssuer;
const verifierAt = (date: Date): AccessTokenVerifier =>
  createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => date });

beforeAll(async () => {
  keys = await testKeys();
  issuer = createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS });
});

/** Re-signs a payload/header with the real key, for tokens the issuer would never make. */
const forge = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', typ: ACCESS_TOKEN_TYPE, kid: keys.signingKey.kid, ...header })
    .sign(keys.signingKey.key);

const validClaims = () => ({
  iss: TOKEN_SETTINGS.issuer,
  aud: TOKEN_SETTINGS.audience,
  sub: 'alice',
  iat: NOW.getTime() / 1000,
  exp: NOW.getTime() / 1000 + 60,
  jti: 'j-1',
});

describe('token issuer', () => {
  it('issues an EdDSA access token with kid, at+jwt type and every required claim', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    expect(decodeProtectedHeader(accessToken)).toEqual({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.jwk.kid });
    const claims = decodeJwt(accessToken);
    expect(claims).toMatchObject({
      iss: TOKEN_SETTINGS.issuer,
      aud: TOKEN_SETTINGS.audience,
      sub: 'alice',
      customer_id: 'C-1001',
      iat: NOW.getTime() / 1000,
      exp: NOW.getTime() / 1000 + TOKEN_SETTINGS.accessTtlSeconds,
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the session id and the login time in both tokens, the chosen jti in the refresh token only', async () => {
    const request = tokenRequest(alice, new Date(NOW.getTime() - 3_600_000), { issuedAt: NOW_SECONDS });
    const { accessToken, refreshToken } = await issuer.issue(request);
    expect(decodeJwt(refreshToken)).toMatchObject({
      sid: request.sessionId,
      auth_time: request.authTime,
      jti: request.refreshJti,
    });
    expect(decodeJwt(accessToken)).toMatchObject({ sid: request.sessionId, auth_time: request.authTime });
    expect(decodeJwt(accessToken).auth_time).not.toBe(decodeJwt(accessToken).iat);
    expect(decodeJwt(accessToken).jti).not.toBe(request.refreshJti);
  });

  it('gives the access token’s session id to the authorizer, and refuses one that is not a string', async () => {
    const request = tokenRequest(alice, NOW);
    const { accessToken } = await issuer.issue(request);
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toMatchObject({
      sessionId: request.sessionId,
    });
    for (const sid of [42, '']) {
      const forged = await new SignJWT({ sid, customer_id: 'C-1001' })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: keys.jwk.kid })
        .setIssuer(TOKEN_SETTINGS.issuer)
        .setAudience(TOKEN_SETTINGS.audience)
        .setSubject('alice')
        .setIssuedAt(NOW_SECONDS)
        .setExpirationTime(NOW_SECONDS + 60)
        .setJti('forged')
        .sign(keys.signingKey.key);
      await expect(verifierAt(NOW).verify(forged)).rejects.toMatchObject({ code: 'ERR_TOKEN_SESSION' });
    }
  });

  it('gives both tokens the iat the session chose, not the signing time', async () => {
    const { accessToken, refreshToken, issuedAt } = await issuer.issue(
      tokenRequest(alice, NOW, { issuedAt: NOW_SECONDS + 1 }),
    );
    expect(issuedAt).toBe(NOW_SECONDS + 1);
    expect(decodeJwt(accessToken).iat).toBe(NOW_SECONDS + 1);
    expect(decodeJwt(refreshToken).iat).toBe(NOW_SECONDS + 1);
  });

  it('caps both tokens at the end of the session', async () => {
    const end = NOW_SECONDS + 600;
    const { accessToken, refreshToken, accessExpiresAt } = await issuer.issue(
      tokenRequest(alice, NOW, { notAfter: end }),
    );
    expect(decodeJwt(accessToken).exp).toBe(end);
    expect(decodeJwt(refreshToken).exp).toBe(end);
    expect(accessExpiresAt.getTime() / 1000).toBe(end);
  });

  it('issues a refresh token of another type and audience with the refresh lifetime', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    expect(decodeProtectedHeader(refreshToken).typ).toBe(REFRESH_TOKEN_TYPE);
    const claims = decodeJwt(refreshToken);
    expect(claims.aud).toBe(TOKEN_SETTINGS.issuer);
    expect(claims.exp).toBe(NOW.getTime() / 1000 + TOKEN_SETTINGS.refreshTtlSeconds);
    expect(claims.customer_id).toBeUndefined();
  });

  it('reports the access expiry equal to the token exp', async () => {
    const { accessToken, accessExpiresAt } = await issuer.issue(tokenRequest(alice, NOW));
    expect(accessExpiresAt.getTime() / 1000).toBe(decodeJwt(accessToken).exp);
  });

  it('gives every token its own jti', async () => {
    const [a, b] = await Promise.all([
      issuer.issue(tokenRequest(alice, NOW)),
      issuer.issue(tokenRequest(alice, NOW)),
    ]);
    const ids = [a.accessToken, a.refreshToken, b.accessToken, b.refreshToken].map((t) => decodeJwt(t).jti);
    expect(new Set(ids).size).toBe(4);
  });

  it('leaves out the customer claim for a user without customer', async () => {
    const { accessToken } = await issuer.issue(tokenRequest({ username: 'solo', customerId: null }, NOW));
    expect(decodeJwt(accessToken).customer_id).toBeUndefined();
  });
});

describe('a user’s access token as RFC 9068 validators read it', () => {
  it('names the password login as its client_id and lists every route scope but customer:admin when the user is not narrowed', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    expect(decodeJwt(accessToken)).toMatchObject({
      client_id: LOGIN_CLIENT_ID,
      scope: 'tracking:read shipments:write',
    });
  });

  it('lists only the scopes a narrowed user has', async () => {
    const { accessToken } = await issuer.issue(tokenRequest({ ...alice, scopes: ['tracking:read'] }, NOW));
    expect(decodeJwt(accessToken)).toMatchObject({ client_id: LOGIN_CLIENT_ID, scope: 'tracking:read' });
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toMatchObject({
      kind: 'user',
      scopes: ['tracking:read'],
    });
  });

  it('never gives a user tokens:introspect, a scope no route needs, even one an operator listed', async () => {
    const { accessToken: every } = await issuer.issue(tokenRequest(alice, NOW));
    const { accessToken: listed } = await issuer.issue(
      tokenRequest({ ...alice, scopes: ['tracking:read', 'tokens:introspect'] }, NOW),
    );
    expect(String(decodeJwt(every).scope).split(' ')).not.toContain('tokens:introspect');
    expect(decodeJwt(listed).scope).toBe('tracking:read');
  });

  it('leaves both out of the refresh token, which only this service reads', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    expect(decodeJwt(refreshToken)).not.toHaveProperty('client_id');
    expect(decodeJwt(refreshToken)).not.toHaveProperty('scope');
  });

  it('still accepts a user token signed before user tokens had client_id and scope, as one with the default scopes', async () => {
    const legacy = await forge({ ...validClaims(), sid: 's-1', customer_id: 'C-1001' });
    await expect(verifierAt(NOW).verify(legacy)).resolves.toMatchObject({
      kind: 'user',
      username: 'alice',
      scopes: ['tracking:read', 'shipments:write'],
      authTime: undefined,
    });
  });

  it('refuses a user token with the login’s client_id but no scope: no token issued since has one', async () => {
    const token = await forge({ ...validClaims(), sid: 's-1', client_id: LOGIN_CLIENT_ID });
    await expect(verifierAt(NOW).verify(token)).rejects.toMatchObject({ code: 'ERR_TOKEN_SCOPE' });
  });

  it('reads a token with any other client_id as a client’s, which must then be its subject', async () => {
    const token = await forge({ ...validClaims(), client_id: 'login2', scope: 'tracking:read' });
    await expect(verifierAt(NOW).verify(token)).rejects.toMatchObject({ code: 'ERR_TOKEN_CLIENT' });
  });
});

describe('customer:admin, an administrator’s scope that is never a default', () => {
  const scopeOf = async (subject: Parameters<typeof tokenRequest>[0]) =>
    String(decodeJwt((await issuer.issue(tokenRequest(subject, NOW))).accessToken).scope).split(' ');

  it('is in the token of a user whose item says admin, beside its default or narrowed scopes', async () => {
    expect(await scopeOf({ ...alice, admin: true })).toEqual([
      'tracking:read',
      'shipments:write',
      ADMIN_SCOPE,
    ]);
    expect(await scopeOf({ ...alice, scopes: null, admin: true })).toEqual([
      'tracking:read',
      'shipments:write',
      ADMIN_SCOPE,
    ]);
    expect(await scopeOf({ ...alice, scopes: ['tracking:read'], admin: true })).toEqual([
      'tracking:read',
      ADMIN_SCOPE,
    ]);
  });

  it('is in no other user’s token: not with null scopes, nor when the narrowed list names it', async () => {
    expect(await scopeOf({ ...alice, admin: false })).not.toContain(ADMIN_SCOPE);
    expect(await scopeOf({ ...alice, scopes: null })).not.toContain(ADMIN_SCOPE);
    expect(await scopeOf({ ...alice, scopes: ['tracking:read', ADMIN_SCOPE] })).toEqual(['tracking:read']);
    expect(await scopeOf({ ...alice, scopes: [ADMIN_SCOPE], admin: false })).toEqual(['']);
  });

  it('is verified in an administrator’s token and passed on with its login time', async () => {
    const request = tokenRequest({ ...alice, admin: true }, new Date(NOW.getTime() - 600_000), {
      issuedAt: NOW_SECONDS,
    });
    const { accessToken } = await issuer.issue(request);
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toMatchObject({
      kind: 'user',
      scopes: ['tracking:read', 'shipments:write', ADMIN_SCOPE],
      authTime: NOW_SECONDS - 600,
    });
  });

  it('is never in a client’s token, even when the client’s record lists it, and not believed in one', async () => {
    const clients = createClientTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS });
    const { accessToken } = await clients.issue({
      clientId: 'pcl_0123456789abcdef0123',
      grant: { secretId: '0123abcd' },
      customerId: 'C-1001',
      scopes: [...GRANTABLE_SCOPES, ADMIN_SCOPE],
      issuedAt: NOW_SECONDS,
    });
    expect(decodeJwt(accessToken).scope).toBe('tracking:read shipments:write tokens:introspect');
    expect(decodeJwt(accessToken)).not.toHaveProperty('auth_time');
    const forged = await forge({
      ...validClaims(),
      sub: 'pcl_0123456789abcdef0123',
      client_id: 'pcl_0123456789abcdef0123',
      secret_id: '0123abcd',
      customer_id: 'C-1001',
      scope: `tracking:read ${ADMIN_SCOPE}`,
    });
    await expect(verifierAt(NOW).verify(forged)).resolves.toMatchObject({
      kind: 'client',
      scopes: ['tracking:read'],
    });
  });
});

describe('auth_time in a user’s access token', () => {
  it('refuses an access token whose auth_time is not a non-negative integer', async () => {
    for (const auth_time of ['1795255200', 1.5, -1, null]) {
      const token = await forge({
        ...validClaims(),
        client_id: LOGIN_CLIENT_ID,
        scope: 'tracking:read',
        auth_time,
      });
      await expect(verifierAt(NOW).verify(token)).rejects.toMatchObject({ code: 'ERR_TOKEN_AUTH_TIME' });
    }
  });
});

describe('a stage’s former issuers', () => {
  const former = 'https://auth.example/before';
  const withFormer = { ...TOKEN_SETTINGS, formerIssuers: [former] };

  it('verifies access and refresh tokens of a former issuer until they expire', async () => {
    const old = createTokenIssuer({
      signingKey: keys.signer,
      settings: { ...TOKEN_SETTINGS, issuer: former },
    });
    const { accessToken, refreshToken } = await old.issue(tokenRequest(alice, NOW));
    const access = createAccessTokenVerifier({
      keys: keys.verifiers,
      settings: withFormer,
      clock: () => NOW,
    });
    await expect(access.verify(accessToken)).resolves.toMatchObject({ username: 'alice' });
    const refresh = createRefreshTokenVerifier({
      keys: keys.verifiers,
      settings: withFormer,
      clock: () => NOW,
    });
    await expect(refresh.verify(refreshToken)).resolves.toMatchObject({ username: 'alice' });
  });

  it('refuses them once the issuer is no longer listed', async () => {
    const old = createTokenIssuer({
      signingKey: keys.signer,
      settings: { ...TOKEN_SETTINGS, issuer: former },
    });
    const { accessToken } = await old.issue(tokenRequest(alice, NOW));
    await expect(verifierAt(NOW).verify(accessToken)).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
  });
});

describe('access token verifier', () => {
  it('accepts an access token it issued and returns its subject', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toEqual(verifiedAlice);
  });

  it('returns a null customer for a token without the customer claim', async () => {
    const { accessToken } = await issuer.issue(tokenRequest({ username: 'solo', customerId: null }, NOW));
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toEqual({
      kind: 'user',
      username: 'solo',
      customerId: null,
      scopes: DEFAULT_USER_SCOPES,
      jti: expect.any(String),
      issuer: TOKEN_SETTINGS.issuer,
      audience: TOKEN_SETTINGS.audience,
      issuedAt: NOW_SECONDS,
      expiresAt: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds,
      sessionId: expect.any(String),
      authTime: NOW_SECONDS,
      method: 'password',
    });
  });

  it('rejects a refresh token presented as an access token', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    await expect(verifierAt(NOW).verify(refreshToken)).rejects.toThrow();
  });

  it('rejects a refresh token even when its typ header is changed to at+jwt', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    const forged = await forge(decodeJwt(refreshToken));
    await expect(verifierAt(NOW).verify(forged)).rejects.toThrow(/aud/);
  });

  it('accepts an access token until the millisecond before exp and refuses it from exp on, with no tolerance', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    const exp = NOW.getTime() + TOKEN_SETTINGS.accessTtlSeconds * 1000;
    await expect(verifierAt(new Date(exp - 1)).verify(accessToken)).resolves.toEqual(verifiedAlice);
    const refused = verifierAt(new Date(exp)).verify(accessToken);
    await expect(refused).rejects.toThrow(/exp/);
    await expect(refused).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
  });

  it('refuses a refresh token from its exp on as well', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    const exp = (decodeJwt(refreshToken).exp ?? 0) * 1000;
    const verifier = (at: Date) =>
      createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => at });
    await expect(verifier(new Date(exp - 1)).verify(refreshToken)).resolves.toMatchObject({
      username: 'alice',
    });
    await expect(verifier(new Date(exp)).verify(refreshToken)).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
    });
  });

  it('tolerates an iat up to the clock tolerance in the future: another container’s clock may be ahead', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    await expect(
      verifierAt(new Date(NOW.getTime() - CLOCK_TOLERANCE_SECONDS * 1000)).verify(accessToken),
    ).resolves.toEqual(verifiedAlice);
    await expect(
      verifierAt(new Date(NOW.getTime() - (CLOCK_TOLERANCE_SECONDS + 1) * 1000)).verify(accessToken),
    ).rejects.toThrow(/iat/);
  });

  it('rejects a token whose signature does not match its content', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    const [header, , signature] = accessToken.split('.');
    const payload = base64url.encode(JSON.stringify({ ...decodeJwt(accessToken), sub: 'mallory' }));
    await expect(verifierAt(NOW).verify(`${header}.${payload}.${signature}`)).rejects.toThrow(/signature/);
  });

  it('rejects a token signed by another key with the same kid', async () => {
    const other = await importSigningKey({ ...(await generateSigningJwk()), kid: keys.jwk.kid });
    const token = await new SignJWT(validClaims())
      .setProtectedHeader({ alg: 'EdDSA', typ: ACCESS_TOKEN_TYPE, kid: other.kid })
      .sign(other.key);
    await expect(verifierAt(NOW).verify(token)).rejects.toThrow(/signature/);
  });

  it('rejects a token whose kid is not among the known keys', async () => {
    await expect(verifierAt(NOW).verify(await forge(validClaims(), { kid: 'unknown' }))).rejects.toThrow(
      /kid/,
    );
  });

  it('rejects alg none', async () => {
    const header = base64url.encode(
      JSON.stringify({ alg: 'none', typ: ACCESS_TOKEN_TYPE, kid: keys.jwk.kid }),
    );
    const payload = base64url.encode(JSON.stringify(validClaims()));
    await expect(verifierAt(NOW).verify(`${header}.${payload}.`)).rejects.toThrow();
  });

  it('rejects an HS256 token keyed with the public key', async () => {
    const header = base64url.encode(
      JSON.stringify({ alg: 'HS256', typ: ACCESS_TOKEN_TYPE, kid: keys.jwk.kid }),
    );
    const payload = base64url.encode(JSON.stringify(validClaims()));
    const mac = createHmac('sha256', keys.jwk.x).update(`${header}.${payload}`).digest('base64url');
    await expect(verifierAt(NOW).verify(`${header}.${payload}.${mac}`)).rejects.toThrow(/alg/);
  });

  it('rejects an RS256 token even when correctly signed by some RSA key', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const token = await new SignJWT(validClaims())
      .setProtectedHeader({ alg: 'RS256', typ: ACCESS_TOKEN_TYPE, kid: keys.jwk.kid })
      .sign(privateKey);
    await expect(verifierAt(NOW).verify(token)).rejects.toThrow(/alg/);
  });

  it.each([
    ['a wrong issuer', { iss: 'https://evil.example' }, /iss/],
    ['a wrong audience', { aud: 'https://other-api.example' }, /aud/],
    ['no subject', { sub: undefined }, /sub/],
    ['no jti', { jti: undefined }, /jti/],
    ['no exp', { exp: undefined }, /exp/],
    ['an iat in the future', { iat: NOW.getTime() / 1000 + 600, exp: NOW.getTime() / 1000 + 900 }, /iat/],
    ['an nbf in the future', { nbf: NOW.getTime() / 1000 + 600 }, /nbf/],
    [
      'an iat older than the stage’s token lifetime',
      { iat: NOW.getTime() / 1000 - 7200, exp: NOW.getTime() / 1000 + 60 },
      /iat/,
    ],
  ])('rejects a token with %s', async (_name, override, message) => {
    await expect(verifierAt(NOW).verify(await forge({ ...validClaims(), ...override }))).rejects.toThrow(
      message,
    );
  });

  it('rejects a fresh token that claims a lifetime one second longer than the stage allows', async () => {
    // iat is now, so jose's maxTokenAge (which bounds the age) lets it through: only the
    // lifetime check (exp - iat) refuses a token that would outlive the stage's lifetime.
    const token = await forge({
      ...validClaims(),
      iat: NOW_SECONDS,
      exp: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds + 1,
    });

    const verified = verifierAt(NOW).verify(token);

    await expect(verified).rejects.toMatchObject({ name: 'TokenError', code: 'ERR_TOKEN_LIFETIME' });
  });

  it('accepts a token whose lifetime is exactly the stage’s', async () => {
    const token = await forge({
      ...validClaims(),
      iat: NOW_SECONDS,
      exp: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds,
    });

    const verified = verifierAt(NOW).verify(token);

    await expect(verified).resolves.toMatchObject({
      expiresAt: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds,
    });
  });

  it('rejects a token with a wrong typ header', async () => {
    await expect(verifierAt(NOW).verify(await forge(validClaims(), { typ: 'JWT' }))).rejects.toThrow(/typ/);
  });
});

describe('refresh token verifier', () => {
  const refreshVerifierAt = (date: Date) =>
    createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => date });

  it('accepts a refresh token it issued and returns its session', async () => {
    const request = tokenRequest(alice, NOW);
    const { refreshToken } = await issuer.issue(request);
    await expect(refreshVerifierAt(NOW).verify(refreshToken)).resolves.toEqual({
      username: 'alice',
      sessionId: request.sessionId,
      jti: request.refreshJti,
      authTime: request.authTime,
      method: 'password',
    });
  });

  it('says how the session signed in, in both tokens: amr pwd for a password, amr pop mfa and acr phr for a passkey', async () => {
    const password = await issuer.issue(tokenRequest(alice, NOW));
    expect(decodeJwt(password.accessToken)).toMatchObject({ amr: ['pwd'] });
    expect(decodeJwt(password.accessToken).acr).toBeUndefined();
    expect(decodeJwt(password.refreshToken)).toMatchObject({ amr: ['pwd'] });

    const passkey = await issuer.issue(tokenRequest(alice, NOW, { method: 'passkey' }));
    for (const token of [passkey.accessToken, passkey.refreshToken])
      expect(decodeJwt(token)).toMatchObject({ amr: ['pop', 'mfa'], acr: 'phr' });
    await expect(refreshVerifierAt(NOW).verify(passkey.refreshToken)).resolves.toMatchObject({
      method: 'passkey',
    });
  });

  it('rejects an access token presented as a refresh token', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    await expect(refreshVerifierAt(NOW).verify(accessToken)).rejects.toThrow(/typ|aud/);
  });

  it('rejects a refresh token past its own expiry', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    const later = new Date(NOW.getTime() + (TOKEN_SETTINGS.refreshTtlSeconds + 60) * 1000);
    await expect(refreshVerifierAt(later).verify(refreshToken)).rejects.toThrow(/exp/);
  });

  it('rejects a refresh-typed token without a session id', async () => {
    const claims = { ...validClaims(), aud: TOKEN_SETTINGS.issuer, auth_time: NOW_SECONDS };
    const token = await forge(claims, { typ: REFRESH_TOKEN_TYPE });
    await expect(refreshVerifierAt(NOW).verify(token)).rejects.toThrow(/sid/);
  });
});

describe('why a token is refused: a stable code and a message for the log', () => {
  const refreshVerifierAt = (date: Date) =>
    createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => date });
  const refreshClaims = () => ({
    ...validClaims(),
    aud: TOKEN_SETTINGS.issuer,
    sid: 'session-1',
    auth_time: NOW_SECONDS,
  });

  it.each([
    ['an empty sub', { sub: '' }, 'ERR_TOKEN_SUBJECT', 'sub is not a non-empty string'],
    ['a numeric sub', { sub: 42 }, 'ERR_TOKEN_SUBJECT', 'sub is not a non-empty string'],
    ['an empty jti', { jti: '' }, 'ERR_TOKEN_JTI', 'jti is not a string'],
    ['a numeric jti', { jti: 42 }, 'ERR_TOKEN_JTI', 'jti is not a string'],
    [
      'an empty customer_id claim',
      { customer_id: '' },
      'ERR_TOKEN_CUSTOMER',
      'customer claim is not a string',
    ],
    [
      'a numeric customer_id claim',
      { customer_id: 42 },
      'ERR_TOKEN_CUSTOMER',
      'customer claim is not a string',
    ],
  ])('refuses an access token with %s', async (_name, override, code, message) => {
    // Arrange
    const token = await forge({ ...validClaims(), ...override });

    // Act
    const verified = verifierAt(NOW).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({ name: 'TokenError', code, message });
  });

  it.each([
    ['an empty sid', { sid: '' }, 'ERR_TOKEN_SESSION', 'sid is not a string'],
    ['a numeric sid', { sid: 7 }, 'ERR_TOKEN_SESSION', 'sid is not a string'],
    [
      'a fractional auth_time',
      { auth_time: NOW_SECONDS + 0.5 },
      'ERR_TOKEN_AUTH_TIME',
      'auth_time is not an integer',
    ],
    [
      'a string auth_time',
      { auth_time: String(NOW_SECONDS) },
      'ERR_TOKEN_AUTH_TIME',
      'auth_time is not an integer',
    ],
  ])('refuses a refresh token with %s', async (_name, override, code, message) => {
    // Arrange
    const token = await forge({ ...refreshClaims(), ...override }, { typ: REFRESH_TOKEN_TYPE });

    // Act
    const verified = refreshVerifierAt(NOW).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({ name: 'TokenError', code, message });
  });

  it('refuses a refresh token without auth_time as a missing required claim, before reading it', async () => {
    // Arrange
    const { auth_time: _, ...claims } = refreshClaims();
    const token = await forge(claims, { typ: REFRESH_TOKEN_TYPE });

    // Act
    const verified = refreshVerifierAt(NOW).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      claim: 'auth_time',
    });
  });

  it.each([
    ['an unknown kid', { kid: 'not-a-known-kid' }],
    ['no kid at all', { kid: undefined }],
  ])('refuses a token with %s as an unknown key', async (_name, header) => {
    // Arrange
    const token = await forge(validClaims(), header);

    // Act
    const verified = verifierAt(NOW).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({
      name: 'TokenError',
      code: 'ERR_TOKEN_UNKNOWN_KID',
      message: 'unknown kid',
    });
  });

  it("refuses a token at its exp with jose's own expiry error, naming the exp claim", async () => {
    // Arrange
    const token = await forge(validClaims());
    const atExp = new Date((validClaims().exp as number) * 1000);

    // Act
    const verified = verifierAt(atExp).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
      claim: 'exp',
      reason: 'check_failed',
      message: '"exp" claim timestamp check failed',
    });
  });

  it('names the lifetime check in its message', async () => {
    // Arrange
    const token = await forge({
      ...validClaims(),
      exp: NOW_SECONDS + TOKEN_SETTINGS.accessTtlSeconds + 1,
    });

    // Act
    const verified = verifierAt(NOW).verify(token);

    // Assert
    await expect(verified).rejects.toMatchObject({
      code: 'ERR_TOKEN_LIFETIME',
      message: 'exp too far after iat',
    });
  });
});

describe('one spelling per token', () => {
  const refreshVerifierAt = (date: Date) =>
    createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock: () => date });

  it('finds 15 other spellings of an Ed25519 signature that decode to the same bytes, which jose alone accepts', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    const others = respellings(accessToken);
    // 64 bytes are 86 characters: the last one carries 2 bits and 4 ignored ones.
    expect(others).toHaveLength(15);
    const key = keys.verificationKeys.get(keys.jwk.kid);
    if (key === undefined) throw new Error('no verification key');
    for (const token of others) {
      await expect(jwtVerify(token, key, { currentDate: NOW })).resolves.toMatchObject({
        payload: { sub: 'alice' },
      });
    }
  });

  it('refuses every other spelling of a genuine access token, and accepts the issued one', async () => {
    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));
    for (const token of respellings(accessToken)) {
      await expect(verifierAt(NOW).verify(token), token.slice(-2)).rejects.toMatchObject({
        code: 'ERR_TOKEN_NOT_CANONICAL',
        message: 'a segment is not canonical base64url',
      });
    }
    await expect(verifierAt(NOW).verify(accessToken)).resolves.toEqual(verifiedAlice);
  });

  it('refuses every other spelling of a genuine refresh token, and accepts the issued one', async () => {
    const { refreshToken } = await issuer.issue(tokenRequest(alice, NOW));
    const others = respellings(refreshToken);
    expect(others).toHaveLength(15);
    for (const token of others) {
      await expect(refreshVerifierAt(NOW).verify(token)).rejects.toMatchObject({
        code: 'ERR_TOKEN_NOT_CANONICAL',
      });
    }
    await expect(refreshVerifierAt(NOW).verify(refreshToken)).resolves.toMatchObject({ username: 'alice' });
  });

  it('calls a segment canonical exactly when it re-encodes to itself (base64url, no padding)', () => {
    const reencodes = (segment: string) =>
      Buffer.from(segment, 'base64url').toString('base64url') === segment;
    const base64urlish = fc.string({
      unit: fc.constantFrom(...'AQgw_-9zBCDa0+/= .\n'),
      maxLength: 12,
    });
    fc.assert(
      fc.property(fc.oneof(base64urlish, fc.string({ maxLength: 12 }), fc.base64String()), (segment) => {
        expect(isCanonicalBase64url(segment)).toBe(reencodes(segment));
      }),
      { numRuns: 5000 },
    );
    // Every byte string's own encoding is canonical, at every length modulo 3.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
        expect(isCanonicalBase64url(Buffer.from(bytes).toString('base64url'))).toBe(true);
      }),
    );
  });
});

describe('a retired key signs nothing after its retirement', () => {
  /** A key set with the stage's key and one key retired so that it signed until `signedUntil`. */
  const withRetiredKey = async (signedUntil: number) => {
    const retired = await generateSigningJwk();
    const jwks = {
      keys: [...keys.jwks.keys, { ...toPublicJwk(retired), signed_until: signedUntil }],
    };
    const verificationKeys = await importVerificationKeys(jwks);
    const deps = { keys: async () => verificationKeys, settings: TOKEN_SETTINGS, clock: () => NOW };
    return {
      access: createAccessTokenVerifier(deps),
      refresh: createRefreshTokenVerifier(deps),
      signer: createTokenIssuer({
        signingKey: async () => importSigningKey(retired),
        settings: TOKEN_SETTINGS,
      }),
    };
  };
  const issuedAt = (seconds: number) => tokenRequest(alice, new Date(seconds * 1000));

  it('refuses its access and refresh tokens with an iat later than its signed_until plus the clock tolerance', async () => {
    const signedUntil = NOW_SECONDS - 60;
    const { access, refresh, signer } = await withRetiredKey(signedUntil);

    const late = await signer.issue(issuedAt(signedUntil + CLOCK_TOLERANCE_SECONDS + 1));

    const refusal = {
      name: 'TokenError',
      code: 'ERR_TOKEN_KEY_RETIRED',
      message: 'iat after the key retired',
    };
    await expect(access.verify(late.accessToken)).rejects.toMatchObject(refusal);
    await expect(refresh.verify(late.refreshToken)).rejects.toMatchObject(refusal);
  });

  it('accepts its tokens issued up to its signed_until plus the clock tolerance, until they expire', async () => {
    const signedUntil = NOW_SECONDS - 60;
    const { access, refresh, signer } = await withRetiredKey(signedUntil);

    const last = await signer.issue(issuedAt(signedUntil + CLOCK_TOLERANCE_SECONDS));

    await expect(access.verify(last.accessToken)).resolves.toMatchObject({ kind: 'user', username: 'alice' });
    await expect(refresh.verify(last.refreshToken)).resolves.toMatchObject({ username: 'alice' });
  });

  it('bounds only the retired key: the other keys of the set verify tokens issued now', async () => {
    const { access } = await withRetiredKey(NOW_SECONDS - 60);

    const { accessToken } = await issuer.issue(tokenRequest(alice, NOW));

    await expect(access.verify(accessToken)).resolves.toEqual(verifiedAlice);
  });
});
