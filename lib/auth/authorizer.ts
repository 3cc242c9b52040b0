/**
 * The API Gateway REQUEST authorizer's decision (docs/tokens-and-sessions.md "The authorizer
 * and its cache"). REQUEST, not TOKEN: it sees every Authorization header, and refuses two.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describeError, type Logger } from '../log.ts';
import type { AuthorizerDenyReason, MetricsRecorder } from '../metrics/metrics.ts';
import type { RevocationCheck } from '../revocation/revocation.ts';
import { allowedMethodArns, type Scope, scopeString } from '../scopes.ts';
import type { AccessClaims, AccessTokenVerifier } from '../tokens/verify.ts';
import type { AuthorizerContext } from './authorizer-context.ts';

/** RFC 6750 `Bearer` credentials; the scheme name is case-insensitive. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The one error API Gateway (and serverless-offline) maps to 401; a Deny policy would be a 403.
 * Made without stack frames: a refusal is ordinary traffic, and whatever runs the function
 * logs a thrown error's stack (the Lambda runtime's `Invoke Error` line).
 */
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

/**
 * What protected functions get in `requestContext.authorizer` (lib/auth/authorizer-context.ts);
 * `scope` is the token's scopes as `scopeString` spells them (`decisionFor` has it built).
 */
export const authorizerContext = (subject: AccessClaims, scope: string): AuthorizerContext => ({
  username: subject.kind === 'user' ? subject.username : '',
  clientId: subject.kind === 'client' ? subject.clientId : '',
  customerId: subject.customerId ?? '',
  scope,
  iat: subject.issuedAt,
  exp: subject.expiresAt,
});

/**
 * The policy of an allowed token: every route its scopes allow, and only those. API Gateway
 * reuses a cached policy for every route the same token calls, so it must never be the
 * current route alone (a 403 on the next route) nor the whole stage (a route beyond the scopes).
 * A token whose scopes allow no route gets a Deny of the stage: a 403 everywhere.
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

/**
 * Whether one of our policy resources covers a method ARN, both split at `/`: segment by segment,
 * `*` standing for one path parameter's value (which never holds a `/`). For the metrics only:
 * API Gateway decides.
 */
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

/** What an allowed decision for one scope set under one stage carries beyond the token's own claims. */
interface ScopedDecision {
  /** Frozen: one object answers every request with these scopes under this stage. */
  readonly policyDocument: APIGatewayAuthorizerResult['policyDocument'];
  /** The policy's resources split at `/`, for `matchesMethodArn`. */
  readonly resources: readonly (readonly string[])[];
  /** The context's `scope`. */
  readonly scope: string;
}

// A few scope sets under one stage or two; bounded all the same, since the stage comes from the event.
const MAX_DECISIONS = 64;
const decisions = new Map<string, ScopedDecision>();

/**
 * The policy, its resources and the scope string for `scopes` under `prefix`, built at the first
 * request with them and reused by the container: they depend on nothing else of the token.
 */
function decisionFor(prefix: string, scopes: readonly Scope[]): ScopedDecision {
  // Scope names hold no newline: the key splits one way only.
  const key = `${scopes.join(' ')}\n${prefix}`;
  const cached = decisions.get(key);
  if (cached !== undefined) return cached;
  const allowed = allowedMethodArns(prefix, scopes);
  const decision: ScopedDecision = {
    policyDocument: deepFreeze(scopedPolicy(prefix, allowed)),
    resources: allowed.map((resource) => resource.split('/')),
    scope: scopeString(scopes),
  };
  if (decisions.size >= MAX_DECISIONS) decisions.delete(decisions.keys().next().value ?? key);
  decisions.set(key, decision);
  return decision;
}

/** What the decision reads of the REQUEST authorizer's event (lib/http/authorizer-handler.ts picks it out). */
export interface AuthorizerRequest {
  /** Every value of the Authorization header, in any letter case: more than one is refused. */
  readonly authorization: readonly string[];
  /** The method ARN of the route called. */
  readonly methodArn: string;
}

export interface AuthorizerDeps {
  readonly verifier: AccessTokenVerifier;
  readonly revocation: RevocationCheck;
  readonly logger: Logger;
  /** Counts allows, denies by reason and fail-closed answers. */
  readonly metrics: MetricsRecorder;
}

/**
 * Allows every route the token's scopes allow (`scopedPolicy`), since API Gateway reuses a
 * cached decision for every route; the context carries `exp` and the scopes, so protected
 * functions keep expiry and scope exact. Any refusal throws `Unauthorized`; an unreadable
 * user or client store throws another error (fail closed: a 503).
 */
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
  const match = BEARER.exec(values[0] ?? '');
  if (match?.[1] === undefined) throw deny('MissingToken', 'no Bearer-scheme token');
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
    deps.logger.info('authorizer allowed other routes only', { reason: 'insufficient scope' });
  return {
    principalId: subject.kind === 'user' ? subject.username : `client:${subject.clientId}`,
    policyDocument: decision.policyDocument,
    context: authorizerContext(subject, decision.scope),
  };
}
