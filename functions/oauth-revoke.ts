import { revokeToken } from '../lib/clients/revoke.ts';
import { parseTokenQuery } from '../lib/clients/token-request.ts';
import { readOAuthRevokeConfig } from '../lib/config.ts';
import { oauthEndpoint } from '../lib/http/oauth-form.ts';
import { ok } from '../lib/http/responses.ts';
import { oauthRevokeDeps } from '../lib/wiring/oauth.ts';

const deps = await oauthRevokeDeps(readOAuthRevokeConfig());

/** POST /api/v1/oauth/revoke: token revocation (RFC 7009), a client's own access tokens. */
export const handler = oauthEndpoint({
  metrics: deps.metrics,
  handle: async ({ form, authorization, sourceIp }) => {
    await revokeToken(deps, { ...parseTokenQuery(form, authorization), sourceIp });
    // Section 2.2: 200 whether the token was revoked or was no valid token; the body is empty.
    return ok(undefined);
  },
});
