/**
 * The throttle's DynamoDB requests made bare, for the floors of the login and the grant: the
 * same conditional writes on the same table, through the throttle's own store
 * (lib/throttle/dynamodb.ts), with none of its decisions around them. The emulator's cost of
 * their condition expressions is DynamoDB's work, not the function's.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ATTEMPT_MAX_SECONDS, counterPeriod } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { Reserve } from '../../lib/throttle/throttle.ts';

const WINDOW_MS = 86_400_000;
/** High enough that the floors' own counters never refuse. */
const NEVER = 1_000_000_000;
/** What a known source's entry holds: until when it is known (as a 30-day knownSourcePeriod). */
const KNOWN_MS = 30 * WINDOW_MS;

/** An attempt as the floors count it: its id and when it started (its period and in-flight slot). */
export interface BareAttempt {
  readonly id: string;
  readonly at: number;
}

export function bareCounters(client: DynamoDBDocumentClient, tableName: string) {
  const store = createDynamoThrottleStore({ client, tableName });
  const expiresAt = (at: number) => Math.ceil((at + KNOWN_MS) / 1000);
  const counted = ({ id, at }: BareAttempt) => ({
    attempt: id,
    period: counterPeriod(at, at - WINDOW_MS),
    slot: Math.floor(at / (ATTEMPT_MAX_SECONDS * 1000)),
  });
  const known = (tag: string, at: number) => ({ tag, until: at + KNOWN_MS, forget: [] });
  /**
   * Counts the attempt in flight: one conditional UpdateItem, and a GetItem when it is refused.
   * `burst` as lib/throttle/throttle.ts passes it: a name's with the source's tag, a known
   * source's own without, an address's none.
   */
  const reserve = (key: string, attempt: BareAttempt, burst?: Reserve['burst']) =>
    store.reserve(key, {
      now: attempt.at,
      windowStart: attempt.at - WINDOW_MS,
      limit: NEVER,
      ...(burst !== undefined && { burst }),
      slot: counted(attempt).slot,
      heldSince: attempt.at - ATTEMPT_MAX_SECONDS * 1000,
      expiresAt: expiresAt(attempt.at),
      attempt: attempt.id,
    });
  return {
    /** A name's counter, the source's `tag` beside it. */
    reserveName: (key: string, attempt: BareAttempt, tag: string) =>
      reserve(key, attempt, { inflightLimit: NEVER, knownTag: tag }),
    /** An address's counter. */
    reserveAddress: (key: string, attempt: BareAttempt) => reserve(key, attempt),
    /** A success on a name's counter: one UpdateItem, remembering the source `tag` as a success does. */
    reset: (key: string, attempt: BareAttempt, tag?: string) =>
      store.reset(key, {
        ...counted(attempt),
        expiresAt: expiresAt(attempt.at),
        ...(tag !== undefined && { known: known(tag, attempt.at) }),
      }),
    /** A success on an address's counter: the attempt taken back, one UpdateItem. */
    release: (key: string, attempt: BareAttempt) =>
      store.settle(key, { ...counted(attempt), failed: false, restoreRetry: false }),
    /**
     * The known-source path's count, made bare: the name's write refused and its refusal read,
     * then the source's own counter's write (lib/throttle/throttle.ts, begin).
     */
    async reserveKnownSource(nameKey: string, ownKey: string, attempt: BareAttempt, tag: string) {
      const name = await reserve(nameKey, attempt, { inflightLimit: NEVER, knownTag: tag });
      if (name.granted) throw new Error(`${nameKey} is not locked`);
      if (!(await reserve(ownKey, attempt, { inflightLimit: NEVER })).granted)
        throw new Error(`${ownKey} refused`);
    },
    /** Its success: the source's own counter reset, beside the source remembered on the name's. */
    async succeedKnownSource(nameKey: string, ownKey: string, attempt: BareAttempt, tag: string) {
      await Promise.all([
        store.reset(ownKey, { ...counted(attempt), expiresAt: expiresAt(attempt.at) }),
        store.remember(nameKey, { ...known(tag, attempt.at), expiresAt: expiresAt(attempt.at) }),
      ]);
    },
    /** A counter that refuses every attempt for the next hour, as a name strangers locked. */
    async locked(key: string): Promise<string> {
      const at = Date.now();
      await reserve(key, { id: randomUUID(), at });
      await store.lock(key, { lockedUntil: at + 3_600_000, expiresAt: expiresAt(at) });
      return key;
    },
  };
}
