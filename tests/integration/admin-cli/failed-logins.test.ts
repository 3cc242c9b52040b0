/** The failed-login counters in the admin CLI: user show's failedLogins and user unlock. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../lib/log.ts';
import {
  createLoginThrottle,
  holdSeconds,
  lockSeconds,
  sourceIpCounterKey,
  type ThrottlePolicy,
  usernameCounterKey,
} from '../../../lib/throttle/throttle.ts';
import { lines, unique, useAdminCli } from '../../support/admin-cli.ts';
import { noMetrics } from '../../support/memory-metrics.ts';

const cli = useAdminCli();
const { admin, adminOk } = cli;

/** The username policy of the login throttle: three failures lock, for 30s doubling up to 15m. */
const POLICY: ThrottlePolicy = { limit: 3, windowSeconds: 3600, baseLockSeconds: 30, maxLockSeconds: 900 };

/** Fails `times` logins of `username` from `sourceIp` at `at`, as the login function would. */
async function failLogins(username: string, times: number, at: Date, sourceIp = '') {
  const throttle = createLoginThrottle({
    metrics: noMetrics,
    store: cli.throttleStore,
    settings: { username: POLICY, sourceIp: POLICY },
    counterSecret: await cli.counterSecret(),
    clock: () => at,
    logger: createLogger('error', () => {}),
  });
  for (let i = 0; i < times; i += 1) {
    const attempt = { username, sourceIp };
    await throttle.failed(attempt, 'bad password', await throttle.begin(attempt));
  }
  return throttle;
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
    });
  });

  it('show and list --locked report a username held by attempts that never settled as locked', async () => {
    // Three logins counted, then their functions died before settling: the counter refuses.
    const username = unique('Sybil');
    await adminOk(['user', 'add', username], { password: 'good pass word' });
    const at = new Date(Date.now() - 1000);
    const throttle = await failLogins(username, 0, at);
    for (let i = 0; i < 3; i += 1) await throttle.begin({ username, sourceIp: '' });
    const stageParams = { usernameThrottle: POLICY };
    const heldUntil = new Date(at.getTime() + holdSeconds(POLICY) * 1000).toISOString();

    const shown = await admin(['user', 'show', username], { stageParams });
    const listed = await admin(['user', 'list', '--locked'], { stageParams });

    expect(JSON.parse(shown.stdout).failedLogins).toEqual({
      failures: 3,
      lastAttemptAt: at.toISOString(),
      lockedUntil: heldUntil,
    });
    expect(lines(listed.stdout).map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ username, lockedUntil: heldUntil }),
    );
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
    const throttle = await failLogins(username, 3, new Date(), sourceIp);
    const attempt = { username, sourceIp: '' };
    // The username is locked before the unlock.
    await expect(throttle.begin(attempt)).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });

    const run = await admin(['user', 'unlock', username]);

    expect(run).toMatchObject({
      code: 0,
      stderr: [],
      stdout: `cleared the failed logins of user "${username}"`,
      passwordReads: 0,
    });
    const key = usernameCounterKey(username, await cli.counterSecret());
    const left = await cli.throttleStore.read([key, sourceIpCounterKey(sourceIp)]);
    expect([...left.keys()]).toEqual([sourceIpCounterKey(sourceIp)]);
    expect(left.get(sourceIpCounterKey(sourceIp))?.failures).toBe(3);
    expect(JSON.parse((await admin(['user', 'show', username])).stdout).failedLogins).toEqual({
      failures: 0,
      lastAttemptAt: null,
      lockedUntil: null,
    });
    await expect(throttle.begin({ username, sourceIp })).rejects.toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    await expect(throttle.begin(attempt)).resolves.toMatchObject({
      counted: [{ kind: 'username', failures: 1 }],
    });
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
