import { grantClientToken } from '../lib/clients/grant.ts';
import { parseTokenRequest, toTokenResponse } from '../lib/clients/token-request.ts';
import { readOAuthTokenConfig } from '../lib/config.ts';
import { oauthEndpoint } from '../lib/http/oauth-form.ts';
import { ok } from '../lib/http/responses.ts';
import { oauthTokenDeps } from '../lib/wiring/oauth.ts';

const deps = await oauthTokenDeps(readOAuthTokenConfig());

/** POST /api/v1/oauth/token: the client credentials grant (RFC 6749 section 4.4). */
export const handler = oauthEndpoint({
  metrics: deps.metrics,
  limits: deps.limits,
  handle: async ({ form, authorization, sourceIp }) => {
    const grant = await grantClientToken(deps, { ...parseTokenRequest(form, authorization), sourceIp });
    return ok(toTokenResponse(grant), grant.quota);
  },
});
