/**
 * API Gateway caches the authorizer's decision per token for `authorizerCacheTtl` seconds,
 * whatever the token's `exp`, and serverless-offline has no such cache. These tests replay a
 * cached decision as API Gateway would: the real authorizer handler decides for a fresh
 * token, then every protected function of serverless.yml gets exactly that decision's
 * context (stringified, as API Gateway passes it on) before and after the token's expireAt.
 */
import { readFileSync } from 'node:fs';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Context,
} from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { functionEnv } from '../../dev/local/handler-env.ts';
import { seedHandlerUsers } from '../../dev/local/handler-users.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import {
  authorizerEvent,
  gatewayAuthorizerContext,
  grantEvent,
  lambdaContext,
  loginEvent,
  trackingEvent,
} from '../fixtures/events.ts';
import { createTestClient } from '../support/clients.ts';
import { startTestDynamo } from '../support/dynamo.ts';
import { captureServiceLogs } from '../support/log-capture.ts';
import { readServerlessYml } from '../support/serverless-yml.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type Authorizer = (event: ReturnType<typeof authorizerEvent>) => Promise<APIGatewayAuthorizerResult>;

interface ProtectedRoute {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  handler: Handler;
}

/** Every function of serverless.yml with an http event behind the authorizer. */
function protectedRoutes(): ProtectedRoute[] {
  const config = readServerlessYml() as {
    functions: Record<
      string,
      { handler: string; events?: { http?: { path: string; method: string; authorizer?: unknown } }[] }
    >;
  };
  return Object.entries(config.functions).flatMap(([name, fn]) =>
    (fn.events ?? [])
      .flatMap((event) => (event.http?.authorizer === undefined ? [] : [event.http]))
      .map((http) => ({
        name: `${http.method.toUpperCase()} /${http.path} (${name})`,
        method: http.method.toUpperCase(),
        path: http.path,
        module: fn.handler.replace(/\.handler$/, '.ts'),
        handler: undefined as unknown as Handler,
      })),
  ) as (ProtectedRoute & { module: string })[];
}

const PASSWORD = 'a-long-test-password';
const logs = captureServiceLogs();
const routes = protectedRoutes() as (ProtectedRoute & { module: string })[];
let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let accounts: AccountRepository;
let cleanupKeys: () => Promise<void>;
let login: Handler;
let authorizer: Authorizer;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  const { env, cleanup } = await functionEnv(dynamo);
  cleanupKeys = cleanup;
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  accounts = await seedHandlerUsers(dynamo, PASSWORD);
  // An administrator, so the self-service routes answer her as they would anyone allowed in.
  await accounts.setAdministrator('alice', true);
  login = (await import('../../functions/login-extended.ts')).handler as Handler;
  authorizer = (await import('../../functions/authorizer.ts')).handler as Authorizer;
  for (const route of routes) {
    route.handler = (await import(/* @vite-ignore */ `../../${route.module}`)).handler as Handler;
  }
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await dynamo.close();
  await cleanupKeys();
});

/** A value for each path parameter, of its format: nothing holds it, so the route answers 404. */
const PATH_VALUES = {
  parcelNumber: '99999999999999',
  clientId: 'pcl_00000000000000000000',
  secretId: '0123abcd',
} as const;

/** A request to `route` that API Gateway lets through on `decision`, cached or fresh. */
function requestTo(
  route: ProtectedRoute,
  decision: APIGatewayAuthorizerResult,
  token: string,
): APIGatewayProxyEvent {
  const captured = trackingEvent();
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as keyof typeof PATH_VALUES);
  const path = `/${route.path.replace(/\{(\w+)\}/g, (_, name: keyof typeof PATH_VALUES) => PATH_VALUES[name])}`;
  return {
    ...captured,
    httpMethod: route.method,
    resource: `/${route.path}`,
    path,
    pathParameters:
      names.length === 0 ? null : Object.fromEntries(names.map((name) => [name, PATH_VALUES[name]])),
    headers: { ...captured.headers, Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    multiValueHeaders: { ...captured.multiValueHeaders, Authorization: [`Bearer ${token}`] },
    body:
      route.method === 'POST'
        ? JSON.stringify({ recipient: { name: 'Jan', city: 'Brno' }, parcels: [{ weightKg: 1 }] })
        : null,
    requestContext: { ...captured.requestContext, authorizer: gatewayAuthorizerContext(decision) },
  };
}

/** Logs alice in and has the real authorizer decide on her fresh access token. */
async function freshDecision(username = 'alice') {
  const response = await login(loginEvent(JSON.stringify({ username, password: PASSWORD })), lambdaContext());
  const body = JSON.parse(response.body) as { token: string; expireAt: string };
  const decision = await authorizer(authorizerEvent(`Bearer ${body.token}`));
  return { token: body.token, expireAt: Date.parse(body.expireAt), decision };
}

const call = (route: ProtectedRoute, event: APIGatewayProxyEvent) => route.handler(event, lambdaContext());

