/**
 * A platform's grants at the token endpoint (docs/platforms.md, "Tokens"): the authorization code
 * (RFC 6749 section 4.1.3 with PKCE) and the refresh token of a connection, rotated with the reuse
 * detection and grace window of users' sessions (lib/sessions/sessions.ts rotateSession). Every
 * refusal of a code or refresh token is one `invalid_grant`.
 */
import { randomUUID } from 'node:crypto';
import { clientActor } from '../audit/audit.ts';
import { authenticateClient, type ClientAuthDeps, type ClientCredentials } from '../clients/client-auth.ts';
import { isPlatform, type PlatformClient } from '../clients/clients.ts';
import { lastUseDue } from '../clients/secrets.ts';
import { tokenTypeOf } from '../clients/token-request.ts';
import {
  type Connection,
  type ConnectionStore,
  type EndConnectionDeps,
  endConnection,
} from '../connections/connections.ts';
import { type GrantBindingDeps, grantBinding } from '../dpop/binding.ts';
import type { DpopProof } from '../dpop/proof.ts';
import { AppError } from '../errors.ts';
import { describeError } from '../log.ts';
import type { QuotaState } from '../quota.ts';
import { issuedAtFor } from '../revocation/revocation.ts';
import type { Scope } from '../scopes.ts';
import type { SessionStore } from '../sessions/repository.ts';
import { rotateSession, type SessionSettings } from '../sessions/sessions.ts';
import { epochSeconds, systemClock } from '../time.ts';
import type { ConnectionTokenIssuer, IssuedConnectionTokens } from '../tokens/issue.ts';
import type { ConnectionRefreshClaims, ConnectionRefreshTokenVerifier } from '../tokens/verify.ts';
import { digestOf } from './authorize.ts';
import { CODE_VERIFIER, challengeOf } from './pkce.ts';
import type { AuthorizationStore } from './store.ts';

export interface PlatformGrantDeps extends ClientAuthDeps, Omit<EndConnectionDeps, 'connections'> {
  readonly codes: Pick<AuthorizationStore, 'redeemCode'>;
  readonly connections: ConnectionStore;
  readonly sessions: SessionStore;
  /** `reuseGraceSeconds` the users' refresh's; `maxLifetimeSeconds` a connection's idle lifetime. */
  readonly sessionSettings: SessionSettings;
  readonly tokens: ConnectionTokenIssuer;
  readonly refreshTokens: ConnectionRefreshTokenVerifier;
  readonly dpop: GrantBindingDeps;
}

export interface PlatformGrant extends IssuedConnectionTokens {
  /** The access token's DPoP key, if it is bound to one. */
  readonly jkt: string | undefined;
  readonly customerId: string;
  readonly scopes: readonly Scope[];
  readonly quota: readonly QuotaState[];
}

/** A connection's refresh session's id: `conn#` and a UUID (a user's session is a bare UUID). */
export const CONNECTION_SESSION_PREFIX = 'conn#';

/** A session's owner in the sessions table: the connection, never a username (a refresh of a user's cannot take it). */
const sessionOwner = (connectionId: string) => `connection:${connectionId}`;

const invalidGrant = (quota: readonly QuotaState[], detail: string) =>
  new AppError('INVALID_GRANT', { quota, detail });

/** The platform, enabled and holding the presented secret; a customer's client is refused the grant. */
async function authenticatePlatform(
  deps: PlatformGrantDeps,
  request: ClientCredentials & { readonly sourceIp: string },
) {
  const authenticated = await authenticateClient(deps, request);
  const { client, quota } = authenticated;
  if (!isPlatform(client)) {
    deps.metrics.count({ name: 'ClientTokenRefused', reason: 'UnauthorizedClient' });
    throw new AppError('UNAUTHORIZED_CLIENT', {
      quota,
      detail:
        'Only a platform holds authorization codes and refresh tokens; an API client uses client_credentials.',
    });
  }
  return { ...authenticated, client };
}

/** An operator narrowed the platform to none of the approved scopes: a token would call nothing. */
const noScope = (quota: readonly QuotaState[]) =>
  new AppError('INVALID_SCOPE', {
    quota,
    detail: 'The platform holds none of the approved scopes any more.',
  });

/** The approved scopes the platform still holds: an operator's narrowing of it reaches its connections. */
const heldScopes = (platform: PlatformClient, connection: Pick<Connection, 'scopes'>) =>
  connection.scopes.filter((scope) => platform.scopes.includes(scope));

