/**
 * The admin commands that work on many records: `import <file>`, `export`, `user list`,
 * `customer list`, `user refold`. The rules are in ops/accounts (bulk.ts, import.ts, export.ts);
 * this turns them into lines for the operator.
 */
import { isDeepStrictEqual } from 'node:util';
import bcrypt from 'bcryptjs';
import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { refusedUntil, usernameCounterKey } from '../../lib/throttle/counters.ts';
import type { ThrottleCounter } from '../../lib/throttle/throttle.ts';
import type { AccountKey, MoveOutcome } from '../accounts/bulk-dynamodb.ts';
import { accountRecords, exportRecords } from '../accounts/export.ts';
import { importFile } from '../accounts/import.ts';
import type { CommandContext } from './context.ts';
import { failure, fieldName, quote } from './errors.ts';
import type { Command } from './parse.ts';
import { printRows } from './rows.ts';

type CommandOf<TName extends Command['name']> = Extract<Command, { name: TName }>;

/** Problems printed before the summary; the rest are counted in it. */
const MAX_PROBLEM_LINES = 1000;

export async function importCommand(command: CommandOf<'import'>, context: CommandContext): Promise<void> {
  const { bcryptCost: cost, importBcryptMaxCost } = context.stageParams();
  const progress = context.progress(command.dryRun ? 'checking' : 'importing');
  let result: Awaited<ReturnType<typeof importFile>>;
  try {
    result = await importFile(
      {
        store: context.bulk(),
        lines: context.fileLines(command.file),
        importBcryptMaxCost,
        hashPassword: (password) => hashPassword(password, cost),
        comparePassword: (password, hash) => bcrypt.compare(password, hash),
        clock: () => context.now(),
        onProgress: (done, total) => progress.update(done, total),
      },
      { dryRun: command.dryRun, skipInvalid: command.skipInvalid },
    );
  } finally {
    progress.stop();
  }
  const { problems, summary } = result;
  for (const { line, field, message } of problems.slice(0, MAX_PROBLEM_LINES))
    context.print(`line ${line}: ${field === undefined ? '' : `${fieldName(field)} `}${message}`);
  if (problems.length > MAX_PROBLEM_LINES)
    context.print(`… and ${problems.length - MAX_PROBLEM_LINES} more problems`);
  // `kept` only when there are: an import without users whose password changed reads as before.
  const counts =
    `created ${summary.created}, unchanged ${summary.unchanged}, updated ${summary.updated}, ` +
    `skipped ${summary.skipped}, failed ${summary.failed}${summary.kept > 0 ? `, kept ${summary.kept}` : ''}`;
  if (!result.written && !command.dryRun) {
    throw failure(
      `${problems.length} invalid record${problems.length === 1 ? '' : 's'}; nothing was written ` +
        '(fix them, or add --skip-invalid to import the valid records)',
    );
  }
  const changed = summary.created + summary.updated;
  if (command.dryRun) context.print(`dry run, nothing written: would have ${counts}`);
  else context.print(changed === 0 && summary.failed === 0 ? `nothing to change: ${counts}` : counts);
  if (summary.failed > 0)
    throw failure(`${summary.failed} record${summary.failed === 1 ? '' : 's'} failed (see above)`);
}

export async function exportCommand(command: CommandOf<'export'>, context: CommandContext): Promise<void> {
  const progress = context.progress('exporting');
  let count = 0;
  try {
    for await (const record of exportRecords(context.bulk(), {
      includePasswordHashes: command.includePasswordHashes,
    })) {
      context.print(JSON.stringify(record));
      count += 1;
      progress.update(count, count);
    }
  } finally {
    progress.stop();
  }
}

interface ListedUser {
  username: string;
  enabled: boolean;
  admin: boolean;
  customerId: string | null;
  depotCode: string | null;
  createdAt: string;
  lockedUntil?: string | null;
}

