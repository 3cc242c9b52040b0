/** The REQUEST authorizer's decision (docs/tokens-and-sessions.md, "The authorizer and its cache"). */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describeError, type Logger } from '../log.ts';
import type { AuthorizerDenyReason, MetricsRecorder } from '../metrics/metrics.ts';
import type { RevocationCheck } from '../revocation/revocation.ts';
import { ALL_SCOPES, allowedMethodArns, type Scope, scopeString } from '../scopes.ts';
import type { AccessClaims, AccessTokenVerifier } from '../tokens/verify.ts';
import type { AuthorizerContext } from './authorizer-context.ts';

/**
 * RFC 6750 `Bearer` and RFC 9449 `DPoP` credentials; scheme names are case-insensitive. Which
 * scheme a token may come with, and its proof, the protected function checks on every call
 * (lib/dpop/binding.ts): a decision cached for this header never sees the next request's proof.
 */
const CREDENTIALS = /^(?:Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;

// The one error API Gateway maps to 401 (a Deny would be 403). Stackless: the runtime logs a thrown
// error's stack, and a refusal is ordinary traffic.
function unauthorized(): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new Error('Unauthorized');
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path → arn:aws:execute-api:region:account:apiId/stage */
export function stagePrefix(methodArn: string): string {
  const afterApi = methodArn.indexOf('/');
  const afterStage = afterApi < 0 ? -1 : methodArn.indexOf('/', afterApi + 1);
  const stageEnd = afterStage < 0 ? methodArn.length : afterStage;
  if (afterApi <= 0 || stageEnd === afterApi + 1) throw unauthorized();
  return methodArn.slice(0, stageEnd);
}

export const authorizerContext = (subject: AccessClaims, scope: string): AuthorizerContext => ({
  username: subject.kind === 'user' ? subject.username : '',
  clientId: subject.kind === 'client' ? subject.clientId : '',
  customerId: subject.customerId ?? '',
  scope,
  iat: subject.issuedAt,
  exp: subject.expiresAt,
  // Absent rather than undefined: a context holds strings, numbers and booleans only.
  ...(subject.authTime !== undefined && { authTime: subject.authTime }),
  // A user's session, so a function that acts on a cached decision can check its revocation.
  ...(subject.kind === 'user' && subject.sessionId !== undefined && { sessionId: subject.sessionId }),
  // A bound token's key, which the function checks each call's proof against (lib/dpop/binding.ts).
  ...(subject.kind === 'client' && subject.jkt !== undefined && { jkt: subject.jkt }),
  // How it began, for the customer's passkey policy (lib/customer/administrator.ts).
  ...(subject.kind === 'user' && subject.method === 'passkey' && { signIn: 'passkey' as const }),
});

/**
 * Every protected route, never just this one (API Gateway reuses a cached policy for every route the
 * token calls) nor the whole stage; the functions check the route's scope, so that their 403 can name
 * it (docs/clients.md, "How scopes are enforced"). None: a Deny.
 */
export function scopedPolicy(
  prefix: string,
  allowed: readonly string[],
): APIGatewayAuthorizerResult['policyDocument'] {
  return {
    Version: '2012-10-17',
    Statement: [
      allowed.length === 0
        ? { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: `${prefix}/*` }
        : { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: [...allowed] },
    ],
  };
}

/** `*` stands for one path parameter's value. For the metrics only: API Gateway decides. */
const matchesMethodArn = (resource: readonly string[], methodArn: readonly string[]) =>
  resource.length === methodArn.length && resource.every((part, i) => part === '*' || part === methodArn[i]);

/** Freezes `value` and all it holds: a shared answer that no caller may change for the next. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

interface ScopedDecision {
  readonly policyDocument: APIGatewayAuthorizerResult['policyDocument'];
  readonly resources: readonly (readonly string[])[];
  readonly scope: string;
}

// A few scope sets under one stage or two; bounded all the same, since the stage comes from the event.
const MAX_DECISIONS = 64;
const decisions = new Map<string, ScopedDecision>();

/** Built once per scope set and stage, and reused: nothing else of the token changes it. */
function decisionFor(prefix: string, scopes: readonly Scope[]): ScopedDecision {
  // Scope names hold no newline: the key splits one way only.
  const key = `${scopes.join(' ')}\n${prefix}`;
  const cached = decisions.get(key);
  if (cached !== undefined) return cached;
  const decision: ScopedDecision = {
    policyDocument: deepFreeze(scopedPolicy(prefix, allowedMethodArns(prefix, ALL_SCOPES))),
    resources: allowedMethodArns(prefix, scopes).map((resource) => resource.split('/')),
    scope: scopeString(scopes),
  };
  if (decisions.size >= MAX_DECISIONS) decisions.delete(decisions.keys().next().value ?? key);
  decisions.set(key, decision);
  return decision;
}

export interface AuthorizerRequest {
  /** Every value of the Authorization header, in any letter case: more than one is refused. */
  readonly authorization: readonly string[];
  readonly methodArn: string;
}

export interface AuthorizerDeps {
  readonly verifier: AccessTokenVerifier;
  readonly revocation: RevocationCheck;
  readonly logger: Logger;
  readonly metrics: MetricsRecorder;
}

/** Refusals throw `Unauthorized`; an unreadable user or client store another error (fail closed: 503). */
export async function authorize(
  deps: AuthorizerDeps,
  request: AuthorizerRequest,
): Promise<APIGatewayAuthorizerResult> {
  const { metrics } = deps;
  const deny = (reason: AuthorizerDenyReason, logged: string) => {
    deps.logger.info('authorizer denied', { reason: logged });
    metrics.count({ name: 'AuthorizerDeny', reason });
    return unauthorized();
  };
  const values = request.authorization;
  if (values.length !== 1) {
    throw deny(
      values.length === 0 ? 'MissingToken' : 'SeveralTokens',
      `${values.length} authorization headers`,
    );
  }
  const match = CREDENTIALS.exec(values[0] ?? '');
  if (match?.[1] === undefined) throw deny('MissingToken', 'no Bearer- or DPoP-scheme token');
  let subject: AccessClaims;
  try {
    subject = await deps.verifier.verify(match[1]);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw deny(
      code === 'ERR_JWT_EXPIRED' ? 'Expired' : 'InvalidToken',
      typeof code === 'string' ? code : 'invalid token',
    );
  }
  let revoked: boolean;
  try {
    revoked = await deps.revocation.isRevoked(subject);
  } catch (error) {
    deps.logger.error('authorizer cannot check revocation', { error: describeError(error) });
    metrics.count({ name: 'AuthorizerUnavailable' });
    throw new Error('revocation check unavailable');
  }
  if (revoked) throw deny('Revoked', 'revoked');
  const decision = decisionFor(stagePrefix(request.methodArn), subject.scopes);
  const called = request.methodArn.split('/');
  const allowsThisRoute = decision.resources.some((resource) => matchesMethodArn(resource, called));
  metrics.count({ name: allowsThisRoute ? 'AuthorizerAllow' : 'AuthorizerInsufficientScope' });
  if (!allowsThisRoute)
    deps.logger.info('authorizer allowed a route beyond the token’s scopes', {
      reason: 'insufficient scope',
    });
  return {
    principalId: subject.kind === 'user' ? subject.username : `client:${subject.clientId}`,
    policyDocument: decision.policyDocument,
    context: authorizerContext(subject, decision.scope),
  };
}
