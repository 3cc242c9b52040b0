/**
 * The login throttle (docs/behaviour.md "Brute force: the login throttle"): an attempt counted
 * before the password check (begin.ts), then as it ended: a failure counted and locked at the
 * limit, a success taken back and its source remembered, an undecided attempt given back.
 */

import type { QuotaState } from '../quota.ts';
import { beginAttempt } from './begin.ts';
import { lockSeconds } from './counters.ts';
import { createCounting } from './counting.ts';
import type { LoginThrottle, LoginThrottleDeps } from './throttle.ts';

export function createLoginThrottle(deps: LoginThrottleDeps): LoginThrottle {
  const { store, settings, logger, metrics } = deps;
  const counting = createCounting(deps);
  const { now, expiresAt, metricCounter, quota, retried, giveBack, knownWrite, knowsSource } = counting;

  return {
    begin: (attempt) => beginAttempt(deps, counting, attempt),

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
