/**
 * Brute-force throttling over the local stack, with the limits `npm start` takes from
 * LOGIN_FAILURE_LIMIT, IP_FAILURE_LIMIT, CLIENT_IP_FAILURE_LIMIT and LOGIN_INFLIGHT_LIMIT.
 * Callers at other addresses send from 127.0.0.x: the gateway front connects on from the
 * caller's address, so the functions see it as sourceIp as they do API Gateway's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { newClientId } from '../../lib/clients/clients.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { type Answer, send } from '../support/http.ts';
import { emfLines, summarise } from '../support/metrics-capture.ts';
import { addStackClient } from '../support/stack-admin.ts';

const PASSWORD = 'a-throttle-test-password';
/** Failures of one username or client id before it locks. */
const NAME_LIMIT = 3;
/**
 * People's failures per address, and so the attempts an address may have in flight: the 20
 * logins at once below fit, the 12 + 20 a burst would leave in flight if it leaked any do not.
 */
const ADDRESS_LIMIT = 20;
/** Attempts of one name in flight at once, sized as ADDRESS_LIMIT is. */
const INFLIGHT_LIMIT = 20;
/** API clients' failures per address. */
const CLIENT_ADDRESS_LIMIT = 4;
let stack: LocalStack;

const USERS = ['erin', 'frank', 'grace', 'heidi', 'ivan', 'judy', 'kevin'];

beforeAll(async () => {
  stack = await startLocalStack({
    env: {
      LOGIN_FAILURE_LIMIT: String(NAME_LIMIT),
      IP_FAILURE_LIMIT: String(ADDRESS_LIMIT),
      CLIENT_IP_FAILURE_LIMIT: String(CLIENT_ADDRESS_LIMIT),
      LOGIN_INFLIGHT_LIMIT: String(INFLIGHT_LIMIT),
    },
  });
  const passwordHash = await hashPassword(PASSWORD, 4);
  for (const username of USERS) {
    await stackAccounts(stack).createUser({ username, passwordHash, customerId: null });
  }
});
afterAll(() => stack?.stop());

/** serverless-offline's line for a function it timed out, which the gateway front answers 503. */
const LAMBDA_TIMEOUT = '[504] - Lambda timeout.';
/** The function's own line for a 503: DynamoDB did not answer within the SDK's timeouts. */
const DEPENDENCY_UNAVAILABLE = '"reason":"dependency unavailable"';
const overloadsSoFar = () =>
  stack.output().split(LAMBDA_TIMEOUT).length + stack.output().split(DEPENDENCY_UNAVAILABLE).length - 2;

/**
 * `send`, sent again (twice at most) when it was answered 503 because the machine was too busy:
 * on a small shared machine under load the embedded DynamoDB can answer late enough for the
 * SDK's timeouts or serverless-offline's. Nothing here injects a fault, so such a 503 says the
 * machine was busy, and a client would send again after Retry-After; every other answer is
 * returned as it is. The attempt that timed out may still be counted: a failing test says it
 * was sent again.
 */
async function sendPatiently(...request: Parameters<typeof send>): Promise<Answer> {
  const [, method, path, options] = request;
  for (let attempt = 1; ; attempt += 1) {
    const before = overloadsSoFar();
    const answer = await send(...request);
    if (answer.status !== 503 || attempt === 3) return answer;
    // The stack's output reaches this process a little after the answer does.
    for (let waited = 0; overloadsSoFar() === before && waited < 2000; waited += 100) await sleep(100);
    if (overloadsSoFar() === before) return answer;
    onTestFailed(() => {
      console.error(`${method} ${path} from ${options?.from ?? '127.0.0.1'} was answered 503 and sent again`);
    });
    await sleep(Number(answer.headers.get('retry-after') ?? 1) * 1000);
  }
}

const login = (username: string, password: string, from?: string) =>
  sendPatiently(stack, 'POST', '/login', {
    body: { username, password },
    ...(from !== undefined && { from }),
  });

interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** A client credentials grant from `from`, the client authenticated by HTTP Basic (RFC 6749 section 2.3.1). */
const grant = ({ clientId, clientSecret }: ClientCredentials, from: string) =>
  sendPatiently(stack, 'POST', '/oauth/token', {
    raw: 'grant_type=client_credentials',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`,
    },
    from,
  });

/**
 * A structured-field list of `"name";key=value;…` items (RateLimit-Policy, RateLimit,
 * draft-ietf-httpapi-ratelimit-headers) by name, with its numeric parameters.
 */
function fieldItems(answer: Answer, field: string): Record<string, Record<string, number>> {
  const value = answer.headers.get(field) ?? '';
  return Object.fromEntries(
    value
      .split(',')
      .filter((item) => item.trim() !== '')
      .map((item) => {
        const [name = '', ...parameters] = item.trim().split(';');
        const numbers = parameters.map((parameter) => {
          const [key = '', number = ''] = parameter.split('=');
          return [key.trim(), Number(number)];
        });
        return [name.replace(/^"|"$/g, ''), Object.fromEntries(numbers)];
      }),
  );
}

/** The quota and window of every policy the answer's RateLimit-Policy states. */
const policies = (answer: Answer) =>
  Object.fromEntries(
    Object.entries(fieldItems(answer, 'ratelimit-policy')).map(([name, { q, w }]) => [name, { q, w }]),
  );

/** What the answer's RateLimit says is left of `policy`. */
const remaining = (answer: Answer, policy: string) => fieldItems(answer, 'ratelimit')[policy]?.r;

/** API Gateway's throttling of the login routes, published beside the counters: the local stage's loginRateLimit. */
const ROUTE = { q: 50, w: 1 };
const LOGIN_POLICIES = {
  username: { q: NAME_LIMIT, w: 86_400 },
  address: { q: ADDRESS_LIMIT, w: 3600 },
  route: ROUTE,
};
const TOKEN_POLICIES = {
  client: { q: NAME_LIMIT, w: 86_400 },
  address: { q: CLIENT_ADDRESS_LIMIT, w: 3600 },
  route: ROUTE,
};

/** A login's answer: its status, and the limits it is counted against published. */
function expectLogin(answer: Answer, status: 200 | 401 | 429) {
  expect(answer.status).toBe(status);
  expect(policies(answer)).toEqual(LOGIN_POLICIES);
  if (status === 200)
    expect(answer.json).toEqual({ token: expect.stringMatching(/^eyJ/), refreshToken: expect.any(String) });
  if (status === 429) {
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(answer.text).not.toContain('eyJ');
  }
}

/** A client credentials grant's answer: its status, the limits published, a token only on 200. */
function expectGrant(answer: Answer, status: 200 | 401 | 429) {
  expect(answer.status).toBe(status);
  expect(policies(answer)).toEqual(TOKEN_POLICIES);
  if (status === 200) expect(answer.json).toMatchObject({ access_token: expect.stringMatching(/^eyJ/) });
  else {
    expect(answer.json.error).toBe(status === 401 ? 'invalid_client' : 'temporarily_unavailable');
    expect(answer.text).not.toContain('eyJ');
  }
  if (status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
}

/** The functions' metrics (`Name{dimension=value}=1`) the stack printed since `mark` (its output's length then). */
const metricsSince = (mark: number) => emfLines(stack.output().slice(mark)).flatMap(summarise);
const countOf = (mark: number, metric: string) => metricsSince(mark).filter((line) => line === metric).length;
/** The stack's output reaches this process a little after the answers do. */
const METRICS_ARRIVE = { timeout: 10_000 };

/** Locks are 30 s in the local stage: each story runs well inside one, on a slow machine too. */
const STORY_TIMEOUT = 120_000;

describe('brute-force throttling', () => {
  it(
    'locks a username after its failure limit: 429 with Retry-After, even for the right password',
    async () => {
      for (let i = 0; i < NAME_LIMIT; i += 1) expectLogin(await login('erin', 'wrong-password'), 401);
      const locked = await login('erin', PASSWORD);
      expectLogin(locked, 429);
      expect(locked.headers.get('content-type')).toBe('application/problem+json');
      expect(locked.json).toMatchObject({ type: 'urn:parcel-auth:problem:too-many-attempts', status: 429 });
      // Another username from the same address is not locked by it.
      expectLogin(await login('frank', PASSWORD), 200);
    },
    STORY_TIMEOUT,
  );

  it(
    'locks the source address after its limit across usernames, for every username',
    async () => {
      // erin's failures count for the address too; unknown usernames make up the rest.
      for (let i = 0; i < ADDRESS_LIMIT - NAME_LIMIT; i += 1)
        expectLogin(await login(`nobody-${i}`, 'x-password'), 401);
      const locked = await login('frank', PASSWORD);
      expectLogin(locked, 429);
      expect(remaining(locked, 'address')).toBe(0);
    },
    STORY_TIMEOUT,
  );
});

describe('known sources keep logging in while others lock the name', () => {
  // grace logs in from KNOWN and SECOND_KNOWN; STRANGER guesses; ELSEWHERE never logged in.
  const KNOWN = '127.0.0.2';
  const STRANGER = '127.0.0.3';
  const ELSEWHERE = '127.0.0.4';
  const SECOND_KNOWN = '127.0.0.6';
  let mark = 0;

  it(
    'a username locked by a stranger’s wrong passwords refuses every source it never logged in from, and still lets in the ones it did',
    async () => {
      mark = stack.output().length;
      expectLogin(await login('grace', PASSWORD, KNOWN), 200);
      expectLogin(await login('grace', PASSWORD, SECOND_KNOWN), 200);

      for (let i = 0; i < NAME_LIMIT; i += 1) {
        const failed = await login('grace', 'wrong-password', STRANGER);
        expectLogin(failed, 401);
        // A source the name does not know is told the address's quota only, as for a made-up name.
        expect(remaining(failed, 'username')).toBeUndefined();
        expect(remaining(failed, 'address')).toBeDefined();
      }
      const refused = await login('grace', 'wrong-password', STRANGER);
      expectLogin(refused, 429);
      expect(remaining(refused, 'username')).toBe(0);
      expectLogin(await login('grace', PASSWORD, STRANGER), 429);
      expectLogin(await login('grace', PASSWORD, ELSEWHERE), 429);

      const spared = await login('grace', PASSWORD, KNOWN);
      expectLogin(spared, 200);
      // The known source's own quota, whole: the stranger's failures are not its.
      expect(remaining(spared, 'username')).toBe(NAME_LIMIT);
      // Its success does not unlock the name for the others.
      expectLogin(await login('grace', PASSWORD, STRANGER), 429);
      expectLogin(await login('grace', PASSWORD, ELSEWHERE), 429);
      await expect.poll(() => countOf(mark, 'LockSpared{counter=Username}=1'), METRICS_ARRIVE).toBe(1);
    },
    STORY_TIMEOUT,
  );

  it(
    'a known source’s own wrong passwords lock that source alone: the name stays locked for strangers and open to its other known sources',
    async () => {
      for (let left = NAME_LIMIT - 1; left >= 0; left -= 1) {
        const failed = await login('grace', 'wrong-password', KNOWN);
        expectLogin(failed, 401);
        expect(remaining(failed, 'username')).toBe(left);
      }
      const refused = await login('grace', PASSWORD, KNOWN);
      expectLogin(refused, 429);
      expect(remaining(refused, 'username')).toBe(0);

      expectLogin(await login('grace', PASSWORD, SECOND_KNOWN), 200);
      expectLogin(await login('grace', PASSWORD, STRANGER), 429);
      // The lock is the name's at that source, not the address's: another user logs in from it.
      expectLogin(await login('heidi', PASSWORD, KNOWN), 200);
      await expect.poll(() => countOf(mark, 'LockoutStarted{counter=KnownSource}=1'), METRICS_ARRIVE).toBe(1);
      await expect.poll(() => countOf(mark, 'LockSpared{counter=Username}=1'), METRICS_ARRIVE).toBe(2);
    },
    STORY_TIMEOUT,
  );
});

describe('the owner’s logins neither reset a stranger’s guesses nor tell the stranger the name is real (issue 42)', () => {
  const OWNER = '127.0.0.13';
  const STRANGER = '127.0.0.14';
  const OTHER_STRANGER = '127.0.0.15';

  it(
    'a stranger who stops one guess short of the limit and waits for the owner’s login is locked at the limit, answered as for a made-up name',
    async () => {
      const mark = stack.output().length;
      /** A stranger's statuses, and whether each answer told them the name's quota. */
      const guess = async (username: string, from: string) => {
        const answer = await login(username, 'wrong-password', from);
        expectLogin(answer, answer.status === 429 ? 429 : 401);
        return { status: answer.status, told: remaining(answer, 'username') !== undefined };
      };
      expectLogin(await login('kevin', PASSWORD, OWNER), 200);
      const real = [];
      const madeUp = [];
      for (let i = 1; i < NAME_LIMIT; i += 1) {
        real.push(await guess('kevin', STRANGER));
        madeUp.push(await guess('nobody-kevin', OTHER_STRANGER));
      }

      // The owner's routine login: the stranger's failures stay, and the owner is told so.
      const owner = await login('kevin', PASSWORD, OWNER);
      expectLogin(owner, 200);
      expect(remaining(owner, 'username')).toBe(1);
      for (let i = 0; i < 2; i += 1) {
        real.push(await guess('kevin', STRANGER));
        madeUp.push(await guess('nobody-kevin', OTHER_STRANGER));
      }

      expect(real).toEqual(madeUp);
      expect(real).toEqual([
        ...Array(NAME_LIMIT).fill({ status: 401, told: false }),
        // A refusal names the counter that refused, for a name in use as for a made-up one.
        { status: 429, told: true },
      ]);
      await expect.poll(() => countOf(mark, 'LockoutStarted{counter=Username}=1'), METRICS_ARRIVE).toBe(2);
      const lockouts = () => stack.output().slice(mark).split('"event":"lockout started"').length - 1;
      await expect.poll(lockouts, METRICS_ARRIVE).toBe(2);
    },
    STORY_TIMEOUT,
  );
});

describe('known sources keep getting client tokens while others lock the client id', () => {
  const KNOWN = '127.0.0.7';
  const STRANGER = '127.0.0.8';
  const ELSEWHERE = '127.0.0.9';
  const SECOND_KNOWN = '127.0.0.12';
  let client: ClientCredentials;
  let mark = 0;
  beforeAll(async () => {
    client = await addStackClient(stack, 'C-THROTTLE-1', ['tracking:read']);
  });
  // Of the format we issue, so it is read and counted (a malformed one is refused before the throttle).
  const wrongSecret = () => ({ clientId: client.clientId, clientSecret: newClientSecret(new Date()).secret });

  it(
    'a client id locked by a stranger’s wrong secrets refuses every source it never got a token from, and still grants the ones it did',
    async () => {
      mark = stack.output().length;
      expectGrant(await grant(client, KNOWN), 200);
      expectGrant(await grant(client, SECOND_KNOWN), 200);

      for (let i = 0; i < NAME_LIMIT; i += 1) {
        const failed = await grant(wrongSecret(), STRANGER);
        expectGrant(failed, 401);
        expect(remaining(failed, 'client')).toBeUndefined();
        expect(remaining(failed, 'address')).toBeDefined();
      }
      expectGrant(await grant(wrongSecret(), STRANGER), 429);
      expectGrant(await grant(client, STRANGER), 429);
      expectGrant(await grant(client, ELSEWHERE), 429);

      const spared = await grant(client, KNOWN);
      expectGrant(spared, 200);
      expect(remaining(spared, 'client')).toBe(NAME_LIMIT);
      expectGrant(await grant(client, ELSEWHERE), 429);
      await expect.poll(() => countOf(mark, 'LockSpared{counter=Client}=1'), METRICS_ARRIVE).toBe(1);
    },
    STORY_TIMEOUT,
  );

  it(
    'a known source’s own wrong secrets lock that source alone: the client id stays locked for strangers and open to its other known sources',
    async () => {
      for (let left = NAME_LIMIT - 1; left >= 0; left -= 1) {
        const failed = await grant(wrongSecret(), KNOWN);
        expectGrant(failed, 401);
        expect(remaining(failed, 'client')).toBe(left);
      }
      expectGrant(await grant(client, KNOWN), 429);
      expectGrant(await grant(client, SECOND_KNOWN), 200);
      expectGrant(await grant(client, STRANGER), 429);
      await expect.poll(() => countOf(mark, 'LockoutStarted{counter=KnownSource}=1'), METRICS_ARRIVE).toBe(1);
    },
    STORY_TIMEOUT,
  );
});

describe('people and API clients are counted apart at one address', () => {
  it(
    'API clients failing from an address up to their limit lock it for API clients, not for people’s logins',
    async () => {
      const ADDRESS = '127.0.0.5';
      for (let left = CLIENT_ADDRESS_LIMIT - 1; left >= 0; left -= 1) {
        const failed = await grant(
          { clientId: newClientId(), clientSecret: newClientSecret(new Date()).secret },
          ADDRESS,
        );
        expectGrant(failed, 401);
        expect(remaining(failed, 'address')).toBe(left);
      }
      expectGrant(await grant(stack.demoClient, ADDRESS), 429);

      const person = await login('judy', PASSWORD, ADDRESS);
      expectLogin(person, 200);
      expect(remaining(person, 'address')).toBe(ADDRESS_LIMIT);
    },
    STORY_TIMEOUT,
  );

  it(
    'people failing from an address up to their limit lock it for people, not for API clients',
    async () => {
      const ADDRESS = '127.0.0.11';
      for (let i = 0; i < ADDRESS_LIMIT; i += 1)
        expectLogin(await login(`stranger-${i}`, 'x-password', ADDRESS), 401);
      expectLogin(await login('judy', PASSWORD, ADDRESS), 429);

      const machine = await grant(stack.demoClient, ADDRESS);
      expectGrant(machine, 200);
      expect(remaining(machine, 'address')).toBe(CLIENT_ADDRESS_LIMIT);
    },
    STORY_TIMEOUT,
  );
});

/**
 * serverless-offline runs each concurrent invocation in a worker of its own, and a cold worker
 * on a busy small machine can run past the login's 10 s timeout (a 503 here). `count` bodies the
 * login refuses before any counter, at once, until all are answered: the burst then meets warm
 * workers, as it would meet warm Lambda containers.
 */
async function warmLoginWorkers(count: number) {
  for (let round = 0; round < 5; round += 1) {
    const answers = await Promise.all(
      Array.from({ length: count }, () => send(stack, 'POST', '/login', { body: {} })),
    );
    if (answers.every(({ status }) => status === 400)) return;
  }
  throw new Error(`${count} login workers did not start in time`);
}

describe('a burst of right passwords', () => {
  it(
    'logs in 12 and then 20 logins of one username at once from an address it logged in from, refusing none',
    async () => {
      const ADDRESS = '127.0.0.10';
      const mark = stack.output().length;
      onTestFailed(() => {
        // Why an answer was a 503: the function's own log line names the dependency that failed.
        const failures = stack
          .output()
          .slice(mark)
          .split('\n')
          .filter((line) => line.includes('request failed') || line.includes(LAMBDA_TIMEOUT));
        console.error(`the stack's failures during the bursts:\n${failures.join('\n')}`);
      });
      // A fleet starting together, from where it has run before.
      expectLogin(await login('ivan', PASSWORD, ADDRESS), 200);
      await warmLoginWorkers(20);
      for (const burst of [12, 20]) {
        const answers = await Promise.all(
          Array.from({ length: burst }, () => login('ivan', PASSWORD, ADDRESS)),
        );
        expect(answers.map(({ status }) => status)).toEqual(Array(burst).fill(200));
        for (const answer of answers) expectLogin(answer, 200);
      }
    },
    2 * STORY_TIMEOUT,
  );
});