async function ended(
  deps: PlatformGrantDeps,
  connection: Connection,
  by: 'CodeReplayed' | 'RefreshReused',
  sourceIp: string,
) {
  const end = {
    actor: clientActor(connection.clientId),
    sourceIp,
    reason: by === 'CodeReplayed' ? 'authorization code used twice' : 'refresh token reused',
    now: (deps.clock ?? systemClock)(),
  } as const;
  if (await endConnection(deps, connection, end)) deps.metrics.count({ name: 'ConnectionEnded', by });
  deps.logger.warn(
    by === 'CodeReplayed'
      ? 'authorization code replayed: connection ended'
      : 'refresh token reuse: connection ended',
    {
      clientId: connection.clientId,
      customerId: connection.customerId,
      connectionId: connection.connectionId,
    },
  );
}

export type CodeExchange = ClientCredentials & {
  readonly code: string;
  readonly redirectUri: string;
  readonly codeVerifier: string;
  readonly sourceIp: string;
  /** The request's DPoP proof, checked, not yet spent (lib/dpop/binding.ts). */
  readonly dpop?: DpopProof | undefined;
};

/** grant_type=authorization_code: a code once, by the platform it was issued to, with its PKCE verifier. */
export async function exchangeCode(deps: PlatformGrantDeps, request: CodeExchange): Promise<PlatformGrant> {
  const { client, readAt, quota } = await authenticatePlatform(deps, request);
  const now = (deps.clock ?? systemClock)();
  if (!CODE_VERIFIER.test(request.codeVerifier))
    throw invalidGrant(
      quota,
      'The code_verifier is not 43 to 128 unreserved characters (RFC 7636 section 4.1).',
    );
  // All the code was issued for, in the one conditional write that spends it.
  const binding = {
    clientId: client.clientId,
    redirectUri: request.redirectUri,
    codeChallenge: challengeOf(request.codeVerifier),
  };
  const redemption = await deps.codes.redeemCode(digestOf(request.code), binding, randomUUID(), now);
  if (redemption.outcome === 'unknown')
    throw invalidGrant(
      quota,
      'The code is unknown, expired or spent, or not issued for this redirect_uri and code_verifier.',
    );
  const { code } = redemption;
  const connection = await deps.connections.find(code.clientId, code.customerId);
  const same = connection !== null && connection.connectionId === code.connectionId;
  if (redemption.outcome === 'replayed') {
    // RFC 6749 section 4.1.2: what the first exchange issued ends too.
    if (same) await ended(deps, connection, 'CodeReplayed', request.sourceIp);
    throw invalidGrant(quota, 'The code is unknown, expired or spent.');
  }
  if (!same) throw invalidGrant(quota, 'The connection the code was issued for has ended.');
  const scopes = heldScopes(client, code);
  if (scopes.length === 0) throw noScope(quota);
  const jkt = await grantBinding(
    deps.dpop,
    { client, customerId: connection.customerId, scopes, quota },
    request.dpop,
  );
  // Its own prefix, so the token endpoint's role reaches connections' sessions and codes alone.
  const sessionId = `${CONNECTION_SESSION_PREFIX}${randomUUID()}`;
  const refreshJti = randomUUID();
  const expiresAt = epochSeconds(now) + deps.sessionSettings.maxLifetimeSeconds;
  // Tokens leave only after their session is stored, as a login's.
  await deps.sessions.create({
    sessionId,
    username: sessionOwner(connection.connectionId),
    createdAt: code.approvedAt,
    expiresAt,
    currentJti: refreshJti,
  });
  const tokens = await deps.tokens.issue({
    clientId: client.clientId,
    connectionId: connection.connectionId,
    customerId: connection.customerId,
    scopes,
    sessionId,
    refreshJti,
    authTime: code.approvedAt,
    issuedAt: issuedAtFor(client, readAt),
    notAfter: expiresAt,
    jkt,
  });
  deps.logger.info('connection tokens issued', {
    grant: 'authorization_code',
    clientId: client.clientId,
    connectionId: connection.connectionId,
    sourceIp: request.sourceIp,
  });
  deps.metrics.count({ name: 'ConnectionTokenIssued', grant: 'AuthorizationCode' });
  return { ...tokens, jkt, customerId: connection.customerId, scopes, quota };
}

