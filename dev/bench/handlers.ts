/** The real handlers, imported after benchStage() has set their environment. */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { INTROSPECTION_PATH, REVOCATION_PATH, TOKEN_PATH } from '../../lib/clients/metadata.ts';
import { lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';
import type { BenchClient } from './stage.ts';

export type HttpHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = typeof import('../../functions/authorizer.ts')['handler'];

export const importLogin = async () => (await import('../../functions/login.ts')).handler as HttpHandler;
export const importLoginExtended = async () =>
  (await import('../../functions/login-extended.ts')).handler as HttpHandler;
export const importRefresh = async () => (await import('../../functions/refresh.ts')).handler as HttpHandler;
export const importOAuthToken = async () =>
  (await import('../../functions/oauth-token.ts')).handler as HttpHandler;
export const importOAuthIntrospect = async () =>
  (await import('../../functions/oauth-introspect.ts')).handler as HttpHandler;
export const importOAuthRevoke = async () =>
  (await import('../../functions/oauth-revoke.ts')).handler as HttpHandler;

/**
 * The authorizer, evaluated afresh under `instance` (a query string gives the module its own
 * instance, which reads the environment as it is now); its lib/ imports are shared.
 */
export async function importAuthorizer(instance?: string): Promise<AuthorizerHandler> {
  const url = new URL('../../functions/authorizer.ts', import.meta.url);
  if (instance !== undefined) url.search = `instance=${encodeURIComponent(instance)}`;
  const module: typeof import('../../functions/authorizer.ts') = await import(url.href);
  return module.handler;
}

export const credentialsBody = (username: string, password: string) => JSON.stringify({ username, password });

/** The address every event of the bench comes from (the captured login event's): its known source. */
export const BENCH_SOURCE = loginEvent(null).requestContext.identity.sourceIp;

/** `event` as sent from `sourceIp`. */
export const fromSource = (event: APIGatewayProxyEvent, sourceIp: string): APIGatewayProxyEvent => ({
  ...event,
  requestContext: { ...event.requestContext, identity: { ...event.requestContext.identity, sourceIp } },
});

/** Calls `handler` with `event`; throws unless it answers `status`. */
export async function expectStatus(handler: HttpHandler, event: APIGatewayProxyEvent, status: number) {
  const response = await handler(event, lambdaContext());
  if (response.statusCode !== status)
    throw new Error(`expected ${status}, got ${response.statusCode}: ${response.body}`);
}

/** Calls `handler` with a fresh login event carrying `body`; throws unless it answers 200. */
export async function call200(handler: HttpHandler, body: string): Promise<Record<string, unknown>> {
  const response = await handler(loginEvent(body), lambdaContext());
  if (response.statusCode !== 200)
    throw new Error(`expected 200, got ${response.statusCode}: ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
}

/**
 * A request to an OAuth endpoint as an OAuth library sends it: the form body, the client's id
 * and secret by HTTP Basic (each form-urlencoded first, RFC 6749 section 2.3.1).
 */
function oauthRequestEvent(
  client: BenchClient,
  path: string,
  form: Record<string, string>,
): APIGatewayProxyEvent {
  const credentials = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.secret)}`;
  const headers = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
  };
  const event = loginEvent(new URLSearchParams(form).toString(), headers);
  return {
    ...event,
    resource: path,
    path,
    multiValueHeaders: {
      ...event.multiValueHeaders,
      ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    },
    requestContext: { ...event.requestContext, resourcePath: path, path: `/prod${path}` },
  };
}

/** A client credentials grant (RFC 6749 section 4.4.2). */
export const tokenRequestEvent = (client: BenchClient) =>
  oauthRequestEvent(client, TOKEN_PATH, { grant_type: 'client_credentials' });

/** `token` introspected (RFC 7662) or revoked (RFC 7009) by `client`. */
export const introspectionEvent = (client: BenchClient, token: string) =>
  oauthRequestEvent(client, INTROSPECTION_PATH, { token });
export const revocationEvent = (client: BenchClient, token: string) =>
  oauthRequestEvent(client, REVOCATION_PATH, { token });

/** Calls the introspection handler; throws unless it answers 200 with `token` active. */
export async function introspectActive(
  handler: HttpHandler,
  client: BenchClient,
  token: string,
): Promise<void> {
  const response = await handler(introspectionEvent(client, token), lambdaContext());
  if (response.statusCode !== 200 || (JSON.parse(response.body) as { active?: unknown }).active !== true)
    throw new Error(`expected 200 with an active token, got ${response.statusCode}: ${response.body}`);
}

/** Calls the token handler with a fresh grant for `client`; throws unless it answers 200 with a token. */
export async function grant200(handler: HttpHandler, client: BenchClient): Promise<string> {
  const response = await handler(tokenRequestEvent(client), lambdaContext());
  const body = JSON.parse(response.body) as Record<string, unknown>;
  if (response.statusCode !== 200 || typeof body.access_token !== 'string')
    throw new Error(`expected 200 with a token, got ${response.statusCode}: ${response.body}`);
  return body.access_token;
}
