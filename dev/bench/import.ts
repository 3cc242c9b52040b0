/**
 * Bulk import throughput: `importFile` (ops/accounts/import.ts: three passes, reads before
 * writes, four DynamoDB calls in flight) against its floor, a bare BatchWriteItem loop that
 * writes the very same items, 25 per call with four calls in flight, and nothing else; each into
 * fresh tables of the parent's embedded DynamoDB, in the same run. The DynamoDB runs in the
 * parent, and the file and the bare loop's items are made as streams, so the memory measured
 * here is the importer's own.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import bcrypt from 'bcryptjs';
import { accountItems } from '../../lib/accounts/dynamodb-items.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { depotOf } from '../../ops/accounts/bulk.ts';
import { createBulkAccountStore } from '../../ops/accounts/bulk-dynamodb.ts';
import { importFile } from '../../ops/accounts/import.ts';
import { localDynamoClient } from '../local/dynalite.ts';
import { ensureTables } from '../local/tables.ts';
import type { ImportBenchResult } from './results.ts';

const USERS_PER_CUSTOMER = 10;
const IN_FLIGHT = 4;

const depots = (c: number) => ['', `D${c % 100}`];

/** The file's lines: customers with two addresses each, then `users` users spread over them. */
function* records(users: number, customers: number, hash: string): Generator<string> {
  for (let c = 0; c < customers; c += 1) {
    const pickupAddresses = depots(c).map((depotCode) => ({ depotCode }));
    yield `${JSON.stringify({ type: 'customer', customerId: `C-${c}`, pickupAddresses })}\n`;
  }
  for (let u = 0; u < users; u += 1) {
    const user = {
      type: 'user',
      username: `user-${u}`,
      customerId: `C-${u % customers}`,
      passwordHash: hash,
    };
    yield `${JSON.stringify(user)}\n`;
  }
}

/** The items the import writes for those records, from the same builders, one by one. */
function* items(users: number, customers: number, hash: string): Generator<Record<string, unknown>> {
  const at = new Date().toISOString();
  for (let c = 0; c < customers; c += 1) {
    const customerId = `C-${c}`;
    for (const [index, depotCode] of depots(c).entries()) {
      yield accountItems.address({ customerId, position: index + 1, depotCode, createdAt: at });
    }
    yield accountItems.counter(customerId, 2);
  }
  for (let u = 0; u < users; u += 1) {
    const c = u % customers;
    const customerId = `C-${c}`;
    yield accountItems.user({
      username: `user-${u}`,
      passwordHash: hash,
      enabled: true,
      customerId,
      depot: depotOf(depots(c)),
      revokedBefore: 1,
      createdAt: at,
      updatedAt: at,
    });
    yield accountItems.member(customerId, `user-${u}`);
  }
}

/** Writes `all`, 25 items per BatchWriteItem with four in flight; resolves with the item count. */
async function bareLoop(
  client: DynamoDBDocumentClient,
  tableName: string,
  all: Iterator<Record<string, unknown>>,
): Promise<number> {
  let written = 0;
  const take = () => {
    const chunk: Record<string, unknown>[] = [];
    while (chunk.length < 25) {
      const next = all.next();
      if (next.done === true) break;
      chunk.push(next.value);
    }
    return chunk;
  };
  const worker = async () => {
    for (let chunk = take(); chunk.length > 0; chunk = take()) {
      written += chunk.length;
      let pending = chunk.map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const request = pending;
        const answer = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: request } }));
        pending = (answer.UnprocessedItems?.[tableName] ?? []) as typeof pending;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return written;
}

export async function importPart(options: { endpoint: string; users: number }): Promise<ImportBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-bench-import-'));
  const client = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
  const stage = `bulk${randomUUID().slice(0, 8)}`;
  try {
    const hash = bcrypt.hashSync('a-bench-password', 4);
    const customers = Math.ceil(options.users / USERS_PER_CUSTOMER);
    const file = join(dir, 'import.jsonl');
    await pipeline(Readable.from(records(options.users, customers, hash)), createWriteStream(file));
    const setup = localDynamoClient(options.endpoint);
    for (const name of ['bare1', 'import', 'bare2']) await ensureTables(setup, `${stage}${name}`);
    setup.destroy();
    // The embedded DynamoDB slows down as it fills: the floor is run before and after the
    // import, and their mean taken, so neither side gets the emptier database.
    const bare = async (name: string) => {
      const started = performance.now();
      const count = await bareLoop(
        client,
        tableNames(`${stage}${name}`).accounts,
        items(options.users, customers, hash),
      );
      return { count, seconds: (performance.now() - started) / 1000 };
    };
    const before = await bare('bare1');
    const itemCount = before.count;

    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    const started = performance.now();
    const result = await importFile(
      {
        store: createBulkAccountStore({
          client,
          tableName: tableNames(`${stage}import`).accounts,
          maxInFlight: IN_FLIGHT,
        }),
        lines: () =>
          createInterface({
            input: createReadStream(file, { encoding: 'utf8' }),
            crlfDelay: Number.POSITIVE_INFINITY,
          }),
        importBcryptMaxCost: 4, // the cost of the bench's hash
        hashPassword: async () => {
          throw new Error('the bench imports hashes only');
        },
        comparePassword: async () => false,
        clock: () => new Date(),
      },
      { dryRun: false, skipInvalid: false },
    );
    const importSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const after = await bare('bare2');
    const bareSeconds = (before.seconds + after.seconds) / 2;
    const recordCount = customers + options.users;
    if (result.summary.created !== recordCount) {
      throw new Error(`imported ${result.summary.created} of ${recordCount} records`);
    }
    return {
      part: 'import',
      users: options.users,
      customers,
      records: recordCount,
      items: itemCount,
      bareSeconds,
      importSeconds,
      ratio: bareSeconds / importSeconds,
      baseRssMiB: baseRss / 1024 ** 2,
      peakRssMiB: peakRss / 1024 ** 2,
    };
  } finally {
    client.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
