/**
 * Failed-login counters and locks, per username and per source address; the rule is stated
 * once, in docs/behaviour.md "Brute force: the login throttle". Attempts count before the
 * password check, in one conditional write, so parallel guesses get no more tries.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { foldUsername } from '../accounts/repository.ts';
import { AppError, isAppError } from '../errors.ts';
import { describeError, type Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { Clock } from '../time.ts';

/** One failed-login counter's rule. */
export interface ThrottlePolicy {
  /** Failures before the first lock; 0 turns this counter off. */
  readonly limit: number;
  /**
   * The length of a counter's periods (counted from the epoch): a counter with no attempt in
   * the current period or the one before starts again from zero.
   */
  readonly windowSeconds: number;
  /** The first lock; each further failure doubles it. */
  readonly baseLockSeconds: number;
  readonly maxLockSeconds: number;
}

export interface ThrottleSettings {
  readonly username: ThrottlePolicy;
  readonly sourceIp: ThrottlePolicy;
}

/** A counter as stored. Times are epoch milliseconds. */
export interface ThrottleCounter {
  /** Attempts since the last success, as of the last attempt: failures, and attempts still being checked. */
  readonly failures: number;
  /** The last attempt, failed or not (a success also sets it before it releases its count). */
  readonly lastAttemptAt: number;
  /** 0 when never locked; a lock runs its course even on a counter that starts again. */
  readonly lockedUntil: number;
  /** A lock was set since the last attempt counted: one more attempt is allowed once it ends. */
  readonly retryAfterLock: boolean;
}

export interface Reserve {
  readonly now: number;
  /** `now` less the window: the window's length also sets the periods counts are kept in. */
  readonly windowStart: number;
  readonly limit: number;
  /** Attempts counted before this and still unsettled are given up on: they hold no longer. */
  readonly heldSince: number;
  /** Epoch seconds: the counter's TTL. */
  readonly expiresAt: number;
  /** The login attempt's id: a write sent again after its answer was lost counts it once. */
  readonly attempt: string;
}

export interface ThrottleStore {
  /** The counters under `keys` that exist (a consistent read). */
  read(keys: readonly string[]): Promise<ReadonlyMap<string, ThrottleCounter>>;
  /**
   * Counts one attempt in one conditional write, whether the counter is new, counted on or
   * idle, if it is not locked at `now` and holds fewer than `limit` attempts, or has served
   * its last lock, or was last tried before `heldSince`; one with no attempt in this period
   * or the one before starts again.
   */
  reserve(key: string, reserve: Reserve): Promise<{ granted: boolean; record: ThrottleCounter }>;
  /**
   * Takes back the `attempt` counted in `period` (counterPeriod), unless a later period's
   * attempt has moved the count on; sent again after its answer was lost, it takes back
   * nothing more. `restoreRetry`: the attempt was the one a lock allows after it ends, which a
   * give-back hands back.
   */
  release(key: string, attempt: string, period: number, restoreRetry: boolean): Promise<void>;
  /** Locks the counter until `lockedUntil`, unless it is locked longer already. */
  lock(key: string, lock: { lockedUntil: number; expiresAt: number }): Promise<void>;
  /** Sets an existing counter back to zero attempts from `period` on, and no lock (a success); keeps its item. */
  reset(key: string, period: number): Promise<void>;
  /** Removes the counter (an operator's unlock). */
  clear(key: string): Promise<void>;
}

/** Who is trying to log in. */
export interface LoginAttempt {
  /** The username, or with `client` the client id of a client credentials grant. */
  readonly username: string;
  readonly sourceIp: string;
  /** An API client authenticating: counted by its client id, apart from every username. */
  readonly client?: boolean;
}

/** Why a login or a client authentication failed: for the log only, never for the client. */
export type FailureReason =
  | 'unknown user'
  | 'bad password'
  | 'disabled'
  | 'unknown client'
  | 'bad secret'
  | 'disabled client';

/** The counters an attempt was counted on, with their counts. */
export interface Reservation {
  /** The attempt's id, as the counters know it. */
  readonly attempt: string;
  readonly counted: readonly {
    readonly key: string;
    readonly kind: CounterKind;
    readonly failures: number;
    /** The period the attempt was counted in (counterPeriod). */
    readonly period: number;
  }[];
}

type CounterKind = 'username' | 'source address';

