/**
 * Sessions end to end in lib/: real tokens over the account and session stores, on each
 * DynamoDB implementation and on the in-memory fakes of the unit tests, so the fakes keep
 * the contract the flows rely on. The clock is the only thing the tests move.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { beforeAll, expect, it } from 'vitest';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import type { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import type { RefreshStep, SessionStore } from '../../lib/sessions/repository.ts';
import {
  endSession,
  REFRESH_IN_FLIGHT_SECONDS,
  type RefreshDeps,
  refreshSession,
  startSession,
} from '../../lib/sessions/sessions.ts';
import { createTokenIssuer, type IssuedTokens } from '../../lib/tokens/issue.ts';
import { createAccessTokenVerifier, createRefreshTokenVerifier } from '../../lib/tokens/verify.ts';
import { codeOf } from '../support/errors.ts';
import { TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { noMetrics } from '../support/memory-metrics.ts';
import { revocationAt } from '../support/revoked.ts';
import { respellings } from '../support/spellings.ts';
import {
  ACCOUNT_STORES,
  type AccountsOn,
  describeStoreContract,
  SESSION_STORES,
  type StoreFactories,
} from '../support/stores.ts';

const HOUR_MS = 3_600_000;
const MAX_LIFETIME_SECONDS = 90 * 86_400;

/** The account and the session store of one implementation. */
const BACKENDS: StoreFactories<{ accounts: AccountsOn; sessions: SessionStore }> = {
  dynamo: async (dynamo) => ({
    accounts: await ACCOUNT_STORES.dynamo(dynamo),
    sessions: await SESSION_STORES.dynamo(dynamo),
  }),
  memory: async () => ({ accounts: await ACCOUNT_STORES.memory(), sessions: await SESSION_STORES.memory() }),
};

