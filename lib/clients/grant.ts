/**
 * The client credentials grant (RFC 6749 section 4.4): a client proves a secret (client-auth.ts,
 * throttled like a login) and gets an access token for its customer and scopes; the secret's
 * last use is recorded, at most once an hour (docs/clients.md, "Last use").
 */

import { type GrantBindingDeps, grantBinding } from '../dpop/binding.ts';
import type { DpopProof } from '../dpop/proof.ts';
import { AppError } from '../errors.ts';
import { describeError } from '../log.ts';
import type { QuotaState } from '../quota.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import type { Scope } from '../scopes.ts';
import type { ClientTokenIssuer, IssuedClientToken } from '../tokens/issue.ts';
import {
  type AuthenticatedClient,
  authenticateClient,
  type ClientAuthDeps,
  type ClientCredentials,
} from './client-auth.ts';
import { grantedScopes, isPlatform } from './clients.ts';
import { lastUseDue } from './secrets.ts';

export interface GrantDeps extends ClientAuthDeps {
  readonly tokens: ClientTokenIssuer;
  readonly dpop: GrantBindingDeps;
}

export type GrantRequest = ClientCredentials & {
  /** The scopes asked for; undefined: all of the client's. */
  readonly scopes: readonly Scope[] | undefined;
  readonly sourceIp: string;
  /** The request's DPoP proof, checked, not yet spent (lib/dpop/binding.ts). */
  readonly dpop?: DpopProof | undefined;
};

export interface Grant extends IssuedClientToken {
  readonly scopes: readonly Scope[];
  /** The DPoP key the token is bound to, if any. */
  readonly jkt: string | undefined;
  /** What is left of the grant's published limits (the RateLimit field). */
  readonly quota: readonly QuotaState[];
}

/**
 * Records the secret's use when the client item just read says its last one is an hour old or
 * more (lucia's pattern): the grants in between write nothing. Never rejects: a grant is not
 * refused, nor answered 503, for its bookkeeping; a failed write is tried again by the next grant.
 */
async function recordLastUse(deps: GrantDeps, { client, secretId, readAt }: AuthenticatedClient) {
  const secret = client.secrets.find((live) => live.id === secretId);
  if (!lastUseDue(secret?.lastUsedAt, readAt)) return;
  try {
    await deps.clients.recordUse(client.clientId, secretId, readAt);
  } catch (error) {
    // The id of the secret, never the secret (a `secret*` field name would be redacted).
    deps.logger.warn('client last use not recorded', {
      clientId: client.clientId,
      grantedWith: secretId,
      error: describeError(error),
    });
  }
}

export async function grantClientToken(deps: GrantDeps, request: GrantRequest): Promise<Grant> {
  const { metrics, logger } = deps;
  const authenticated = await authenticateClient(deps, request);
  const { client, secretId, readAt, quota } = authenticated;
  // A platform acts for no customer of its own, only through the connections customers approve.
  if (isPlatform(client)) {
    logger.info('client token refused', { reason: 'platform', clientId: client.clientId });
    metrics.count({ name: 'ClientTokenRefused', reason: 'UnauthorizedClient' });
    throw new AppError('UNAUTHORIZED_CLIENT', { quota });
  }
  const scopes = grantedScopes(client, request.scopes);
  // No scope at all (every one the client held since retired): a token that could call nothing.
  if (scopes === null || scopes.length === 0) {
    logger.info('client token refused', { reason: 'scope beyond the client', clientId: client.clientId });
    metrics.count({ name: 'ClientTokenRefused', reason: 'InvalidScope' });
    throw new AppError('INVALID_SCOPE', { quota });
  }
  const jkt = await grantBinding(
    deps.dpop,
    { client, customerId: client.customerId, scopes, quota },
    request.dpop,
  );
  // Beside the signing; awaited, as Lambda freezes whatever is still running once it has answered.
  const [token] = await Promise.all([
    deps.tokens.issue({
      clientId: client.clientId,
      grant: { secretId },
      customerId: client.customerId,
      scopes,
      issuedAt: issuedAtFor(client, readAt),
      jkt,
    }),
    recordLastUse(deps, authenticated),
  ]);
  logger.info('client token issued', {
    clientId: client.clientId,
    // The id of the secret used, never the secret (a `secret*` field name would be redacted).
    grantedWith: secretId,
    scope: scopes.join(' '),
    sourceIp: request.sourceIp,
    ...(jkt !== undefined && { dpopJkt: jkt }),
  });
  metrics.count({ name: 'ClientTokenIssued' });
  return { ...token, scopes, jkt, quota };
}