export interface LoginThrottle {
  /** Counts the attempt before the password is checked, or throws TOO_MANY_ATTEMPTS. */
  begin(attempt: LoginAttempt): Promise<Reservation>;
  /** The attempt failed: locks a counter that has reached its limit. */
  failed(attempt: LoginAttempt, reason: FailureReason, reservation: Reservation): Promise<void>;
  /** The attempt succeeded: resets the username's counter, takes the attempt back from the address's. */
  succeeded(reservation: Reservation): Promise<void>;
  /**
   * The attempt was never decided (a dependency failed before the password was checked): takes
   * it back from every counter, so an outage refuses no one afterwards. Never throws: an attempt
   * it cannot take back holds as one whose function died does, `holdSeconds` at most.
   */
  undecided(reservation: Reservation): Promise<void>;
}

/**
 * A username's counter key: an HMAC, under a secret not in the table, so a password typed
 * into the username field cannot be found from the table alone by hashing guesses.
 */
export const usernameCounterKey = (username: string, secret: Uint8Array) =>
  `USER#${createHmac('sha256', secret).update(foldUsername(username)).digest('base64url')}`;

/** An API client's counter key: keyed like a username's, in a space of its own. */
export const clientCounterKey = (clientId: string, secret: Uint8Array) =>
  `CLIENT#${createHmac('sha256', secret).update(clientId).digest('base64url')}`;

/** An address's counter key: an IPv6 client by its /64, or one subscriber would hold 2^64 counters. */
export function sourceIpCounterKey(sourceIp: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(sourceIp)?.[1];
  if (mapped !== undefined) return `IP#${mapped}`;
  if (isIPv6(sourceIp)) return `IP#${ipv6Groups(sourceIp).slice(0, 4).join(':')}::/64`;
  return `IP#${sourceIp}`;
}

/** The eight groups of an IPv6 address, each as four lower-case hex digits. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => group.padStart(4, '0'));
}

/** The period (`now - windowStart` long, counted from the epoch) a counter counts `now` in. */
export const counterPeriod = (now: number, windowStart: number) =>
  Math.floor(now / Math.max(1, now - windowStart));

/** The longest an attempt can run: API Gateway ends every integration within 29 seconds. */
export const ATTEMPT_MAX_SECONDS = 30;

/** How long unsettled attempts at the limit hold a counter: never longer than the shortest lock. */
export const holdSeconds = (policy: ThrottlePolicy) => Math.min(ATTEMPT_MAX_SECONDS, policy.baseLockSeconds);

/**
 * Until when (epoch ms) a counter refuses attempts: its lock or its hold, 0 for none. What
 * operators see as "locked" is exactly what refuses a login.
 */
export function refusedUntil(counter: ThrottleCounter, policy: ThrottlePolicy, now: number): number {
  if (policy.limit === 0) return 0;
  const held =
    counter.failures >= policy.limit && !counter.retryAfterLock
      ? counter.lastAttemptAt + holdSeconds(policy) * 1000
      : 0;
  const until = Math.max(counter.lockedUntil, held);
  return until > now ? until : 0;
}

/** The lock after `failures` failures under `policy`, in seconds (0 below the limit). */
export function lockSeconds(policy: ThrottlePolicy, failures: number): number {
  if (policy.limit === 0 || failures < policy.limit) return 0;
  const doublings = Math.min(failures - policy.limit, 30);
  return Math.min(policy.baseLockSeconds * 2 ** doublings, policy.maxLockSeconds);
}

export interface LoginThrottleDeps {
  readonly store: ThrottleStore;
  readonly settings: ThrottleSettings;
  /** Keys the username counters (usernameCounterKey). */
  readonly counterSecret: Uint8Array;
  readonly clock?: Clock;
  readonly logger: Logger;
  /** Counts the locks started, by counter. */
  readonly metrics: MetricsRecorder;
}

