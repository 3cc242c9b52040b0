/**
 * Login-attempt counters on the `login-throttle` table: one item per name (hashed), known source
 * of a name, or source address, with `expiresAt` (epoch seconds) as the table's TTL attribute so
 * idle counters disappear. Every change is one conditional write, so concurrent logins count
 * exactly; periods, slots and locks are decided by the code, TTL deletion is only clean-up.
 *
 * An item holds its failures per period (`failures<period>`), its failures and attempts in flight
 * together (`attempts<period>`), its attempts in flight per slot (`inflight<slot>`), and on a
 * name's counter its known sources (`known_<tag>`: until when).
 */
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, dynamo } from '../aws/errors.ts';
import { counterPeriod } from './counters.ts';
import type { KnownSourceWrite, ThrottleCounter, ThrottleStore } from './throttle.ts';

/** The attribute holding a counter's failures in `period`: a period of no attempts starts it again. */
const countIn = (period: number) => `failures${period}`;
/** The attribute holding a counter's failures and attempts in flight in `period` together. */
const attemptsIn = (period: number) => `attempts${period}`;
/** The attribute holding the attempts started in `slot` and not yet decided. */
const inflightIn = (slot: number) => `inflight${slot}`;
const KNOWN = 'known_';

const toRecord = (item: Record<string, unknown>): ThrottleCounter => ({
  failures: Number(item[countIn(Number(item.period))] ?? 0),
  attempts: Number(item[attemptsIn(Number(item.period))] ?? item[countIn(Number(item.period))] ?? 0),
  lastAttemptAt: Number(item.lastAttemptAt ?? 0),
  lockedUntil: Number(item.lockedUntil ?? 0),
  retryAfterLock: item.retryAfterLock === 1,
  knownSources: new Map(
    Object.entries(item).flatMap(([name, value]) =>
      name.startsWith(KNOWN) ? [[name.slice(KNOWN.length), Number(value)] as const] : [],
    ),
  ),
});

/** A counter that changes under concurrent logins is counted again this many times before giving up. */
const ROUNDS = 3;

/** The SET and REMOVE clauses, names and values of a known-source write. */
function knownClauses(known: KnownSourceWrite | undefined) {
  if (known === undefined) return { set: '', remove: '', names: {}, values: {} };
  const forget = Object.fromEntries(known.forget.map((tag, index) => [`#forget${index}`, `${KNOWN}${tag}`]));
  return {
    set: ', #known = :knownUntil',
    remove: known.forget.length > 0 ? ` REMOVE ${Object.keys(forget).join(', ')}` : '',
    names: { '#known': `${KNOWN}${known.tag}`, ...forget },
    values: { ':knownUntil': known.until },
  };
}

