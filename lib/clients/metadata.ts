/**
 * The authorization server metadata (RFC 8414): where OAuth client libraries learn the token
 * endpoint, the grant, the client authentication methods, the scopes and the key set.
 */
import { ALL_SCOPES } from '../scopes.ts';
import { CLIENT_CREDENTIALS } from './token-request.ts';

export const TOKEN_PATH = '/api/v1/oauth/token';
export const JWKS_PATH = '/.well-known/jwks.json';

/** `baseUrl`: where the API was reached, never from a header a caller chooses (a shared cache keeps it). */
export const authorizationServerMetadata = (issuer: string, baseUrl: string) => ({
  issuer,
  token_endpoint: `${baseUrl}${TOKEN_PATH}`,
  jwks_uri: `${baseUrl}${JWKS_PATH}`,
  grant_types_supported: [CLIENT_CREDENTIALS],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  scopes_supported: [...ALL_SCOPES],
  // No authorization endpoint: machines only, so no response type (docs/clients.md).
  response_types_supported: [],
});
