/**
 * The client credentials grant (RFC 6749 section 4.4): a client proves a secret (client-auth.ts,
 * throttled like a login) and gets an access token for its customer and scopes.
 */

import { AppError } from '../errors.ts';
import type { QuotaState } from '../quota.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import type { Scope } from '../scopes.ts';
import type { ClientTokenIssuer, IssuedClientToken } from '../tokens/issue.ts';
import { authenticateClient, type ClientAuthDeps, type ClientCredentials } from './client-auth.ts';
import { grantedScopes } from './clients.ts';

export interface GrantDeps extends ClientAuthDeps {
  readonly tokens: ClientTokenIssuer;
}

export interface GrantRequest extends ClientCredentials {
  /** The scopes asked for; undefined: all of the client's. */
  readonly scopes: readonly Scope[] | undefined;
  readonly sourceIp: string;
}

export interface Grant extends IssuedClientToken {
  readonly scopes: readonly Scope[];
  /** What is left of the grant's published limits (the RateLimit field). */
  readonly quota: readonly QuotaState[];
}

export async function grantClientToken(deps: GrantDeps, request: GrantRequest): Promise<Grant> {
  const { metrics, logger } = deps;
  const { client, secretId, readAt, quota } = await authenticateClient(deps, request);
  const scopes = grantedScopes(client, request.scopes);
  // No scope at all (every one the client held since retired): a token that could call nothing.
  if (scopes === null || scopes.length === 0) {
    logger.info('client token refused', { reason: 'scope beyond the client', clientId: client.clientId });
    metrics.count({ name: 'ClientTokenRefused', reason: 'InvalidScope' });
    throw new AppError('INVALID_SCOPE', { quota });
  }
  const token = await deps.tokens.issue({
    clientId: client.clientId,
    secretId,
    customerId: client.customerId,
    scopes,
    issuedAt: issuedAtFor(client, readAt),
  });
  logger.info('client token issued', {
    clientId: client.clientId,
    // The id of the secret used, never the secret (a `secret*` field name would be redacted).
    grantedWith: secretId,
    scope: scopes.join(' '),
    sourceIp: request.sourceIp,
  });
  metrics.count({ name: 'ClientTokenIssued' });
  return { ...token, scopes, quota };
}