export function createDynamoThrottleStore(deps: {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}): ThrottleStore {
  const { client, tableName: TableName } = deps;

  const get = async (counterKey: string) => {
    const { Item } = await dynamo(() =>
      client.send(new GetCommand({ TableName, Key: { counterKey }, ConsistentRead: true })),
    );
    return Item;
  };

  return {
    async read(keys) {
      const items = await Promise.all(keys.map(async (key) => [key, await get(key)] as const));
      return new Map(
        items.flatMap(([key, item]) => (item === undefined ? [] : [[key, toRecord(item)] as const])),
      );
    },

    async reserve(counterKey, { now, windowStart, limit, slot, heldSince, expiresAt, attempt, burst }) {
      let period = counterPeriod(now, windowStart);
      for (let round = 0; round < ROUNDS; round += 1) {
        // One write whether the counter is new, counted on within its window or idle past it:
        // the counts are kept in their period's attributes and carried to the next period's, so
        // a counter with neither (no attempt this period or the last) starts again through
        // if_not_exists, and a probe's latency tells nothing of when the name was last tried.
        // The attempt is also counted in flight in its slot; the slot two back has ended.
        const counted = await conditional(() =>
          client.send(
            new UpdateCommand({
              TableName,
              Key: { counterKey },
              UpdateExpression:
                'SET #count = if_not_exists(#count, :zero), #next = if_not_exists(#count, :zero), ' +
                '#all = if_not_exists(#all, :zero) + :one, #allNext = if_not_exists(#all, :zero) + :one, ' +
                '#inflight = if_not_exists(#inflight, :zero) + :one, ' +
                'period = :period, lastAttemptAt = :now, expiresAt = :expiresAt, ' +
                'lockedUntil = if_not_exists(lockedUntil, :zero), retryAfterLock = :zero, attempt = :attempt ' +
                'REMOVE #previous, #allPrevious, #ended',
              // `attempt`: the SDK sends a write again when its answer was lost; it must not count twice.
              ConditionExpression:
                '(attribute_not_exists(lockedUntil) OR lockedUntil <= :now) ' +
                'AND ((attribute_not_exists(#all) OR #all < :limit) ' +
                (burst === undefined
                  ? ''
                  : 'OR ((attribute_not_exists(#count) OR #count < :limit) ' +
                    'AND (attribute_not_exists(#inflight) OR #inflight < :inflightLimit)' +
                    (burst.knownTag === undefined ? ') ' : ' AND #known > :now) ')) +
                'OR retryAfterLock = :one OR lastAttemptAt < :heldSince) ' +
                'AND (attribute_not_exists(attempt) OR attempt <> :attempt) ' +
                // A write of an earlier period landing late would find its count gone and start
                // the counter again: it counts in the newer period instead (below).
                'AND (attribute_not_exists(period) OR period <= :period)',
              ExpressionAttributeNames: {
                '#count': countIn(period),
                '#next': countIn(period + 1),
                '#previous': countIn(period - 1),
                '#all': attemptsIn(period),
                '#allNext': attemptsIn(period + 1),
                '#allPrevious': attemptsIn(period - 1),
                '#inflight': inflightIn(slot),
                '#ended': inflightIn(slot - 2),
                ...(burst?.knownTag !== undefined && { '#known': `${KNOWN}${burst.knownTag}` }),
              },
              ExpressionAttributeValues: {
                ':now': now,
                ':expiresAt': expiresAt,
                ':zero': 0,
                ':one': 1,
                ':period': period,
                ':limit': limit,
                ':heldSince': heldSince,
                ':attempt': attempt,
                ...(burst !== undefined && { ':inflightLimit': burst.inflightLimit }),
              },
              ReturnValues: 'ALL_NEW',
            }),
          ),
        );
        if (counted?.Attributes !== undefined) return { granted: true, record: toRecord(counted.Attributes) };
        const item = await get(counterKey);
        // Deleted since the write (an operator's unlock): count again.
        if (item === undefined) continue;
        const record = toRecord(item);
        // Counted already: this write's first sending was applied and its answer lost.
        if (item.attempt === attempt) return { granted: true, record };
        if (typeof item.period === 'number' && item.period > period) {
          period = item.period;
          continue;
        }
        const number = (name: string) => Number(item[name] ?? 0);
        const bursting =
          burst !== undefined &&
          number(countIn(period)) < limit &&
          number(inflightIn(slot)) < burst.inflightLimit &&
          (burst.knownTag === undefined || number(`${KNOWN}${burst.knownTag}`) > now);
        const refused =
          record.lockedUntil > now ||
          (!(number(attemptsIn(period)) < limit) &&
            !bursting &&
            !record.retryAfterLock &&
            record.lastAttemptAt >= heldSince);
        if (refused) return { granted: false, record };
        // The counter changed (a concurrent login settled) since the write: count again.
      }
      throw new Error(`login counter ${counterKey} kept changing under concurrent logins`);
    },

    async settle(counterKey, { attempt, period, slot, failed, restoreRetry, known }) {
      // A failure stays counted (in `attempts`) and is counted as one (in `failures`, in the
      // attempt's period and the next one, which carries it); anything else is taken back, unless
      // a success or an unlock has set the counter back already. Sent again, `settled` makes it a
      // no-op. A success on a name's counter remembers its source in the same write.
      const clauses = knownClauses(known);
      const result = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression:
              `SET settled = :attempt${restoreRetry ? ', retryAfterLock = :one' : ''}` +
              `${known === undefined ? '' : ', expiresAt = :expiresAt'}${clauses.set} ` +
              `ADD #inflight :minusOne, ${failed ? '#count :one, #next :one' : '#all :minusOne, #allNext :minusOne'}` +
              clauses.remove,
            ConditionExpression:
              'attribute_exists(counterKey) AND (attribute_not_exists(settled) OR settled <> :attempt)' +
              // The next period's count: within a period it moves with this one's, and once the
              // next period began it is the live one.
              (failed ? '' : ' AND #allNext > :zero'),
            ExpressionAttributeNames: {
              '#inflight': inflightIn(slot),
              ...(failed
                ? { '#count': countIn(period), '#next': countIn(period + 1) }
                : { '#all': attemptsIn(period), '#allNext': attemptsIn(period + 1) }),
              ...clauses.names,
            },
            ExpressionAttributeValues: {
              ':minusOne': -1,
              ':attempt': attempt,
              ...((failed || restoreRetry) && { ':one': 1 }),
              ...(!failed && { ':zero': 0 }),
              ...(known !== undefined && { ':expiresAt': known.expiresAt }),
              ...clauses.values,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return result?.Attributes === undefined ? undefined : toRecord(result.Attributes);
    },

    async lock(counterKey, { lockedUntil, expiresAt }) {
      // Only lengthens a lock, and only on a counter that exists (a success may have cleared it).
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: 'SET lockedUntil = :until, retryAfterLock = :one, expiresAt = :expiresAt',
            ConditionExpression: 'attribute_exists(counterKey) AND lockedUntil < :until',
            ExpressionAttributeValues: { ':until': lockedUntil, ':one': 1, ':expiresAt': expiresAt },
          }),
        ),
      );
    },

    async reset(counterKey, { attempt, period, slot, expiresAt, known }) {
      const clauses = knownClauses(known);
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression:
              'SET #count = :zero, #next = :zero, #all = :zero, #allNext = :zero, lockedUntil = :zero, retryAfterLock = :zero, ' +
              `settled = :attempt, expiresAt = :expiresAt${clauses.set} ADD #inflight :minusOne${clauses.remove}`,
            ConditionExpression:
              'attribute_exists(counterKey) AND (attribute_not_exists(settled) OR settled <> :attempt)',
            ExpressionAttributeNames: {
              '#count': countIn(period),
              '#next': countIn(period + 1),
              '#all': attemptsIn(period),
              '#allNext': attemptsIn(period + 1),
              '#inflight': inflightIn(slot),
              ...clauses.names,
            },
            ExpressionAttributeValues: {
              ':zero': 0,
              ':minusOne': -1,
              ':attempt': attempt,
              ':expiresAt': expiresAt,
              ...clauses.values,
            },
          }),
        ),
      );
    },

    async remember(counterKey, { expiresAt, ...known }) {
      const clauses = knownClauses(known);
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression: `SET expiresAt = :expiresAt${clauses.set}${clauses.remove}`,
            ConditionExpression: 'attribute_exists(counterKey)',
            ExpressionAttributeNames: clauses.names,
            ExpressionAttributeValues: { ':expiresAt': expiresAt, ...clauses.values },
          }),
        ),
      );
    },

    async clear(counterKey) {
      await dynamo(() => client.send(new DeleteCommand({ TableName, Key: { counterKey } })));
    },

    async unlock(counterKey) {
      const item = await get(counterKey);
      if (item === undefined) return;
      const counts = Object.keys(item).filter((name) => /^(failures|attempts|inflight)-?\d+$/.test(name));
      const names = Object.fromEntries(counts.map((name, index) => [`#count${index}`, name]));
      await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName,
            Key: { counterKey },
            UpdateExpression:
              'SET lockedUntil = :zero, retryAfterLock = :zero' +
              (counts.length > 0 ? ` REMOVE ${Object.keys(names).join(', ')}` : ''),
            ConditionExpression: 'attribute_exists(counterKey)',
            ...(counts.length > 0 && { ExpressionAttributeNames: names }),
            ExpressionAttributeValues: { ':zero': 0 },
          }),
        ),
      );
    },
  };
}
