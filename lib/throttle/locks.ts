/**
 * A name's locks as operators and administrators see and end them (`user show`/`unlock`,
 * `client show`/`unlock`, the self-service API's unlock). A name's counter refuses every
 * source but the ones it knows; each known source has a counter of its own that refuses that
 * source alone (docs/behaviour.md, "Brute force: the login throttle"). The table holds no
 * address: a known source is named by its tag.
 */

import { knownSourceCounterKey, refusedUntil } from './counters.ts';
import type { ThrottleCounter, ThrottlePolicy, ThrottleStore } from './throttle.ts';

/** A name's counter and its known sources' counters, read at one moment. */
export interface NameLocks {
  readonly counter: ThrottleCounter | undefined;
  /** Epoch ms until which the name refuses every source it does not know; 0 for none. */
  readonly refusedUntil: number;
  /** Every tag the name's counter keeps, expired ones too: unlock clears their counters. */
  readonly tags: readonly string[];
  /** The known sources that are live (the ones the throttle spares). */
  readonly known: number;
  /** The live known sources whose own counter refuses them, and until when (epoch ms). */
  readonly lockedKnown: readonly { readonly tag: string; readonly until: number }[];
}

export interface LockRules {
  /** The rule of a name's counter, and of its known sources' counters. */
  readonly usernameThrottle: ThrottlePolicy;
  /** 0: known sources are off, and none is spared. */
  readonly knownSourceSeconds: number;
}

/** Reads the counter under `nameKey` and those of its live known sources. */
export async function readNameLocks(
  store: ThrottleStore,
  nameKey: string,
  rules: LockRules,
  now: Date,
): Promise<NameLocks> {
  const at = now.getTime();
  const policy = rules.usernameThrottle;
  const counter = (await store.read([nameKey])).get(nameKey);
  const sources = [...(counter?.knownSources ?? [])];
  const live =
    rules.knownSourceSeconds > 0 ? sources.filter(([, until]) => until > at).map(([tag]) => tag) : [];
  const own = await store.read(live.map((tag) => knownSourceCounterKey(nameKey, tag)));
  return {
    counter,
    refusedUntil: counter === undefined ? 0 : refusedUntil(counter, policy, at),
    tags: sources.map(([tag]) => tag),
    known: live.length,
    lockedKnown: live.flatMap((tag) => {
      const record = own.get(knownSourceCounterKey(nameKey, tag));
      const until = record === undefined ? 0 : refusedUntil(record, policy, at);
      return until > 0 ? [{ tag, until }] : [];
    }),
  };
}

/**
 * Ends both kinds of lock: the name's counter loses its failures, attempts in flight and lock
 * but keeps its known sources, and every known source's own counter goes. Run again, it
 * finishes what an interrupted run began.
 */
export async function unlockName(store: ThrottleStore, nameKey: string, locks: NameLocks): Promise<void> {
  await store.unlock(nameKey);
  await Promise.all(locks.tags.map((tag) => store.clear(knownSourceCounterKey(nameKey, tag))));
}
