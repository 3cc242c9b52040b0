/**
 * Brute-force throttling of logins (OWASP ASVS V6.3, NIST SP 800-63B §5.2.2).
 *
 * Failed logins are counted per username (unknown usernames too, so the counter reveals
 * nothing) and per source IP address across usernames. Once a counter reaches its limit,
 * further logins for that username, or from that address, are answered 429 with
 * `Retry-After`, without checking the password, for a wait that doubles with every further
 * failure up to a cap. Locks always end: an attacker can slow a customer down, never lock
 * them out for good. A successful login clears its username's counter; an address's
 * counter only decays, so an attacker cannot reset it with an account of their own.
 */
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { foldUsername } from '../users/repository.ts';
import type { Clock } from './tokens.ts';

export interface ThrottlePolicy {
  /** Failures before the first lock; 0 turns this counter off. */
  readonly limit: number;
  /** A counter whose last failure is older than this starts again from zero. */
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
export interface FailureRecord {
  readonly failures: number;
  readonly lastFailureAt: number;
  /** 0 when not locked. */
  readonly lockedUntil: number;
}

export interface FailureStore {
  /** The counters under `keys` that exist (a consistent read). */
  read(keys: readonly string[]): Promise<ReadonlyMap<string, FailureRecord>>;
  /**
   * Counts one failure at `now`: adds to a counter whose last failure is at or after
   * `windowStart`, starts a new one otherwise. Resolves with the counter as written.
   */
  recordFailure(key: string, now: number, windowStart: number, expiresAt: number): Promise<FailureRecord>;
  lock(key: string, lockedUntil: number, expiresAt: number): Promise<void>;
  clear(key: string): Promise<void>;
}

/** Who is trying to log in. */
export interface LoginAttempt {
  readonly username: string;
  readonly sourceIp: string;
}

/** Why a login failed: for the log only, never for the client. */
export type FailureReason = 'unknown user' | 'bad password' | 'disabled';

/** What `check` saw, for `succeeded`: whether there is a username counter to clear. */
export interface Checked {
  readonly usernameFailures: number;
}

export interface LoginThrottle {
  /** Throws TOO_MANY_ATTEMPTS while the username or the address is locked. */
  check(attempt: LoginAttempt): Promise<Checked>;
  failed(attempt: LoginAttempt, reason: FailureReason): Promise<void>;
  succeeded(attempt: LoginAttempt, checked: Checked): Promise<void>;
}

/** The store key of a username's counter: case variants share one counter, like the users. */
export const usernameCounterKey = (username: string) => `USER#${foldUsername(username)}`;
export const sourceIpCounterKey = (sourceIp: string) => `IP#${sourceIp}`;

/** The lock after `failures` failures under `policy`, in seconds (0 below the limit). */
export function lockSeconds(policy: ThrottlePolicy, failures: number): number {
  if (policy.limit === 0 || failures < policy.limit) return 0;
  const doublings = Math.min(failures - policy.limit, 30);
  return Math.min(policy.baseLockSeconds * 2 ** doublings, policy.maxLockSeconds);
}

export function createLoginThrottle(deps: {
  readonly store: FailureStore;
  readonly settings: ThrottleSettings;
  readonly clock?: Clock;
  readonly logger: Logger;
}): LoginThrottle {
  const { store, settings, logger } = deps;
  const now = () => (deps.clock ?? (() => new Date()))().getTime();
  const counters = (attempt: LoginAttempt) =>
    [
      { key: usernameCounterKey(attempt.username), policy: settings.username, kind: 'username' },
      // API Gateway always knows the address; without one there is nothing to count by.
      ...(attempt.sourceIp === ''
        ? []
        : [{ key: sourceIpCounterKey(attempt.sourceIp), policy: settings.sourceIp, kind: 'source IP' }]),
    ].filter(({ policy }) => policy.limit > 0);

  return {
    async check(attempt) {
      const active = counters(attempt);
      if (active.length === 0) return { usernameFailures: 0 };
      const records = await store.read(active.map(({ key }) => key));
      const at = now();
      const lockedUntil = Math.max(0, ...active.map(({ key }) => records.get(key)?.lockedUntil ?? 0));
      if (lockedUntil > at) {
        throw new AppError('TOO_MANY_ATTEMPTS', { retryAfterSeconds: Math.ceil((lockedUntil - at) / 1000) });
      }
      return { usernameFailures: records.get(usernameCounterKey(attempt.username))?.failures ?? 0 };
    },

    async failed(attempt, reason) {
      const at = now();
      await Promise.all(
        counters(attempt).map(async ({ key, policy, kind }) => {
          const windowMs = policy.windowSeconds * 1000;
          const expiresAt = Math.ceil((at + windowMs + policy.maxLockSeconds * 1000) / 1000);
          const record = await store.recordFailure(key, at, at - windowMs, expiresAt);
          const seconds = lockSeconds(policy, record.failures);
          if (seconds === 0) return;
          await store.lock(key, at + seconds * 1000, expiresAt);
          logger.warn('lockout started', {
            counter: kind,
            failures: record.failures,
            lockSeconds: seconds,
            reason,
          });
        }),
      );
    },

    async succeeded(attempt, checked) {
      // Only a counter that exists is cleared: a clean login writes nothing.
      if (settings.username.limit === 0 || checked.usernameFailures === 0) return;
      await store.clear(usernameCounterKey(attempt.username));
    },
  };
}
