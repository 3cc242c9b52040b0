import { describe, expect, it } from 'vitest';
import { expiringCache, RETRY_MS, reloading } from '../../lib/cache.ts';

describe('reloading value', () => {
  it('loads at start, serves the value until it is old, then loads again', async () => {
    let now = 0;
    let loads = 0;
    const get = await reloading(async () => ++loads, {
      maxAgeMs: 1000,
      clock: () => new Date(now),
      onError: () => {},
    });
    expect(await get()).toBe(1);
    now = 999;
    expect(await get()).toBe(1);
    now = 1000;
    expect(await get()).toBe(2);
  });

  it('keeps serving the last value when a reload fails, and reports the failure', async () => {
    let now = 0;
    let fail = false;
    const errors: unknown[] = [];
    const get = await reloading(
      async () => {
        if (fail) throw new Error('SSM throttled');
        return 'key set';
      },
      { maxAgeMs: 10, clock: () => new Date(now), onError: (error) => errors.push(error) },
    );
    fail = true;
    now = 10;
    expect(await get()).toBe('key set');
    expect(errors).toHaveLength(1);
  });

  it('tries a failed reload again after RETRY_MS, and keeps loadedAt at the last success meanwhile', async () => {
    let now = 0;
    let fail = false;
    let loads = 0;
    const get = await reloading(
      async () => {
        loads += 1;
        if (fail) throw new Error('SSM throttled');
        return `key set ${loads}`;
      },
      { maxAgeMs: 60_000, clock: () => new Date(now), onError: () => {} },
    );
    fail = true;
    now = 60_000;
    expect(await get()).toBe('key set 1');
    expect(get.loadedAt()).toBe(0);
    now = 60_000 + RETRY_MS - 1;
    await get();
    expect(loads).toBe(2);
    fail = false;
    now = 60_000 + RETRY_MS;
    expect(await get()).toBe('key set 3');
    expect(get.loadedAt()).toBe(60_000 + RETRY_MS);
  });

  it('shares one reload between concurrent callers', async () => {
    let now = 0;
    let loads = 0;
    const get = await reloading(async () => ++loads, {
      maxAgeMs: 1,
      clock: () => new Date(now),
      onError: () => {},
    });
    now = 5;
    expect(await Promise.all([get(), get(), get()])).toEqual([2, 2, 2]);
  });
});

describe('expiring cache', () => {
  it('serves a value until its time to live passes', async () => {
    let now = 0;
    let loads = 0;
    const cache = expiringCache<string, number>({ ttlMs: 100, maxEntries: 10, clock: () => new Date(now) });
    const load = async () => ++loads;
    expect(await cache.get('alice', load)).toBe(1);
    now = 99;
    expect(await cache.get('alice', load)).toBe(1);
    now = 100;
    expect(await cache.get('alice', load)).toBe(2);
  });

  it('caches nothing with a time to live of zero', async () => {
    let loads = 0;
    const cache = expiringCache<string, number>({ ttlMs: 0, maxEntries: 10 });
    await cache.get('alice', async () => ++loads);
    expect(await cache.get('alice', async () => ++loads)).toBe(2);
  });

  it('does not cache a failed load', async () => {
    const cache = expiringCache<string, string>({ ttlMs: 1000, maxEntries: 10 });
    await expect(cache.get('alice', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('alice', async () => 'up')).toBe('up');
  });

  it('does not cache a value it is told not to keep', async () => {
    let loads = 0;
    const cache = expiringCache<string, number | null>({
      ttlMs: 1000,
      maxEntries: 10,
      keep: (v) => v !== null,
    });
    await cache.get('ghost', async () => {
      loads += 1;
      return null;
    });
    expect(await cache.get('ghost', async () => ++loads)).toBe(2);
  });

  it('loads again an entry whose load began before loadedFrom, tells each load when it began, and shares it', async () => {
    let now = 1000;
    const began: number[] = [];
    const cache = expiringCache<string, number>({
      ttlMs: 10_000,
      maxEntries: 10,
      clock: () => new Date(now),
    });
    const load = async (at: number) => began.push(at);
    expect(await cache.get('alice', load)).toBe(1);
    now = 1500;
    expect(await cache.get('alice', load, 1000)).toBe(1);
    const [one, two] = await Promise.all([cache.get('alice', load, 1001), cache.get('alice', load, 1001)]);
    expect([one, two]).toEqual([2, 2]);
    expect(await cache.get('alice', load)).toBe(2);
    expect(began).toEqual([1000, 1500]);
  });

  it('holds at most maxEntries keys, evicting the oldest', async () => {
    let loads = 0;
    const cache = expiringCache<string, number>({ ttlMs: 1000, maxEntries: 2 });
    const load = async () => ++loads;
    await cache.get('a', load);
    await cache.get('b', load);
    await cache.get('c', load);
    expect(await cache.get('b', load)).toBe(2);
    expect(await cache.get('a', load)).toBe(4);
  });
});