export async function listUsers(
  command: CommandOf<'user list'>,
  context: CommandContext,
  counterSecret: () => Promise<Uint8Array>,
): Promise<void> {
  const bulk = context.bulk();
  const users: ListedUser[] = [];
  const add = (item: Record<string, unknown>) => {
    const user: ListedUser = {
      username: String(item.username),
      enabled: item.enabled === true,
      admin: item.admin === true,
      customerId: typeof item.customerId === 'string' ? item.customerId : null,
      depotCode: typeof item.depotCode === 'string' ? item.depotCode : null,
      createdAt: String(item.createdAt),
    };
    if (command.customerId !== undefined && user.customerId !== command.customerId) return;
    if (command.disabled && user.enabled) return;
    users.push(user);
  };
  for await (const item of bulk.scan()) if (item.sk === 'USER') add(item);
  users.sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
  let listed = users;
  if (command.locked) {
    const now = context.now().getTime();
    const store = context.loginFailures();
    const secret = await counterSecret();
    const policy = context.stageParams().usernameThrottle;
    const keyOf = (user: ListedUser) => usernameCounterKey(user.username, secret);
    const counters = new Map<string, ThrottleCounter>();
    // A hundred counters at a time: one read each, never thousands in flight.
    for (let start = 0; start < users.length; start += 100) {
      for (const [key, counter] of await store.read(users.slice(start, start + 100).map(keyOf))) {
        counters.set(key, counter);
      }
    }
    // Locked: whatever refuses a login now, a lock or attempts at the limit still holding it.
    listed = users.flatMap((user) => {
      const counter = counters.get(keyOf(user));
      const until = counter === undefined ? 0 : refusedUntil(counter, policy, now);
      return until > 0 ? [{ ...user, lockedUntil: new Date(until).toISOString() }] : [];
    });
  }
  printRows(context, listed as unknown as Record<string, unknown>[], [
    'username',
    'enabled',
    'admin',
    'customerId',
    'depotCode',
    'createdAt',
    ...(command.locked ? ['lockedUntil'] : []),
  ]);
}

export async function listCustomers(context: CommandContext): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for await (const record of accountRecords(context.bulk(), { includePasswordHashes: false })) {
    if (record.type !== 'customer') continue;
    const depotCodes = record.pickupAddresses.map((address) => address.depotCode);
    rows.push({
      customerId: record.customerId,
      addresses: depotCodes.length,
      depotCode: depotCodes.find((code) => code !== '') ?? null,
      depotCodes,
    });
  }
  rows.sort((a, b) => String(a.customerId).localeCompare(String(b.customerId)));
  printRows(context, rows, ['customerId', 'addresses', 'depotCode']);
}

type Item = Record<string, unknown>;

/** The key prefixes of the items `user refold` moves. */
const USER_KEY = accountItems.userKey('');
const CUSTOMER_PREFIX = accountItems.customerPk('');

/** An item to move to the key its stored name folds to now. */
interface Move {
  readonly item: Item;
  readonly username: string;
  readonly to: AccountKey;
  /** An identical copy is under `to` already (an interrupted run): only the old item goes. */
  readonly copied: boolean;
}

const withoutKey = (item: Item) => Object.entries(item).filter(([name]) => name !== 'pk' && name !== 'sk');

/**
 * Groups items by the key their stored name folds to now. An item under another key moves
 * there when it is alone in its group, or when the rest of the group are identical copies of
 * it; any other group is a collision, and none of it moves.
 */
function planMoves(items: readonly Item[], keyOf: (item: Item) => AccountKey) {
  const groups = new Map<string, { to: AccountKey; items: Item[] }>();
  for (const item of items) {
    const to = keyOf(item);
    const id = `${to.pk}\n${to.sk}`;
    const group = groups.get(id) ?? { to, items: [] };
    group.items.push(item);
    groups.set(id, group);
  }
  const moves: Move[] = [];
  const collisions: Item[][] = [];
  for (const { to, items: group } of groups.values()) {
    const stale = group.filter((item) => item.pk !== to.pk || item.sk !== to.sk);
    if (stale.length === 0) continue;
    const first = withoutKey(group[0] ?? {});
    if (!group.every((item) => isDeepStrictEqual(withoutKey(item), first))) {
      collisions.push(group);
      continue;
    }
    for (const item of stale)
      moves.push({ item, username: String(item.username), to, copied: group.length > stale.length });
  }
  return { moves, collisions };
}

/** The customer of a membership, as it is when it could have been created, else quoted. */
const customerOf = (item: Item) => {
  const id = String(item.pk).slice(CUSTOMER_PREFIX.length);
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) ? id : quote(id);
};

const byUsername = (a: Move, b: Move) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0);

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

const NOT_MOVED: Record<Exclude<MoveOutcome, 'moved'>, string> = {
  occupied: 'another item took its new key meanwhile',
  changed: 'it changed or went meanwhile',
};

/** The line of a collision: the names, and what the operator does about them. */
function collisionLine(group: readonly Item[], what: 'user' | 'membership') {
  const names = [...new Set(group.map((item) => String(item.username)))].sort();
  const where = what === 'membership' ? ` in customer ${customerOf(group[0] ?? {})}` : '';
  if (names.length === 1) {
    return `${what} ${quote(names[0] ?? '')}${where} is under its old and its new key, with different attributes: neither is re-keyed`;
  }
  return `${what}s ${names.map(quote).join(' and ')}${where} now share one key: ${names.length === 2 ? 'neither' : 'none'} is re-keyed`;
}

