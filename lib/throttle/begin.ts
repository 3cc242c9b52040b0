/**
 * The beginning of an attempt: counted on the name's counter and the address's before the
 * password is checked, in one conditional write each; refused (TOO_MANY_ATTEMPTS) by a counter
 * that is locked or held; a source the name knows counted on its own counter when strangers hold
 * the name (docs/behaviour.md "Brute force: the login throttle").
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.ts';
import {
  clientCounterKey,
  clientSourceIpCounterKey,
  knownSourceCounterKey,
  knownSourceTag,
  refusedUntil,
  sourceIpCounterKey,
  usernameCounterKey,
} from './counters.ts';
import type { Counting } from './counting.ts';
import type { LoginAttempt, LoginThrottleDeps, Reservation } from './throttle.ts';

export async function beginAttempt(
  deps: LoginThrottleDeps,
  counting: Counting,
  attempt: LoginAttempt,
): Promise<Reservation> {
  const { store, settings, metrics } = deps;
  const { now, knownSourceMs, addressPolicy, reserveOn, countedOf, retried, giveBack, metricCounter, quota } =
    counting;
  type Reserved = Awaited<ReturnType<typeof reserveOn>>;

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
            key: client ? clientSourceIpCounterKey(attempt.sourceIp) : sourceIpCounterKey(attempt.sourceIp),
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
      own = await reserveOn(knownSourceCounterKey(nameKey, tag), 'known source', settings.username, at, id, {
        inflightLimit: settings.username.inflightLimit,
      });
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
  // Not trying after all: take the attempt back where it was counted. A failed take-back fails the
  // attempt (503, as any failed write), where giveBack would log it and answer the refusal.
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
  if (first !== undefined) metrics.count({ name: 'LockRefused', counter: metricCounter(first.kind, client) });
  const untils = refused.map(({ record, policy }) => Math.max(refusedUntil(record, policy, at), at + 1000));
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
}
