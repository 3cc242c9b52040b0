import { decodeJwt } from 'jose';
import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UserRecord } from '../../lib/accounts/repository.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import {
  type LoginDeps,
  LoginRequestSchema,
  login,
  loginExtended,
  toExtendedLoginResponse,
  toLoginResponse,
} from '../../lib/auth/login.ts';
import { createPasswordVerifier } from '../../lib/auth/passwords.ts';
import { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import { createTokenIssuer } from '../../lib/tokens/issue.ts';
import { COUNTER_SECRET, TOKEN_SETTINGS, testKeys } from '../support/keys.ts';
import { createMemoryMetrics, noMetrics } from '../support/memory-metrics.ts';
import { memorySessions } from '../support/memory-sessions.ts';
import { memoryThrottleStore } from '../support/memory-throttle.ts';
import { memoryUsers, TEST_COST } from '../support/memory-users.ts';

const NOW = new Date('2026-11-21T10:00:00Z');
const IP = '203.0.113.10';
const OFF = { limit: 0, windowSeconds: 3600, baseLockSeconds: 30, maxLockSeconds: 900, inflightLimit: 50 };
const UNTHROTTLED = { username: OFF, sourceIp: OFF, clientSourceIp: OFF, knownSourceSeconds: 0 };
let deps: LoginDeps;

beforeAll(async () => {
  const { signer } = await testKeys();
  deps = {
    metrics: noMetrics,
    users: await memoryUsers([
      { username: 'Alice', password: 'alice-password', customerId: 'C-1001', depotCode: 'PRG01' },
      { username: 'solo', password: 'solo-password' },
      { username: 'gone', password: 'gone-password', enabled: false, customerId: 'C-1001' },
      { username: 'nodepot', password: 'nodepot-password', customerId: 'C-2002', depotCode: null },
    ]),
    passwords: createPasswordVerifier({ cost: TEST_COST }),
    sessions: {
      store: memorySessions(),
      tokens: createTokenIssuer({ signingKey: signer, settings: TOKEN_SETTINGS }),
      settings: { maxLifetimeSeconds: 90 * 86_400, reuseGraceSeconds: 0 },
      clock: () => NOW,
    },
    // Throttling has its own tests below and in throttle.test.ts.
    throttle: createLoginThrottle({
      metrics: noMetrics,
      store: memoryThrottleStore(),
      settings: UNTHROTTLED,
      counterSecret: COUNTER_SECRET,
      logger: createLogger('error', () => {}),
    }),
    logger: createLogger('error', () => {}),
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

/** `deps` logging at info level into `lines`, each line parsed. */
const logging = (base: LoginDeps) => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { deps: { ...base, logger }, lines };
};

/** DynamoDB's failure as lib/aws reports it: the store cannot be reached. */
const unreachable = () =>
  Promise.reject(new AppError('DEPENDENCY_UNAVAILABLE', { cause: new Error('DynamoDB unreachable') }));

describe('login request', () => {
  // U+FDFA folds to 18 characters, 33 bytes in UTF-8: 30 of them and 34 letters make 1024.
  const foldingTo = (bytes: number) => `${'\uFDFA'.repeat(30)}${'a'.repeat(bytes - 990)}`;

  it('accepts a username whose folded form is exactly the 1024-byte limit', () => {
    const username = foldingTo(1024);
    expect(Buffer.byteLength(foldUsername(username))).toBe(1024);
    expect(v.safeParse(LoginRequestSchema, { username, password: 'x' }).success).toBe(true);
  });

  it('refuses a username whose folded form is one byte over the limit', () => {
    const result = v.safeParse(LoginRequestSchema, { username: foldingTo(1025), password: 'x' });
    expect(result.issues?.map((issue) => issue.message)).toEqual(['is too long']);
  });
});

describe('login', () => {
  it('returns an access and a refresh token for valid credentials', async () => {
    const body = toLoginResponse(
      await login(deps, { username: 'Alice', password: 'alice-password', sourceIp: IP }),
    );
    expect(Object.keys(body).sort()).toEqual(['refreshToken', 'token']);
    expect(decodeJwt(body.token).sub).toBe('Alice');
  });

  it.each([
    ['a wrong password', 'Alice', 'wrong-password'],
    ['an unknown username', 'nobody', 'alice-password'],
    ['a username that differs only in case', 'alice', 'alice-password'],
    ['a disabled user with the right password', 'gone', 'gone-password'],
  ])('fails with INVALID_CREDENTIALS for %s', async (_name, username, password) => {
    expect(await failure(login(deps, { username, password, sourceIp: IP }))).toBe('INVALID_CREDENTIALS');
  });

  it('fails with INVALID_CREDENTIALS for an unknown username even if the password verifier accepted', async () => {
    const real = createPasswordVerifier({ cost: TEST_COST });
    const acceptingMissingHash: LoginDeps = {
      ...deps,
      passwords: { ...real, verify: async (password, hash) => hash === null || real.verify(password, hash) },
    };
    expect(
      await failure(login(acceptingMissingHash, { username: 'nobody', password: 'x', sourceIp: IP })),
    ).toBe('INVALID_CREDENTIALS');
  });

  it('logs a success with the username and the source address', async () => {
    const { deps: logged, lines } = logging(deps);
    await login(logged, { username: 'Alice', password: 'alice-password', sourceIp: IP });
    expect(lines).toEqual([
      expect.objectContaining({ level: 'INFO', event: 'login succeeded', username: 'Alice', sourceIp: IP }),
    ]);
    expect(lines[0]).not.toHaveProperty('extended');
  });

  it('lets a user without customer log in', async () => {
    await expect(
      login(deps, { username: 'solo', password: 'solo-password', sourceIp: IP }),
    ).resolves.toBeDefined();
  });
});

describe('login with context (login-extended)', () => {
  it('answers with tokens, the username as stored, the depot code and expireAt equal to exp', async () => {
    const body = toExtendedLoginResponse(
      await loginExtended(deps, { username: 'Alice', password: 'alice-password', sourceIp: IP }),
    );
    expect(body).toMatchObject({ userName: 'Alice', depotCode: 'PRG01' });
    expect(body.expireAt).toBe('2026-11-21T11:00:00.000Z');
    expect(Date.parse(body.expireAt) / 1000).toBe(decodeJwt(body.token).exp);
  });

  it('answers depotCode null when no pickup address has one', async () => {
    const body = toExtendedLoginResponse(
      await loginExtended(deps, { username: 'nodepot', password: 'nodepot-password', sourceIp: IP }),
    );
    expect(body.depotCode).toBeNull();
  });

  it('logs a success as extended, with the username and the source address', async () => {
    const { deps: logged, lines } = logging(deps);
    await loginExtended(logged, { username: 'Alice', password: 'alice-password', sourceIp: IP });
    expect(lines).toEqual([
      expect.objectContaining({ event: 'login succeeded', username: 'Alice', sourceIp: IP, extended: true }),
    ]);
  });

  it('fails with CONTEXT_MISSING for valid credentials of a user without customer', async () => {
    expect(
      await failure(loginExtended(deps, { username: 'solo', password: 'solo-password', sourceIp: IP })),
    ).toBe('CONTEXT_MISSING');
  });

  it('checks credentials before the context: a wrong password of a context-less user is 401', async () => {
    expect(await failure(loginExtended(deps, { username: 'solo', password: 'wrong', sourceIp: IP }))).toBe(
      'INVALID_CREDENTIALS',
    );
  });
});

describe('login sessions', () => {
  it('starts a session per login whose current refresh token is the one returned', async () => {
    const sessions = deps.sessions.store as ReturnType<typeof memorySessions>;
    const { tokens } = await login(deps, { username: 'Alice', password: 'alice-password', sourceIp: IP });
    const { sid, jti, auth_time } = decodeJwt(tokens.refreshToken);
    const session = sessions.all.get(String(sid));
    expect(session).toMatchObject({
      username: 'Alice',
      currentJti: jti,
      createdAt: auth_time,
      generation: 1,
    });
    expect(session?.expiresAt).toBe(Number(auth_time) + 90 * 86_400);
  });
});

describe('an administrator’s login', () => {
  /** `deps` over users of their own, each one's item as `changes` say. */
  const usersWith = async (changes: Record<string, Partial<UserRecord>>) => {
    const users = await memoryUsers(
      Object.keys(changes).map((username) => ({
        username,
        password: `${username}-password`,
        customerId: 'C-1001',
      })),
    );
    for (const [username, change] of Object.entries(changes)) {
      const user = users.records.get(username);
      if (user !== undefined) users.records.set(username, { ...user, ...change });
    }
    return { ...deps, users };
  };
  const accessClaimsOf = async (loginDeps: LoginDeps, username: string) =>
    decodeJwt(
      (await login(loginDeps, { username, password: `${username}-password`, sourceIp: IP })).tokens
        .accessToken,
    );

  it('gives a user whose item says admin customer:admin and the login time in its access token', async () => {
    const loginDeps = await usersWith({
      boss: { admin: true },
      narrowBoss: { admin: true, scopes: ['tracking:read'] },
    });
    expect(await accessClaimsOf(loginDeps, 'boss')).toMatchObject({
      scope: 'tracking:read shipments:write customer:admin',
      auth_time: NOW.getTime() / 1000,
    });
    expect((await accessClaimsOf(loginDeps, 'narrowBoss')).scope).toBe('tracking:read customer:admin');
  });

  it('gives any other user no customer:admin: not with null scopes, nor with a narrowed list naming it', async () => {
    const loginDeps = await usersWith({
      plain: { admin: false, scopes: null },
      listed: { admin: false, scopes: ['tracking:read', 'customer:admin'] },
    });
    expect(await accessClaimsOf(loginDeps, 'plain')).toMatchObject({
      scope: 'tracking:read shipments:write',
      auth_time: NOW.getTime() / 1000,
    });
    expect((await accessClaimsOf(loginDeps, 'listed')).scope).toBe('tracking:read');
  });
});

describe('login throttling and hash upgrades', () => {
  const POLICY = {
    limit: 3,
    windowSeconds: 3600,
    baseLockSeconds: 30,
    maxLockSeconds: 900,
    inflightLimit: 50,
  };
  let now = NOW;
  const throttled = async (
    options: { sourceIpLimit?: number; username?: typeof POLICY; knownSourceSeconds?: number } = {},
  ) => {
    const logLines: string[] = [];
    const logger = createLogger('info', (line) => logLines.push(line));
    const store = memoryThrottleStore();
    const metrics = createMemoryMetrics();
    const users = await memoryUsers([
      { username: 'carol', password: 'carol-password' },
      { username: 'old', password: 'old-password', cost: TEST_COST },
    ]);
    const verifier = createPasswordVerifier({ cost: TEST_COST });
    const counting = {
      verify: (password: string, hash: string | null) => {
        compares += 1;
        return verifier.verify(password, hash);
      },
      needsUpgrade: verifier.needsUpgrade,
      hash: verifier.hash,
    };
    let compares = 0;
    const throttledDeps: LoginDeps = {
      ...deps,
      users,
      passwords: counting,
      throttle: createLoginThrottle({
        metrics,
        store,
        settings: {
          username: options.username ?? POLICY,
          sourceIp: { ...POLICY, limit: options.sourceIpLimit ?? 0 },
          clientSourceIp: OFF,
          knownSourceSeconds: options.knownSourceSeconds ?? 0,
        },
        counterSecret: COUNTER_SECRET,
        clock: () => now,
        logger,
      }),
      logger,
    };
    return { deps: throttledDeps, store, users, logLines, metrics, compares: () => compares };
  };

  it('answers 429 with Retry-After after the limit, without checking the password', async () => {
    now = NOW;
    const t = await throttled();
    for (let i = 0; i < 3; i += 1) {
      expect(await failure(login(t.deps, { username: 'carol', password: 'wrong', sourceIp: IP }))).toBe(
        'INVALID_CREDENTIALS',
      );
    }
    const compares = t.compares();
    const locked = await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP }).catch(
      (e: unknown) => e as AppError,
    );
    expect((locked as AppError).code).toBe('TOO_MANY_ATTEMPTS');
    expect((locked as AppError).retryAfterSeconds).toBe(30);
    expect(t.compares()).toBe(compares);
    expect(t.logLines.some((line) => line.includes('lockout started'))).toBe(true);
    expect(t.logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ event: 'login failed', reason: 'locked' }),
    );
  });

  it('ends every lock: after the wait the right password logs in, the failures left to age out with the window', async () => {
    now = NOW;
    const t = await throttled();
    for (let i = 0; i < 3; i += 1)
      await login(t.deps, { username: 'carol', password: 'wrong', sourceIp: IP }).catch(() => {});
    now = new Date(NOW.getTime() + 31_000);
    await expect(
      login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP }),
    ).resolves.toBeDefined();
    // A success cannot tell whose the name's failures were: it sets back none (behaviour.md).
    expect([...t.store.all.values()].map((record) => record.failures)).toEqual([3]);
  });

  it('counts unknown usernames too, so a lock tells nothing about which names exist', async () => {
    now = NOW;
    const t = await throttled();
    for (let i = 0; i < 3; i += 1)
      await login(t.deps, { username: 'nobody', password: 'x', sourceIp: IP }).catch(() => {});
    expect(await failure(login(t.deps, { username: 'nobody', password: 'x', sourceIp: IP }))).toBe(
      'TOO_MANY_ATTEMPTS',
    );
  });

  it.each([12, 20])(
    'lets %i simultaneous right-password logins of one username from an address it logged in from all in, each with its session',
    async (count) => {
      now = NOW;
      const t = await throttled({
        username: { ...POLICY, limit: 5 },
        sourceIpLimit: 100,
        knownSourceSeconds: 30 * 86_400,
      });
      await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP });

      const results = await Promise.all(
        Array.from({ length: count }, () =>
          login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP }),
        ),
      );

      expect(new Set(results.map(({ tokens }) => decodeJwt(tokens.refreshToken).sid)).size).toBe(count);
      expect(t.metrics.names().filter((name) => name.startsWith('Lock'))).toEqual([]);
    },
  );

  it('checks no more passwords of a parallel burst of wrong ones from an address the name does not know than the failure limit, then refuses the right one unchecked', async () => {
    now = NOW;
    const t = await throttled({ knownSourceSeconds: 30 * 86_400 });
    await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP });
    const before = t.compares();

    const codes = await Promise.all(
      Array.from({ length: 20 }, () =>
        failure(login(t.deps, { username: 'carol', password: 'guess', sourceIp: '198.51.100.66' })),
      ),
    );

    expect(codes.filter((code) => code === 'INVALID_CREDENTIALS')).toHaveLength(POLICY.limit);
    expect(codes.filter((code) => code === 'TOO_MANY_ATTEMPTS')).toHaveLength(20 - POLICY.limit);
    expect(t.compares() - before).toBe(POLICY.limit);
    expect(
      await failure(
        login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: '198.51.100.66' }),
      ),
    ).toBe('TOO_MANY_ATTEMPTS');
    expect(t.compares() - before).toBe(POLICY.limit);
  });

  it('logs a user in from an address it logged in from while strangers have locked its name, and no one else', async () => {
    now = NOW;
    const t = await throttled({ knownSourceSeconds: 30 * 86_400 });
    await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP });
    for (const stranger of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      await login(t.deps, { username: 'carol', password: 'guess', sourceIp: stranger }).catch(() => {});
    }

    await expect(
      login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP }),
    ).resolves.toBeDefined();
    expect(
      await failure(
        login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: '198.51.100.9' }),
      ),
    ).toBe('TOO_MANY_ATTEMPTS');
    expect(t.metrics.names()).toContain('LockSpared{counter=Username}');
  });

  it('tells what is left of each limit: with INVALID_CREDENTIALS after a failure, in the result after a success', async () => {
    now = NOW;
    const t = await throttled({ sourceIpLimit: 100, knownSourceSeconds: 30 * 86_400 });
    const failed = await login(t.deps, { username: 'carol', password: 'guess', sourceIp: IP }).catch(
      (e: unknown) => e as AppError,
    );
    const succeeded = await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP });

    // NOW is 10:00 UTC: an hour-long period's failures are gone at 12:00. The name's quota is
    // told only to a source the name knows, which the success makes this one; its failure stays.
    expect((failed as AppError).quota).toEqual([{ policy: 'address', remaining: 99, resetSeconds: 7200 }]);
    expect(succeeded.quota).toEqual([
      { policy: 'username', remaining: 2, resetSeconds: 7200 },
      { policy: 'address', remaining: 99, resetSeconds: 7200 },
    ]);
  });

  it('throttles a source address across usernames, and a success does not reset it', async () => {
    now = NOW;
    const t = await throttled({ sourceIpLimit: 3 });
    await login(t.deps, { username: 'a1', password: 'x', sourceIp: IP }).catch(() => {});
    await login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP });
    await login(t.deps, { username: 'a2', password: 'x', sourceIp: IP }).catch(() => {});
    await login(t.deps, { username: 'a3', password: 'x', sourceIp: IP }).catch(() => {});
    expect(
      await failure(login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: IP })),
    ).toBe('TOO_MANY_ATTEMPTS');
    await expect(
      login(t.deps, { username: 'carol', password: 'carol-password', sourceIp: '198.51.100.7' }),
    ).resolves.toBeDefined();
  });

  it('logs the reason of a failure, and the username only of a user that exists', async () => {
    now = NOW;
    const t = await throttled();
    await login(t.deps, { username: 'carol', password: 'wrong', sourceIp: IP }).catch(() => {});
    await login(t.deps, { username: 'pasted-password-by-mistake', password: 'x', sourceIp: IP }).catch(
      () => {},
    );
    const failures = t.logLines
      .filter((line) => line.includes('login failed'))
      .map((line) => JSON.parse(line));
    expect(failures[0]).toMatchObject({ reason: 'bad password', username: 'carol' });
    expect(failures[1]).toMatchObject({ reason: 'unknown user' });
    expect(JSON.stringify(failures)).not.toContain('pasted-password-by-mistake');
  });

  it('upgrades a hash of a lower cost than the stage’s on a successful login', async () => {
    now = NOW;
    const t = await throttled();
    const metrics = createMemoryMetrics();
    const stronger: LoginDeps = {
      ...t.deps,
      passwords: createPasswordVerifier({ cost: TEST_COST + 1 }),
      metrics,
    };
    const before = t.users.records.get('old')?.passwordHash ?? '';
    await login(stronger, { username: 'old', password: 'old-password', sourceIp: IP });
    const after = t.users.records.get('old')?.passwordHash ?? '';
    expect(after).not.toBe(before);
    expect(after.startsWith(`$2b$0${TEST_COST + 1}$`)).toBe(true);
    await expect(
      login(stronger, { username: 'old', password: 'old-password', sourceIp: IP }),
    ).resolves.toBeDefined();
    // Counted once: the second login finds the hash at the stage's cost.
    expect(metrics.names()).toEqual(['PasswordHashUpgraded', 'LoginSucceeded', 'LoginSucceeded']);
  });

  it('brings a hash of a higher cost than the stage’s down to the stage’s cost on a successful login', async () => {
    now = NOW;
    const t = await throttled();
    const metrics = createMemoryMetrics();
    const users = await memoryUsers([{ username: 'dear', password: 'dear-password', cost: TEST_COST + 1 }]);
    const replaced: string[] = [];
    const recording: LoginDeps = {
      ...t.deps,
      users: {
        ...users,
        upgradePasswordHash: (username, currentHash, upgradedHash) => {
          replaced.push(currentHash);
          return users.upgradePasswordHash(username, currentHash, upgradedHash);
        },
      },
      metrics,
    };
    const before = users.records.get('dear')?.passwordHash ?? '';

    await login(recording, { username: 'dear', password: 'dear-password', sourceIp: IP });
    await login(recording, { username: 'dear', password: 'dear-password', sourceIp: IP });

    const after = users.records.get('dear')?.passwordHash ?? '';
    expect(after.startsWith(`$2b$0${TEST_COST}$`)).toBe(true);
    // Replaced only if still the hash the login compared: a password change meanwhile wins.
    expect(replaced).toEqual([before]);
    expect(metrics.names()).toEqual(['PasswordHashUpgraded', 'LoginSucceeded', 'LoginSucceeded']);
  });

  it('fails with the store’s error, logging and counting no lockout, when the throttle store is down', async () => {
    now = NOW;
    const t = await throttled();
    const metrics = createMemoryMetrics();
    const down: ThrottleStore = { ...memoryThrottleStore(), reserve: unreachable };
    const unavailable: LoginDeps = {
      ...t.deps,
      throttle: createLoginThrottle({
        metrics: noMetrics,
        store: down,
        settings: { ...UNTHROTTLED, username: POLICY },
        counterSecret: COUNTER_SECRET,
        logger: createLogger('error', () => {}),
      }),
      metrics,
    };
    expect(
      await failure(login(unavailable, { username: 'carol', password: 'carol-password', sourceIp: IP })),
    ).toBe('DEPENDENCY_UNAVAILABLE');
    expect(t.logLines.filter((line) => line.includes('login failed'))).toEqual([]);
    expect(metrics.names()).toEqual([]);
  });

  it('logs a hash upgrade with the username', async () => {
    now = NOW;
    const t = await throttled();
    const stronger: LoginDeps = { ...t.deps, passwords: createPasswordVerifier({ cost: TEST_COST + 1 }) };
    await login(stronger, { username: 'old', password: 'old-password', sourceIp: IP });
    expect(t.logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 'INFO', event: 'password hash upgraded', username: 'old' }),
    );
  });

  it('logs in all the same, and warns with the username and the error, when the upgrade cannot be stored', async () => {
    now = NOW;
    const t = await throttled();
    const stronger: LoginDeps = {
      ...t.deps,
      users: { ...t.users, upgradePasswordHash: unreachable },
      passwords: createPasswordVerifier({ cost: TEST_COST + 1 }),
    };
    const result = await login(stronger, { username: 'old', password: 'old-password', sourceIp: IP });
    expect(result.user.username).toBe('old');
    expect(t.logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        event: 'password hash upgrade failed',
        username: 'old',
        error: expect.objectContaining({ code: 'DEPENDENCY_UNAVAILABLE' }),
      }),
    );
  });
});