describeStoreContract('sessions', BACKENDS, (backend) => {
  let accounts: AccountRepository;
  let sessions: SessionStore;
  let keys: Awaited<ReturnType<typeof testKeys>>;
  let now = new Date();
  const clock = () => now;
  const logLines: string[] = [];

  const deps = (grace = 0, maxLifetimeSeconds = MAX_LIFETIME_SECONDS): RefreshDeps => ({
    metrics: noMetrics,
    users: accounts,
    store: sessions,
    tokens: createTokenIssuer({ signingKey: keys.signer, settings: TOKEN_SETTINGS }),
    refreshTokens: createRefreshTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock }),
    settings: { maxLifetimeSeconds, reuseGraceSeconds: grace },
    accessTtlSeconds: TOKEN_SETTINGS.accessTtlSeconds,
    clock,
    logger: createLogger('info', (line) => logLines.push(line)),
  });

  beforeAll(async () => {
    keys = await testKeys();
    accounts = backend().accounts(clock);
    sessions = backend().sessions;
  });

  let userCount = 0;
  /** A new user, logged in: its first tokens. The clock moves past the creation cutoff. */
  const loggedIn = async (customerId: string | null = 'C-1', sessionDeps = deps()) => {
    userCount += 1;
    const username = `user-${userCount}`;
    now = new Date();
    await accounts.createUser({ username, passwordHash: '$2b$04$hash', customerId });
    now = new Date(now.getTime() + 1500);
    const user = await accounts.findByUsername(username);
    if (user === null) throw new Error('user not created');
    return { username, tokens: await startSession(sessionDeps, user, now) };
  };

  const refresh = (tokens: IssuedTokens, grace = 0) => refreshSession(deps(grace), tokens.refreshToken);
  const sessionOf = (tokens: IssuedTokens) => sessions.get(String(decodeJwt(tokens.refreshToken).sid));

  it('refreshes into a new access and refresh token of the same session', async () => {
    const { username, tokens } = await loggedIn();
    const next = await refresh(tokens);
    expect(next.refreshToken).not.toBe(tokens.refreshToken);
    expect(decodeJwt(next.refreshToken).sid).toBe(decodeJwt(tokens.refreshToken).sid);
    const access = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock });
    await expect(access.verify(next.accessToken)).resolves.toMatchObject({ username, customerId: 'C-1' });
    expect(await sessionOf(next)).toMatchObject({
      generation: 2,
      currentJti: decodeJwt(next.refreshToken).jti,
    });
  });

  it('revokes the whole session when a spent refresh token is presented again', async () => {
    const { tokens } = await loggedIn();
    const second = await refresh(tokens);
    const third = await refresh(second);
    expect(await codeOf(refresh(tokens))).toBe('INVALID_REFRESH_TOKEN');
    expect(await codeOf(refresh(third))).toBe('INVALID_REFRESH_TOKEN');
    expect(await sessionOf(third)).toMatchObject({ revokedReason: 'reuse' });
    const warning = logLines.find((line) => line.includes('refresh token reuse'));
    expect(warning).toBeDefined();
    expect(warning).not.toContain(tokens.refreshToken);
  });

  it('stops the access tokens of a session revoked for reuse at the authorizer, and no other session’s', async () => {
    const { username, tokens } = await loggedIn();
    const user = await accounts.findByUsername(username);
    if (user === null) throw new Error('user not created');
    const other = await startSession(deps(), user, now);
    const second = await refresh(tokens);
    const { revoked } = revocationAt(accounts, keys, clock);
    expect(await revoked(second.accessToken)).toBe(false);

    expect(await codeOf(refresh(tokens))).toBe('INVALID_REFRESH_TOKEN');

    expect(await revoked(tokens.accessToken)).toBe(true);
    expect(await revoked(second.accessToken)).toBe(true);
    expect(await revoked(other.accessToken)).toBe(false);
    expect((await refresh(other)).accessToken).not.toBe('');
  });

  it('forgets a session revoked for reuse once its access tokens have expired, when it records the next', async () => {
    const { username, tokens } = await loggedIn();
    await refresh(tokens);
    await codeOf(refresh(tokens));
    const first = String(decodeJwt(tokens.refreshToken).sid);
    expect((await accounts.findStatus(username))?.revokedSessions).toEqual(new Set([first]));
    now = new Date(now.getTime() + (TOKEN_SETTINGS.accessTtlSeconds + REFRESH_IN_FLIGHT_SECONDS + 1) * 1000);
    const user = await accounts.findByUsername(username);
    if (user === null) throw new Error('user not found');
    const later = await startSession(deps(), user, now);

    await refresh(later);
    await codeOf(refresh(later));

    expect((await accounts.findStatus(username))?.revokedSessions).toEqual(
      new Set([String(decodeJwt(later.refreshToken).sid)]),
    );
  });

  it('lets exactly one of several concurrent refreshes with the same token succeed, then revokes', async () => {
    const { tokens } = await loggedIn();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => refresh(tokens)));
    const winners = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected')
        expect((result.reason as AppError).code).toBe('INVALID_REFRESH_TOKEN');
    }
    // Without a grace window the losers were reuse: the winner's new token is revoked too.
    expect(await codeOf(refresh(winners[0] as IssuedTokens))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('within the grace window answers the previous token with the current token, writing nothing', async () => {
    const { tokens } = await loggedIn();
    const second = await refresh(tokens, 10);
    now = new Date(now.getTime() + 5000);
    const retried = await refresh(tokens, 10);
    expect(decodeJwt(retried.refreshToken).jti).toBe(decodeJwt(second.refreshToken).jti);
    expect(await sessionOf(second)).toMatchObject({ generation: 2, revokedAt: null });
    const third = await refresh(second, 10);
    // `tokens` is now two generations back: reuse, whatever the window.
    expect(await codeOf(refresh(tokens, 10))).toBe('INVALID_REFRESH_TOKEN');
    expect(await codeOf(refresh(third, 10))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('answers concurrent retries within the grace window alike and keeps the session', async () => {
    const { tokens } = await loggedIn();
    const second = await refresh(tokens, 10);
    const retries = await Promise.all(Array.from({ length: 4 }, () => refresh(tokens, 10)));
    for (const retry of retries) {
      expect(decodeJwt(retry.refreshToken).jti).toBe(decodeJwt(second.refreshToken).jti);
    }
    await expect(refresh(retries[0] as IssuedTokens, 10)).resolves.toBeDefined();
  });

  it('never lets the grace window grow: it runs from when the token was first spent', async () => {
    const { tokens } = await loggedIn();
    await refresh(tokens, 10);
    now = new Date(now.getTime() + 6000);
    await expect(refresh(tokens, 10)).resolves.toBeDefined();
    now = new Date(now.getTime() + 6000);
    expect(await codeOf(refresh(tokens, 10))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('treats the previous token as reuse once the grace window has passed', async () => {
    const { tokens } = await loggedIn();
    const second = await refresh(tokens, 10);
    now = new Date(now.getTime() + 11_000);
    expect(await codeOf(refresh(tokens, 10))).toBe('INVALID_REFRESH_TOKEN');
    expect(await codeOf(refresh(second, 10))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('does not take its own refresh for reuse when the answer to it was lost', async () => {
    const { tokens } = await loggedIn();
    // The UpdateItem is applied but its answer never arrives; the SDK's retry then fails the
    // condition. Only a wrapper can make DynamoDB lose an answer.
    const lossy: SessionStore = {
      ...sessions,
      refresh: async (step) => {
        await sessions.refresh(step);
        return null;
      },
    };
    const next = await refreshSession({ ...deps(), store: lossy }, tokens.refreshToken);
    expect(await sessionOf(next)).toMatchObject({
      revokedAt: null,
      currentJti: decodeJwt(next.refreshToken).jti,
    });
    await expect(refresh(next)).resolves.toBeDefined();
  });

  it('gives a refresh whose user read came before a revocation an iat the revocation covers', async () => {
    const { username, tokens } = await loggedIn();
    const second = now.getTime() - (now.getTime() % 1000);
    now = new Date(second + 900);
    // The read happens at .900; the operator revokes at .950; the tokens are signed at 1.050.
    const racing = {
      ...accounts,
      findByUsername: async (name: string) => {
        const user = await accounts.findByUsername(name);
        now = new Date(second + 950);
        await accounts.revokeUserTokens(username);
        now = new Date(second + 1050);
        return user;
      },
    };
    const raced = await refreshSession({ ...deps(), users: racing }, tokens.refreshToken);
    expect(await revocationAt(accounts, keys, clock).revoked(raced.accessToken)).toBe(true);
    expect(await codeOf(refresh(raced))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('keeps the login time in every access token of the session, refresh after refresh', async () => {
    const { tokens } = await loggedIn();
    const loginTime = decodeJwt(tokens.refreshToken).auth_time;
    expect(decodeJwt(tokens.accessToken).auth_time).toBe(loginTime);
    now = new Date(now.getTime() + 2 * HOUR_MS);
    const next = await refresh(tokens);
    expect(decodeJwt(next.accessToken).iat).toBeGreaterThan(Number(loginTime));
    expect(decodeJwt(next.accessToken).auth_time).toBe(loginTime);
    const access = createAccessTokenVerifier({ keys: keys.verifiers, settings: TOKEN_SETTINGS, clock });
    await expect(access.verify(next.accessToken)).resolves.toMatchObject({ authTime: loginTime });
  });

  it('reads the user’s administration again at each refresh: granted, the next token holds customer:admin; ended, no refresh', async () => {
    const { username, tokens } = await loggedIn();
    expect(String(decodeJwt(tokens.accessToken).scope).split(' ')).not.toContain('customer:admin');
    await accounts.setAdministrator(username, true);
    const granted = await refresh(tokens);
    expect(decodeJwt(granted.accessToken).scope).toBe('tracking:read shipments:write customer:admin');
    now = new Date(now.getTime() + 1500);
    await accounts.setAdministrator(username, false);
    expect(await codeOf(refresh(granted))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('leaves customer:admin out of a refresh whose user read says the administration ended', async () => {
    const { username, tokens } = await loggedIn();
    await accounts.setAdministrator(username, true);
    const admin = await refresh(tokens);
    const ended = {
      ...accounts,
      findByUsername: async (name: string) => {
        const user = await accounts.findByUsername(name);
        return user === null ? null : { ...user, admin: false };
      },
    };
    const next = await refreshSession({ ...deps(), users: ended }, admin.refreshToken);
    expect(decodeJwt(next.accessToken).scope).toBe('tracking:read shipments:write');
  });

  it('never extends a session past its absolute lifetime', async () => {
    const shortLived = deps(0, 3 * 86_400);
    const { tokens } = await loggedIn('C-1', shortLived);
    const session = await sessionOf(tokens);
    let current = tokens;
    // Refresh every 20 hours, each refresh token within its own one-day lifetime.
    for (let step = 0; step < 3; step += 1) {
      now = new Date(now.getTime() + 20 * HOUR_MS);
      current = await refreshSession(shortLived, current.refreshToken);
      expect(decodeJwt(current.refreshToken).exp).toBeLessThanOrEqual(session?.expiresAt ?? 0);
      expect(decodeJwt(current.accessToken).exp).toBeLessThanOrEqual(session?.expiresAt ?? 0);
    }
    now = new Date(((session?.expiresAt ?? 0) + 1) * 1000);
    expect(await codeOf(refreshSession(shortLived, current.refreshToken))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('refuses the refresh token of a disabled, removed or logged-out user', async () => {
    const disabled = await loggedIn();
    await accounts.setEnabled(disabled.username, false);
    expect(await codeOf(refresh(disabled.tokens))).toBe('INVALID_REFRESH_TOKEN');
    await accounts.setEnabled(disabled.username, true);
    expect(await codeOf(refresh(disabled.tokens))).toBe('INVALID_REFRESH_TOKEN');

    const removed = await loggedIn();
    await accounts.removeUser(removed.username);
    expect(await codeOf(refresh(removed.tokens))).toBe('INVALID_REFRESH_TOKEN');

    const loggedOut = await loggedIn();
    await accounts.revokeUserTokens(loggedOut.username);
    expect(await codeOf(refresh(loggedOut.tokens))).toBe('INVALID_REFRESH_TOKEN');
  });

  it('refuses an access token, a malformed token and a token signed by another key', async () => {
    const { tokens } = await loggedIn();
    const { privateKey } = generateKeyPairSync('ed25519');
    const foreign = await new SignJWT(decodeJwt(tokens.refreshToken))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'rt+jwt', kid: keys.signingKey.kid })
      .sign(privateKey);
    for (const token of [tokens.accessToken, 'not-a-token', foreign]) {
      expect(await codeOf(refreshSession(deps(), token))).toBe('INVALID_REFRESH_TOKEN');
    }
    // None of them spent the real token.
    await expect(refresh(tokens)).resolves.toBeDefined();
  });

  it('refuses every other spelling of a genuine refresh token, without spending or revoking its session', async () => {
    const { tokens } = await loggedIn();
    const others = respellings(tokens.refreshToken);
    expect(others).toHaveLength(15);
    for (const token of others) {
      const refused = refreshSession(deps(), token);
      await expect(refused).rejects.toMatchObject({
        code: 'INVALID_REFRESH_TOKEN',
        cause: { code: 'ERR_TOKEN_NOT_CANONICAL' },
      });
    }
    expect(await sessionOf(tokens)).toMatchObject({ generation: 1, revokedAt: null });
    await expect(refresh(tokens)).resolves.toBeDefined();
  });

  it('ends no session at logout for another spelling of its refresh token', async () => {
    const { tokens } = await loggedIn();
    for (const token of respellings(tokens.refreshToken)) {
      await expect(endSession(deps(), token)).resolves.toBeUndefined();
    }
    expect(await sessionOf(tokens)).toMatchObject({ revokedAt: null });
    await endSession(deps(), tokens.refreshToken);
    expect(await sessionOf(tokens)).toMatchObject({ revokedReason: 'logout' });
  });

  it('logs out: the session is revoked, and logging out again or with junk changes nothing', async () => {
    const { tokens } = await loggedIn();
    const second = await refresh(tokens);
    await endSession(deps(), second.refreshToken);
    expect(await codeOf(refresh(second))).toBe('INVALID_REFRESH_TOKEN');
    expect(await sessionOf(second)).toMatchObject({ revokedReason: 'logout' });
    await expect(endSession(deps(), second.refreshToken)).resolves.toBeUndefined();
    await expect(endSession(deps(), 'junk')).resolves.toBeUndefined();
  });

  it('revokes earlier access tokens at the authorizer check, and not later ones', async () => {
    const { username, tokens } = await loggedIn();
    const check = revocationAt(accounts, keys, clock);
    const claims = await check.verify(tokens.accessToken);
    expect(await check.isRevoked(claims)).toBe(false);
    await accounts.setPasswordHash(username, '$2b$04$other');
    expect(await check.isRevoked(claims)).toBe(true);
    // A login in the same second as the revocation gets a token that survives it.
    const user = await accounts.findByUsername(username);
    if (user === null) throw new Error('user gone');
    const fresh = await startSession(deps(), user, now);
    expect(await check.revoked(fresh.accessToken)).toBe(false);
  });

  it('revokes the tokens of a removed user even when the name is created again', async () => {
    const { username, tokens } = await loggedIn();
    const check = revocationAt(accounts, keys, clock);
    const claims = await check.verify(tokens.accessToken);
    await accounts.removeUser(username);
    expect(await check.isRevoked(claims)).toBe(true);
    await accounts.createUser({ username, passwordHash: '$2b$04$hash', customerId: null });
    expect(await check.isRevoked(claims)).toBe(true);
    expect(await codeOf(refresh(tokens))).toBe('INVALID_REFRESH_TOKEN');
  });
});

/** The session store's own contract, below the flows above: each condition of its writes. */
describeStoreContract('session store', SESSION_STORES, (storeOf) => {
  let store: SessionStore;
  beforeAll(() => {
    store = storeOf();
  });

  /** Two days ahead of the real clock: DynamoDB Local's TTL sweep deletes items whose `expiresAt` has passed. */
  const T0 = (Math.floor(Date.now() / 86_400_000) + 2) * 86_400_000;
  const END = T0 / 1000 + 3600;

  /** A new session of `username`, started at T0, ending at END, with `jti` current. */
  const started = async (username = 'owner', jti = 'jti-1') => {
    const sessionId = randomUUID();
    await store.create({ sessionId, username, createdAt: T0 / 1000, expiresAt: END, currentJti: jti });
    return sessionId;
  };
  const step = (sessionId: string, changes: Partial<RefreshStep> = {}): RefreshStep => ({
    sessionId,
    username: 'owner',
    fromJti: 'jti-1',
    toJti: 'jti-2',
    now: new Date(T0 + 60_000),
    ...changes,
  });

  it('stores a new session as its first generation, nothing spent and nothing revoked', async () => {
    const sessionId = randomUUID();

    await store.create({
      sessionId,
      username: 'owner',
      createdAt: T0 / 1000,
      expiresAt: END,
      currentJti: 'jti-1',
    });

    expect(await store.get(sessionId)).toEqual({
      sessionId,
      username: 'owner',
      createdAt: T0 / 1000,
      expiresAt: END,
      currentJti: 'jti-1',
      previousJti: null,
      previousSpentAt: null,
      generation: 1,
      revokedAt: null,
      revokedReason: null,
    });
  });

  it('refuses to create a session whose id exists, keeping the first', async () => {
    const sessionId = await started('owner', 'jti-1');
    const first = await store.get(sessionId);

    const outcome = await codeOf(
      store.create({
        sessionId,
        username: 'other',
        createdAt: T0 / 1000,
        expiresAt: END,
        currentJti: 'jti-x',
      }),
    );

    expect(outcome).not.toBe('resolved');
    expect(await store.get(sessionId)).toEqual(first);
  });

  it('takes a creation sent again (its first answer lost) as done', async () => {
    const session = {
      sessionId: randomUUID(),
      username: 'owner',
      createdAt: T0 / 1000,
      expiresAt: END,
      currentJti: 'jti-1',
    };
    await store.create(session);

    await store.create(session);

    expect(await store.get(session.sessionId)).toMatchObject({ ...session, generation: 1 });
  });

  it('rotates from the current token: the successor becomes current, and it answers the session as updated', async () => {
    const sessionId = await started();

    const refreshed = await store.refresh(step(sessionId));

    const expected = {
      currentJti: 'jti-2',
      previousJti: 'jti-1',
      previousSpentAt: T0 + 60_000,
      generation: 2,
      revokedAt: null,
    };
    expect(refreshed).toMatchObject(expected);
    expect(await store.get(sessionId)).toEqual(refreshed);
  });

  it('rotates no session from a token that is not current, for another user, or that does not exist', async () => {
    const sessionId = await started();
    const before = await store.get(sessionId);

    const outcomes = await Promise.all([
      store.refresh(step(sessionId, { fromJti: 'jti-0' })),
      store.refresh(step(sessionId, { username: 'Owner' })),
      store.refresh(step(randomUUID())),
    ]);

    expect(outcomes).toEqual([null, null, null]);
    expect(await store.get(sessionId)).toEqual(before);
  });

  it('rotates no revoked session', async () => {
    const sessionId = await started();
    await store.revoke(sessionId, 'logout', new Date(T0 + 1000));

    const refreshed = await store.refresh(step(sessionId));

    expect(refreshed).toBeNull();
    expect((await store.get(sessionId))?.currentJti).toBe('jti-1');
  });

  it('rotates no session from the second it ends', async () => {
    const sessionId = await started();

    const refreshed = await store.refresh(step(sessionId, { now: new Date(END * 1000) }));

    expect(refreshed).toBeNull();
  });

  it('rotates a session in the last millisecond before it ends', async () => {
    const sessionId = await started();

    const refreshed = await store.refresh(step(sessionId, { now: new Date(END * 1000 - 1) }));

    expect(refreshed?.currentJti).toBe('jti-2');
  });

  it('revokes a live session once: a second revocation keeps the time and reason of the first', async () => {
    const sessionId = await started();
    await store.revoke(sessionId, 'logout', new Date(T0 + 1000));

    await store.revoke(sessionId, 'reuse', new Date(T0 + 2000));

    expect(await store.get(sessionId)).toMatchObject({ revokedAt: T0 + 1000, revokedReason: 'logout' });
  });

  it('revokes an ended session that was never revoked', async () => {
    const sessionId = await started();

    await store.revoke(sessionId, 'reuse', new Date(END * 1000 + 1000));

    expect(await store.get(sessionId)).toMatchObject({
      revokedAt: END * 1000 + 1000,
      revokedReason: 'reuse',
    });
  });

  it('creates nothing when revoking a session that does not exist', async () => {
    const sessionId = randomUUID();

    await store.revoke(sessionId, 'logout', new Date(T0));

    expect(await store.get(sessionId)).toBeNull();
  });
});
