import { authorizationServerMetadata } from '../lib/clients/metadata.ts';
import { readOAuthMetadataConfig } from '../lib/config.ts';
import { cacheable, endpoint } from '../lib/http.ts';

const config = readOAuthMetadataConfig();

/** GET /.well-known/oauth-authorization-server (RFC 8414) */
export const handler = endpoint({
  needsBaseUrl: true,
  handle: async ({ baseUrl }) => cacheable(authorizationServerMetadata(config.issuer, baseUrl), 300),
});
