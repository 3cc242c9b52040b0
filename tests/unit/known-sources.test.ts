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
} from '../../lib/throttle/throttle.ts';
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

  it('answer a known source’s refusal with its own counter’s quota', async () => {
    const { succeed, fail, lockByStrangers, throttle } = setup();
    await succeed(from(HOME));
    await lockByStrangers();
    for (let i = 0; i < NAME_POLICY.limit; i += 1) await fail(from(HOME));

    const error = (await throttle.begin(from(HOME)).catch((e: unknown) => e)) as AppError;

    expect(error.quota?.[0]).toEqual({ policy: 'username', remaining: 0, resetSeconds: 30 });
  });
});
