/**
 * The failed-login counters in the admin CLI: user show's failedLogins (the name's lock for
 * unknown sources, its known sources and their own locks) and user unlock.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../lib/log.ts';
import {
  holdSeconds,
  knownSourceCounterKey,
  knownSourceTag,
  lockSeconds,
  sourceIpCounterKey,
  usernameCounterKey,
} from '../../../lib/throttle/counters.ts';
import { createLoginThrottle } from '../../../lib/throttle/login-throttle.ts';
import type { LoginAttempt, ThrottlePolicy } from '../../../lib/throttle/throttle.ts';
import { lines, unique, useAdminCli } from '../../support/admin-cli.ts';
import { noMetrics } from '../../support/memory-metrics.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

/** The username policy of the login throttle: three failures lock, for 30s doubling up to 15m. */
const POLICY: ThrottlePolicy = {
  limit: 3,
  windowSeconds: 3600,
  baseLockSeconds: 30,
  maxLockSeconds: 900,
  inflightLimit: 10,
};
/** Addresses that never lock in these tests, unless a test says so. */
const ADDRESSES: ThrottlePolicy = { ...POLICY, limit: 1000, inflightLimit: 1000 };
const KNOWN_SOURCE_SECONDS = 30 * 86_400;
/** The stage as the throttle below runs it, for the CLI to read the counters by. */
const stageParams = { usernameThrottle: POLICY, knownSourceSeconds: KNOWN_SOURCE_SECONDS };

/** The login throttle of the local stage, on the CLI's table, at `clock`'s time. */
async function throttleAt(clock: () => Date, addresses: ThrottlePolicy = ADDRESSES) {
  return createLoginThrottle({
    metrics: noMetrics,
    store: cli.throttleStore,
    settings: {
      username: POLICY,
      sourceIp: addresses,
      clientSourceIp: addresses,
      knownSourceSeconds: KNOWN_SOURCE_SECONDS,
    },
    counterSecret: await cli.counterSecret(),
    clock,
    logger: createLogger('error', () => {}),
  });
}

/** Fails `times` logins of `username` from `sourceIp` at `at`, as the login function would. */
async function failLogins(username: string, times: number, at: Date, sourceIp = '', addresses = POLICY) {
  const throttle = await throttleAt(() => at, addresses);
  for (let i = 0; i < times; i += 1) {
    const attempt = { username, sourceIp };
    await throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
  }
  return throttle;
}

/** A successful login of `attempt` at `at`: its source is known to the name from then. */
async function logIn(attempt: LoginAttempt, at: Date) {
  const throttle = await throttleAt(() => at);
  return throttle.succeeded(await throttle.begin(attempt));
}

/** The first characters of `sourceIp`'s tag for `username`, as show and unlock print it. */
async function shownTag(username: string, sourceIp: string) {
  const secret = await cli.counterSecret();
  return knownSourceTag(usernameCounterKey(username, secret), sourceIp, secret).slice(0, 8);
}

const HOME = '198.51.100.10';
const OFFICE = '198.51.100.20';
const STRANGER = '203.0.113.66';

/**
 * A user who logged in from HOME and OFFICE, then was locked by a stranger at `at` (for unknown
 * sources, until `at` + the first lock) and by failures from HOME at `at` + 5 s (HOME's own
 * counter, until 5 s later than the name's lock).
 */
async function lockedBothWays(at: Date) {
  const username = unique('Walter');
  await adminOk(['user', 'add', username], { password: 'good pass word' });
  await logIn({ username, sourceIp: HOME }, at);
  await logIn({ username, sourceIp: OFFICE }, at);
  await failLogins(username, POLICY.limit, at, STRANGER, ADDRESSES);
  const later = new Date(at.getTime() + 5000);
  await failLogins(username, POLICY.limit, later, HOME, ADDRESSES);
  const lock = lockSeconds(POLICY, POLICY.limit) * 1000;
  return {
    username,
    nameUntil: new Date(at.getTime() + lock).toISOString(),
    homeUntil: new Date(later.getTime() + lock).toISOString(),
  };
}

