/**
 * The warm login functions at one bcrypt cost against their floor: a bcryptjs compare of the
 * same password against the same stored hash at the same cost, between the login's two
 * DynamoDB steps made bare (the same six requests on the same client settings, the counters'
 * through the throttle's own store: before the compare, the user's consistent GetItem and an
 * UpdateItem of each attempt counter in parallel; after it, the session's PutItem and an
 * UpdateItem of each counter in parallel).
 * The compare alone and one GetItem are timed too. The first (warm-up) login has already
 * upgraded the seeded cost-4 hash to the stage's cost when the compare reads it.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import bcrypt from 'bcryptjs';
import { createDynamoStatusReader } from '../../lib/accounts/dynamodb.ts';
import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { tableNames } from '../../lib/stage.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { counterPeriod } from '../../lib/throttle/throttle.ts';
import { lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';
import { call200, credentialsBody, type HttpHandler, importLogin, importLoginExtended } from './handlers.ts';
import { interleaved, type Plan, type Variant } from './measure.ts';
import type { LoginResult } from './results.ts';
import { benchStage, PASSWORD } from './stage.ts';

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
    await call200(login, body);
    const hash = (await stage.accounts.findByUsername('alice'))?.passwordHash;
    if (hash === undefined || bcrypt.getRounds(hash) !== options.cost) {
      throw new Error(`the stored hash is not at cost ${options.cost}`);
    }
    const client = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
    const tables = tableNames(stage.name);
    const statusReader = createDynamoStatusReader({ client, tableName: tables.accounts });
    // The counters' requests exactly as the login sends them: the emulator's cost of their
    // condition expressions is DynamoDB's work, not the function's.
    const counters = createDynamoThrottleStore({ client, tableName: tables.loginThrottle });
    const reserve = (counterKey: string, now: number) =>
      counters.reserve(counterKey, {
        now,
        windowStart: now - 86_400_000,
        limit: 1_000_000,
        heldSince: now - 30_000,
        expiresAt: Math.ceil(now / 1000) + 86_400,
        attempt: randomUUID(),
      });
    const floor = async () => {
      const nowMs = Date.now();
      const now = Math.floor(nowMs / 1000);
      const [user] = await Promise.all([
        client.send(
          new GetCommand({
            TableName: tables.accounts,
            Key: { pk: 'USER#alice', sk: 'USER' },
            ConsistentRead: true,
          }),
        ),
        reserve('FLOOR#USER', nowMs),
        reserve('FLOOR#IP', nowMs),
      ]);
      if (!(await bcrypt.compare(PASSWORD, String(user.Item?.passwordHash))))
        throw new Error('compare failed');
      await Promise.all([
        client.send(
          new PutCommand({
            TableName: tables.sessions,
            Item: { sessionId: randomUUID(), username: 'alice', createdAt: now, expiresAt: now + 86_400 },
          }),
        ),
        counters.reset('FLOOR#USER', counterPeriod(nowMs, nowMs - 86_400_000)),
        counters.release('FLOOR#IP', randomUUID(), counterPeriod(nowMs, nowMs - 86_400_000), false),
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
      ],
      options.plan,
    );
    const {
      login: loginSample,
      loginExtended: extendedSample,
      compare,
      getItem,
      floor: floorSample,
    } = samples;
    client.destroy();
    return {
      part: 'login',
      cost: options.cost,
      samples: { login: loginSample, loginExtended: extendedSample, compare, getItem, floor: floorSample },
    };
  } finally {
    await stage.close();
  }
}
