/** An in-memory FailureStore for domain unit tests, with the window rule of the DynamoDB one. */
import type { FailureRecord, FailureStore } from '../../lib/auth/throttle.ts';

export function memoryFailures(): FailureStore & { readonly all: Map<string, FailureRecord> } {
  const all = new Map<string, FailureRecord>();
  return {
    all,
    async read(keys) {
      return new Map(
        keys.flatMap((key) => (all.has(key) ? [[key, all.get(key) as FailureRecord] as const] : [])),
      );
    },
    async recordFailure(key, now, windowStart) {
      const current = all.get(key);
      const next =
        current !== undefined && current.lastFailureAt >= windowStart
          ? { ...current, failures: current.failures + 1, lastFailureAt: now }
          : { failures: 1, lastFailureAt: now, lockedUntil: 0 };
      all.set(key, next);
      return next;
    },
    async lock(key, lockedUntil) {
      const current = all.get(key);
      if (current !== undefined) all.set(key, { ...current, lockedUntil });
    },
    async clear(key) {
      all.delete(key);
    },
  };
}
