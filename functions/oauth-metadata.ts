import { authorizationServerMetadata } from '../lib/clients/metadata.ts';
import { readOAuthMetadataConfig } from '../lib/config.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { cacheable } from '../lib/http/responses.ts';

const config = readOAuthMetadataConfig();

/** GET /.well-known/oauth-authorization-server (RFC 8414) */
export const handler = endpoint({
  needsBaseUrl: true,
  // Public: the URLs vary only with the domain and base path the request was made on (API
  // Gateway's domainName; locally the gateway front's own Host), which are in every cache's key.
  handle: async ({ baseUrl }) => cacheable(authorizationServerMetadata(config.issuer, baseUrl), 300),
});
