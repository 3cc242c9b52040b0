/**
 * A platform's operations in the API's fault matrix (docs/FAULTS.md, "The API"): the pushed
 * request, the page's sign-in and approval, the code exchange, a connection's refresh, its list
 * and its end by the customer or the platform, while each DynamoDB call of the function fails in
 * turn. Whatever fails, nothing is half-made: an approval answered is a code that works, or the
 * customer can approve again; a code whose exchange was not answered ends the connection it was
 * for (RFC 6749 section 4.1.2), so no token of it lives; an end answered is an end.
 */
import { expect } from 'vitest';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import { challengeOf } from '../../../lib/authorization/pkce.ts';
import { newClientId } from '../../../lib/clients/clients.ts';
import { createDynamoClientRepository } from '../../../lib/clients/dynamodb.ts';
import { newClientSecret } from '../../../lib/clients/secrets.ts';
import { createDynamoConnectionStore } from '../../../lib/connections/dynamodb.ts';
import { ADMIN_SCOPE } from '../../../lib/scopes.ts';
import { basicCredentials, gatewayAuthorizerContext, loginEvent, tokenEvent } from '../../fixtures/events.ts';
import { customerApiEvent } from '../../support/customer-api.ts';
import type { TestDynamo } from '../../support/dynamo.ts';
import { type Answer, authorize, call, decide, freshHandler, json, type Operation } from './api-bench.ts';

/** What the platform operations take from the API's matrix. */
export interface PlatformBench {
  dynamo(): TestDynamo;
  /** A new user of a new customer, the address it logs in from, its login, and its password. */
  newUser(): Promise<{
    username: string;
    customerId: string;
    sourceIp: string;
    login: unknown;
    password: string;
  }>;
}

const REDIRECT_URI = 'https://shop.example/carrier/callback';
const HOST = 'a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com';
const AUTHORIZE = '/api/v1/oauth/authorize';
const CONNECTIONS = '/api/v1/customer/connections';
const CONNECTION = '/api/v1/customer/connections/{connectionId}';
const VERIFIER = 'v'.repeat(43);
/** The audit trail's write: bookkeeping the answer does not wait on (lib/audit/recorder.ts). */
const AUDIT_WRITE = 'PutItem audit:';
/** The sign-in's write: it binds the request to the cookie its answer sets. */
const SIGN_IN_WRITE = 'UpdateItem sessions:authz';

interface Platform {
  readonly clientId: string;
  readonly secret: string;
  readonly sourceIp: string;
}

/** The page's browser: its cookie, once the first answer set one. */
interface Browser {
  cookie?: string;
}

let platforms = 0;

