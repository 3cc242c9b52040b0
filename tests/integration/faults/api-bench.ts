/**
 * What the API's fault matrix runs an operation with: a function in a fresh container, called
 * as API Gateway calls it, and the shape of an operation and of one run of it. The operations
 * are in api.test.ts and self-service.ts.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { vi } from 'vitest';
import { createDynamoAccountRepository } from '../../../lib/accounts/dynamodb.ts';
import { ADMIN_SCOPE } from '../../../lib/scopes.ts';
import { authorizerEvent, gatewayAuthorizerContext, lambdaContext } from '../../fixtures/events.ts';
import type { FaultKind } from '../../support/faults.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}
type HttpHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers?: object; body: string }>;
export type FunctionName =
  | 'login'
  | 'login-extended'
  | 'refresh'
  | 'logout'
  | 'authorizer'
  | 'track-shipment'
  | 'create-shipment'
  | 'oauth-token'
  | 'oauth-authorize'
  | 'oauth-revoke'
  | 'oauth-introspect'
  | 'customer-api'
  | 'passkey-login';

/** A handler in a container of its own: modules, clients and caches built anew. */
export async function freshHandler(name: FunctionName, env: Record<string, string> = {}) {
  vi.resetModules();
  const before = Object.keys(env).map((variable) => [variable, process.env[variable]] as const);
  for (const [variable, value] of Object.entries(env)) process.env[variable] = value;
  try {
    return ((await import(`../../../functions/${name}.ts`)) as { handler: unknown }).handler;
  } finally {
    for (const [variable, value] of before) {
      if (value === undefined) delete process.env[variable];
      else process.env[variable] = value;
    }
  }
}

/** Calls an HTTP function; what the gateway would send back. */
export async function call(handler: unknown, event: unknown): Promise<Answer> {
  const result = await (handler as HttpHandler)(event, lambdaContext());
  return { status: result.statusCode, headers: { ...result.headers }, body: result.body };
}

/** The authorizer's answer to `token`: its policy and context, or what it threw. */
export async function decide(handler: unknown, token: string) {
  return (handler as (event: unknown) => Promise<AuthorizerDecision>)(authorizerEvent(`Bearer ${token}`));
}
export interface AuthorizerDecision {
  readonly principalId: string;
  readonly policyDocument: { Statement: { Effect: string }[] };
  readonly context?: Record<string, string | number | boolean>;
}

/** Calls the authorizer; its decision as the gateway answers it (DEFAULT_5XX is a 503). */
export async function authorize(handler: unknown, token: string): Promise<Answer> {
  try {
    const policy = await decide(handler, token);
    return {
      status: policy.policyDocument.Statement[0]?.Effect === 'Allow' ? 200 : 403,
      headers: {},
      body: '',
    };
  } catch (error) {
    const unauthorized = error instanceof Error && error.message === 'Unauthorized';
    return {
      status: unauthorized ? 401 : 503,
      headers: unauthorized ? {} : { 'Retry-After': '1' },
      body: '',
    };
  }
}

export const json = (answer: Answer) => JSON.parse(answer.body) as Record<string, string>;

/** An administrator as the function sees them: the authorizer's decision on a fresh login's token. */
export interface SignedInAdministrator {
  readonly username: string;
  readonly customerId: string;
  readonly sourceIp: string;
  readonly authorizer: Record<string, string | number>;
}

/**
 * `user`, made its customer's administrator and signed in a moment ago (a login recent enough to
 * show a secret), fault-free: the authorizer's decision on its token, as API Gateway hands it on.
 */
export async function signedInAdministrator(
  user: {
    readonly username: string;
    readonly customerId: string;
    readonly sourceIp: string;
    readonly login: unknown;
  },
  accounts: { readonly client: DynamoDBDocumentClient; readonly tableName: string },
): Promise<SignedInAdministrator> {
  const { username, customerId, sourceIp, login } = user;
  await createDynamoAccountRepository(accounts).setAdministrator(username, true);
  const answer = await call(await freshHandler('login'), login);
  if (answer.status !== 200) throw new Error(`arrange: the administrator's login answered ${answer.status}`);
  const decision = await decide(await freshHandler('authorizer'), json(answer).token as string);
  if (
    !String(decision.context?.scope ?? '')
      .split(' ')
      .includes(ADMIN_SCOPE)
  )
    throw new Error(`arrange: the administrator's token holds no ${ADMIN_SCOPE}`);
  return { username, customerId, sourceIp, authorizer: gatewayAuthorizerContext(decision) };
}

export interface Run {
  readonly kind: FaultKind | undefined;
  /** Whether the fault's site was reached. */
  readonly planted: boolean;
  /** The answer while the dependency failed. */
  readonly first: Answer;
  /** The client's retry after recovery, when the first answer asked for one. */
  readonly retry: Answer | undefined;
}

export interface Operation<C> {
  readonly name: string;
  /** The function it calls. */
  readonly function: FunctionName;
  /** The stage's settings that differ from the default stage's, for the run's and the arrangement's containers. */
  readonly env?: Record<string, string>;
  /** The state before the request, written without faults. */
  arrange(): Promise<C>;
  /** The client's request, against a handler in the container `handler` gives. */
  act(context: C, handler: (name: FunctionName) => Promise<unknown>): Promise<Answer>;
  /** The status of a successful answer (after recovery, with `accountsDown`). */
  readonly success: number;
  /** The accounts table's reads fail throughout the request, beside the planted fault: the answer is 503. */
  readonly accountsDown?: boolean;
  /** Call sites of bookkeeping the answer does not depend on: a fault there still gets `success`. */
  readonly outlived?: readonly string[];
  /**
   * An answer other than `success` a retry may get, and why (docs/FAULTS.md lists them):
   * undefined when there is none for this run.
   */
  ownRefusal?(run: Run, site: string | undefined): number | undefined;
  /** The invariants on the tables after the run (and on what the client got). */
  check(context: C, run: Run, site: string | undefined): Promise<void>;
}
