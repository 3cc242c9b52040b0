/**
 * The client credentials grant (RFC 6749 section 4.4): a client proves a secret and gets an
 * access token for its customer and scopes. Every failed client authentication (unknown client,
 * wrong secret, disabled client) is the same INVALID_CLIENT after the same work, counted by the
 * login throttle on the client id and the source address like a failed login.
 */

import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ClientAuthFailureReason, MetricsRecorder } from '../metrics/metrics.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import type { Scope } from '../scopes.ts';
import { beginAlongside, type FailureReason, type LoginThrottle } from '../throttle/throttle.ts';
import { type Clock, systemClock } from '../time.ts';
import type { ClientTokenIssuer, IssuedClientToken } from '../tokens/issue.ts';
import { type ClientReader, grantedScopes, matchSecret } from './clients.ts';

export interface GrantDeps {
  readonly clients: ClientReader;
  readonly tokens: ClientTokenIssuer;
  readonly throttle: LoginThrottle;
  readonly logger: Logger;
  /** Counts grants and failed client authentications by reason. */
  readonly metrics: MetricsRecorder;
  readonly clock?: Clock;
}

export interface GrantRequest {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The scopes asked for; undefined: all of the client's. */
  readonly scopes: readonly Scope[] | undefined;
  readonly sourceIp: string;
}

export interface Grant extends IssuedClientToken {
  readonly scopes: readonly Scope[];
}

const FAILURE_METRIC: Partial<Record<FailureReason, ClientAuthFailureReason>> = {
  'unknown client': 'UnknownClient',
  'bad secret': 'BadSecret',
  'disabled client': 'Disabled',
};

export async function grantClientToken(deps: GrantDeps, request: GrantRequest): Promise<Grant> {
  const { metrics, logger } = deps;
  const attempt = { username: request.clientId, sourceIp: request.sourceIp, client: true } as const;
  const readAt = (deps.clock ?? systemClock)();
  const { reservation, found: client } = await beginAlongside(
    deps.throttle,
    attempt,
    () => deps.clients.findClient(request.clientId),
    () => {
      logger.info('client authentication failed', { reason: 'locked', sourceIp: request.sourceIp });
      metrics.count({ name: 'ClientAuthFailed', reason: 'Locked' });
    },
  );
  const secretId = matchSecret(request.clientSecret, client?.secrets ?? []);
  if (client === null || secretId === null || !client.enabled) {
    const reason: FailureReason =
      client === null ? 'unknown client' : secretId === null ? 'bad secret' : 'disabled client';
    await deps.throttle.failed(attempt, reason, reservation);
    // The client id only of a client that exists: a secret pasted into the id field must not be logged.
    logger.info('client authentication failed', {
      reason,
      ...(client !== null && { clientId: client.clientId }),
      sourceIp: request.sourceIp,
    });
    metrics.count({ name: 'ClientAuthFailed', reason: FAILURE_METRIC[reason] ?? 'UnknownClient' });
    throw new AppError('INVALID_CLIENT');
  }
  await deps.throttle.succeeded(reservation);
  const scopes = grantedScopes(client, request.scopes);
  // No scope at all (every one the client held since retired): a token that could call nothing.
  if (scopes === null || scopes.length === 0) {
    logger.info('client token refused', { reason: 'scope beyond the client', clientId: client.clientId });
    metrics.count({ name: 'ClientTokenRefused', reason: 'InvalidScope' });
    throw new AppError('INVALID_SCOPE');
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
  return { ...token, scopes };
}
