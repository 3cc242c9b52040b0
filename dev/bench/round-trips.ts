/**
 * DynamoDB round trips per operation, counted at the wire: the handlers reach the embedded
 * DynamoDB through the fault matrix's proxy (dev/local/dynamodb-proxy.ts), which hears of every
 * request's `X-Amz-Target` action and when it started and ended. Requests in flight together are
 * one step of the latency path; `sequential` counts those steps.
 */

import { createDocumentClient } from '../../lib/aws/dynamodb.ts';
import { newClientSecret } from '../../lib/clients/secrets.ts';
import { tableNames } from '../../lib/stage.ts';
import { clientCounterKey, usernameCounterKey } from '../../lib/throttle/counters.ts';
import { createDynamoThrottleStore } from '../../lib/throttle/dynamodb.ts';
import { authorizerEvent, lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';
import { type Exchange, startDynamoProxy } from '../local/dynamodb-proxy.ts';
import {
  type AuthorizerHandler,
  call200,
  credentialsBody,
  grant200,
  importAuthorizer,
  importLogin,
  importLoginExtended,
  importOAuthIntrospect,
  importOAuthRevoke,
  importOAuthToken,
  importRefresh,
  introspectActive,
  revocationEvent,
  tokenRequestEvent,
} from './handlers.ts';
import { lockByStrangers } from './known-source.ts';
import { dueClients } from './last-use.ts';
import type { RoundTrips, RoundTripsResult } from './results.ts';
import { benchStage, COLLEAGUE, PASSWORD } from './stage.ts';

/** The known-source path's operations, as section 3 names them. */
const KNOWN_SOURCE_LOGIN = 'login from a known source, the name locked by strangers';
const KNOWN_SOURCE_GRANT = 'client credentials grant from a known source, the client locked by strangers';
/** The grant that records its secret's last use (dev/bench/last-use.ts). */
const LAST_USE_GRANT = 'client credentials grant, first of the hour (records the last use)';

/** The proxy of the fault matrix, counting: every exchange since the last take(). */
async function startCountingProxy(upstream: string) {
  let log: Exchange[] = [];
  // Answers held 150 ms: requests sent together overlap even when the embedded DynamoDB answers the
  // first before the second has connected (a noisy machine otherwise counts them as two steps;
  // 50 ms once counted login's three writes after the password as two steps in test:long).
  const proxy = await startDynamoProxy(upstream, {
    onExchange: (exchange) => log.push(exchange),
    answerAfterMs: 150,
  });
  return {
    endpoint: proxy.endpoint,
    /** The requests since the last take(), and starts a new log. */
    take(): Exchange[] {
      const taken = log;
      log = [];
      return taken;
    },
    close: () => proxy.close(),
  };
}

/**
 * Steps of requests in flight together, one after the other: a request is one of a step's if it
 * started before any of the step's answers came. Not "while any was still open": a request sent
 * on another's answer (a refusal's read) starts as that answer comes, often while another of the
 * step is still held, and is a step of its own.
 */
export function sequentialSteps(exchanges: readonly Pick<Exchange, 'start' | 'end'>[]): number {
  let steps = 0;
  let firstAnswer = Number.NEGATIVE_INFINITY;
  for (const { start, end } of [...exchanges].sort((a, b) => a.start - b.start)) {
    if (start >= firstAnswer) {
      steps += 1;
      firstAnswer = end;
    } else {
      firstAnswer = Math.min(firstAnswer, end);
    }
  }
  return steps;
}

export async function roundTripsPart(options: { endpoint: string }): Promise<RoundTripsResult> {
  const proxy = await startCountingProxy(options.endpoint);
  // BCRYPT_COST 4 as the seeded hashes: no upgrade write, which production logins never make twice.
  const stage = await benchStage({
    endpoint: options.endpoint,
    handlerEndpoint: proxy.endpoint,
    env: { BCRYPT_COST: '4', REVOCATION_CACHE_TTL: '0s' },
  });
  try {
    const login = await importLogin();
    const loginExtended = await importLoginExtended();
    const refresh = await importRefresh();
    const oauthToken = await importOAuthToken();
    const oauthIntrospect = await importOAuthIntrospect();
    const oauthRevoke = await importOAuthRevoke();
    const authorizerUncached = await importAuthorizer('revocation-cache-0s');
    process.env.REVOCATION_CACHE_TTL = '30s';
    const authorizerCached = await importAuthorizer('revocation-cache-30s');
    const body = JSON.stringify({ username: 'alice', password: PASSWORD });

    const operations: RoundTrips[] = [];
    /** Counts `calls` calls of `operation` (each after the previous one ended); reports the last. */
    const count = async (operation: string, calls: number, invoke: () => Promise<unknown>) => {
      const totals: number[] = [];
      let last: Exchange[] = [];
      proxy.take();
      for (let i = 0; i < calls; i++) {
        await invoke();
        last = proxy.take();
        totals.push(last.length);
      }
      const byAction: Record<string, number> = {};
      for (const { action } of last) byAction[action] = (byAction[action] ?? 0) + 1;
      operations.push({
        operation,
        total: last.length,
        sequential: sequentialSteps(last),
        byAction,
        totals: [...new Set(totals)],
      });
    };

    await count('login', 3, () => call200(login, body));
    await count('login-extended', 3, () => call200(loginExtended, body));
    // The steady state: a client's first grant records its secret's last use, the hour's next ones do not.
    await grant200(oauthToken, stage.client);
    await count('client credentials grant', 3, () => grant200(oauthToken, stage.client));

    // The known-source path (dev/bench/known-source.ts): names strangers locked, their known source logging in.
    const setup = createDocumentClient({ region: 'local', dynamodbEndpoint: options.endpoint });
    const store = createDynamoThrottleStore({
      client: setup,
      tableName: tableNames(stage.name).loginThrottle,
    });
    const colleagueBody = credentialsBody(COLLEAGUE, PASSWORD);
    const colleague = stage.colleagueClient;
    const lockedNames = [
      await lockByStrangers({
        handler: login,
        store,
        nameKey: usernameCounterKey(COLLEAGUE, stage.counterSecret),
        counterSecret: stage.counterSecret,
        right: () => loginEvent(colleagueBody),
        wrong: () => loginEvent(credentialsBody(COLLEAGUE, `not-${PASSWORD}`)),
      }),
      await lockByStrangers({
        handler: oauthToken,
        store,
        nameKey: clientCounterKey(colleague.clientId, stage.counterSecret),
        counterSecret: stage.counterSecret,
        right: () => tokenRequestEvent(colleague),
        wrong: () =>
          tokenRequestEvent({ clientId: colleague.clientId, secret: newClientSecret(new Date()).secret }),
      }),
    ];
    await count(KNOWN_SOURCE_LOGIN, 3, () => call200(login, colleagueBody));
    await count(KNOWN_SOURCE_GRANT, 3, () => grant200(oauthToken, colleague));
    for (const locked of lockedNames) await locked.assertStillLocked();
    // Set back before each grant through the embedded DynamoDB itself, so the proxy counts the grant alone.
    const due = await dueClients({ client: setup, tableName: tableNames(stage.name).accounts, size: 1 });
    await count(LAST_USE_GRANT, 3, async () => {
      const [client] = await due.setBack(1);
      if (client === undefined) throw new Error('no client in the pool');
      await grant200(oauthToken, client);
    });
    await due.assertRecorded();
    setup.destroy();

    const clientToken = await grant200(oauthToken, stage.client);
    await count('token introspection, revocation cache 0s', 3, () =>
      introspectActive(oauthIntrospect, stage.client, clientToken),
    );
    const revocations = await Promise.all([1, 2, 3].map(() => grant200(oauthToken, stage.client)));
    await count('token revocation', 3, async () => {
      const response = await oauthRevoke(
        revocationEvent(stage.client, revocations.pop() ?? ''),
        lambdaContext(),
      );
      if (response.statusCode !== 200) throw new Error(`the revocation answered ${response.statusCode}`);
    });
    let { refreshToken } = await call200(login, body);
    await count('refresh', 3, async () => {
      ({ refreshToken } = await call200(refresh, JSON.stringify({ refreshToken })));
    });
    const { token } = await call200(login, body);
    const event = authorizerEvent(`Bearer ${String(token)}`);
    const authorize = (handler: AuthorizerHandler) => () => handler(event, lambdaContext());
    await count('authorizer, revocation cache 0s (every call)', 3, authorize(authorizerUncached));
    await count('authorizer, revocation cache 30s, first call for the user', 1, authorize(authorizerCached));
    await count('authorizer, revocation cache 30s, cached', 3, authorize(authorizerCached));
    return { part: 'round-trips', operations };
  } finally {
    await stage.close();
    await proxy.close();
  }
}
