/**
 * Failed-login counters and locks, per username and per source address; the rule is stated
 * once, in docs/behaviour.md "Brute force: the login throttle". Attempts count before the
 * password check, in one conditional write, so parallel guesses get no more tries. Here: the
 * throttle's types and port; counters.ts (keys, periods, locks), login-throttle.ts (the
 * throttle), begin.ts (counting an attempt), dynamodb.ts (the store).
 */
import { isAppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { MetricsRecorder } from '../metrics/metrics.ts';
import type { QuotaState } from '../quota.ts';
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
  /**
   * A name's known source's attempts being checked at once, right or wrong (counted per in-flight
   * slot, inflightSlot): what bounds its burst, where failures bound its guesses. Everyone else's
   * attempts in flight count against `limit` with the failures, as failures would.
   */
  readonly inflightLimit: number;
}

export interface ThrottleSettings {
  /** Per username and per client id, and a known source's own counter for either. */
  readonly username: ThrottlePolicy;
  /** Per source address: people's logins. */
  readonly sourceIp: ThrottlePolicy;
  /** Per source address: API clients' authentications, apart from people's. */
  readonly clientSourceIp: ThrottlePolicy;
  /** How long a source stays known for a name after a success from it; 0 turns known sources off. */
  readonly knownSourceSeconds: number;
}

/** A counter as stored. Times are epoch milliseconds. */
export interface ThrottleCounter {
  /** Failed attempts since the last success, in the counter's period (counted as they are decided). */
  readonly failures: number;
  /** Failures and attempts not yet decided together: what a source the name does not know is counted against. */
  readonly attempts: number;
  /** The last attempt started, failed or not. */
  readonly lastAttemptAt: number;
  /** 0 when never locked; a lock runs its course even on a counter that starts again. */
  readonly lockedUntil: number;
  /** A lock was set since the last attempt counted: one more attempt is allowed once it ends. */
  readonly retryAfterLock: boolean;
  /** A name's known sources: tag (knownSourceTag) to until when it is known. */
  readonly knownSources: ReadonlyMap<string, number>;
}

export interface Reserve {
  readonly now: number;
  /** `now` less the window: the window's length also sets the periods counts are kept in. */
  readonly windowStart: number;
  /** Failures and attempts in flight together at which the counter refuses. */
  readonly limit: number;
  /** The in-flight slot `now` is in (inflightSlot). */
  readonly slot: number;
  /**
   * Lets attempts run in parallel past `limit` while failures alone stay below it: at most
   * `inflightLimit` in flight in `slot`, and with `knownTag` only while the counter knows that
   * source. What keeps a fleet's right passwords from being refused, and a stranger's guesses at `limit`.
   */
  readonly burst?: { readonly inflightLimit: number; readonly knownTag?: string };
  /** A counter at its limit whose last attempt is older than this refuses no longer (a lock's write was lost). */
  readonly heldSince: number;
  /** Epoch seconds: the counter's TTL. */
  readonly expiresAt: number;
  /** The login attempt's id: a write sent again after its answer was lost counts it once. */
  readonly attempt: string;
}

/** How an attempt counted by `reserve` ended, in the period and slot it was counted in. */
export interface Settle {
  readonly attempt: string;
  readonly period: number;
  readonly slot: number;
  /** It failed: counted as a failure. Otherwise it is taken back. */
  readonly failed: boolean;
  /** It was the attempt a lock allows after it ends, and is taken back: that retry is handed back. */
  readonly restoreRetry: boolean;
  /**
   * A success on a name's counter, taken back like any attempt: its source remembered in the
   * same write. The name's failures stay, since nothing tells whose they were.
   */
  readonly known?: KnownSourceWrite & { readonly expiresAt: number };
}

/** A source remembered as known for a name, and the known sources it forgets (expired, or the oldest past the most kept). */
export interface KnownSourceWrite {
  readonly tag: string;
  /** Epoch ms. */
  readonly until: number;
  readonly forget: readonly string[];
}

