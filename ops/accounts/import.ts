/**
 * Runs an import (the rules are in bulk.ts): validation, then customers, then users, then
 * API clients (only when the file holds any), each in batches of 100 records, eight batches under way while the store keeps four DynamoDB calls
 * in flight. Everything it needs is passed in:
 * the lines of the file (read anew for each pass), the bulk store, bcrypt and the highest
 * cost the stage imports, a clock, and a progress callback.
 */

import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { foldUsername } from '../../lib/accounts/username-key.ts';
import { clientItem } from '../../lib/clients/dynamodb-items.ts';
import { revocationCutoff } from '../../lib/revocation/revocation.ts';
import type { Clock } from '../../lib/time.ts';
import {
  type ClientImportRecord,
  type CustomerImportRecord,
  depotOf,
  emptySummary,
  type ImportSummary,
  type LineProblem,
  type Outcome,
  parseRecord,
  planClient,
  planCustomer,
  planUser,
  type RecordRules,
  type UserImportRecord,
  validateFile,
} from './bulk.ts';
import type { BulkAccountStore } from './bulk-dynamodb.ts';

export interface ImportDeps extends RecordRules {
  readonly store: BulkAccountStore;
  /** The file's lines; called once per pass. */
  readonly lines: () => AsyncIterable<string>;
  /** A hash of a plain password at the stage's cost. */
  readonly hashPassword: (password: string) => Promise<string>;
  readonly comparePassword: (password: string, hash: string) => Promise<boolean>;
  readonly clock: Clock;
  /** Called as records are settled: how many of `total` are done. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Batches under way at once (default 8). The store bounds the DynamoDB calls; more batches
   * than calls keep the calls busy while a batch is being read or planned.
   */
  readonly concurrency?: number;
}

export interface ImportOptions {
  /** Validate and compare with the table, write nothing. */
  readonly dryRun: boolean;
  /** Write the valid records even when some are invalid (those are counted as skipped). */
  readonly skipInvalid: boolean;
}

export interface ImportResult {
  /** Invalid records, records that could not be written and users left as they are, by line. */
  readonly problems: LineProblem[];
  readonly summary: ImportSummary;
  /** False when nothing was written because a record was invalid. */
  readonly written: boolean;
}

/**
 * Records per batch: 100 users are one BatchGetItem of their user keys (and, for users that
 * already exist, one of their memberships) and eight BatchWriteItem calls; fewer reads per
 * write is what keeps an import near the speed of bare writes. 100 is BatchGetItem's limit.
 */
const BATCH = 100;

interface Numbered<T> {
  readonly line: number;
  readonly record: T;
}

