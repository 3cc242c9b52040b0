/**
 * A hot key hammered: the login handler on the embedded DynamoDB, behind a small HTTP
 * adapter on loopback, driven by autocannon (bounded in requests and time). One integrator
 * username that many workers share, and one warehouse NAT address, are single items of the
 * login-throttle table: on AWS each meets DynamoDB's per-partition-key limit (1 000 write
 * units a second) and the in-flight limit of the brute-force counter (docs/CAPACITY.md).
 *
 * What the service must answer: 200, 401, 429 or 503 with Retry-After; never a 500. What it
 * must not do: lose a write (a session it answered 200 for, or a counted failure), leave an
 * attempt in flight, or check more passwords than the counter allows. The last scenario puts
 * a proxy between the handler and DynamoDB that throttles writes to the hot items as a hot
 * partition would (dynalite never throttles: an otherwise impossible fault, injected at the wire).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDynamoProxy } from '../../dev/local/dynamodb-proxy.ts';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { sourceIpCounterKey, usernameCounterKey } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { lambdaContext, loginEvent } from '../fixtures/events.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'a-long-test-password';
const LIMIT = 5; // loginFailureLimit of the stage the harness reads (serverless.yml default)
const INFLIGHT_LIMIT = 50; // loginInflightLimit, likewise
const REQUESTS = 200;
const CONNECTIONS = 20;

interface Answer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly type: unknown;
}

const readBody = async (incoming: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * The proxy to DynamoDB (dev/local/dynamodb-proxy.ts) refusing writes to the login-throttle
 * items under `hotKeys` beyond `writesPerSecond` each, as DynamoDB throttles writes to a
 * partition key past its limit.
 */
async function startPartitionLimit(upstream: string) {
  const writes = new Map<string, number[]>();
  const limit = { writesPerSecond: Number.POSITIVE_INFINITY, hotKeys: new Set<string>(), throttled: 0 };
  const proxy = await startDynamoProxy(upstream);
  proxy.decide(({ action, body }) => {
    const key = (body.Key ?? body.Item) as { counterKey?: { S?: string } } | undefined;
    const counterKey = key?.counterKey?.S;
    if (
      !['UpdateItem', 'PutItem'].includes(action) ||
      counterKey === undefined ||
      !limit.hotKeys.has(counterKey)
    ) {
      return 'forward';
    }
    const now = Date.now();
    const recent = (writes.get(counterKey) ?? []).filter((at) => now - at < 1000);
    if (recent.length >= limit.writesPerSecond) {
      limit.throttled += 1;
      return 'throttle';
    }
    writes.set(counterKey, [...recent, now]);
    return 'forward';
  });
  return { endpoint: proxy.endpoint, limit, close: () => proxy.close() };
}