export interface ThrottleStore {
  /** The counters under `keys` that exist (a consistent read). */
  read(keys: readonly string[]): Promise<ReadonlyMap<string, ThrottleCounter>>;
  /**
   * Counts one attempt in flight in one conditional write, whether the counter is new, counted
   * on or idle, if it is not locked at `now` and holds fewer than `limit` failures and attempts
   * in flight (or, with `burst`, fewer than `limit` failures and `inflightLimit` attempts in flight
   * in `slot`), or has served its last lock, or was last tried before `heldSince`; one with no
   * attempt in this period or the one before starts again.
   */
  reserve(key: string, reserve: Reserve): Promise<{ granted: boolean; record: ThrottleCounter }>;
  /**
   * Ends an attempt in flight: a failure is counted, anything else taken back (unless a success
   * set the counter back since, or an operator's unlock did), with `known` remembering its
   * source too; sent again after its answer was lost, it changes nothing more. The counter
   * after it, if it exists and changed.
   */
  settle(key: string, settle: Settle): Promise<ThrottleCounter | undefined>;
  /** Locks the counter until `lockedUntil`, unless it is locked longer already. */
  lock(key: string, lock: { lockedUntil: number; expiresAt: number }): Promise<void>;
  /**
   * A success on a known source's own counter, whose failures are all that source's: ends the
   * attempt in flight and sets an existing counter back to no failures from `period` on and no
   * lock, keeping its item; with `known`, remembers the source.
   */
  reset(
    key: string,
    reset: Omit<Settle, 'failed' | 'restoreRetry' | 'known'> & {
      expiresAt: number;
      known?: KnownSourceWrite;
    },
  ): Promise<void>;
  /** Remembers a known source on an existing name's counter, leaving its count and lock as they are. */
  remember(key: string, known: KnownSourceWrite & { expiresAt: number }): Promise<void>;
  /** Removes the counter (an operator's unlock of an address or a known source). */
  clear(key: string): Promise<void>;
  /** An operator's unlock of a name: its failures, attempts in flight and lock go, its known sources stay. */
  unlock(key: string): Promise<void>;
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

export type CounterKind = 'username' | 'known source' | 'source address';

/** One counter an attempt was counted on. */
export interface Counted {
  readonly key: string;
  readonly kind: CounterKind;
  readonly policy: ThrottlePolicy;
  /** Its failures when the attempt was counted. */
  readonly failures: number;
  /** The period and in-flight slot the attempt was counted in. */
  readonly period: number;
  readonly slot: number;
}

/** The counters an attempt was counted on, with their counts. */
export interface Reservation {
  /** The attempt's id, as the counters know it. */
  readonly attempt: string;
  readonly counted: readonly Counted[];
  /** An API client's authentication, not a person's login. */
  readonly client: boolean;
  /** The name refused, and the attempt counted on its known source's own counter instead. */
  readonly spared: boolean;
  /**
   * The name's counter, the source's tag for it and the name's known sources when counted: for
   * a success to remember, and to tell whether the name's quota may be told (absent: not kept).
   */
  readonly known?: {
    readonly nameKey: string;
    readonly tag: string;
    readonly sources: ReadonlyMap<string, number>;
  };
}

export interface LoginThrottle {
  /** Counts the attempt before the password is checked, or throws TOO_MANY_ATTEMPTS. */
  begin(attempt: LoginAttempt): Promise<Reservation>;
  /**
   * The attempt failed: counts it, locks a counter that has reached its limit; what is left of
   * the address's quota, and of the name's for a source the name knows.
   */
  failed(attempt: LoginAttempt, reason: FailureReason, reservation: Reservation): Promise<QuotaState[]>;
  /**
   * The attempt succeeded: takes it back from the name's counter and the address's, whose
   * failures stay (they may be anyone's), or resets its known source's own counter; remembers
   * the source. What is left of each quota, the name's too since the source is now known.
   */
  succeeded(reservation: Reservation): Promise<QuotaState[]>;
  /**
   * The attempt was never decided (a dependency failed before the password was checked): takes
   * it back from every counter, so an outage refuses no one afterwards. Never throws: an attempt
   * it cannot take back holds its in-flight slot until the slot passes.
   */
  undecided(reservation: Reservation): Promise<void>;
}

export interface LoginThrottleDeps {
  readonly store: ThrottleStore;
  readonly settings: ThrottleSettings;
  /** Keys the name counters and known sources (usernameCounterKey, knownSourceTag). */
  readonly counterSecret: Uint8Array;
  readonly clock?: Clock;
  readonly logger: Logger;
  /** Counts the locks started, the attempts a lock refused and the known-source attempts it spared. */
  readonly metrics: MetricsRecorder;
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
