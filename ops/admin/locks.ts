/**
 * A name's locks as operators see them (`user show`/`unlock`, `client show`/`unlock`); reading
 * and ending them is lib/throttle/locks.ts's.
 */
import type { NameLocks } from '../../lib/throttle/locks.ts';

/** The characters of a tag operators see: enough to tell one name's known sources apart. */
const TAG_SHOWN = 8;

/** An epoch-milliseconds time as ISO 8601; null for 0, the store's "never". */
const isoTime = (epochMs: number) => (epochMs > 0 ? new Date(epochMs).toISOString() : null);

const shownTag = (tag: string) => tag.slice(0, TAG_SHOWN);

/**
 * The failed-login counters of a name as `show` prints them: zeros and nulls when there is none.
 * `lockedUntil` is null unless the name refuses unknown sources now (a lock, or failures at the
 * limit still holding it); `knownSourcesLocked` lists the known sources refused on their own. The
 * count is as stored: the throttle starts it again from one at the first failure after its window.
 */
export const failedLogins = (locks: NameLocks) => ({
  failures: locks.counter?.failures ?? 0,
  lastAttemptAt: isoTime(locks.counter?.lastAttemptAt ?? 0),
  lockedUntil: isoTime(locks.refusedUntil),
  knownSources: locks.known,
  knownSourcesLocked: locks.lockedKnown.map(({ tag, until }) => ({
    source: shownTag(tag),
    lockedUntil: isoTime(until),
  })),
});

/** What `unlock` says it did: `what` (`the failed logins of user "alice"`) cleared, and each lock it ended. */
export function unlockedLines(what: string, locks: NameLocks): string[] {
  const kept =
    locks.known === 0
      ? ' (no known sources)'
      : ` and of each of its known sources (${locks.known}, kept as known)`;
  const ended = [
    ...(locks.refusedUntil > 0
      ? [`ended its lock for unknown sources (until ${isoTime(locks.refusedUntil)})`]
      : []),
    ...locks.lockedKnown.map(
      ({ tag, until }) => `ended the lock of known source ${shownTag(tag)} (until ${isoTime(until)})`,
    ),
  ];
  return [`cleared ${what}${kept}`, ...(ended.length === 0 ? ['no lock was running'] : ended)];
}
