/**
 * Known sources on a real DynamoDB: what the table holds of them (never an address), the
 * requests a login sends with them, and the pruning done in the success's own write.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  knownSourceCounterKey,
  knownSourceTag,
  MAX_KNOWN_SOURCES,
  usernameCounterKey,
} from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import type { ThrottleSettings } from '../../lib/throttle/throttle.ts';
import { describeEachDynamo, recordSends, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { COUNTER_SECRET } from '../support/keys.ts';
import { ADDRESS_POLICY, NAME_POLICY, throttleOn } from '../support/login-throttle.ts';

const KNOWN_SECONDS = 30 * 86_400;
const STRANGERS = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.5'];

describeEachDynamo('known sources on DynamoDB', (kind) => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
  });
  afterAll(() => dynamo?.close());

  /**
   * The throttle on the real store, its requests written down by command name. From the real
   * time: DynamoDB Local's TTL sweep would remove counters whose expiresAt passed.
   */
  const setup = (username: string, settings: Partial<ThrottleSettings> = {}) => {
    const { sent, client } = recordSends(dynamo.documentClient);
    const store = createDynamoThrottleStore({ client, tableName: dynamo.tables.loginThrottle });
    const on = throttleOn(
      store,
      { sourceIp: ADDRESS_POLICY, knownSourceSeconds: KNOWN_SECONDS, ...settings },
      Date.now(),
    );
    const nameKey = usernameCounterKey(username, COUNTER_SECRET);
    const from = (sourceIp: string) => ({ username, sourceIp });
    /** The requests `call` sends, by command name, sorted. */
    const requestsOf = async (call: () => Promise<unknown>) => {
      sent.length = 0;
      await call().catch(() => {});
      return [...sent].sort();
    };
    const lockByStrangers = async () => {
      for (const sourceIp of STRANGERS) await on.fail(from(sourceIp));
    };
    return { ...on, nameKey, from, requestsOf, lockByStrangers };
  };
  const rawItem = async (counterKey: string) =>
    (
      await dynamo.documentClient.send(
        new GetCommand({ TableName: dynamo.tables.loginThrottle, Key: { counterKey }, ConsistentRead: true }),
      )
    ).Item ?? {};
  const knownAttributes = (item: Record<string, unknown>) =>
    Object.keys(item).filter((name) => name.startsWith('known_'));

  it('keeps a known source as a tag on the name’s counter and its own counter, never its address', async () => {
    const home = '203.0.113.10';
    const phone = '2001:db8:77:1::10';
    const { succeed, fail, lockByStrangers, from, nameKey } = setup('private', {
      sourceIp: { ...ADDRESS_POLICY, limit: 0 },
    });
    await succeed(from(home));
    await succeed(from(phone));
    await lockByStrangers();
    await fail(from(home));

    const tag = knownSourceTag(nameKey, home, COUNTER_SECRET);
    expect(knownAttributes(await rawItem(nameKey)).sort()).toEqual(
      [`known_${tag}`, `known_${knownSourceTag(nameKey, phone, COUNTER_SECRET)}`].sort(),
    );
    expect(await rawItem(knownSourceCounterKey(nameKey, tag))).toMatchObject({
      counterKey: `${nameKey}#${tag}`,
    });
    // Address counters off: nothing in the table is keyed by an address, so none may appear.
    const { Items = [] } = await dynamo.documentClient.send(
      new ScanCommand({ TableName: dynamo.tables.loginThrottle }),
    );
    const table = JSON.stringify(Items);
    for (const text of [home, phone, '2001:db8:77:1', '2001:0db8:0077:0001', ...STRANGERS]) {
      expect(table).not.toContain(text);
    }
  });

  it('sends four writes and no read for a login on an unlocked name, its known source remembered in the success’s own write', async () => {
    const { succeed, fail, from, requestsOf, nameKey } = setup('normal');
    const writes = Array(4).fill('UpdateCommand');

    expect(await requestsOf(() => succeed(from('203.0.113.10')))).toEqual(writes);
    expect(await requestsOf(() => fail(from('203.0.113.10')))).toEqual(writes);
    expect(await requestsOf(() => succeed(from('203.0.113.11')))).toEqual(writes);
    expect(knownAttributes(await rawItem(nameKey))).toHaveLength(2);
  });

  it('keeps a stranger’s failures through the owner’s logins and tells the stranger nothing of them: at the limit the name locks (issue 42)', async () => {
    // The audit's attack: guess up to one left, wait for the owner's routine login, go on.
    const { succeed, fail, refusal, from, nameKey, logged, metrics } = setup('audited');
    const home = '203.0.113.10';
    const stranger = from('198.51.100.40');
    const failuresOf = (item: Record<string, unknown>) => item[`failures${String(item.period)}`];
    await succeed(from(home));
    const guesses = [];
    for (let i = 1; i < NAME_POLICY.limit; i += 1) guesses.push(await fail(stranger));

    const owner = await succeed(from(home));

    expect(failuresOf(await rawItem(nameKey))).toBe(NAME_POLICY.limit - 1);
    expect(owner).toContainEqual(expect.objectContaining({ policy: 'username', remaining: 1 }));
    guesses.push(await fail(stranger));
    expect(guesses.map((states) => states.map(({ policy }) => policy))).toEqual(
      Array(NAME_POLICY.limit).fill(['address']),
    );
    expect(logged('lockout started')).toEqual([
      expect.objectContaining({ counter: 'username', failures: NAME_POLICY.limit }),
    ]);
    expect(metrics.names()).toContain('LockoutStarted{counter=Username}');
    expect(await refusal(stranger)).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(await refusal(from(home))).toBe('granted');
  });

  it('reads the known sources only with the refusal of a locked name, spending one write more on the source’s own counter', async () => {
    const { succeed, refusal, lockByStrangers, from, requestsOf, throttle } = setup('locked');
    await succeed(from('203.0.113.10'));
    await lockByStrangers();

    // Refused: the name's write, its refusal's read, the address's write and its giving back.
    expect(await requestsOf(() => refusal(from('203.0.113.99')))).toEqual([
      'GetCommand',
      'UpdateCommand',
      'UpdateCommand',
      'UpdateCommand',
    ]);
    // Spared: the same, the source's own counter counted, then reset and the source remembered.
    let spared = false;
    expect(
      await requestsOf(async () => {
        const reservation = await throttle.begin(from('203.0.113.10'));
        spared = reservation.spared;
        await throttle.succeeded(reservation);
      }),
    ).toEqual(['GetCommand', ...Array(6).fill('UpdateCommand')]);
    expect(spared).toBe(true);
  });

  it('lets a known source in while strangers have locked the name, which stays locked for them', async () => {
    const { succeed, fail, refusal, lockByStrangers, from, nameKey } = setup('shared');
    await succeed(from('203.0.113.10'));
    await succeed(from('203.0.113.20'));
    await lockByStrangers();
    const locked = await rawItem(nameKey);

    await succeed(from('203.0.113.10'));
    for (let i = 0; i < 5; i += 1) await fail(from('203.0.113.20'));

    expect(await refusal(from('198.51.100.99'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(await refusal(from('203.0.113.20'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(await refusal(from('203.0.113.10'))).toBe('granted');
    expect(await rawItem(nameKey)).toMatchObject({ lockedUntil: locked.lockedUntil });
  });

  it('forgets a source knownSourceSeconds after its last success', async () => {
    const { succeed, refusal, lockByStrangers, from, advance } = setup('forgotten');
    await succeed(from('2001:db8:1:2::10'));
    advance(KNOWN_SECONDS * 1000 - 1);
    await lockByStrangers();

    expect(await refusal(from('2001:db8:1:2::99'))).toBe('granted');
    advance(1);
    expect(await refusal(from('2001:db8:1:2::99'))).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it(`keeps at most ${MAX_KNOWN_SOURCES} and forgets the expired ones in the success’s own write`, async () => {
    const { succeed, from, requestsOf, advance, nameKey } = setup('travels', {
      sourceIp: { ...ADDRESS_POLICY, limit: 0 },
    });
    const source = (i: number) => `10.1.${Math.floor(i / 256)}.${i % 256}`;
    for (let i = 0; i <= MAX_KNOWN_SOURCES; i += 1) {
      await succeed(from(source(i)));
      advance(1000);
    }
    const kept = knownAttributes(await rawItem(nameKey));
    expect(kept).toHaveLength(MAX_KNOWN_SOURCES);
    expect(kept).not.toContain(`known_${knownSourceTag(nameKey, source(0), COUNTER_SECRET)}`);
    advance(KNOWN_SECONDS * 1000);

    const requests = await requestsOf(() => succeed(from('203.0.113.10')));

    expect(requests).toEqual(['UpdateCommand', 'UpdateCommand']);
    expect(knownAttributes(await rawItem(nameKey))).toEqual([
      `known_${knownSourceTag(nameKey, '203.0.113.10', COUNTER_SECRET)}`,
    ]);
  });

  it('keeps the known sources through an operator’s unlock of the name, and removes a source’s counter with a clear', async () => {
    const { succeed, fail, lockByStrangers, refusal, from, nameKey } = setup('unlocked');
    const store = createDynamoThrottleStore({
      client: dynamo.documentClient,
      tableName: dynamo.tables.loginThrottle,
    });
    await succeed(from('203.0.113.10'));
    await lockByStrangers();
    for (let i = 0; i < 5; i += 1) await fail(from('203.0.113.10'));
    const own = knownSourceCounterKey(nameKey, knownSourceTag(nameKey, '203.0.113.10', COUNTER_SECRET));

    await store.unlock(nameKey);
    await store.clear(own);

    expect(await rawItem(own)).toEqual({});
    const item = await rawItem(nameKey);
    expect(item).toMatchObject({ lockedUntil: 0 });
    expect(Object.keys(item).filter((name) => /^(failures|inflight)/.test(name))).toEqual([]);
    expect(knownAttributes(item)).toHaveLength(1);
    expect(await refusal(from('198.51.100.99'))).toBe('granted');
  });
});
