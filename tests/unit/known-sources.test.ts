/**
 * Known sources (docs/behaviour.md, "Brute force: the login throttle"): a name locked by
 * strangers still lets in the sources it logged in from, each on a counter of its own.
 */
import { describe, expect, it } from 'vitest';
import type { AppError } from '../../lib/errors.ts';
import {
  knownSourceCounterKey,
  knownSourceTag,
  MAX_KNOWN_SOURCES,
  usernameCounterKey,
} from '../../lib/throttle/counters.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { ADDRESS_POLICY, NAME_POLICY, T0, throttleOn } from '../support/login-throttle.ts';
import { memoryThrottleStore } from '../support/memory-throttle.ts';

const DAY = 86_400_000;
const KNOWN_SECONDS = 30 * 86_400;
const HOME = '203.0.113.10';
const OFFICE = '203.0.113.20';
const STRANGERS = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.5'];
const nameKey = usernameCounterKey('alice', COUNTER_SECRET);
const tagOf = (sourceIp: string) => knownSourceTag(nameKey, sourceIp, COUNTER_SECRET);
const from = (sourceIp: string) => ({ username: 'alice', sourceIp });

const setup = (knownSourceSeconds = KNOWN_SECONDS) => {
  const store = memoryThrottleStore();
  const on = throttleOn(store, { sourceIp: ADDRESS_POLICY, knownSourceSeconds });
  /** Strangers, one address each, lock the name with wrong passwords. */
  const lockByStrangers = async () => {
    for (const sourceIp of STRANGERS) await on.fail(from(sourceIp));
    expect(await on.refusal(from('198.51.100.99'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  };
  return { store, lockByStrangers, ...on };
};

describe('known sources', () => {
  it('let in a source the name logged in from while strangers have locked the name', async () => {
    const { succeed, lockByStrangers, throttle, metrics } = setup();
    await succeed(from(HOME));
    await lockByStrangers();

    const reservation = await throttle.begin(from(HOME));
    await throttle.succeeded(reservation);

    expect(reservation).toMatchObject({
      spared: true,
      counted: [{ kind: 'known source' }, { kind: 'source address' }],
    });
    expect(metrics.names()).toContain('LockSpared{counter=Username}');
  });

  it('let a known source’s simultaneous logins all in while strangers have locked the name', async () => {
    const { succeed, lockByStrangers, throttle } = setup();
    await succeed(from(HOME));
    await lockByStrangers();

    const reservations = await Promise.all(Array.from({ length: 20 }, () => throttle.begin(from(HOME))));
    await Promise.all(reservations.map((reservation) => throttle.succeeded(reservation)));

    expect(reservations.every(({ spared }) => spared)).toBe(true);
  });

  it('refuse a source the name has not logged in from while it is locked', async () => {
    const { succeed, lockByStrangers, refusal } = setup();
    await succeed(from(HOME));
    await lockByStrangers();

    expect(await refusal(from(OFFICE))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it('let in no one while the name is locked when known sources are off', async () => {
    const { succeed, lockByStrangers, refusal } = setup(0);
    await succeed(from(HOME));
    await lockByStrangers();

    expect(await refusal(from(HOME))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it('count a known source’s failures while the name is locked on its own counter, which locks it alone', async () => {
    const { store, succeed, fail, lockByStrangers, refusal, metrics } = setup();
    await succeed(from(HOME));
    await succeed(from(OFFICE));
    await lockByStrangers();
    const locked = store.all.get(nameKey);

    for (let i = 0; i < NAME_POLICY.limit; i += 1) await fail(from(HOME));

    expect(await refusal(from(HOME))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS', retryAfterSeconds: 30 });
    expect(store.all.get(knownSourceCounterKey(nameKey, tagOf(HOME)))?.failures).toBe(NAME_POLICY.limit);
    expect(store.all.get(nameKey)).toMatchObject({
      failures: locked?.failures,
      lockedUntil: locked?.lockedUntil,
    });
    expect(await refusal(from(OFFICE))).toBe('granted');
    expect(metrics.names()).toContain('LockoutStarted{counter=KnownSource}');
  });

  it('forget a source knownSourceSeconds after its last success', async () => {
    const { succeed, lockByStrangers, refusal, advance } = setup();
    await succeed(from(HOME));
    advance(KNOWN_SECONDS * 1000 - 1);
    await lockByStrangers();

    expect(await refusal(from(HOME))).toBe('granted');
    advance(1);
    expect(await refusal(from(HOME))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it('know an IPv6 source by its /64 network', async () => {
    const { succeed, lockByStrangers, refusal } = setup();
    await succeed(from('2001:db8:1:2::10'));
    await lockByStrangers();

    expect(await refusal(from('2001:db8:1:2:ffff:ffff:ffff:99'))).toBe('granted');
    expect(await refusal(from('2001:db8:1:3::10'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it('keep the name locked for strangers after a known source’s success, which renews only that source', async () => {
    const { store, succeed, lockByStrangers, refusal, advance } = setup();
    await succeed(from(HOME));
    await lockByStrangers();
    const locked = store.all.get(nameKey);
    advance(10_000);

    await succeed(from(HOME));

    expect(store.all.get(nameKey)).toMatchObject({
      failures: locked?.failures,
      lockedUntil: locked?.lockedUntil,
    });
    expect(store.all.get(nameKey)?.knownSources.get(tagOf(HOME))).toBe(T0 + 10_000 + KNOWN_SECONDS * 1000);
    expect(await refusal(from('198.51.100.99'))).toMatchObject({
      code: 'TOO_MANY_ATTEMPTS',
      retryAfterSeconds: 20,
    });
  });

  it('tag a source per name, never with its address', () => {
    const bob = usernameCounterKey('bob', COUNTER_SECRET);
    expect(tagOf(HOME)).toMatch(/^[\w-]{22}$/);
    expect(tagOf(HOME)).not.toBe(knownSourceTag(bob, HOME, COUNTER_SECRET));
    expect(tagOf(HOME)).not.toBe(knownSourceTag(nameKey, HOME, new Uint8Array(32).fill(8)));
    expect(knownSourceCounterKey(nameKey, tagOf(HOME))).toBe(`${nameKey}#${tagOf(HOME)}`);
    expect(knownSourceCounterKey(nameKey, tagOf(HOME))).not.toContain(HOME);
  });

  it(`keep at most ${MAX_KNOWN_SOURCES}, forgetting the one known the longest ago`, async () => {
    const { store, succeed, advance } = setup();
    const source = (i: number) => `10.0.${Math.floor(i / 256)}.${i % 256}`;
    for (let i = 0; i <= MAX_KNOWN_SOURCES; i += 1) {
      await succeed(from(source(i)));
      advance(1000);
    }

    const known = store.all.get(nameKey)?.knownSources;
    expect(known?.size).toBe(MAX_KNOWN_SOURCES);
    expect(known?.has(tagOf(source(0)))).toBe(false);
    expect(known?.has(tagOf(source(1)))).toBe(true);
    expect(known?.has(tagOf(source(MAX_KNOWN_SOURCES)))).toBe(true);
  });

  it('forget the expired ones with the next success', async () => {
    const { store, succeed, advance } = setup();
    await succeed(from(HOME));
    advance(10 * DAY);
    await succeed(from(OFFICE));
    advance(KNOWN_SECONDS * 1000 - 10 * DAY);

    await succeed(from('198.51.100.50'));

    expect([...(store.all.get(nameKey)?.knownSources.keys() ?? [])].sort()).toEqual(
      [tagOf(OFFICE), tagOf('198.51.100.50')].sort(),
    );
  });

  it('outlast an unlock of the name by an operator, whose known sources stay', async () => {
    const { store, succeed, lockByStrangers, refusal } = setup();
    await succeed(from(HOME));
    await lockByStrangers();

    await store.unlock(nameKey);

    expect(store.all.get(nameKey)).toMatchObject({ failures: 0, lockedUntil: 0 });
    expect(store.all.get(nameKey)?.knownSources.has(tagOf(HOME))).toBe(true);
    expect(await refusal(from(STRANGERS[0] ?? ''))).toBe('granted');
  });

  it('tell only a source the name knows what is left of the name’s quota, a source made known by its success too', async () => {
    const { succeed, fail, advance } = setup();
    const policies = (states: readonly { policy: string }[]) => states.map(({ policy }) => policy);
    await succeed(from(HOME));

    expect(policies(await fail(from(STRANGERS[0] ?? '')))).toEqual(['address']);
    expect(policies(await fail(from(HOME)))).toEqual(['username', 'address']);
    expect(policies(await succeed(from(OFFICE)))).toEqual(['username', 'address']);
    expect(policies(await fail(from(OFFICE)))).toEqual(['username', 'address']);
    advance(KNOWN_SECONDS * 1000);
    expect(policies(await fail(from(HOME)))).toEqual(['address']);
  });

  it('keep strangers’ failures through the owner’s logins: a stranger who waits at one guess left is locked at the limit (issue 42)', async () => {
    // The audit's attack: guess up to one left, wait for the owner's routine login, go on.
    const { store, succeed, fail, refusal, metrics, logged } = setup();
    const stranger = from(STRANGERS[0] ?? '');
    await succeed(from(HOME));
    for (let i = 1; i < NAME_POLICY.limit; i += 1) await fail(stranger);

    expect(await succeed(from(HOME))).toContainEqual(
      expect.objectContaining({ policy: 'username', remaining: 1 }),
    );
    expect(store.all.get(nameKey)?.failures).toBe(NAME_POLICY.limit - 1);
    expect(logged('lockout started')).toEqual([]);
    await fail(stranger);

    expect(logged('lockout started')).toEqual([
      expect.objectContaining({ counter: 'username', failures: NAME_POLICY.limit, lockSeconds: 30 }),
    ]);
    expect(metrics.names()).toContain('LockoutStarted{counter=Username}');
    expect(await refusal(stranger)).toMatchObject({ code: 'TOO_MANY_ATTEMPTS', retryAfterSeconds: 30 });
    expect(await refusal(from(HOME))).toBe('granted');
  });

  it('answer a stranger alike for a name whose owner logs in between the guesses and for a made-up one', async () => {
    /** A stranger's answers to ten guesses 10 s apart, the owner logging in from home before each if there is one. */
    const guesses = async (username: string, owner: boolean) => {
      const on = throttleOn(memoryThrottleStore(), {
        sourceIp: ADDRESS_POLICY,
        knownSourceSeconds: KNOWN_SECONDS,
      });
      const stranger = { username, sourceIp: STRANGERS[0] ?? '' };
      const answers: unknown[] = [];
      for (let i = 0; i < 10; i += 1) {
        if (owner) await on.succeed({ username, sourceIp: HOME });
        answers.push(
          await on.fail(stranger).catch(({ code, retryAfterSeconds, quota }: AppError) => ({
            code,
            retryAfterSeconds,
            quota,
          })),
        );
        on.advance(10_000);
      }
      return answers;
    };

    const real = await guesses('alice', true);

    expect(real).toEqual(await guesses('nobody-at-all', false));
    // The 401s tell the address's quota only; a 429 names the name's counter, for any name alike.
    expect(real.slice(0, NAME_POLICY.limit)).toEqual(
      Array.from({ length: NAME_POLICY.limit }, () => [expect.objectContaining({ policy: 'address' })]),
    );
    expect(real[NAME_POLICY.limit]).toMatchObject({
      code: 'TOO_MANY_ATTEMPTS',
      quota: [{ policy: 'username', remaining: 0 }],
    });
  });

  it('reset a known source’s own counter with its success: its failures were its own', async () => {
    const { store, succeed, fail, lockByStrangers } = setup();
    await succeed(from(HOME));
    await lockByStrangers();
    const locked = store.all.get(nameKey);
    const own = knownSourceCounterKey(nameKey, tagOf(HOME));
    for (let i = 0; i < 2; i += 1) await fail(from(HOME));
    expect(store.all.get(own)?.failures).toBe(2);

    expect(await succeed(from(HOME))).toContainEqual({ policy: 'username', remaining: 5, resetSeconds: 0 });

    expect(store.all.get(own)).toMatchObject({ failures: 0, lockedUntil: 0 });
    expect(store.all.get(nameKey)).toMatchObject({
      failures: locked?.failures,
      lockedUntil: locked?.lockedUntil,
    });
  });

  it('answer a known source’s refusal with its own counter’s quota', async () => {
    const { succeed, fail, lockByStrangers, throttle } = setup();
    await succeed(from(HOME));
    await lockByStrangers();
    for (let i = 0; i < NAME_POLICY.limit; i += 1) await fail(from(HOME));

    const error = (await throttle.begin(from(HOME)).catch((e: unknown) => e)) as AppError;

    expect(error.quota?.[0]).toEqual({ policy: 'username', remaining: 0, resetSeconds: 30 });
  });
});
