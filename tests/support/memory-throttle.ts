/** An in-memory ThrottleStore for domain unit tests, with the conditions of the DynamoDB one. */

import { counterPeriod } from '../../lib/throttle/counters.ts';
import type { KnownSourceWrite, ThrottleCounter, ThrottleStore } from '../../lib/throttle/throttle.ts';

interface Entry {
  counter: ThrottleCounter;
  /** Failures and attempts in flight together. */
  attempts: number;
  /** The period the counter last counted in. */
  period: number;
  /** Attempts in flight per slot. */
  inflight: Map<number, number>;
  /** The last attempt counted and the last settled: a write sent twice applies once. */
  counted?: string;
  settled?: string;
}

const withKnown = (sources: ReadonlyMap<string, number>, known: KnownSourceWrite | undefined) => {
  if (known === undefined) return sources;
  const next = new Map(sources);
  for (const tag of known.forget) next.delete(tag);
  next.set(known.tag, known.until);
  return next;
};

export function memoryThrottleStore(): ThrottleStore & { readonly all: Map<string, ThrottleCounter> } {
  const entries = new Map<string, Entry>();
  /** The counters as stored, for tests to look at (and, rarely, to set). */
  const all = new Map<string, ThrottleCounter>();
  const save = (key: string, entry: Entry) => {
    const counter = { ...entry.counter, attempts: entry.attempts };
    entries.set(key, { ...entry, counter });
    all.set(key, counter);
  };
  const entryOf = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    const counter = all.get(key);
    if (counter === undefined) return undefined;
    // A test may have set a counter directly.
    return entry === undefined
      ? { counter, attempts: counter.attempts, period: Number.NEGATIVE_INFINITY, inflight: new Map() }
      : { ...entry, counter };
  };
  return {
    all,
    async read(keys) {
      return new Map(
        keys.flatMap((key) => (all.has(key) ? [[key, all.get(key) as ThrottleCounter] as const] : [])),
      );
    },
    async reserve(key, { now, windowStart, limit, slot, heldSince, attempt, burst }) {
      const current = entryOf(key);
      if (current !== undefined && current.counted === attempt)
        return { granted: true, record: current.counter };
      // A write of an earlier period landing late counts in the newer one, as in DynamoDB.
      const period = Math.max(counterPeriod(now, windowStart), current?.period ?? Number.NEGATIVE_INFINITY);
      // No attempt in this period or the one before: the failures start again (a lock runs on).
      const live = current !== undefined && current.period >= period - 1;
      const failures = live ? current.counter.failures : 0;
      const attempts = live ? current.attempts : 0;
      const inflight = current?.inflight.get(slot) ?? 0;
      const bursting =
        burst !== undefined &&
        failures < limit &&
        inflight < burst.inflightLimit &&
        (burst.knownTag === undefined || (current?.counter.knownSources.get(burst.knownTag) ?? 0) > now);
      const allowed =
        (current?.counter.lockedUntil ?? 0) <= now &&
        (attempts < limit ||
          bursting ||
          current?.counter.retryAfterLock === true ||
          (current?.counter.lastAttemptAt ?? 0) < heldSince);
      if (!allowed) return { granted: false, record: (current as Entry).counter };
      const counter: ThrottleCounter = {
        failures,
        attempts: attempts + 1,
        lastAttemptAt: now,
        lockedUntil: current?.counter.lockedUntil ?? 0,
        retryAfterLock: false,
        knownSources: current?.counter.knownSources ?? new Map(),
      };
      const slots = new Map(current?.inflight ?? []);
      slots.delete(slot - 2);
      slots.set(slot, inflight + 1);
      save(key, { ...current, counter, attempts: attempts + 1, period, inflight: slots, counted: attempt });
      return { granted: true, record: counter };
    },
    async settle(key, { attempt, slot, failed, restoreRetry, known }) {
      const current = entryOf(key);
      if (current === undefined || current.settled === attempt) return undefined;
      // Taken back only from a count a success (or an unlock) has not set back since; nothing of
      // the write is applied otherwise, its known source neither.
      if (!failed && current.attempts <= 0) return undefined;
      const counter = {
        ...current.counter,
        failures: current.counter.failures + (failed ? 1 : 0),
        retryAfterLock: current.counter.retryAfterLock || restoreRetry,
        knownSources: withKnown(current.counter.knownSources, known),
      };
      const slots = new Map(current.inflight);
      slots.set(slot, (slots.get(slot) ?? 0) - 1);
      save(key, {
        ...current,
        counter,
        attempts: current.attempts - (failed ? 0 : 1),
        inflight: slots,
        settled: attempt,
      });
      // The counter as saved, its attempts with it (as DynamoDB's ALL_NEW).
      return all.get(key);
    },
    async lock(key, { lockedUntil }) {
      const current = entryOf(key);
      if (current !== undefined && current.counter.lockedUntil < lockedUntil)
        save(key, { ...current, counter: { ...current.counter, lockedUntil, retryAfterLock: true } });
    },
    async reset(key, { attempt, slot, known }) {
      const current = entryOf(key);
      if (current === undefined || current.settled === attempt) return;
      const slots = new Map(current.inflight);
      slots.set(slot, (slots.get(slot) ?? 0) - 1);
      save(key, {
        ...current,
        counter: {
          ...current.counter,
          failures: 0,
          lockedUntil: 0,
          retryAfterLock: false,
          knownSources: withKnown(current.counter.knownSources, known),
        },
        attempts: 0,
        inflight: slots,
        settled: attempt,
      });
    },
    async remember(key, known) {
      const current = entryOf(key);
      if (current === undefined) return;
      save(key, {
        ...current,
        counter: { ...current.counter, knownSources: withKnown(current.counter.knownSources, known) },
      });
    },
    async clear(key) {
      all.delete(key);
      entries.delete(key);
    },
    async unlock(key) {
      const current = entryOf(key);
      if (current === undefined) return;
      save(key, {
        ...current,
        counter: { ...current.counter, failures: 0, lockedUntil: 0, retryAfterLock: false },
        attempts: 0,
        inflight: new Map(),
      });
    },
  };
}
