/** The real handlers, imported after benchStage() has set their environment. */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext, loginEvent } from '../../tests/fixtures/events.ts';

export type HttpHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = typeof import('../../functions/authorizer.ts')['handler'];

export const importLogin = async () => (await import('../../functions/login.ts')).handler as HttpHandler;
export const importLoginExtended = async () =>
  (await import('../../functions/login-extended.ts')).handler as HttpHandler;
export const importRefresh = async () => (await import('../../functions/refresh.ts')).handler as HttpHandler;

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

/** Calls `handler` with a fresh login event carrying `body`; throws unless it answers 200. */
export async function call200(handler: HttpHandler, body: string): Promise<Record<string, unknown>> {
  const response = await handler(loginEvent(body), lambdaContext());
  if (response.statusCode !== 200)
    throw new Error(`expected 200, got ${response.statusCode}: ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
}
