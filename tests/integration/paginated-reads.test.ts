/**
 * The reads that follow LastEvaluatedKey from page to page, on each DynamoDB implementation,
 * with one item a page (Limit 1, set on each Query and Scan as it leaves) so that every read
 * crosses page boundaries: nothing is missed or read twice, a failure on a later page answers
 * as one on the first page does, and the bulk store asks a throttled page again from where it
 * stopped.
 */
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDynamoAccountRepository } from '../../lib/accounts/dynamodb.ts';
import type { AuditEvent } from '../../lib/audit/audit.ts';
import { createDynamoAuditTrail } from '../../lib/audit/dynamodb.ts';
import { createBulkAccountStore } from '../../ops/accounts/bulk-dynamodb.ts';
import { describeEachDynamo, interceptSends, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { codeOf } from '../support/errors.ts';

type Item = Record<string, unknown>;

/** An error as the SDK throws it for a DynamoDB answer named `name`. */
const answered = (name: string) => Object.assign(new Error(name), { name });

describeEachDynamo('paginated reads', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  /**
   * The document client with one item a page for every Query and Scan; the n-th of them (from
   * 1) fails with `fail(n)` instead of being sent, when that gives an error. `starts` holds the
   * ExclusiveStartKey of each, as it was when sent.
   */
  const onePerPage = (fail: (read: number) => Error | undefined = () => undefined) => {
    const starts: (Item | undefined)[] = [];
    const client = interceptSends(dynamo.documentClient, (command) => {
      if (!(command instanceof QueryCommand || command instanceof ScanCommand)) return;
      command.input.Limit = 1;
      starts.push(structuredClone(command.input.ExclusiveStartKey));
      const error = fail(starts.length);
      if (error !== undefined) throw error;
    });
    return { client, starts };
  };

  const users = () =>
    createDynamoAccountRepository({ client: dynamo.documentClient, tableName: dynamo.tables.accounts });
  const newMember = (username: string, customerId: string) =>
    users().createUser({ username, passwordHash: '$2b$04$hash', customerId });

  /** An operator's event of `customerId` at `at`. */
  const event = (customerId: string, at: string): AuditEvent => ({
    customerId,
    type: 'client.created',
    at,
    actor: 'operator:jane',
    source: 'operator',
    expiresAt: 4_102_444_800,
  });

  it('keeps the newest events of every customer over the pages of the trail’s Scan', async () => {
    const trail = createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit });
    for (const [customerId, second] of [
      ['C-a', 1],
      ['C-b', 2],
      ['C-a', 3],
      ['C-c', 4],
    ] as const)
      await trail.append(event(customerId, `2026-05-01T08:00:0${second}.000Z`));
    const { client, starts } = onePerPage();

    const { events } = await createDynamoAuditTrail({ client, tableName: dynamo.tables.audit }).list({
      limit: 2,
    });

    expect(events.map(({ customerId, at }) => [customerId, at])).toEqual([
      ['C-c', '2026-05-01T08:00:04.000Z'],
      ['C-a', '2026-05-01T08:00:03.000Z'],
    ]);
    expect(starts.length).toBeGreaterThanOrEqual(4);
  });

  it('answers DEPENDENCY_UNAVAILABLE when a later page of the trail’s Scan fails, and reads no further', async () => {
    const trail = createDynamoAuditTrail({ client: dynamo.documentClient, tableName: dynamo.tables.audit });
    await trail.append(event('C-d', '2026-05-01T07:00:00.000Z'));
    await trail.append(event('C-e', '2026-05-01T07:00:01.000Z'));
    const { client, starts } = onePerPage((read) =>
      read === 2 ? answered('InternalServerError') : undefined,
    );

    const listed = createDynamoAuditTrail({ client, tableName: dynamo.tables.audit }).list({ limit: 10 });

    expect(await codeOf(listed)).toBe('DEPENDENCY_UNAVAILABLE');
    expect(starts).toHaveLength(2);
  });

  it('brings every member of a customer up to date from the pages after its addresses', async () => {
    // The partition in key order: the address, the counter, then the members, a page each.
    for (const username of ['paged-a', 'paged-b', 'paged-c']) await newMember(username, 'C-paged');
    const { client, starts } = onePerPage();
    const paged = createDynamoAccountRepository({ client, tableName: dynamo.tables.accounts });

    await paged.addPickupAddress('C-paged', 'D1');

    for (const username of ['paged-a', 'paged-b', 'paged-c'])
      expect((await users().findByUsername(username))?.depotCode, username).toBe('D1');
    expect(await paged.listPickupAddresses('C-paged')).toMatchObject([{ position: 1, depotCode: 'D1' }]);
    expect(starts.filter((start) => start !== undefined).length).toBeGreaterThanOrEqual(4);
  });

  it('answers DEPENDENCY_UNAVAILABLE when a later page of a customer’s Query fails', async () => {
    await newMember('failing-a', 'C-failing');
    await users().addPickupAddress('C-failing', 'D1');
    const { client, starts } = onePerPage((read) =>
      read === 2 ? answered('InternalServerError') : undefined,
    );
    const paged = createDynamoAccountRepository({ client, tableName: dynamo.tables.accounts });

    expect(await codeOf(paged.listPickupAddresses('C-failing'))).toBe('DEPENDENCY_UNAVAILABLE');
    expect(starts).toHaveLength(2);
  });

  /** Every item the bulk store's scan yields on `client`, as `pk sk`. */
  const scanned = async (client = dynamo.documentClient) => {
    const keys: string[] = [];
    const bulk = createBulkAccountStore({ client, tableName: dynamo.tables.accounts, sleep: async () => {} });
    for await (const item of bulk.scan()) keys.push(`${item.pk} ${item.sk}`);
    return keys;
  };

  it('scans every item of the table once in bulk, asking a throttled page again from where it stopped', async () => {
    for (const username of ['bulk-a', 'bulk-b']) await newMember(username, 'C-bulk');
    const whole = await scanned();
    // The first page throttled, and a later one.
    const { client, starts } = onePerPage((read) =>
      read === 1 || read === 4 ? answered('ThrottlingException') : undefined,
    );

    const keys = await scanned(client);

    expect(keys.sort()).toEqual(whole.sort());
    expect(new Set(keys).size).toBe(keys.length);
    expect(starts[0]).toBeUndefined();
    expect(starts[1]).toBeUndefined();
    expect(starts[3]).toBeDefined();
    expect(starts[4]).toEqual(starts[3]);
    expect(starts.length).toBeGreaterThan(whole.length);
  });

  it('gives up a bulk scan whose later page fails other than by throttling: DEPENDENCY_UNAVAILABLE, not asked again', async () => {
    for (const username of ['bulk-down-a', 'bulk-down-b']) await newMember(username, 'C-bulk-down');
    const { client, starts } = onePerPage((read) =>
      read === 2 ? answered('InternalServerError') : undefined,
    );

    expect(await codeOf(scanned(client))).toBe('DEPENDENCY_UNAVAILABLE');
    expect(starts).toHaveLength(2);
  });

  it('reads a customer’s addresses and members in bulk by Queries over several pages', async () => {
    for (const username of ['bulk-m-b', 'bulk-m-a', 'bulk-m-c']) await newMember(username, 'C-bulk-q');
    for (const depot of ['Q1', 'Q2', 'Q3']) await users().addPickupAddress('C-bulk-q', depot);
    const { client, starts } = onePerPage();
    const bulk = createBulkAccountStore({ client, tableName: dynamo.tables.accounts });

    const addresses = await bulk.customerAddresses('C-bulk-q');
    const addressReads = starts.length;
    const members = await bulk.members('C-bulk-q');

    expect(addresses.map(({ depotCode }) => depotCode)).toEqual(['Q1', 'Q2', 'Q3']);
    expect(members).toEqual(['bulk-m-a', 'bulk-m-b', 'bulk-m-c']);
    expect(addressReads).toBeGreaterThanOrEqual(3);
    expect(starts.length - addressReads).toBeGreaterThanOrEqual(3);
  });
});
