/**
 * The warm login functions at one bcrypt cost against their floor: a bcryptjs compare of the
 * same password against the same stored hash at the same cost, between the login's two
 * DynamoDB steps made bare (the same six requests on the same client settings, the counters'
 * through the throttle's own store: before the compare, the user's consistent GetItem and an
 * UpdateItem of each attempt counter in parallel; after it, the session's PutItem and an
 * UpdateItem of each counter in parallel).
 * The compare alone and one GetItem are timed too. The first (warm-up) login has already
 * upgraded the seeded cost-4 hash to the stage's cost when the compare reads it.
 *
 * The login from a known source while strangers have locked the name (dev/bench/known-source.ts)
 * is timed beside it, as alice's colleague, against its own floor: the same compare between the
 * same requests made bare (the name's refused write and its refusal read, then the source's own
 * counter's write; after the compare, that counter's reset and then the name's remember write).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import { createDynamoStatusReader } from '../../lib/accounts/dynamodb-status.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { knownSourceCounterKey, knownSourceTag, usernameCounterKey } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';
import { bareCounters } from './counters.ts';
import {
  BENCH_SOURCE,
  call200,
  credentialsBody,
  type HttpHandler,
  importLogin,
  importLoginExtended,
} from './handlers.ts';
import { lockByStrangers } from './known-source.ts';
import { interleaved, type Plan, type Variant } from './measure.ts';
import type { LoginResult } from './results.ts';
import { benchStage, COLLEAGUE, PASSWORD } from './stage.ts';

/** A handler on fresh copies of one successful login event (the body parser replaces `body`). */
function handlerVariant<TName extends string>(
  name: TName,
  handler: HttpHandler,
  body: string,
): Variant<TName> {
  const template = loginEvent(body);
  const context = lambdaContext();
  let events: APIGatewayProxyEvent[] = [];
  return {
    name,
    prepare: (calls) => {
      events = Array.from({ length: calls }, () => structuredClone(template));
    },
    run: async (index) => {
      const event = events[index];
      if (event === undefined) throw new Error('no event prepared');
      const response = await handler(event, context);
      if (response.statusCode !== 200) throw new Error(`${name} answered ${response.statusCode}`);
    },
  };
}

export async function loginPart(options: {
  endpoint: string;
  cost: number;
  plan: Plan;
}): Promise<LoginResult> {
  const stage = await benchStage({ endpoint: options.endpoint, env: { BCRYPT_COST: String(options.cost) } });
  try {
    const login = await importLogin();
    const loginExtended = await importLoginExtended();
    const body = credentialsBody('alice', PASSWORD);
    const colleagueBody = credentialsBody(COLLEAGUE, PASSWORD);
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
    const tables = tableNames(stage.name);
    const locked = await lockByStrangers({
      handler: login,
      store: createDynamoThrottleStore({ client, tableName: tables.loginThrottle }),
      nameKey: usernameCounterKey(COLLEAGUE, stage.counterSecret),
      counterSecret: stage.counterSecret,
      right: () => loginEvent(colleagueBody),
      wrong: () => loginEvent(credentialsBody(COLLEAGUE, `not-${PASSWORD}`)),
    });
    await call200(login, body);
    // Each one's first login has upgraded the seeded cost-4 hash to the stage's cost.
    const storedHash = async (username: string) => {
      const stored = (await stage.accounts.findByUsername(username))?.passwordHash;
      if (stored === undefined || bcrypt.getRounds(stored) !== options.cost) {
        throw new Error(`${username}'s stored hash is not at cost ${options.cost}`);
      }
      return stored;
    };
    const hash = await storedHash('alice');
    await storedHash(COLLEAGUE);
    const statusReader = createDynamoStatusReader({ client, tableName: tables.accounts });
    const counters = bareCounters(client, tables.loginThrottle);
    const readUser = (username: string) =>
      client.send(
        new GetCommand({
          TableName: tables.accounts,
          Key: { pk: `USER#${username}`, sk: 'USER' },
          ConsistentRead: true,
        }),
      );
    const startSession = (username: string, at: number) => {
      const now = Math.floor(at / 1000);
      return client.send(
        new PutCommand({
          TableName: tables.sessions,
          Item: { sessionId: randomUUID(), username, createdAt: now, expiresAt: now + 86_400 },
        }),
      );
    };
    const check = async (user: { Item?: Record<string, unknown> }) => {
      if (!(await bcrypt.compare(PASSWORD, String(user.Item?.passwordHash))))
        throw new Error('compare failed');
    };
    // A locked name of the floors' own, and the bench's source's tag for it, as the handler's.
    const lockedName = await counters.locked('FLOOR#LOCKED');
    const tag = knownSourceTag(lockedName, BENCH_SOURCE, stage.counterSecret);
    const own = knownSourceCounterKey(lockedName, tag);
    const floor = async () => {
      const attempt = { id: randomUUID(), at: Date.now() };
      const [user] = await Promise.all([
        readUser('alice'),
        counters.reserveName('FLOOR#USER', attempt, tag),
        counters.reserveAddress('FLOOR#IP', attempt),
      ]);
      await check(user);
      await Promise.all([
        startSession('alice', attempt.at),
        counters.reset('FLOOR#USER', attempt, tag),
        counters.release('FLOOR#IP', attempt),
      ]);
    };
    const knownSourceFloor = async () => {
      const attempt = { id: randomUUID(), at: Date.now() };
      const [user] = await Promise.all([
        readUser(COLLEAGUE),
        counters.reserveKnownSource(lockedName, own, attempt, tag),
        counters.reserveAddress('FLOOR#IP', attempt),
      ]);
      await check(user);
      await Promise.all([
        startSession(COLLEAGUE, attempt.at),
        counters.succeedKnownSource(lockedName, own, attempt, tag),
        counters.release('FLOOR#IP', attempt),
      ]);
    };
    const samples = await interleaved(
      [
        handlerVariant('login', login, body),
        handlerVariant('loginExtended', loginExtended, body),
        {
          // One DynamoDB round trip on loopback, as the handlers' client makes it.
          name: 'getItem',
          run: async () => {
            if ((await statusReader.findStatus('alice')) === null) throw new Error('alice not found');
          },
        },
        {
          name: 'compare',
          run: async () => {
            if (!(await bcrypt.compare(PASSWORD, hash))) throw new Error('compare failed');
          },
        },
        { name: 'floor', run: floor },
        handlerVariant('knownSourceLogin', login, colleagueBody),
        { name: 'knownSourceFloor', run: knownSourceFloor },
      ],
      options.plan,
    );
    await locked.assertStillLocked();
    client.destroy();
    return { part: 'login', cost: options.cost, samples };
  } finally {
    await stage.close();
  }
}
