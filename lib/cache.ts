/** Rarely changing values reused for a stage-set time: no I/O on the hot path, and changes land within it. */
import { type Clock, systemClock } from './time.ts';

// A failed reload keeps serving the value (key material valid a moment ago beats answering nothing),
// unlike Powertools Parameters' maxAge, which throws on every call until SSM answers; it is tried
// again after RETRY_MS, and `loadedAt` stays the last success, so nobody takes a stale value for fresh.
export interface Reloading<T> {
  (): Promise<T>;
  /** When the value was last loaded: a failed reload does not move it. */
  loadedAt(): number;
}

/** How soon a failed reload is tried again (or maxAgeMs, if shorter). */
export const RETRY_MS = 5000;

export async function reloading<T>(
  load: () => Promise<T>,
  options: { readonly maxAgeMs: number; readonly clock?: Clock; readonly onError: (error: unknown) => void },
): Promise<Reloading<T>> {
  const clock = options.clock ?? systemClock;
  const now = () => clock().getTime();
  let value = await load();
  let loadedAt = now();
  let nextAttemptAt = loadedAt + options.maxAgeMs;
  let pending: Promise<void> | undefined;
  const reload = async () => {
    try {
      value = await load();
      loadedAt = now();
      nextAttemptAt = loadedAt + options.maxAgeMs;
    } catch (error) {
      options.onError(error);
      nextAttemptAt = now() + Math.min(options.maxAgeMs, RETRY_MS);
    } finally {
      pending = undefined;
    }
  };
  const get = async () => {
    if (now() >= nextAttemptAt) {
      pending ??= reload();
      await pending;
    }
    return value;
  };
  return Object.assign(get, { loadedAt: () => loadedAt });
}

// `ttlMs` 0 disables it; the oldest entry goes first. Concurrent misses share one load; a failed load
// is not cached, nor a value `keep` refuses. `load` is told when it began (epoch ms); `loadedFrom`:
// an entry whose load began earlier is loaded again, and concurrent callers asking so share that load.
export function expiringCache<K, V>(options: {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly clock?: Clock;
  readonly keep?: (value: V) => boolean;
}): { get(key: K, load: (at: number) => Promise<V>, loadedFrom?: number): Promise<V> } {
  const clock = options.clock ?? systemClock;
  const now = () => clock().getTime();
  const entries = new Map<K, { value: Promise<V>; at: number }>();
  return {
    get(key, load, loadedFrom = Number.NEGATIVE_INFINITY) {
      const entry = entries.get(key);
      if (entry !== undefined && now() - entry.at < options.ttlMs && entry.at >= loadedFrom)
        return entry.value;
      entries.delete(key);
      const at = now();
      const value = load(at);
      if (options.ttlMs <= 0) return value;
      if (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
      entries.set(key, { value, at });
      const forget = () => {
        if (entries.get(key)?.value === value) entries.delete(key);
      };
      value.then((loaded) => {
        if (options.keep !== undefined && !options.keep(loaded)) forget();
      }, forget);
      return value;
    },
  };
}
