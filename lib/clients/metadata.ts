/**
 * The authorization server metadata (RFC 8414): where OAuth client libraries learn the token,
 * revocation and introspection endpoints, the grant, the client authentication methods, the
 * scopes and the key set.
 */
import { GRANTABLE_SCOPES } from '../scopes.ts';
import { CLIENT_CREDENTIALS } from './token-request.ts';

export const TOKEN_PATH = '/api/v1/oauth/token';
export const REVOCATION_PATH = '/api/v1/oauth/revoke';
export const INTROSPECTION_PATH = '/api/v1/oauth/introspect';
export const JWKS_PATH = '/.well-known/jwks.json';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';

/** RFC 6749 section 2.3.1, both ways (lib/clients/client-auth.ts). */
const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/**
 * `baseUrl`: where the API was reached, never from a header a caller chooses (a shared cache keeps it).
 * Served anywhere but at the issuer's own origin, clients cannot find it from the issuer (RFC 8414
 * section 3): `discovery_note` says so (docs/stages.md, "Issuer and discovery").
 */
export const authorizationServerMetadata = (issuer: string, baseUrl: string) => ({
  issuer,
  token_endpoint: `${baseUrl}${TOKEN_PATH}`,
  jwks_uri: `${baseUrl}${JWKS_PATH}`,
  grant_types_supported: [CLIENT_CREDENTIALS],
  token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  // RFC 8414 section 2: the same client authentication at all three.
  revocation_endpoint: `${baseUrl}${REVOCATION_PATH}`,
  revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  introspection_endpoint: `${baseUrl}${INTROSPECTION_PATH}`,
  introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  // Every scope a client may hold, tokens:introspect included; customer:admin is an administrator's only.
  scopes_supported: [...GRANTABLE_SCOPES],
  // No authorization endpoint: machines only, so no response type (docs/clients.md, "Discovery").
  response_types_supported: [],
  ...(issuer !== baseUrl && {
    discovery_note:
      `The issuer ${issuer} is an identifier on this stage, not where this document is served ` +
      `(${baseUrl}${METADATA_PATH}): configure OAuth clients with this document's URL or the token endpoint.`,
  }),
});
