/**
 * What counting an attempt on a throttle's counters takes, shared by its beginning (begin.ts)
 * and its end (login-throttle.ts): the counters' expiries, the published quotas, one counter's
 * reservation, the take-back of an attempt, a success's known-source write.
 */
import { describeError } from '../log.ts';
import type { QuotaState } from '../quota.ts';
import { counterPeriod, holdSeconds, inflightSlot, MAX_KNOWN_SOURCES } from './counters.ts';
import type {
  Counted,
  CounterKind,
  KnownSourceWrite,
  LoginAttempt,
  LoginThrottleDeps,
  Reservation,
  Reserve,
  ThrottlePolicy,
} from './throttle.ts';

export type LockCounter = 'Username' | 'Client' | 'KnownSource' | 'SourceAddress' | 'ClientSourceAddress';

export type Counting = ReturnType<typeof createCounting>;

export function createCounting(deps: LoginThrottleDeps) {
  const { store, settings, logger } = deps;
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
  const countedOf = ({
    granted: _granted,
    record,
    ...rest
  }: Awaited<ReturnType<typeof reserveOn>>): Counted => ({
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
    now,
    knownSourceMs,
    addressPolicy,
    expiresAt,
    metricCounter,
    quota,
    reserveOn,
    countedOf,
    retried,
    giveBack,
    knownWrite,
    knowsSource,
  };
}
