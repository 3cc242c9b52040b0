/** An in-memory ThrottleStore for domain unit tests, with the conditions of the DynamoDB one. */
import { counterPeriod, type ThrottleCounter, type ThrottleStore } from '../../lib/throttle/throttle.ts';

export function memoryThrottleStore(): ThrottleStore & { readonly all: Map<string, ThrottleCounter> } {
  const all = new Map<string, ThrottleCounter>();
  /** The period each counter last counted in. */
  const periods = new Map<string, number>();
  /** The last attempt counted and the last released, per counter: a write sent twice applies once. */
  const attempts = new Map<string, { counted?: string; released?: string }>();
  return {
    all,
    async read(keys) {
      return new Map(
        keys.flatMap((key) => (all.has(key) ? [[key, all.get(key) as ThrottleCounter] as const] : [])),
      );
    },
    async reserve(key, { now, windowStart, limit, heldSince, attempt }) {
      const current = all.get(key);
      const ids = attempts.get(key) ?? {};
      if (current !== undefined && ids.counted === attempt) return { granted: true, record: current };
      // A write of an earlier period landing late counts in the newer one, as in DynamoDB.
      const period = Math.max(counterPeriod(now, windowStart), periods.get(key) ?? Number.NEGATIVE_INFINITY);
      // No attempt in this period or the one before: the count starts again (a lock runs on).
      const live = current !== undefined && (periods.get(key) ?? Number.NEGATIVE_INFINITY) >= period - 1;
      const allowed =
        (current?.lockedUntil ?? 0) <= now &&
        (!live || current.failures < limit || current.retryAfterLock || current.lastAttemptAt < heldSince);
      if (!allowed) return { granted: false, record: current as ThrottleCounter };
      const next = {
        failures: (live ? current.failures : 0) + 1,
        lastAttemptAt: now,
        lockedUntil: current?.lockedUntil ?? 0,
        retryAfterLock: false,
      };
      all.set(key, next);
      periods.set(key, period);
      attempts.set(key, { ...ids, counted: attempt });
      return { granted: true, record: next };
    },
    async release(key, attempt, period, restoreRetry) {
      const current = all.get(key);
      const ids = attempts.get(key) ?? {};
      if (
        current !== undefined &&
        periods.get(key) === period &&
        current.failures > 0 &&
        ids.released !== attempt
      ) {
        all.set(key, {
          ...current,
          failures: current.failures - 1,
          retryAfterLock: current.retryAfterLock || restoreRetry,
        });
        attempts.set(key, { ...ids, released: attempt });
      }
    },
    async lock(key, { lockedUntil }) {
      const current = all.get(key);
      if (current !== undefined && current.lockedUntil < lockedUntil)
        all.set(key, { ...current, lockedUntil, retryAfterLock: true });
    },
    async reset(key) {
      const current = all.get(key);
      if (current !== undefined)
        all.set(key, { ...current, failures: 0, lockedUntil: 0, retryAfterLock: false });
    },
    async clear(key) {
      all.delete(key);
      periods.delete(key);
      attempts.delete(key);
    },
  };
}
