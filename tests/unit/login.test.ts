import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type LoginDeps,
  login,
  loginWithContext,
  toExtendedLoginResponse,
  toLoginResponse,
} from '../../lib/auth/login.ts';
import { createPasswordVerifier } from '../../lib/auth/passwords.ts';
import { createTokenIssuer } from '../../lib/auth/tokens.ts';
import { AppError } from '../../lib/errors.ts';
import { TOKEN_SETTINGS, testKeys } from '../helpers/keys.ts';
import { memoryFamilies } from '../helpers/memory-families.ts';
import { memoryUsers, TEST_COST } from '../helpers/memory-users.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
let deps: LoginDeps;

beforeAll(async () => {
  const { signer } = await testKeys();
  deps = {
    users: await memoryUsers([
      { username: 'Alice', password: 'alice-password', customerId: 'C-1001', depotCode: 'PRG01' },
      { username: 'solo', password: 'solo-password' },
      { username: 'gone', password: 'gone-password', enabled: false, customerId: 'C-1001' },
      { username: 'nodepot', password: 'nodepot-password', customerId: 'C-2002', depotCode: null },
    ]),
    passwords: createPasswordVerifier({ cost: TEST_COST }),
    sessions: {
      families: memoryFamilies(),
      tokens: createTokenIssuer({ signingKey: signer, settings: TOKEN_SETTINGS }),
      settings: { maxLifetimeSeconds: 90 * 86_400, reuseGraceSeconds: 0 },
      clock: () => NOW,
    },
  };
});

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
};

describe('login', () => {
  it('returns an access and a refresh token for valid credentials', async () => {
    const body = toLoginResponse(await login(deps, { username: 'Alice', password: 'alice-password' }));
    expect(Object.keys(body).sort()).toEqual(['refreshToken', 'token']);
    expect(decodeJwt(body.token).sub).toBe('Alice');
  });

  it.each([
    ['a wrong password', 'Alice', 'wrong-password'],
    ['an unknown username', 'nobody', 'alice-password'],
    ['a username that differs only in case', 'alice', 'alice-password'],
    ['a disabled user with the right password', 'gone', 'gone-password'],
  ])('fails with INVALID_CREDENTIALS for %s', async (_name, username, password) => {
    expect(await failure(login(deps, { username, password }))).toBe('INVALID_CREDENTIALS');
  });

  it('lets a user without customer log in', async () => {
    await expect(login(deps, { username: 'solo', password: 'solo-password' })).resolves.toBeDefined();
  });
});

describe('login with context (login-extended)', () => {
  it('answers with tokens, the username as stored, the depot code and expireAt equal to exp', async () => {
    const body = toExtendedLoginResponse(
      await loginWithContext(deps, { username: 'Alice', password: 'alice-password' }),
    );
    expect(body).toMatchObject({ userName: 'Alice', depotCode: 'PRG01' });
    expect(body.expireAt).toBe('2026-11-21T11:00:00.000Z');
    expect(Date.parse(body.expireAt) / 1000).toBe(decodeJwt(body.token).exp);
  });

  it('answers depotCode null when no pickup address has one', async () => {
    const body = toExtendedLoginResponse(
      await loginWithContext(deps, { username: 'nodepot', password: 'nodepot-password' }),
    );
    expect(body.depotCode).toBeNull();
  });

  it('fails with CONTEXT_MISSING for valid credentials of a user without customer', async () => {
    expect(await failure(loginWithContext(deps, { username: 'solo', password: 'solo-password' }))).toBe(
      'CONTEXT_MISSING',
    );
  });

  it('checks credentials before the context: a wrong password of a context-less user is 401', async () => {
    expect(await failure(loginWithContext(deps, { username: 'solo', password: 'wrong' }))).toBe(
      'INVALID_CREDENTIALS',
    );
  });
});

describe('login sessions', () => {
  it('starts a family per login whose current refresh token is the one returned', async () => {
    const families = deps.sessions.families as ReturnType<typeof memoryFamilies>;
    const { tokens } = await login(deps, { username: 'Alice', password: 'alice-password' });
    const { sid, jti, auth_time } = decodeJwt(tokens.refreshToken);
    const family = families.all.get(String(sid));
    expect(family).toMatchObject({ username: 'Alice', currentJti: jti, createdAt: auth_time, generation: 1 });
    expect(family?.expiresAt).toBe(Number(auth_time) + 90 * 86_400);
  });
});