/** The login handler over HTTP on loopback, every request from `sourceIp`; it keeps every answer. */
async function serveLogin(handler: Handler) {
  const answers: Answer[] = [];
  let sourceIp = '';
  const server = createServer(async (incoming, outgoing) => {
    const event = loginEvent(await readBody(incoming));
    const result = await handler(
      {
        ...event,
        requestContext: { ...event.requestContext, identity: { ...event.requestContext.identity, sourceIp } },
      },
      lambdaContext(),
    );
    const headers = result.headers ?? {};
    answers.push({
      status: result.statusCode,
      retryAfter: headers['Retry-After'] === undefined ? undefined : String(headers['Retry-After']),
      type: result.statusCode === 200 ? undefined : (JSON.parse(result.body) as { type?: unknown }).type,
    });
    outgoing.writeHead(result.statusCode, headers as Record<string, string>);
    outgoing.end(result.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/login`;
  return {
    server,
    /** One login from `from`; resolves with its status. */
    async login(credentials: { username: string; password: string }, from: string) {
      sourceIp = from;
      const response = await fetch(url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      await response.arrayBuffer();
      return response.status;
    },
    /** Sends REQUESTS logins over CONNECTIONS connections from `from`; resolves with their answers. */
    async hammer(credentials: { username: string; password: string }, from: string) {
      sourceIp = from;
      answers.length = 0;
      const result = await autocannon({
        url: url(),
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
        connections: CONNECTIONS,
        amount: REQUESTS,
        duration: 60,
        timeout: 20,
      });
      expect(result.errors, 'connection errors or timeouts').toBe(0);
      return [...answers];
    },
  };
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let proxy: Awaited<ReturnType<typeof startPartitionLimit>>;
let http: Awaited<ReturnType<typeof serveLogin>>;
let cleanupKeys: () => Promise<void>;
let counterSecret: Uint8Array;
let accounts: Awaited<ReturnType<typeof seedHandlerUsers>>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  proxy = await startPartitionLimit(dynamo.endpoint);
  const fixture = await functionEnv({ endpoint: proxy.endpoint, tables: dynamo.tables });
  const { env } = fixture;
  cleanupKeys = fixture.cleanup;
  counterSecret = fixture.counterSecret;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  accounts = await seedHandlerUsers(dynamo, PASSWORD);
  http = await serveLogin((await import('../../functions/login.ts')).handler as Handler);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await closeServer(http.server);
  await proxy.close();
  await dynamo.close();
  await cleanupKeys();
});

captureServiceLogs();

/** A counter's failures, read through the store (its item keeps them per period). */
const counter = async (key: string) => {
  const store = createDynamoThrottleStore({
    client: dynamo.documentClient,
    tableName: dynamo.tables.loginThrottle,
  });
  return (await store.read([key])).get(key)?.failures ?? 0;
};
/** A counter's attempts still in flight, over every slot its item keeps. */
const inflight = async (counterKey: string) => {
  const { Item = {} } = await dynamo.documentClient.send(
    new GetCommand({ TableName: dynamo.tables.loginThrottle, Key: { counterKey }, ConsistentRead: true }),
  );
  return Object.entries(Item)
    .filter(([name]) => name.startsWith('inflight'))
    .reduce((sum, [, value]) => sum + Number(value), 0);
};
const sessionsOf = async (username: string) => {
  const { Items = [] } = await dynamo.documentClient.send(
    new ScanCommand({ TableName: dynamo.tables.sessions }),
  );
  return Items.filter((item) => item.username === username).length;
};
const tally = (answers: readonly Answer[]) => {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};
/** Every refusal a client may retry carries Retry-After; nothing is ever a 500. */
const expectRetryable = (answers: readonly Answer[], allowed: readonly number[]) => {
  expect(answers).toHaveLength(REQUESTS);
  for (const answer of answers) {
    expect(allowed).toContain(answer.status);
    if (answer.status === 429 || answer.status === 503) expect(answer.retryAfter).toMatch(/^[1-9]\d*$/);
  }
};

describe('one username and one address hammered', () => {
  it('checks exactly the limit of wrong passwords, answers every other attempt 429, and loses no counted failure nor leaves one in flight', async () => {
    const answers = await http.hammer({ username: 'alice', password: 'a-guessed-password' }, '198.51.100.7');

    expectRetryable(answers, [401, 429]);
    expect(tally(answers)).toEqual({ 401: LIMIT, 429: REQUESTS - LIMIT });
    expect(await counter(usernameCounterKey('alice', counterSecret))).toBe(LIMIT);
    // The address counted only the attempts that were tried: each refused one gave its count back.
    expect(await counter(sourceIpCounterKey('198.51.100.7'))).toBe(LIMIT);
    expect(await inflight(usernameCounterKey('alice', counterSecret))).toBe(0);
    expect(await inflight(sourceIpCounterKey('198.51.100.7'))).toBe(0);
  });

  it('lets many workers of one integrator log in at once behind the NAT they logged in from: every one a 200 with its session, none left in flight', async () => {
    expect(CONNECTIONS).toBeLessThan(INFLIGHT_LIMIT);
    // The first login makes the address a source the username knows.
    expect(await http.login({ username: 'solo', password: PASSWORD }, '198.51.100.8')).toBe(200);

    const answers = await http.hammer({ username: 'solo', password: PASSWORD }, '198.51.100.8');

    expectRetryable(answers, [200]);
    expect(await sessionsOf('solo')).toBe(REQUESTS + 1);
    // Each success took its own attempt back from the username's counter and the address's.
    expect(await counter(usernameCounterKey('solo', counterSecret))).toBe(0);
    expect(await counter(sourceIpCounterKey('198.51.100.8'))).toBe(0);
    expect(await inflight(usernameCounterKey('solo', counterSecret))).toBe(0);
    expect(await inflight(sourceIpCounterKey('198.51.100.8'))).toBe(0);
  });
});

describe('the same hot key when DynamoDB throttles its partition', () => {
  it('answers 200, 429 or 503 with Retry-After, never a 500, and stores a session for every 200', async () => {
    const username = 'hot-integrator';
    await accounts.createUser({ username, passwordHash: await hashPassword(PASSWORD, 4), customerId: null });
    proxy.limit.hotKeys = new Set([
      usernameCounterKey(username, counterSecret),
      sourceIpCounterKey('198.51.100.9'),
    ]);
    proxy.limit.writesPerSecond = 10;
    try {
      const answers = await http.hammer({ username, password: PASSWORD }, '198.51.100.9');

      expectRetryable(answers, [200, 429, 503]);
      expect(proxy.limit.throttled).toBeGreaterThan(0);
      expect(tally(answers)[503] ?? 0).toBeGreaterThan(0);
      for (const answer of answers.filter((a) => a.status === 503)) {
        expect(answer.type).toBe('urn:parcel-auth:problem:service-unavailable');
      }
      // Every 200 handed out a stored session. (A 503 may leave one stored that no client
      // got: the session is written beside the counters, and a throttled counter fails it.)
      expect(await sessionsOf(username)).toBeGreaterThanOrEqual(tally(answers)[200] ?? 0);
    } finally {
      proxy.limit.writesPerSecond = Number.POSITIVE_INFINITY;
    }
  });
});