const gatewayUnauthorized = () => {
  const template = readFileSync(new URL('../../infra/gateway-responses.yml', import.meta.url), 'utf8');
  const resources = parse(template).Resources as Record<
    string,
    { Properties: { ResponseType: string; ResponseTemplates: Record<string, string> } }
  >;
  const unauthorized = Object.values(resources).find((r) => r.Properties.ResponseType === 'UNAUTHORIZED');
  return JSON.parse(unauthorized?.Properties.ResponseTemplates['application/json'] ?? '{}') as unknown;
};

describe('a cached authorizer decision replayed to every protected function', () => {
  it('finds the protected routes in serverless.yml', () => {
    expect(routes.map((route) => route.name)).toEqual([
      'POST /api/v1/shipments (createShipment)',
      'GET /api/v1/tracking/{parcelNumber} (trackShipment)',
      'GET /api/v1/customer/clients (customerApi)',
      'POST /api/v1/customer/clients (customerApi)',
      'GET /api/v1/customer/clients/{clientId} (customerApi)',
      'PATCH /api/v1/customer/clients/{clientId} (customerApi)',
      'DELETE /api/v1/customer/clients/{clientId} (customerApi)',
      'POST /api/v1/customer/clients/{clientId}/secrets (customerApi)',
      'DELETE /api/v1/customer/clients/{clientId}/secrets/{secretId} (customerApi)',
      'POST /api/v1/customer/clients/{clientId}/unlock (customerApi)',
      'GET /api/v1/customer/audit-events (customerApi)',
      'GET /api/v1/customer/administrators (customerApi)',
      'POST /api/v1/customer/administrators (customerApi)',
      'POST /api/v1/customer/administrators/revoke (customerApi)',
      'GET /api/v1/customer/connections (customerApi)',
      'DELETE /api/v1/customer/connections/{connectionId} (customerApi)',
      'GET /api/v1/customer/passkeys (customerApi)',
      'POST /api/v1/customer/passkeys/options (customerApi)',
      'POST /api/v1/customer/passkeys (customerApi)',
      'DELETE /api/v1/customer/passkeys/{passkeyId} (customerApi)',
      'GET /api/v1/customer/security-policy (customerApi)',
      'PUT /api/v1/customer/security-policy (customerApi)',
    ]);
  });

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s answers normally the millisecond before expireAt',
    async (_name, route) => {
      const { token, expireAt, decision } = await freshDecision();
      vi.useFakeTimers({ toFake: ['Date'], now: expireAt - 1 });
      const response = await call(route, requestTo(route, decision, token));
      // Created, found, or not: a shipment's body is no self-service request (400), nothing holds the
      // ids (404); a passkey's registration without a body asks for a recent login (403), as the
      // token's login is a day old by then.
      const normal =
        route.name === 'POST /api/v1/customer/passkeys/options (customerApi)' ? [403] : [200, 201, 400, 404];
      expect(normal).toContain(response.statusCode);
    },
  );

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s answers the gateway’s own 401 from expireAt on',
    async (_name, route) => {
      const { token, expireAt, decision } = await freshDecision();
      for (const at of [expireAt, expireAt + 1000, expireAt + 299_000]) {
        vi.useFakeTimers({ toFake: ['Date'], now: at });
        const response = await call(route, requestTo(route, decision, token));
        expect(response.statusCode).toBe(401);
        expect(response.headers).toMatchObject({
          'Content-Type': 'application/problem+json',
          'WWW-Authenticate':
            'Bearer error="invalid_token", error_description="The access token is missing, invalid, expired or revoked"',
          'Cache-Control': 'no-store',
        });
        expect(JSON.parse(response.body)).toEqual(gatewayUnauthorized());
      }
    },
  );

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s refuses a decision without exp, as one from an authorizer that does not say when the token expires',
    async (_name, route) => {
      const { token, decision } = await freshDecision();
      const { exp: _exp, ...context } = decision.context ?? {};
      const response = await call(route, requestTo(route, { ...decision, context }, token));
      expect(response.statusCode).toBe(401);
      // Only a broken authorizer sends that: an error for the operator, not an info line.
      expect(logs.events('request refused')).toEqual([
        expect.objectContaining({ level: 'ERROR', reason: 'authorizer context invalid', fields: ['exp'] }),
      ]);
    },
  );

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s refuses a request with a second Authorization value beside the cached one',
    async (_name, route) => {
      const { token, decision } = await freshDecision();
      const event = requestTo(route, decision, token);
      const response = await call(route, {
        ...event,
        multiValueHeaders: { ...event.multiValueHeaders, authorization: ['Bearer another'] },
      });
      expect(response.statusCode).toBe(401);
    },
  );
});

