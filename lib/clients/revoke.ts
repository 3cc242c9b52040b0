/**
 * Token revocation (RFC 7009) for API clients: a client revokes its own access tokens, which the
 * authorizer then refuses within the stage's revocation bound, as every other revocation
 * (docs/clients.md, "Revocation and introspection"); a platform also its connections' refresh
 * tokens, which ends the connection.
 */
import { clientActor } from '../audit/audit.ts';
import { type ConnectionStore, type EndConnectionDeps, endConnection } from '../connections/connections.ts';
import { AppError } from '../errors.ts';
import { type ClientTokenRevoker, MAX_REVOKED_TOKENS } from '../revocation/revocation.ts';
import { systemClock } from '../time.ts';
import type { AccessTokenVerifier, ConnectionRefreshTokenVerifier } from '../tokens/verify.ts';
import { authenticateClient, type ClientAuthDeps } from './client-auth.ts';
import { isPlatform } from './clients.ts';
import type { TokenQuery } from './token-request.ts';

export interface RevokeDeps extends ClientAuthDeps {
  /** The authorizer's: a token it would refuse anyway is no token to revoke. */
  readonly verifier: AccessTokenVerifier;
  readonly revoker: ClientTokenRevoker;
  /** A platform's refresh token ends its connection (docs/platforms.md, "Connections"). */
  readonly connections: Omit<EndConnectionDeps, 'connections'> & {
    readonly refreshTokens: ConnectionRefreshTokenVerifier;
    readonly store: Pick<ConnectionStore, 'find' | 'remove'>;
  };
}

/**
 * Whether `token` was a refresh token of one of the platform's connections, which it then ended
 * (RFC 7009 section 2.1: revoking a refresh token ends what it was issued for). A connection
 * ended already, or another's, is answered as garbage is.
 */
async function endedConnection(
  deps: RevokeDeps,
  clientId: string,
  token: string,
  sourceIp: string,
): Promise<boolean> {
  const claims = await deps.connections.refreshTokens.verify(token).catch(() => undefined);
  if (claims === undefined) return false;
  if (claims.clientId === clientId) {
    const connection = await deps.connections.store.find(clientId, claims.customerId);
    if (connection?.connectionId === claims.connectionId) {
      const end = {
        actor: clientActor(clientId),
        sourceIp,
        reason: 'refresh token revoked by the platform',
        now: (deps.clock ?? systemClock)(),
      } as const;
      if (
        await endConnection({ ...deps.connections, connections: deps.connections.store }, connection, end)
      ) {
        deps.logger.info('connection ended', {
          clientId,
          connectionId: connection.connectionId,
          endedBy: 'platform',
        });
        deps.metrics.count({ name: 'ConnectionEnded', by: 'Platform' });
      }
    }
  }
  return true;
}

/**
 * Resolves when the token is revoked, is no valid access token (section 2.2: the client could do
 * nothing about that error), or is a valid one issued to another client or to a user, which stays
 * valid: answered as garbage is, so that no client can test a token it found here (section 2.1
 * lets the server refuse it, but a refusal would tell a live token from a dead one).
 */
export async function revokeToken(
  deps: RevokeDeps,
  request: TokenQuery & { readonly sourceIp: string },
): Promise<void> {
  const { logger, metrics } = deps;
  const { client } = await authenticateClient(deps, request);
  const { clientId } = client;
  if (isPlatform(client) && (await endedConnection(deps, clientId, request.token, request.sourceIp))) return;
  const claims = await deps.verifier.verify(request.token).catch(() => undefined);
  if (claims === undefined) {
    logger.info('token revocation ignored', { reason: 'invalid token', clientId });
    return;
  }
  if (claims.kind !== 'client' || claims.clientId !== clientId) {
    logger.info('token revocation refused', { reason: 'not issued to the client', clientId });
    metrics.count({ name: 'TokenRevocationRefused', reason: 'NotIssuedToClient' });
    return;
  }
  if ((await deps.revoker.revokeClientToken(clientId, claims.jti, claims.expiresAt)) === 'full') {
    logger.info('token revocation refused', { reason: 'too many revoked tokens', clientId });
    metrics.count({ name: 'TokenRevocationRefused', reason: 'TooManyRevoked' });
    throw new AppError('VALIDATION_FAILED', {
      detail: `The client has ${MAX_REVOKED_TOKENS} revoked tokens that have not expired yet. Let tokens expire rather than revoke each one.`,
    });
  }
  // The token's id, never the token: it names the revocation in the client item too.
  logger.info('client token revoked', { clientId, jti: claims.jti });
  metrics.count({ name: 'ClientTokenRevoked' });
}
