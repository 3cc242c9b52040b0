/**
 * The authorization server metadata (RFC 8414): where OAuth client libraries learn the
 * authorization, PAR, token, revocation and introspection endpoints, the grants, PKCE, the client
 * authentication methods, the scopes and the key set.
 */
import { S256 } from '../authorization/pkce.ts';
import { GRANTABLE_SCOPES } from '../scopes.ts';
import { ASSERTION_ALGORITHMS } from './algorithms.ts';
import { GRANT_TYPES } from './token-request.ts';

export const TOKEN_PATH = '/api/v1/oauth/token';
export const REVOCATION_PATH = '/api/v1/oauth/revoke';
export const INTROSPECTION_PATH = '/api/v1/oauth/introspect';
export const JWKS_PATH = '/.well-known/jwks.json';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';
/** A platform's authorization code flow (docs/platforms.md). */
export const AUTHORIZATION_PATH = '/api/v1/oauth/authorize';
export const PAR_PATH = '/api/v1/oauth/par';

/** RFC 6749 section 2.3.1, both ways, and RFC 7523's `private_key_jwt` (lib/clients/client-auth.ts). */
const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;

/**
 * `baseUrl`: where the API was reached, never from a header a caller chooses (a shared cache keeps it).
 * Served anywhere but at the issuer's own origin, clients cannot find it from the issuer (RFC 8414
 * section 3): `discovery_note` says so (docs/stages.md, "Issuer and discovery").
 */
export const authorizationServerMetadata = (issuer: string, baseUrl: string) => ({
  issuer,
  authorization_endpoint: `${baseUrl}${AUTHORIZATION_PATH}`,
  token_endpoint: `${baseUrl}${TOKEN_PATH}`,
  jwks_uri: `${baseUrl}${JWKS_PATH}`,
  // RFC 9126: pushed requests are taken, and plain ones too.
  pushed_authorization_request_endpoint: `${baseUrl}${PAR_PATH}`,
  require_pushed_authorization_requests: false,
  grant_types_supported: [...GRANT_TYPES],
  // The authorization code with PKCE S256 alone (OAuth 2.1), and `iss` in its answer (RFC 9207).
  response_types_supported: ['code'],
  response_modes_supported: ['query'],
  code_challenge_methods_supported: [S256],
  authorization_response_iss_parameter_supported: true,
  token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
  // RFC 8414 section 2: the same client authentication at all three.
  revocation_endpoint: `${baseUrl}${REVOCATION_PATH}`,
  revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  revocation_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
  introspection_endpoint: `${baseUrl}${INTROSPECTION_PATH}`,
  introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  introspection_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
  // RFC 9449 section 5.1: a token request's DPoP proof binds its access token (lib/dpop/).
  dpop_signing_alg_values_supported: [...ASSERTION_ALGORITHMS],
  // Every scope a client may hold, tokens:introspect included; customer:admin is an administrator's only.
  scopes_supported: [...GRANTABLE_SCOPES],
  ...(issuer !== baseUrl && {
    discovery_note:
      `The issuer ${issuer} is an identifier on this stage, not where this document is served ` +
      `(${baseUrl}${METADATA_PATH}): configure OAuth clients with this document's URL or the token endpoint.`,
  }),
});