export type ConnectionRefresh = ClientCredentials & {
  readonly refreshToken: string;
  /** Narrows this access token (RFC 6749 section 6); undefined: every approved scope. */
  readonly scopes?: readonly Scope[] | undefined;
  readonly sourceIp: string;
  readonly dpop?: DpopProof | undefined;
};

/** Records the connection's use at most hourly; never refuses a refresh for its bookkeeping. */
async function recordUse(deps: PlatformGrantDeps, connection: Connection, at: Date) {
  if (!lastUseDue(connection.lastUsedAt, at)) return;
  try {
    await deps.connections.recordUse(connection, at);
  } catch (error) {
    deps.logger.warn('connection last use not recorded', {
      connectionId: connection.connectionId,
      error: describeError(error),
    });
  }
}

/** grant_type=refresh_token: the connection's current refresh token, by its platform, rotated. */
export async function refreshConnection(
  deps: PlatformGrantDeps,
  request: ConnectionRefresh,
): Promise<PlatformGrant> {
  const { client, readAt, quota } = await authenticatePlatform(deps, request);
  let claims: ConnectionRefreshClaims;
  try {
    claims = await deps.refreshTokens.verify(request.refreshToken);
  } catch (error) {
    throw new AppError('INVALID_GRANT', {
      quota,
      detail: 'The refresh token is invalid or expired.',
      cause: error,
    });
  }
  // RFC 6749 section 6: bound to the client it was issued to.
  if (claims.clientId !== client.clientId)
    throw invalidGrant(quota, 'The refresh token was issued to another client.');
  const connection = await deps.connections.find(claims.clientId, claims.customerId);
  if (connection === null || connection.connectionId !== claims.connectionId)
    throw invalidGrant(quota, 'The connection has ended.');
  // Checked before the rotation, so a refused scope spends no refresh token.
  const held = heldScopes(client, connection);
  if (held.length === 0) throw noScope(quota);
  // Section 6: no scope beyond what the connection holds.
  if (request.scopes !== undefined && !request.scopes.every((scope) => held.includes(scope)))
    throw new AppError('INVALID_SCOPE', { quota, detail: 'The scope is beyond what the customer approved.' });
  const scopes =
    request.scopes === undefined ? held : held.filter((scope) => request.scopes?.includes(scope));
  // Before the rotation: a refused proof spends no refresh token.
  const jkt = await grantBinding(
    deps.dpop,
    { client, customerId: connection.customerId, scopes, quota },
    request.dpop,
  );
  const now = (deps.clock ?? systemClock)();
  const step = {
    sessionId: claims.sessionId,
    username: sessionOwner(connection.connectionId),
    fromJti: claims.jti,
    toJti: randomUUID(),
    now,
    // A connection lives while it is used: each refresh moves its idle end.
    extendTo: epochSeconds(now) + deps.sessionSettings.maxLifetimeSeconds,
  };
  const outcome = await rotateSession(
    { store: deps.sessions, settings: deps.sessionSettings, metrics: deps.metrics },
    step,
    () => ended(deps, connection, 'RefreshReused', request.sourceIp),
  );
  if (outcome === null)
    throw invalidGrant(quota, 'The refresh token is not the current one of the connection.');
  const [tokens] = await Promise.all([
    deps.tokens.issue({
      clientId: client.clientId,
      connectionId: connection.connectionId,
      customerId: connection.customerId,
      scopes,
      sessionId: outcome.session.sessionId,
      refreshJti: outcome.jti,
      authTime: claims.authTime,
      issuedAt: issuedAtFor(client, readAt),
      notAfter: outcome.session.expiresAt,
      jkt,
    }),
    recordUse(deps, connection, now),
  ]);
  deps.metrics.count({ name: 'ConnectionTokenIssued', grant: 'RefreshToken' });
  return { ...tokens, jkt, customerId: connection.customerId, scopes, quota };
}

/** RFC 6749 section 5.1, with the refresh token and whom the platform acts for (`customer_id`). */
export const toPlatformTokenResponse = (grant: PlatformGrant) => ({
  access_token: grant.accessToken,
  token_type: tokenTypeOf(grant),
  expires_in: grant.expiresIn,
  refresh_token: grant.refreshToken,
  scope: grant.scopes.join(' '),
  customer_id: grant.customerId,
});
