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
import type { QuotaPolicy, QuotaState } from '../quota.ts';
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

type CounterKind = 'username' | 'known source' | 'source address';

/** One counter an attempt was counted on. */
interface Counted {
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

/**
 * A username's counter key: an HMAC, under a secret not in the table, so a password typed
 * into the username field cannot be found from the table alone by hashing guesses.
 */
export const usernameCounterKey = (username: string, secret: Uint8Array) =>
  `USER#${createHmac('sha256', secret).update(foldUsername(username)).digest('base64url')}`;

/** An API client's counter key: keyed like a username's, in a space of its own. */
export const clientCounterKey = (clientId: string, secret: Uint8Array) =>
  `CLIENT#${createHmac('sha256', secret).update(clientId).digest('base64url')}`;

/** An address as counted: an IPv6 client by its /64, or one subscriber would hold 2^64 counters. */
export function sourceAddress(sourceIp: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(sourceIp)?.[1];
  if (mapped !== undefined) return mapped;
  if (isIPv6(sourceIp)) return `${ipv6Groups(sourceIp).slice(0, 4).join(':')}::/64`;
  return sourceIp;
}

/** People's counter of an address. */
export const sourceIpCounterKey = (sourceIp: string) => `IP#${sourceAddress(sourceIp)}`;

/** API clients' counter of an address, apart from people's. */
export const clientSourceIpCounterKey = (sourceIp: string) => `CLIENTIP#${sourceAddress(sourceIp)}`;

/**
 * A source's tag for one name's counter: keyed by the counter secret and the name, so the table
 * holds no address, and one source's tags for two names cannot be matched.
 */
export const knownSourceTag = (nameKey: string, sourceIp: string, secret: Uint8Array) =>
  createHmac('sha256', secret)
    .update(`${nameKey}\n${sourceAddress(sourceIp)}`)
    .digest('base64url')
    .slice(0, 22);

/** A known source's own counter for a name: its failures lock it alone. */
export const knownSourceCounterKey = (nameKey: string, tag: string) => `${nameKey}#${tag}`;

/** The most known sources a name keeps: past it, the one known the longest ago is forgotten first. */
export const MAX_KNOWN_SOURCES = 100;

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
  // At the limit with failures, or with attempts not decided yet (in flight, or cut short by a
  // fault): held for as long as an attempt can run after the last one started.
  const held =
    Math.max(counter.failures, counter.attempts) >= policy.limit && !counter.retryAfterLock
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

/** The in-flight slot `now` is in: attempts are bounded per slot, each as long as an attempt's hold. */
export const inflightSlot = (now: number, policy: ThrottlePolicy) =>
  Math.floor(now / (holdSeconds(policy) * 1000));

/** The limits a login (or, with `client`, a client authentication) is counted against, as published. */
export function quotaPolicies(settings: ThrottleSettings, client: boolean): QuotaPolicy[] {
  const address = client ? settings.clientSourceIp : settings.sourceIp;
  return [
    { name: client ? 'client' : 'username', policy: settings.username },
    { name: 'address', policy: address },
  ]
    .filter(({ policy }) => policy.limit > 0)
    .map(({ name, policy }) => ({ name, quota: policy.limit, windowSeconds: policy.windowSeconds }));
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

type LockCounter = 'Username' | 'Client' | 'KnownSource' | 'SourceAddress' | 'ClientSourceAddress';

export function createLoginThrottle(deps: LoginThrottleDeps): LoginThrottle {
  const { store, settings, logger, metrics } = deps;
  const now = () => (deps.clock ?? (() => new Date()))().getTime();
  const knownSourceMs = settings.knownSourceSeconds * 1000;
  const addressPolicy = (attempt: LoginAttempt) =>
    attempt.client === true ? settings.clientSourceIp : settings.sourceIp;
  /** A name's counter keeps its known sources as long as they are known. */
  const expiresAt = (kind: CounterKind, policy: ThrottlePolicy, at: number) =>
    Math.ceil(
      (at +
        Math.max(
          (policy.windowSeconds + policy.maxLockSeconds) * 1000,
          kind === 'username' ? knownSourceMs : 0,
        )) /
        1000,
    );
  const metricCounter = (kind: CounterKind, client: boolean): LockCounter =>
    kind === 'known source'
      ? 'KnownSource'
      : kind === 'username'
        ? client
          ? 'Client'
          : 'Username'
        : client
          ? 'ClientSourceAddress'
          : 'SourceAddress';
  const quotaName = (kind: CounterKind, client: boolean) =>
    kind === 'source address' ? 'address' : client ? 'client' : 'username';

  /** What is left of a counter's quota at `at`. */
  const quota = (
    counted: Pick<Counted, 'kind' | 'policy' | 'period'>,
    client: boolean,
    state: { failures: number; until: number },
    at: number,
  ): QuotaState => {
    const { policy } = counted;
    const remaining = state.until > at ? 0 : Math.max(0, policy.limit - state.failures);
    // Failures are carried into the next period and gone after it, unless another is counted.
    const whole = (counted.period + 2) * policy.windowSeconds * 1000;
    const reset = state.until > at ? state.until : state.failures > 0 ? whole : at;
    return {
      policy: quotaName(counted.kind, client),
      remaining,
      resetSeconds: Math.max(0, Math.ceil((reset - at) / 1000)),
    };
  };

  const reserveOn = async (
    key: string,
    kind: CounterKind,
    policy: ThrottlePolicy,
    at: number,
    id: string,
    burst?: Reserve['burst'],
  ) => {
    const windowStart = at - policy.windowSeconds * 1000;
    const slot = inflightSlot(at, policy);
    const { granted, record } = await store.reserve(key, {
      now: at,
      windowStart,
      limit: policy.limit,
      ...(burst !== undefined && { burst }),
      slot,
      heldSince: at - holdSeconds(policy) * 1000,
      expiresAt: expiresAt(kind, policy, at),
      attempt: id,
    });
    return { key, kind, policy, period: counterPeriod(at, windowStart), slot, granted, record };
  };
  type Reserved = Awaited<ReturnType<typeof reserveOn>>;
  const countedOf = ({ granted: _granted, record, ...rest }: Reserved): Counted => ({
    ...rest,
    failures: record.failures,
  });

  /** Counted at or past the limit: it was the retry a lock allows after it ends (or a stale hold's). */
  const retried = ({ policy, failures }: Counted) => failures >= policy.limit;
  /** Takes the attempt back from `counted`; what fails stays in flight until its slot passes, and is logged. */
  const giveBack = async (counted: readonly Counted[], id: string) => {
    const released = await Promise.allSettled(
      counted.map((entry) =>
        store.settle(entry.key, {
          attempt: id,
          period: entry.period,
          slot: entry.slot,
          failed: false,
          restoreRetry: retried(entry),
        }),
      ),
    );
    for (const result of released) {
      if (result.status === 'rejected') {
        logger.warn('login attempt not given back', { error: describeError(result.reason) });
      }
    }
  };

  /** The known-source write of a success: this source, the expired ones forgotten, and the oldest past the most kept. */
  const knownWrite = (known: NonNullable<Reservation['known']>, at: number): KnownSourceWrite => {
    const live = [...known.sources].filter(([tag, until]) => tag !== known.tag && until > at);
    const expired = [...known.sources].filter(([tag, until]) => tag !== known.tag && until <= at);
    const overflow = live
      .sort(([, a], [, b]) => a - b)
      .slice(0, Math.max(0, live.length + 1 - MAX_KNOWN_SOURCES));
    return {
      tag: known.tag,
      until: at + knownSourceMs,
      forget: [...expired, ...overflow].map(([tag]) => tag),
    };
  };

  /**
   * Whether `reservation`'s source is known to its name at `at`. Only such a source is told what
   * is left of the name's quota: to anyone else the count would tell a name in use from a
   * made-up one, by the failures of its owner.
   */
  const knowsSource = ({ known }: Reservation, at: number) =>
    known !== undefined && (known.sources.get(known.tag) ?? 0) > at;

  return {
    async begin(attempt) {
      const at = now();
      const id = randomUUID();
      const client = attempt.client === true;
      const nameKey = client
        ? clientCounterKey(attempt.username, deps.counterSecret)
        : usernameCounterKey(attempt.username, deps.counterSecret);
      const tag =
        knownSourceMs > 0 && attempt.sourceIp !== '' && settings.username.limit > 0
          ? knownSourceTag(nameKey, attempt.sourceIp, deps.counterSecret)
          : undefined;
      const targets = [
        {
          key: nameKey,
          kind: 'username' as const,
          policy: settings.username,
          // A source the name knows may run attempts in parallel (a fleet starting together).
          burst:
            tag === undefined ? undefined : { inflightLimit: settings.username.inflightLimit, knownTag: tag },
        },
        // API Gateway always knows the address; without one there is nothing to count by.
        ...(attempt.sourceIp === ''
          ? []
          : [
              {
                key: client
                  ? clientSourceIpCounterKey(attempt.sourceIp)
                  : sourceIpCounterKey(attempt.sourceIp),
                kind: 'source address' as const,
                policy: addressPolicy(attempt),
                burst: undefined,
              },
            ]),
      ].filter(({ policy }) => policy.limit > 0);
      const settled = await Promise.allSettled(
        targets.map(({ key, kind, policy, burst }) => reserveOn(key, kind, policy, at, id, burst)),
      );
      let results = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const failed = settled.find((result) => result.status === 'rejected');
      const undo = async (reason: unknown): Promise<never> => {
        // Undecided (a counter's write failed): take the attempt back where it was counted.
        await giveBack(results.filter(({ granted }) => granted).map(countedOf), id);
        throw reason;
      };
      if (failed !== undefined) return undo(failed.reason);
      const name = results.find(({ kind }) => kind === 'username');
      let spared = false;
      // The name is locked (or held by failures): a source it knows is counted on its own
      // counter instead (the read of the known sources came with the refusal). Not when only
      // attempts in flight refused: the source would get a second in-flight allowance.
      if (
        name !== undefined &&
        !name.granted &&
        tag !== undefined &&
        (name.record.knownSources.get(tag) ?? 0) > at &&
        // Locked, or held by failures: not attempts in flight.
        refusedUntil({ ...name.record, attempts: 0 }, settings.username, at) > 0
      ) {
        let own: Reserved;
        try {
          own = await reserveOn(
            knownSourceCounterKey(nameKey, tag),
            'known source',
            settings.username,
            at,
            id,
            {
              inflightLimit: settings.username.inflightLimit,
            },
          );
        } catch (error) {
          return undo(error);
        }
        results = [own, ...results.filter((result) => result !== name)];
        spared = own.granted;
      }
      const refused = results.filter(({ granted }) => !granted);
      if (refused.length === 0) {
        return {
          attempt: id,
          counted: results.map(countedOf),
          client,
          spared,
          ...(tag !== undefined &&
            name !== undefined && {
              known: { nameKey, tag, sources: name.record.knownSources },
            }),
        };
      }
      // Not trying after all: take the attempt back where it was counted.
      await Promise.all(
        results
          .filter(({ granted }) => granted)
          .map(countedOf)
          .map((entry) =>
            store.settle(entry.key, {
              attempt: id,
              period: entry.period,
              slot: entry.slot,
              failed: false,
              restoreRetry: retried(entry),
            }),
          ),
      );
      const [first] = refused;
      if (first !== undefined)
        metrics.count({ name: 'LockRefused', counter: metricCounter(first.kind, client) });
      const untils = refused.map(({ record, policy }) =>
        Math.max(refusedUntil(record, policy, at), at + 1000),
      );
      throw new AppError('TOO_MANY_ATTEMPTS', {
        retryAfterSeconds: Math.max(1, ...untils.map((until) => Math.ceil((until - at) / 1000))),
        // Only the counters that refused: their reset is Retry-After, which no other may undercut.
        quota: refused.map((result) =>
          quota(
            result,
            client,
            {
              failures: result.record.failures,
              until: Math.max(refusedUntil(result.record, result.policy, at), at + 1000),
            },
            at,
          ),
        ),
      });
    },

    async failed(attempt, reason, reservation) {
      const at = now();
      const client = attempt.client === true;
      const told = knowsSource(reservation, at);
      const states = await Promise.all(
        reservation.counted.map(async (entry) => {
          const { key, kind, policy } = entry;
          const record = await store.settle(key, {
            attempt: reservation.attempt,
            period: entry.period,
            slot: entry.slot,
            failed: true,
            restoreRetry: false,
          });
          const failures = record?.failures ?? entry.failures + 1;
          const seconds = lockSeconds(policy, failures);
          const lockedUntil = seconds === 0 ? 0 : at + seconds * 1000;
          if (seconds > 0) {
            await store.lock(key, { lockedUntil, expiresAt: expiresAt(kind, policy, at) });
            logger.warn('lockout started', {
              counter: kind === 'username' && client ? 'client' : kind,
              failures,
              lockSeconds: seconds,
              reason,
              ...(kind === 'source address' && { sourceIp: attempt.sourceIp }),
            });
            metrics.count({ name: 'LockoutStarted', counter: metricCounter(kind, client) });
          }
          return quota(
            entry,
            client,
            { failures, until: Math.max(lockedUntil, record?.lockedUntil ?? 0) },
            at,
          );
        }),
      );
      return states.filter(({ policy }) => told || policy === 'address');
    },

    async succeeded(reservation) {
      const at = now();
      const { known, client } = reservation;
      const remember =
        known === undefined
          ? undefined
          : { ...knownWrite(known, at), expiresAt: expiresAt('username', settings.username, at) };
      const states = await Promise.all(
        reservation.counted.map(async (entry): Promise<QuotaState> => {
          const { key, kind, policy, period, slot } = entry;
          const { attempt } = reservation;
          if (kind === 'known source') {
            // Its failures are this source's own: reset, not deleted (the login role may not
            // delete a counter). Two items: this counter, and the name's that remembers the source.
            await Promise.all([
              store.reset(key, { attempt, period, slot, expiresAt: expiresAt(kind, policy, at) }),
              known !== undefined && remember !== undefined
                ? store.remember(known.nameKey, remember)
                : undefined,
            ]);
            return quota(entry, client, { failures: 0, until: 0 }, at);
          }
          // The name's and the address's failures may be anyone's: the success takes back its
          // own attempt only (on the name, with the retry a lock allowed if it was that one).
          const name = kind === 'username';
          const record = await store.settle(key, {
            attempt,
            period,
            slot,
            failed: false,
            restoreRetry: name && retried(entry),
            ...(name && remember !== undefined && { known: remember }),
          });
          // Nothing taken back (an unlock did it meanwhile, or this is a lost answer's second
          // sending): the source is known all the same.
          if (name && remember !== undefined && record === undefined) await store.remember(key, remember);
          return quota(entry, client, { failures: record?.failures ?? entry.failures, until: 0 }, at);
        }),
      );
      if (reservation.spared) metrics.count({ name: 'LockSpared', counter: client ? 'Client' : 'Username' });
      // A success makes its source known: it is told the name's quota as the name's own sources are.
      return states.filter(({ policy }) => remember !== undefined || policy === 'address');
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
