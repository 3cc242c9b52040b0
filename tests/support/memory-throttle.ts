/** An in-memory ThrottleStore for domain unit tests, with the conditions of the DynamoDB one. */
import type { ThrottleCounter, ThrottleStore } from '../../lib/throttle/throttle.ts';

export function memoryThrottleStore(): ThrottleStore & { readonly all: Map<string, ThrottleCounter> } {
  const all = new Map<string, ThrottleCounter>();
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
      attempts.set(key, { ...ids, counted: attempt });
      if (current === undefined || current.lastAttemptAt < windowStart) {
        const fresh = { failures: 1, lastAttemptAt: now, lockedUntil: 0, lockedAt: 0 };
        all.set(key, fresh);
        return { granted: true, record: fresh };
      }
      const allowed =
        current.lockedUntil <= now &&
        (current.failures < limit ||
          current.failures === current.lockedAt ||
          current.lastAttemptAt < heldSince);
      if (!allowed) {
        attempts.set(key, ids);
        return { granted: false, record: current };
      }
      const next = { ...current, failures: current.failures + 1, lastAttemptAt: now };
      all.set(key, next);
      return { granted: true, record: next };
    },
    async release(key, attempt) {
      const current = all.get(key);
      const ids = attempts.get(key) ?? {};
      if (current !== undefined && current.failures > 0 && ids.released !== attempt) {
        all.set(key, { ...current, failures: current.failures - 1 });
        attempts.set(key, { ...ids, released: attempt });
      }
    },
    async lock(key, { lockedUntil, lockedAt }) {
      const current = all.get(key);
      if (current !== undefined && current.lockedUntil < lockedUntil)
        all.set(key, { ...current, lockedUntil, lockedAt });
    },
    async reset(key) {
      const current = all.get(key);
      if (current !== undefined) all.set(key, { ...current, failures: 0, lockedUntil: 0, lockedAt: 0 });
    },
    async clear(key) {
      all.delete(key);
      attempts.delete(key);
    },
  };
}