describe('admin CLI: failed logins', () => {
  it('show prints the failures of the username in any letter case, the last one, and the running lock', async () => {
    const username = unique('Peggy');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const at = new Date(Date.now() - 1000);
    await failLogins(username.toUpperCase(), 2, at);
    await failLogins(username, 1, at);

    const shown = await admin(['user', 'show', username]);

    expect(shown).toMatchObject({ code: 0, stderr: [] });
    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: at.toISOString(),
      lockedUntil: new Date(at.getTime() + lockSeconds(POLICY, 3) * 1000).toISOString(),
      knownSources: 0,
      knownSourcesLocked: [],
    });
  });

  it('show gives lockedUntil null once the lock has run out, and keeps the count', async () => {
    const username = unique('quinn');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const hourAgo = new Date(Date.now() - 3_600_000);
    await failLogins(username, 3, hourAgo);

    const shown = await admin(['user', 'show', username]);

    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: hourAgo.toISOString(),
      lockedUntil: null,
      knownSources: 0,
      knownSourcesLocked: [],
    });
  });

  it('show and list --locked report a username at its limit whose lock was never written as locked', async () => {
    // Three failures counted, the lock's write lost each time: the counter holds, and refuses.
    const username = unique('Sybil');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const at = new Date(Date.now() - 1000);
    const throttle = createLoginThrottle({
      metrics: noMetrics,
      store: { ...cli.throttleStore, lock: async () => {} },
      settings: { username: POLICY, sourceIp: POLICY, clientSourceIp: POLICY, knownSourceSeconds: 0 },
      counterSecret: await cli.counterSecret(),
      clock: () => at,
      logger: createLogger('error', () => {}),
    });
    const attempt = { username, sourceIp: '' };
    for (let i = 0; i < 3; i += 1)
      await throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
    await expect(throttle.begin(attempt)).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    const heldUntil = new Date(at.getTime() + holdSeconds(POLICY) * 1000).toISOString();

    const shown = await admin(['user', 'show', username], { stageParams });
    const listed = await admin(['user', 'list', '--locked'], { stageParams });

    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: at.toISOString(),
      lockedUntil: heldUntil,
      knownSources: 0,
      knownSourcesLocked: [],
    });
    expect(lines(listed.stdout).map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ username, lockedUntil: heldUntil }),
    );
  });

  it('show reports the name locked for unknown sources while its known sources are not, and how many it knows', async () => {
    const at = new Date(Date.now() - 1000);
    const username = unique('Ursula');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    await logIn({ username, sourceIp: HOME }, at);
    await logIn({ username, sourceIp: OFFICE }, at);
    const throttle = await failLogins(username, POLICY.limit, at, STRANGER, ADDRESSES);

    const shown = await admin(['user', 'show', username], { stageParams });

    expect(shown).toMatchObject({ code: 0, stderr: [] });
    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: POLICY.limit,
      lastAttemptAt: at.toISOString(),
      lockedUntil: new Date(at.getTime() + lockSeconds(POLICY, POLICY.limit) * 1000).toISOString(),
      knownSources: 2,
      knownSourcesLocked: [],
    });
    // As the throttle sees it: the stranger refused, the known source let in.
    await expect(throttle.begin({ username, sourceIp: STRANGER })).rejects.toMatchObject({
      code: 'TOO_MANY_ATTEMPTS',
    });
    await expect(throttle.begin({ username, sourceIp: HOME })).resolves.toMatchObject({ spared: true });
  });

  it('show reports a known source locked on its own, by the start of its tag, apart from the name’s lock', async () => {
    const { username, nameUntil, homeUntil } = await lockedBothWays(new Date(Date.now() - 1000));

    const shown = await admin(['user', 'show', username], { stageParams });

    const { failedLogins } = JSON.parse(shown.stdout);
    expect(failedLogins).toMatchObject({ lockedUntil: nameUntil, knownSources: 2 });
    expect(failedLogins.knownSourcesLocked).toEqual([
      { source: await shownTag(username, HOME), lockedUntil: homeUntil },
    ]);
    expect(shown.stdout).not.toContain(HOME);
  });

  it('show counts no known source, and no known source’s lock, on a stage with known sources off', async () => {
    const { username, nameUntil } = await lockedBothWays(new Date(Date.now() - 1000));

    const shown = await admin(['user', 'show', username], {
      stageParams: { ...stageParams, knownSourceSeconds: 0 },
    });

    expect(JSON.parse(shown.stdout).failedLogins).toMatchObject({
      lockedUntil: nameUntil,
      knownSources: 0,
      knownSourcesLocked: [],
    });
  });

  it('show no longer counts a known source whose period has ended', async () => {
    const username = unique('Xavier');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    await logIn({ username, sourceIp: HOME }, new Date(Date.now() - (KNOWN_SOURCE_SECONDS + 60) * 1000));
    await logIn({ username, sourceIp: OFFICE }, new Date(Date.now() - 1000));

    const shown = await admin(['user', 'show', username], { stageParams });

    expect(JSON.parse(shown.stdout).failedLogins.knownSources).toBe(1);
  });

  it('show of a name that is no user says only that, even when the name has failed logins', async () => {
    const name = unique('nobody');
    await failLogins(name, 3, new Date());

    const shown = await admin(['user', 'show', name]);

    expect(shown).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${name}" not found`] });
  });

  it('unlock clears the username’s counter and ends its lock, leaving the source address’s counter', async () => {
    const username = unique('Rupert');
    const sourceIp = '203.0.113.7';
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const at = new Date(Date.now() - 1000);
    const throttle = await failLogins(username, 3, at, sourceIp);
    const attempt = { username, sourceIp: '' };
    // The username is locked before the unlock.
    await expect(throttle.begin(attempt)).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });

    const run = await admin(['user', 'unlock', username], { stageParams });

    expect(run).toMatchObject({ code: 0, stderr: [], passwordReads: 0 });
    expect(lines(run.stdout)).toEqual([
      `cleared the failed logins of user "${username}" (no known sources)`,
      `ended its lock for unknown sources (until ${new Date(at.getTime() + 30_000).toISOString()})`,
    ]);
    const key = usernameCounterKey(username, await cli.counterSecret());
    const left = await cli.throttleStore.read([key, sourceIpCounterKey(sourceIp)]);
    expect(left.get(key)).toMatchObject({ failures: 0, lockedUntil: 0 });
    expect(left.get(sourceIpCounterKey(sourceIp))?.failures).toBe(3);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).failedLogins).toMatchObject({
      failures: 0,
      lockedUntil: null,
    });
    await expect(throttle.begin({ username, sourceIp })).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    await expect(throttle.begin(attempt)).resolves.toMatchObject({
      counted: [{ kind: 'username', failures: 0 }],
    });
  });

  it('unlock ends the name’s lock and every known source’s, saying which, and keeps the sources known', async () => {
    const at = new Date(Date.now() - 1000);
    const { username, nameUntil, homeUntil } = await lockedBothWays(at);
    const secret = await cli.counterSecret();
    const nameKey = usernameCounterKey(username, secret);
    const homeKey = knownSourceCounterKey(nameKey, knownSourceTag(nameKey, HOME, secret));

    const run = await admin(['user', 'unlock', username], { stageParams });

    expect(run).toMatchObject({ code: 0, stderr: [] });
    expect(lines(run.stdout)).toEqual([
      `cleared the failed logins of user "${username}" and of each of its known sources (2, kept as known)`,
      `ended its lock for unknown sources (until ${nameUntil})`,
      `ended the lock of known source ${await shownTag(username, HOME)} (until ${homeUntil})`,
    ]);
    const left = await cli.throttleStore.read([nameKey, homeKey]);
    expect(left.has(homeKey)).toBe(false);
    expect(left.get(nameKey)).toMatchObject({ failures: 0, lockedUntil: 0 });
    expect(left.get(nameKey)?.knownSources.size).toBe(2);
    expect(
      JSON.parse((await admin(['user', 'show', username], { stageParams })).stdout).failedLogins,
    ).toMatchObject({ lockedUntil: null, knownSources: 2, knownSourcesLocked: [] });
  });

  it('after unlock, a stranger’s new lock still spares the known sources, and HOME logs in again', async () => {
    const at = new Date(Date.now() - 1000);
    const { username } = await lockedBothWays(at);
    await adminOk(['user', 'unlock', username], { stageParams });
    const later = new Date(at.getTime() + 10_000);
    const throttle = await throttleAt(() => later);

    // The stranger counts from zero again, on the name, and locks it once more.
    const first = await throttle.begin({ username, sourceIp: STRANGER });
    expect(first.counted[0]).toMatchObject({ kind: 'username', failures: 0 });
    await throttle.failed({ username, sourceIp: STRANGER }, 'bad password', first);
    await failLogins(username, POLICY.limit - 1, later, STRANGER, ADDRESSES);

    await expect(throttle.begin({ username, sourceIp: STRANGER })).rejects.toMatchObject({
      code: 'TOO_MANY_ATTEMPTS',
    });
    for (const sourceIp of [HOME, OFFICE]) {
      const spared = await throttle.begin({ username, sourceIp });
      expect(spared, sourceIp).toMatchObject({ spared: true });
      expect(spared.counted[0], sourceIp).toMatchObject({ kind: 'known source', failures: 0 });
      await throttle.succeeded(spared);
    }
  });

  it('unlock of a user with no failed logins to clear succeeds', async () => {
    const username = unique('Rupert');
    await adminOk(['user', 'add', username], { password: 'good pass word' });

    const run = await admin(['user', 'unlock', username]);

    expect(run.code).toBe(0);
  });

  it('unlock of a name that is no user fails with exit 1 and clears nothing', async () => {
    const name = unique('nobody');
    await failLogins(name, 3, new Date());

    const run = await admin(['user', 'unlock', name]);

    expect(run).toMatchObject({ code: 1, stdout: '', stderr: [`error: user "${name}" not found`] });
    const key = usernameCounterKey(name, await cli.counterSecret());
    expect((await cli.throttleStore.read([key])).get(key)?.failures).toBe(3);
  });

  it('unlock takes exactly one username', async () => {
    const invocations = [
      ['user', 'unlock'],
      ['user', 'unlock', 'a', 'b'],
    ];

    const runs = [];
    for (const args of invocations) runs.push(await admin(args));

    for (const run of runs) {
      expect(run).toMatchObject({ code: 2, stderr: ['error: user unlock takes <username>'] });
    }
  });
});