export async function importFile(deps: ImportDeps, options: ImportOptions): Promise<ImportResult> {
  const rules: RecordRules = { importBcryptMaxCost: deps.importBcryptMaxCost };
  const validation = await validateFile(deps.lines, { exists: (id) => deps.store.customerExists(id) }, rules);
  const summary = emptySummary();
  const problems: LineProblem[] = [...validation.problems];
  const total = validation.customers + validation.users + validation.clients;
  const invalid = validation.invalidLines.size;
  if (invalid > 0 && !options.skipInvalid) {
    return { problems, summary: { ...summary, skipped: total }, written: false };
  }
  summary.skipped = invalid;
  let done = invalid;
  const settle = (line: number, outcome: Outcome, reason?: string) => {
    summary[outcome] += 1;
    if (reason !== undefined) problems.push({ line, message: reason });
    done += 1;
    deps.onProgress?.(done, total);
  };
  deps.onProgress?.(done, total);
  // An empty table, seen after validation and before the first write, has nothing to compare
  // with: the passes skip their reads (a fresh stage's import costs its writes alone). The file
  // holds no customer or folded username twice (validation), so no record meets another's items.
  // A table with anything in it, an interrupted import's half included, is read as before.
  const empty = await deps.store.isEmpty();

  const inFlight = new Set<Promise<void>>();
  const limit = deps.concurrency ?? 8;
  const launch = async (work: () => Promise<void>) => {
    const running = work().finally(() => inFlight.delete(running));
    inFlight.add(running);
    if (inFlight.size >= limit) await Promise.race(inFlight);
  };
  const drain = async () => {
    await Promise.all(inFlight);
  };

  async function* records<T extends CustomerImportRecord | UserImportRecord | ClientImportRecord>(
    type: T['type'],
  ) {
    let line = 0;
    for await (const text of deps.lines()) {
      line += 1;
      if (validation.invalidLines.has(line) || text.trim() === '') continue;
      const parsed = parseRecord(text, rules);
      if ('record' in parsed && parsed.record.type === type) yield { line, record: parsed.record as T };
    }
  }

  async function inBatches<T>(
    source: AsyncIterable<Numbered<T>>,
    each: (batch: Numbered<T>[]) => Promise<void>,
  ) {
    let batch: Numbered<T>[] = [];
    for await (const item of source) {
      batch.push(item);
      if (batch.length === BATCH) {
        const full = batch;
        batch = [];
        await launch(() => each(full));
      }
    }
    if (batch.length > 0) await launch(() => each(batch));
    await drain();
  }

  const now = () => deps.clock().toISOString();
  /** Per customer, the depot view its users get (one entry per customer, not per user). */
  const depots = new Map<string, Promise<ReturnType<typeof depotOf>>>();

  // Pass 2: customers. Addresses first, the counter last: a counter marks a complete customer.
  await inBatches(records<CustomerImportRecord>('customer'), async (batch) => {
    const stored = empty
      ? new Map<string, never>()
      : await deps.store.readCustomers(
          batch.map(({ record }) => ({
            customerId: record.customerId,
            positions: record.pickupAddresses.length,
          })),
        );
    const addresses: Record<string, unknown>[] = [];
    const counters: Record<string, unknown>[] = [];
    const outcomes: [number, Outcome, string?][] = [];
    for (const { line, record } of batch) {
      const plan = planCustomer(record, stored.get(record.customerId) ?? null);
      if (plan.outcome === 'failed') {
        outcomes.push([line, 'failed', plan.reason]);
        continue;
      }
      outcomes.push([line, plan.outcome]);
      // After this pass the customer's addresses are the record's: the users pass needs no read.
      depots.set(record.customerId, Promise.resolve(depotOf(record.pickupAddresses.map((a) => a.depotCode))));
      if (plan.outcome === 'unchanged') continue;
      record.pickupAddresses.forEach((address, index) => {
        const position = index + 1;
        if (position < plan.fromPosition) return;
        addresses.push(
          accountItems.address({
            customerId: record.customerId,
            position,
            depotCode: address.depotCode,
            createdAt: address.createdAt ?? now(),
          }),
        );
      });
      counters.push(accountItems.counter(record.customerId, record.pickupAddresses.length));
    }
    if (!options.dryRun) {
      await deps.store.write(addresses);
      await deps.store.write(counters);
    }
    for (const [line, outcome, reason] of outcomes) settle(line, outcome, reason);
  });

  // Pass 3: users. The user item first, then its membership: a user whose membership is
  // missing is completed on the next run. The derived depot code: of a customer the file
  // brought, from its record; of one only in the table, from one read, kept for the pass.
  const depotFor = (customerId: string) => {
    let depot = depots.get(customerId);
    if (depot === undefined) {
      depot = deps.store
        .customerAddresses(customerId)
        .then((addresses) => depotOf(addresses.map((address) => address.depotCode)));
      depots.set(customerId, depot);
    }
    return depot;
  };
  await inBatches(records<UserImportRecord>('user'), async (batch) => {
    const stored = empty
      ? new Map<string, never>()
      : await deps.store.readUsers(
          batch.map(({ record }) => ({ username: record.username, customerId: record.customerId })),
        );
    const users: Record<string, unknown>[] = [];
    const members: Record<string, unknown>[] = [];
    const outcomes: [number, Outcome, string?][] = [];
    for (const { line, record } of batch) {
      const plan = await planUser(
        record,
        stored.get(foldUsername(record.username)) ?? null,
        deps.comparePassword,
      );
      outcomes.push('reason' in plan ? [line, plan.outcome, plan.reason] : [line, plan.outcome]);
      if (plan.outcome === 'failed' || plan.outcome === 'unchanged') continue;
      if (plan.outcome === 'kept' && !plan.completesMembership) continue;
      if (plan.outcome === 'created') {
        const passwordHash = record.passwordHash ?? (await deps.hashPassword(record.password ?? ''));
        const at = now();
        users.push(
          accountItems.user({
            username: record.username,
            passwordHash,
            enabled: record.enabled,
            customerId: record.customerId,
            depot: record.customerId === null ? depotOf([]) : await depotFor(record.customerId),
            revokedBefore: revocationCutoff(deps.clock()),
            createdAt: record.createdAt ?? at,
            updatedAt: at,
          }),
        );
      }
      if (record.customerId !== null) members.push(accountItems.member(record.customerId, record.username));
    }
    if (!options.dryRun) {
      await deps.store.write(users);
      await deps.store.write(members);
    }
    for (const [line, outcome, reason] of outcomes) settle(line, outcome, reason);
  });

  // Pass 4: clients, a batch at a time and read one by one (a stage has tens of them, not
  // thousands): one GetItem in flight. A file without clients is not read a fourth time. The
  // cutoff revokes any token of the client's id issued before the import on this stage, as a
  // user's does.
  const importClients = async (batch: readonly Numbered<ClientImportRecord>[]) => {
    const items: Record<string, unknown>[] = [];
    const outcomes: [number, Outcome, string?][] = [];
    for (const { line, record } of batch) {
      const stored = empty ? null : await deps.store.clients.findClient(record.clientId);
      const plan = planClient(record, stored, deps.clock());
      outcomes.push(plan.outcome === 'failed' ? [line, 'failed', plan.reason] : [line, plan.outcome]);
      if (plan.outcome !== 'created') continue;
      const at = now();
      const { customerId, redirectUris, name } = record;
      items.push(
        clientItem({
          clientId: record.clientId,
          // The record has exactly one of the two (ClientImportSchema).
          ...(redirectUris !== undefined && name !== undefined
            ? { name, platform: { redirectUris } }
            : { customerId: customerId ?? '', ...(name !== undefined && { name }) }),
          scopes: record.scopes,
          enabled: record.enabled,
          secrets: record.secrets,
          revokedBefore: revocationCutoff(deps.clock()),
          createdAt: record.createdAt ?? at,
          updatedAt: at,
        }),
      );
    }
    if (!options.dryRun) await deps.store.write(items);
    for (const [line, outcome, reason] of outcomes) settle(line, outcome, reason);
  };
  if (validation.clients > 0) {
    let batch: Numbered<ClientImportRecord>[] = [];
    for await (const item of records<ClientImportRecord>('client')) {
      batch.push(item);
      if (batch.length < BATCH) continue;
      await importClients(batch);
      batch = [];
    }
    await importClients(batch);
  }

  problems.sort((a, b) => a.line - b.line);
  return { problems, summary, written: !options.dryRun };
}