describe('a revocation behind the authorizer cache', () => {
  const revocations: [string, (username: string) => Promise<void>][] = [
    ['user disable', (username) => accounts.setEnabled(username, false)],
    ['user passwd', (username) => accounts.setPasswordHash(username, '$2b$04$another-hash')],
    ['user logout', (username) => accounts.revokeUserTokens(username)],
  ];

  it.each(revocations)(
    'after %s the next authorizer call refuses the token; a decision cached before it is not seen by the functions',
    async (name, revoke) => {
      const username = `revoked-by-${name.replace(' ', '-')}`;
      await accounts.createUser({
        username,
        passwordHash: await hashPassword(PASSWORD, 4),
        customerId: 'C-1001',
      });
      const { token, decision } = await freshDecision(username);
      await revoke(username);
      // The authorizer reads the user (REVOCATION_CACHE_TTL is 0 here): refused at once.
      await expect(authorizer(authorizerEvent(`Bearer ${token}`))).rejects.toThrow(/^Unauthorized$/);
      // A decision API Gateway cached before the revocation carries the token's iat but not
      // the user's state: a protected function cannot see the revocation without a read, so
      // on AWS the bound is authorizerCacheTtl + revocationCacheTtl + the read's lag.
      const route = routes.find((candidate) => candidate.method === 'GET');
      if (route === undefined) throw new Error('no protected GET route');
      const replayed = await call(route, requestTo(route, decision, token));
      expect(replayed.statusCode).toBe(404);
    },
  );
});

describe('a decision cached for one route, reused on another (the scopes of an API client)', () => {
  // serverless-offline's own matcher of policy resources against a method ARN, as API Gateway
  // evaluates a cached policy: code nobody here wrote.
  const canExecute = async (policy: APIGatewayAuthorizerResult['policyDocument'], methodArn: string) => {
    // Not among the package's exports: imported by its file.
    const file = new URL(
      '../../node_modules/serverless-offline/src/events/authCanExecuteResource.js',
      import.meta.url,
    );
    const { default: authCanExecuteResource } = (await import(/* @vite-ignore */ file.href)) as {
      default: (policy: unknown, resource: string) => boolean;
    };
    return authCanExecuteResource(policy, methodArn);
  };
  const STAGE = 'arn:aws:execute-api:eu-central-1:123456789012:a1b2c3d4e5/prod';
  const arnOf = (route: ProtectedRoute) =>
    `${STAGE}/${route.method}/${route.path.replace('{parcelNumber}', '99999999999999')}`;

  async function clientDecision(scopes: ('tracking:read' | 'shipments:write')[], decidedFor: ProtectedRoute) {
    const client = await createTestClient(
      { client: dynamo.documentClient, tableName: dynamo.tables.accounts },
      'C-1001',
      scopes,
    );
    const token = (await import('../../functions/oauth-token.ts')).handler as Handler;
    const granted = await token(grantEvent(client), lambdaContext());
    const accessToken = (JSON.parse(granted.body) as { access_token: string }).access_token;
    const decision = await authorizer({
      ...authorizerEvent(`Bearer ${accessToken}`),
      methodArn: arnOf(decidedFor),
    });
    return { token: accessToken, decision };
  }

  const routeNamed = (fn: string) => {
    const route = routes.find((candidate) => candidate.name.endsWith(`(${fn})`));
    if (route === undefined) throw new Error(`no protected route of ${fn}`);
    return route;
  };

  it.each(['trackShipment', 'createShipment'])(
    'refuses a tracking:read client shipment creation whichever route its cached decision was made for (%s)',
    async (decidedFor) => {
      const shipments = routeNamed('createShipment');
      const tracking = routeNamed('trackShipment');
      const { token, decision } = await clientDecision(['tracking:read'], routeNamed(decidedFor));
      // API Gateway's check of the cached policy lets both through: the functions check the scope.
      expect(await canExecute(decision.policyDocument, arnOf(tracking))).toBe(true);
      expect(await canExecute(decision.policyDocument, arnOf(shipments))).toBe(true);
      const refused = await call(shipments, requestTo(shipments, decision, token));
      expect(refused.statusCode).toBe(403);
      expect(refused.headers).toMatchObject({
        'Content-Type': 'application/problem+json',
        'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="shipments:write"',
      });
      expect((await call(tracking, requestTo(tracking, decision, token))).statusCode).toBe(404);
    },
  );

  it('lets a user’s decision, cached for either route, through on both: the policy lists every protected route', async () => {
    const { decision } = await freshDecision();
    for (const route of routes)
      expect(await canExecute(decision.policyDocument, arnOf(route)), route.name).toBe(true);
  });

  it('answers a decision whose scope lacks the route with ACCESS_DENIED’s body, its challenge naming the scope', async () => {
    const shipments = routeNamed('createShipment');
    const { token, decision } = await clientDecision(['tracking:read'], routeNamed('trackShipment'));
    const response = await call(shipments, requestTo(shipments, decision, token));
    const template = parse(
      readFileSync(new URL('../../infra/gateway-responses.yml', import.meta.url), 'utf8'),
    ).Resources as Record<
      string,
      {
        Properties: {
          ResponseType: string;
          ResponseTemplates: Record<string, string>;
          ResponseParameters: Record<string, string>;
        };
      }
    >;
    const denied = Object.values(template).find((r) => r.Properties.ResponseType === 'ACCESS_DENIED');
    expect(JSON.parse(response.body)).toEqual(
      JSON.parse(denied?.Properties.ResponseTemplates['application/json'] ?? '{}'),
    );
    expect(denied?.Properties.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).toBe(
      `'Bearer error="insufficient_scope"'`,
    );
    expect(response.headers?.['WWW-Authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="shipments:write"',
    );
  });
});