export function createLoginThrottle(deps: LoginThrottleDeps): LoginThrottle {
  const { store, settings, logger } = deps;
  const { metrics } = deps;
  const now = () => (deps.clock ?? (() => new Date()))().getTime();
  const policyOf = (kind: CounterKind) => (kind === 'username' ? settings.username : settings.sourceIp);
  const expiresAt = (policy: ThrottlePolicy, at: number) =>
    Math.ceil((at + (policy.windowSeconds + policy.maxLockSeconds) * 1000) / 1000);
  const counters = (attempt: LoginAttempt) =>
    [
      {
        key:
          attempt.client === true
            ? clientCounterKey(attempt.username, deps.counterSecret)
            : usernameCounterKey(attempt.username, deps.counterSecret),
        kind: 'username' as const,
      },
      // API Gateway always knows the address; without one there is nothing to count by.
      ...(attempt.sourceIp === ''
        ? []
        : [{ key: sourceIpCounterKey(attempt.sourceIp), kind: 'source address' as const }]),
    ].filter(({ kind }) => policyOf(kind).limit > 0);

  /** Takes the attempt back from `counted`; what fails stays counted, and is logged. */
  /** Counted at or past the limit: it was the retry a lock allows after it ends (or a stale hold's). */
  const retried = (kind: CounterKind, failures: number) => failures > policyOf(kind).limit;
  const giveBack = async (
    counted: readonly { key: string; kind: CounterKind; period: number; failures: number }[],
    id: string,
  ) => {
    const released = await Promise.allSettled(
      counted.map(({ key, kind, period, failures }) =>
        store.release(key, id, period, retried(kind, failures)),
      ),
    );
    for (const result of released) {
      if (result.status === 'rejected') {
        logger.warn('login attempt not given back', { error: describeError(result.reason) });
      }
    }
  };

  return {
    async begin(attempt) {
      const at = now();
      const id = randomUUID();
      const settled = await Promise.allSettled(
        counters(attempt).map(async ({ key, kind }) => {
          const policy = policyOf(kind);
          const windowStart = at - policy.windowSeconds * 1000;
          const period = counterPeriod(at, windowStart);
          const { granted, record } = await store.reserve(key, {
            now: at,
            windowStart,
            limit: policy.limit,
            heldSince: at - holdSeconds(policy) * 1000,
            expiresAt: expiresAt(policy, at),
            attempt: id,
          });
          return { key, kind, period, granted, record, policy };
        }),
      );
      const results = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const failed = settled.find((result) => result.status === 'rejected');
      if (failed !== undefined) {
        // Undecided (a counter's write failed): take the attempt back where it was counted.
        await giveBack(
          results
            .filter(({ granted }) => granted)
            .map(({ record, ...rest }) => ({ ...rest, failures: record.failures })),
          id,
        );
        throw failed.reason;
      }
      const refused = results.filter(({ granted }) => !granted);
      if (refused.length === 0) {
        return {
          attempt: id,
          counted: results.map(({ key, kind, period, record }) => ({
            key,
            kind,
            period,
            failures: record.failures,
          })),
        };
      }
      // Not trying after all: take the attempt back where it was counted.
      await Promise.all(
        results
          .filter(({ granted }) => granted)
          .map(({ key, kind, period, record }) =>
            store.release(key, id, period, retried(kind, record.failures)),
          ),
      );
      const waits = refused.map(({ record, policy }) =>
        Math.ceil((refusedUntil(record, policy, at) - at) / 1000),
      );
      throw new AppError('TOO_MANY_ATTEMPTS', { retryAfterSeconds: Math.max(1, ...waits) });
    },

    async failed(attempt, reason, reservation) {
      const at = now();
      await Promise.all(
        reservation.counted.map(async ({ key, kind, failures }) => {
          const policy = policyOf(kind);
          const seconds = lockSeconds(policy, failures);
          if (seconds === 0) return;
          await store.lock(key, { lockedUntil: at + seconds * 1000, expiresAt: expiresAt(policy, at) });
          logger.warn('lockout started', {
            counter: kind === 'username' && attempt.client === true ? 'client' : kind,
            failures,
            lockSeconds: seconds,
            reason,
            ...(kind === 'source address' && { sourceIp: attempt.sourceIp }),
          });
          metrics.count({
            name: 'LockoutStarted',
            counter:
              kind === 'source address' ? 'SourceAddress' : attempt.client === true ? 'Client' : 'Username',
          });
        }),
      );
    },

    async succeeded(reservation) {
      await Promise.all(
        // Reset, not deleted: the login role may not delete a counter (only `user unlock` does).
        reservation.counted.map(({ key, kind, period }) =>
          kind === 'username'
            ? store.reset(key, period)
            : store.release(key, reservation.attempt, period, false),
        ),
      );
    },

    async undecided(reservation) {
      await giveBack(reservation.counted, reservation.attempt);
    },
  };
}

/**
 * Counts `attempt` alongside `read` of what it is checked against, so the count adds no
 * latency. `onLocked` reports a refused attempt; a failed read gives the attempt back, since
 * nothing was checked (docs/behaviour.md, "Brute force: the login throttle").
 */
export async function beginAlongside<T>(
  throttle: LoginThrottle,
  attempt: LoginAttempt,
  read: () => Promise<T>,
  onLocked: () => void,
): Promise<{ reservation: Reservation; found: T }> {
  const [begun, found] = await Promise.allSettled([
    throttle.begin(attempt).catch((error: unknown) => {
      if (isAppError(error) && error.code === 'TOO_MANY_ATTEMPTS') onLocked();
      throw error;
    }),
    read(),
  ]);
  if (begun.status === 'rejected') throw begun.reason;
  if (found.status === 'rejected') {
    await throttle.undecided(begun.value);
    throw found.reason;
  }
  return { reservation: begun.value, found: found.value };
}