// biome-ignore lint/suspicious/noExplicitAny: each operation's context type is its own
export function platformOperations(bench: PlatformBench): Operation<any>[] {
  const table = () => ({ client: bench.dynamo().documentClient, tableName: bench.dynamo().tables.accounts });
  const connections = () => createDynamoConnectionStore(table());

  async function newPlatform(): Promise<Platform> {
    platforms += 1;
    const { secret, stored } = newClientSecret(new Date());
    const clientId = newClientId();
    await createDynamoClientRepository(table()).createPlatform({
      clientId,
      name: `Shoply ${platforms}`,
      scopes: ['tracking:read'],
      redirectUris: [REDIRECT_URI],
      secret: stored,
    });
    return { clientId, secret, sourceIp: `10.7.${Math.floor(platforms / 250)}.${(platforms % 250) + 1}` };
  }

  /** A form POST of the platform, authenticated by HTTP Basic, to `path`. */
  const platformPost = (platform: Platform, path: string, form: Record<string, string>) => ({
    ...tokenEvent(
      form,
      { Authorization: basicCredentials(platform.clientId, platform.secret) },
      platform.sourceIp,
    ),
    path,
    resource: path,
  });

  /** The page's request as API Gateway hands it to the function, with the browser's cookie. */
  function pageEvent(browser: Browser, query: Record<string, string> | null, form?: Record<string, string>) {
    const base = loginEvent(form === undefined ? null : new URLSearchParams(form).toString(), {
      Host: HOST,
      ...(form !== undefined && {
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: `https://${HOST}`,
        'Sec-Fetch-Site': 'same-origin',
      }),
      ...(browser.cookie !== undefined && { Cookie: browser.cookie }),
    });
    return {
      ...base,
      httpMethod: form === undefined ? 'GET' : 'POST',
      path: AUTHORIZE,
      resource: AUTHORIZE,
      queryStringParameters: query,
      multiValueQueryStringParameters:
        query === null
          ? null
          : Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])),
    };
  }

  /** Calls the page; the browser keeps the cookie the answer sets. */
  async function page(
    handler: unknown,
    browser: Browser,
    query: Record<string, string> | null,
    form?: Record<string, string>,
  ) {
    const answer = await call(handler, pageEvent(browser, query, form));
    const set = answer.headers['Set-Cookie'];
    if (typeof set === 'string') browser.cookie = set.split(';')[0];
    return answer;
  }

  const requestIdOf = (answer: Answer) => /name="request" value="([^"]+)"/.exec(answer.body)?.[1] ?? '';
  const codeOf = (answer: Answer) =>
    new URL(String(answer.headers.Location ?? 'https://x.invalid/')).searchParams.get('code') ?? '';

  /** A pushed request of `platform`, fault-free: its request_uri. */
  async function pushed(platform: Platform) {
    const answer = await call(
      await freshHandler('oauth-authorize'),
      platformPost(platform, '/api/v1/oauth/par', {
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'tracking:read',
        state: 'state-1',
        code_challenge: challengeOf(VERIFIER),
        code_challenge_method: 'S256',
      }),
    );
    if (answer.status !== 201) throw new Error(`arrange: PAR answered ${answer.status}`);
    return json(answer).request_uri as string;
  }

  /** A customer's administrator (made one without faults) and the password it signs in with. */
  async function newAdministrator() {
    const user = await bench.newUser();
    await createDynamoAccountRepository(table()).setAdministrator(user.username, true);
    return user;
  }

  /** The page opened in a new browser, fault-free: the request's id and the browser. */
  async function opened(platform: Platform) {
    const requestUri = await pushed(platform);
    const browser: Browser = {};
    const answer = await page(await freshHandler('oauth-authorize'), browser, {
      client_id: platform.clientId,
      request_uri: requestUri,
    });
    if (answer.status !== 200) throw new Error(`arrange: the page answered ${answer.status}`);
    return { browser, request: requestIdOf(answer) };
  }

  /** Signed in as an administrator, fault-free: the consent page. */
  async function signedIn() {
    const platform = await newPlatform();
    const admin = await newAdministrator();
    const { browser, request } = await opened(platform);
    const answer = await page(await freshHandler('oauth-authorize'), browser, null, {
      request,
      action: 'sign-in',
      username: admin.username,
      password: admin.password,
    });
    if (!answer.body.includes('value="approve"'))
      throw new Error(`arrange: the sign-in answered ${answer.status}`);
    return { platform, admin, browser, request };
  }

  /** Approved, fault-free: the code. */
  async function approved() {
    const context = await signedIn();
    const answer = await page(await freshHandler('oauth-authorize'), context.browser, null, {
      request: context.request,
      action: 'approve',
    });
    if (answer.status !== 303) throw new Error(`arrange: the approval answered ${answer.status}`);
    return { ...context, code: codeOf(answer) };
  }

  const exchangeEvent = (platform: Platform, code: string) =>
    platformPost(platform, '/api/v1/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
    });
  const refreshEvent = (platform: Platform, refreshToken: string) =>
    platformPost(platform, '/api/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
    });

  /** Exchanged, fault-free: the connection's tokens. */
  async function connected() {
    const context = await approved();
    const answer = await call(
      await freshHandler('oauth-token'),
      exchangeEvent(context.platform, context.code),
    );
    if (answer.status !== 200) throw new Error(`arrange: the exchange answered ${answer.status}`);
    const tokens = json(answer);
    return {
      ...context,
      accessToken: tokens.access_token as string,
      refreshToken: tokens.refresh_token as string,
    };
  }

  /** The administrator's authorizer context, from a fresh login's token (for the self-service API). */
  async function administering(admin: Awaited<ReturnType<typeof newAdministrator>>) {
    const login = await call(await freshHandler('login'), admin.login);
    if (login.status !== 200) throw new Error(`arrange: the administrator's login answered ${login.status}`);
    const decision = await decide(await freshHandler('authorizer'), json(login).token as string);
    if (
      !String(decision.context?.scope ?? '')
        .split(' ')
        .includes(ADMIN_SCOPE)
    )
      throw new Error(`arrange: the administrator's token holds no ${ADMIN_SCOPE}`);
    return { ...admin, authorizer: gatewayAuthorizerContext(decision) };
  }

  /** A fault-free refresh: its status, and the next refresh token when it is 200. */
  async function refreshed(platform: Platform, refreshToken: string) {
    const answer = await call(await freshHandler('oauth-token'), refreshEvent(platform, refreshToken));
    return {
      status: answer.status,
      next: answer.status === 200 ? (json(answer).refresh_token as string) : '',
    };
  }

  const connectionOf = (platform: Platform, customerId: string) =>
    connections().find(platform.clientId, customerId);

  /** The connection ended: refresh refused, its access token refused at the authorizer, the item gone. */
  async function endedFully(context: Awaited<ReturnType<typeof connected>>) {
    expect(await connectionOf(context.platform, context.admin.customerId), 'the connection item').toBeNull();
    expect((await refreshed(context.platform, context.refreshToken)).status, 'its refresh token').toBe(400);
    expect(
      (await authorize(await freshHandler('authorizer'), context.accessToken)).status,
      'its access token',
    ).toBe(401);
  }

  const answered = (first: Answer, retry: Answer | undefined, status: number) =>
    [first, retry].filter((answer): answer is Answer => answer?.status === status);

  return [
    {
      name: 'pushed authorization request',
      function: 'oauth-authorize',
      arrange: newPlatform,
      act: async (platform: Platform, handler) =>
        call(
          await handler('oauth-authorize'),
          platformPost(platform, '/api/v1/oauth/par', {
            response_type: 'code',
            redirect_uri: REDIRECT_URI,
            code_challenge: challengeOf(VERIFIER),
            code_challenge_method: 'S256',
          }),
        ),
      success: 201,
      async check(platform: Platform, run) {
        // Every request_uri answered opens the page.
        for (const answer of answered(run.first, run.retry, 201)) {
          const opened = await page(
            await freshHandler('oauth-authorize'),
            {},
            {
              client_id: platform.clientId,
              request_uri: json(answer).request_uri as string,
            },
          );
          expect(opened.status, 'the page of the request_uri answered').toBe(200);
        }
      },
    },
    {
      name: 'authorization sign-in',
      function: 'oauth-authorize',
      arrange: async () => {
        const platform = await newPlatform();
        const admin = await newAdministrator();
        return { platform, admin, ...(await opened(platform)) };
      },
      act: async (context, handler) =>
        page(await handler('oauth-authorize'), context.browser, null, {
          request: context.request,
          action: 'sign-in',
          username: context.admin.username,
          password: context.admin.password,
        }),
      success: 200,
      // The sign-in written, its answer (and so the new cookie) lost: the browser holds the one the
      // request is no longer bound to, and is told to start again (403); nothing was approved.
      ownRefusal: (run, site) => (run.kind === 'lost' && site === SIGN_IN_WRITE ? 403 : undefined),
      async check(context, run) {
        const last = run.retry ?? run.first;
        if (last.status === 200) expect(last.body, 'the consent page').toContain('value="approve"');
        if (last.status === 403) return;
        // Signed in or not, the request takes an approval after a fault-free sign-in.
        const again = await page(await freshHandler('oauth-authorize'), context.browser, null, {
          request: context.request,
          action: 'sign-in',
          username: context.admin.username,
          password: context.admin.password,
        });
        expect(again.body, 'the consent page after recovery').toContain('value="approve"');
      },
    },
    {
      name: 'authorization approval',
      function: 'oauth-authorize',
      arrange: signedIn,
      act: async (context, handler) =>
        page(await handler('oauth-authorize'), context.browser, null, {
          request: context.request,
          action: 'approve',
        }),
      success: 303,
      outlived: [AUDIT_WRITE],
      // The decision written, its answer lost: the request is decided, its code never sent.
      ownRefusal: (run) => (run.kind === 'lost' ? 400 : undefined),
      async check(context, run) {
        const sent = answered(run.first, run.retry, 303);
        for (const answer of sent) {
          const exchanged = await call(
            await freshHandler('oauth-token'),
            exchangeEvent(context.platform, codeOf(answer)),
          );
          expect(exchanged.status, 'the code the approval sent').toBe(200);
        }
        if (sent.length === 0) {
          // Nothing was sent: the customer approves again, and that code works.
          const again = await opened(context.platform);
          await page(await freshHandler('oauth-authorize'), again.browser, null, {
            request: again.request,
            action: 'sign-in',
            username: context.admin.username,
            password: context.admin.password,
          });
          const approval = await page(await freshHandler('oauth-authorize'), again.browser, null, {
            request: again.request,
            action: 'approve',
          });
          expect(approval.status, 'a new approval').toBe(303);
          const exchanged = await call(
            await freshHandler('oauth-token'),
            exchangeEvent(context.platform, codeOf(approval)),
          );
          expect(exchanged.status, 'its code').toBe(200);
        }
      },
    },
    {
      name: 'code exchange',
      function: 'oauth-token',
      arrange: approved,
      act: async (context, handler) =>
        call(await handler('oauth-token'), exchangeEvent(context.platform, context.code)),
      success: 200,
      // A spent code presented again is a replay: invalid_grant, and the connection ends.
      ownRefusal: () => 400,
      async check(context, run) {
        const tokens = answered(run.first, run.retry, 200);
        const connection = await connectionOf(context.platform, context.admin.customerId);
        if (tokens.length > 0) {
          for (const answer of tokens)
            expect(
              (await refreshed(context.platform, json(answer).refresh_token as string)).status,
              'its refresh token',
            ).toBe(200);
          expect(connection, 'the connection').not.toBeNull();
        } else if (run.retry?.status === 400) {
          // No token was answered, and the replay ended what the first exchange may have made.
          expect(connection, 'the connection after the replay').toBeNull();
        }
      },
    },
    {
      name: 'connection refresh',
      function: 'oauth-token',
      arrange: connected,
      act: async (context, handler) =>
        call(await handler('oauth-token'), refreshEvent(context.platform, context.refreshToken)),
      success: 200,
      // The connection's last use, at most hourly: bookkeeping the refresh does not wait on.
      outlived: ['UpdateItem accounts:CONNECTION/CONNECTION'],
      async check(context, run) {
        for (const answer of answered(run.first, run.retry, 200)) {
          // The last answer's refresh token is the chain's current one, or within the grace window.
          expect(
            (await refreshed(context.platform, json(answer).refresh_token as string)).status,
            'the answered refresh token',
          ).toBe(200);
        }
        expect(
          await connectionOf(context.platform, context.admin.customerId),
          'the connection',
        ).not.toBeNull();
      },
    },
    {
      name: 'connections list',
      function: 'customer-api',
      arrange: async () => {
        const context = await connected();
        return { ...context, admin: await administering(context.admin) };
      },
      act: async (context, handler) =>
        call(await handler('customer-api'), customerApiEvent(context.admin, 'GET', CONNECTIONS)),
      success: 200,
      async check(context, run) {
        for (const answer of answered(run.first, run.retry, 200))
          expect(JSON.parse(answer.body).connections, 'the list').toEqual([
            expect.objectContaining({ clientId: context.platform.clientId }),
          ]);
      },
    },
    {
      name: 'connection end by the customer',
      function: 'customer-api',
      arrange: async () => {
        const context = await connected();
        const connection = await connectionOf(context.platform, context.admin.customerId);
        return {
          ...context,
          admin: await administering(context.admin),
          connectionId: connection?.connectionId ?? '',
        };
      },
      act: async (context, handler) =>
        call(
          await handler('customer-api'),
          customerApiEvent(context.admin, 'DELETE', CONNECTION, {
            params: { connectionId: context.connectionId },
          }),
        ),
      success: 204,
      outlived: [AUDIT_WRITE],
      // The end applied, its answer lost: the retry finds it gone.
      ownRefusal: () => 404,
      async check(context, run) {
        if (answered(run.first, run.retry, 204).length > 0 || run.retry?.status === 404)
          await endedFully(context);
      },
    },
    {
      name: 'connection end by the platform (RFC 7009)',
      function: 'oauth-revoke',
      arrange: connected,
      act: async (context, handler) =>
        call(
          await handler('oauth-revoke'),
          platformPost(context.platform, '/api/v1/oauth/revoke', { token: context.refreshToken }),
        ),
      success: 200,
      outlived: [AUDIT_WRITE],
      async check(context, run) {
        if (answered(run.first, run.retry, 200).length > 0) await endedFully(context);
      },
    },
  ];
}