/**
 * `user refold`: moves every user item and membership item whose key is not the one its
 * stored name folds to now (written before usernames were folded in full) to that key.
 * Names that now fold alike are reported and left as they are, for the operator to decide:
 * merging two accounts is not a migration's call.
 */
export async function refoldUsers(command: CommandOf<'user refold'>, context: CommandContext): Promise<void> {
  const bulk = context.bulk();
  const users: Item[] = [];
  const members: Item[] = [];
  for await (const item of bulk.scan()) {
    const { pk, sk, username } = item;
    if (typeof pk !== 'string' || typeof sk !== 'string' || typeof username !== 'string') continue;
    if (sk === USER_KEY.sk && pk.startsWith(USER_KEY.pk)) users.push(item);
    else if (pk.startsWith(CUSTOMER_PREFIX) && sk.startsWith(accountItems.memberPrefix)) members.push(item);
  }
  const userPlan = planMoves(users, (item) => accountItems.userKey(String(item.username)));
  // The memberships of colliding users stay with them.
  const colliding = new Set(userPlan.collisions.flat().map((item) => String(item.username)));
  const memberPlan = planMoves(
    members.filter((item) => !colliding.has(String(item.username))),
    (item) => accountItems.memberKey(String(item.pk).slice(CUSTOMER_PREFIX.length), String(item.username)),
  );

  const verb = command.dryRun ? 'would re-key' : 're-keyed';
  const tally = { users: 0, memberships: 0, failed: 0 };
  /** Moves (or, in a dry run, does not); prints why when the move did not happen. */
  const moved = async (planned: Move, what: string) => {
    const outcome = command.dryRun
      ? 'moved'
      : await bulk.move(planned.item, planned.to, { copied: planned.copied });
    if (outcome === 'moved') return true;
    tally.failed += 1;
    context.print(`${what} not re-keyed: ${NOT_MOVED[outcome]}`);
    return false;
  };
  const membership = (planned: Move) =>
    `the membership of ${quote(planned.username)} in customer ${customerOf(planned.item)}`;

  const membersOf = new Map<string, Move[]>();
  for (const planned of memberPlan.moves)
    membersOf.set(planned.username, [...(membersOf.get(planned.username) ?? []), planned]);
  for (const planned of userPlan.moves.sort(byUsername)) {
    const what = `user ${quote(planned.username)}`;
    const own = membersOf.get(planned.username) ?? [];
    membersOf.delete(planned.username);
    // A user not moved keeps its memberships where they are, for the next run.
    if (!(await moved(planned, what))) continue;
    tally.users += 1;
    const customers: string[] = [];
    for (const member of own) {
      if (!(await moved(member, membership(member)))) continue;
      tally.memberships += 1;
      customers.push(customerOf(member.item));
    }
    const withMembers =
      customers.length === 0 ? '' : ` and its membership of customer ${customers.join(', ')}`;
    context.print(`${verb} ${what}${withMembers}`);
  }
  // Memberships whose user is under its key already (an interrupted run) or gone.
  for (const member of [...membersOf.values()].flat().sort(byUsername)) {
    if (!(await moved(member, membership(member)))) continue;
    tally.memberships += 1;
    context.print(`${verb} ${membership(member)}`);
  }
  for (const group of userPlan.collisions) context.print(collisionLine(group, 'user'));
  for (const group of memberPlan.collisions) context.print(collisionLine(group, 'membership'));

  const collisions = userPlan.collisions.length + memberPlan.collisions.length;
  const done = `${count(tally.users, 'user')} and ${count(tally.memberships, 'membership')}`;
  const trouble =
    (tally.failed > 0 ? `, ${tally.failed} not re-keyed` : '') +
    (collisions > 0 ? `, ${count(collisions, 'collision')}` : '');
  if (tally.users + tally.memberships + tally.failed + collisions === 0)
    context.print('nothing to re-key: every user and membership is under the key of its name');
  else context.print(`${command.dryRun ? 'dry run, nothing written: ' : ''}${verb} ${done}${trouble}`);

  if (collisions > 0) {
    throw failure(
      `${count(collisions, 'collision')} (see above): decide which name to keep and remove the ` +
        'other (docs/deploying.md), then run user refold again',
    );
  }
  if (tally.failed > 0) throw failure(`${tally.failed} not re-keyed (see above): run user refold again`);
}
