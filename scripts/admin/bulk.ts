/**
 * The admin commands that work on many records: `import <file>`, `export`, `user list`,
 * `customer list`. The rules are in lib/users (bulk.ts, import.ts, export.ts); this turns
 * them into lines for the operator.
 */
import bcrypt from 'bcryptjs';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { refusedUntil, type ThrottleCounter, usernameCounterKey } from '../../lib/throttle/throttle.ts';
import { exportRecords } from '../../lib/users/export.ts';
import { importFile } from '../../lib/users/import.ts';
import type { CommandContext } from './commands.ts';
import { failure, fieldName } from './errors.ts';
import type { Command } from './parse.ts';

type CommandOf<TName extends Command['name']> = Extract<Command, { name: TName }>;

/** Problems printed before the summary; the rest are counted in it. */
const MAX_PROBLEM_LINES = 1000;

export async function importCommand(command: CommandOf<'import'>, context: CommandContext): Promise<void> {
  const cost = context.stageParams().bcryptCost;
  const progress = context.progress(command.dryRun ? 'checking' : 'importing');
  let result: Awaited<ReturnType<typeof importFile>>;
  try {
    result = await importFile(
      {
        store: context.bulk(),
        lines: context.fileLines(command.file),
        bcryptCost: cost,
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
  const counts = `created ${summary.created}, unchanged ${summary.unchanged}, updated ${summary.updated}, skipped ${summary.skipped}, failed ${summary.failed}`;
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
  customerId: string | null;
  depotCode: string | null;
  createdAt: string;
  lockedUntil?: string | null;
}

/** Prints rows as JSON Lines, or as a table when stdout is a terminal. */
function printRows(
  context: CommandContext,
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
) {
  if (!context.stdoutIsTTY) {
    for (const row of rows) context.print(JSON.stringify(row));
    return;
  }
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => cell(row[column]).length)),
  );
  const line = (values: readonly string[]) =>
    values.map((value, index) => value.padEnd(widths[index] ?? 0)).join('  ');
  context.print(line(columns));
  for (const row of rows) context.print(line(columns.map((column) => cell(row[column]))));
  context.print(`${rows.length} row${rows.length === 1 ? '' : 's'}`);
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
    'customerId',
    'depotCode',
    'createdAt',
    ...(command.locked ? ['lockedUntil'] : []),
  ]);
}

export async function listCustomers(context: CommandContext): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for await (const record of exportRecords(context.bulk(), { includePasswordHashes: false })) {
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
