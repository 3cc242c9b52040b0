/**
 * Token introspection (RFC 7662) for the carrier's own services: a client holding
 * `tokens:introspect` asks whether a token is active, and gets the answer the authorizer would
 * give, from the authorizer's own verifier and revocation check (docs/clients.md, "Revocation
 * and introspection").
 */
import { AppError } from '../errors.ts';
import type { RevocationCheck } from '../revocation/revocation.ts';
import { type Scope, scopeString } from '../scopes.ts';
import { CLIENT_ID_CLAIM, LOGIN_CLIENT_ID } from '../tokens/claims.ts';
import type { AccessClaims, AccessTokenVerifier } from '../tokens/verify.ts';
import { authenticateClient, type ClientAuthDeps } from './client-auth.ts';
import type { TokenQuery } from './token-request.ts';

/** The scope a client needs to introspect; no route needs it, so no user's token holds it. */
export const INTROSPECTION_SCOPE: Scope = 'tokens:introspect';

export interface IntrospectDeps extends ClientAuthDeps {
  readonly verifier: AccessTokenVerifier;
  /** Rejects when the store cannot be read: the answer is then a 503, never a guess. */
  readonly revocation: RevocationCheck;
}

/** RFC 7662 section 2.2. An inactive token's answer says nothing more, not even why. */
export type Introspection =
  | { readonly active: false }
  | {
      readonly active: true;
      readonly scope: string;
      readonly [CLIENT_ID_CLAIM]: string;
      readonly sub: string;
      /** A user's token only: the username, as `sub`. */
      readonly username?: string;
      readonly customer_id?: string;
      /** RFC 9449 section 6.2: `DPoP`, with `cnf.jkt`, for a token bound to a key. */
      readonly token_type: 'Bearer' | 'DPoP';
      readonly cnf?: { readonly jkt: string };
      readonly exp: number;
      readonly iat: number;
      readonly iss: string;
      readonly aud: string | readonly string[];
      readonly jti: string;
    };

const INACTIVE: Introspection = Object.freeze({ active: false });

/** The members of an active token's answer, from what the verifier vouched for. */
function activeAnswer(claims: AccessClaims): Introspection {
  const subject =
    claims.kind === 'user'
      ? { [CLIENT_ID_CLAIM]: LOGIN_CLIENT_ID, sub: claims.username, username: claims.username }
      : { [CLIENT_ID_CLAIM]: claims.clientId, sub: claims.clientId };
  return {
    active: true,
    scope: scopeString(claims.scopes),
    ...subject,
    ...(claims.customerId !== null && { customer_id: claims.customerId }),
    ...(claims.kind === 'client' && claims.jkt !== undefined
      ? { token_type: 'DPoP', cnf: { jkt: claims.jkt } }
      : { token_type: 'Bearer' }),
    exp: claims.expiresAt,
    iat: claims.issuedAt,
    iss: claims.issuer,
    aud: claims.audience,
    jti: claims.jti,
  };
}

/**
 * Active: a valid access token of this stage, as the authorizer checks it, and not revoked. A
 * refresh token is never active here: it calls no route. A client without `tokens:introspect` is
 * refused (INSUFFICIENT_SCOPE) once authenticated, before the token is looked at.
 */
export async function introspectToken(
  deps: IntrospectDeps,
  request: TokenQuery & { readonly sourceIp: string },
): Promise<Introspection> {
  const { logger, metrics } = deps;
  const { client } = await authenticateClient(deps, request);
  const { clientId } = client;
  if (!client.scopes.includes(INTROSPECTION_SCOPE)) {
    logger.info('token introspection refused', { reason: 'missing scope', clientId });
    metrics.count({ name: 'TokenIntrospectionRefused', reason: 'MissingScope' });
    throw new AppError('INSUFFICIENT_SCOPE', { requiredScope: INTROSPECTION_SCOPE });
  }
  const claims = await deps.verifier.verify(request.token).catch(() => undefined);
  const active = claims !== undefined && !(await deps.revocation.isRevoked(claims));
  logger.info('token introspected', { clientId, active });
  metrics.count({ name: 'TokenIntrospected', result: active ? 'Active' : 'Inactive' });
  return active ? activeAnswer(claims) : INACTIVE;
}
