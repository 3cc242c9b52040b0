import { exchangeCode, refreshConnection, toPlatformTokenResponse } from '../lib/authorization/grants.ts';
import { grantClientToken } from '../lib/clients/grant.ts';
import {
  AUTHORIZATION_CODE,
  grantTypeOf,
  parseCodeExchange,
  parseRefreshGrant,
  parseTokenRequest,
  REFRESH_TOKEN,
  toTokenResponse,
} from '../lib/clients/token-request.ts';
import { readOAuthTokenConfig } from '../lib/config.ts';
import { tokenRequestProof } from '../lib/dpop/binding.ts';
import { oauthEndpoint } from '../lib/http/oauth-form.ts';
import { ok } from '../lib/http/responses.ts';
import { oauthTokenDeps } from '../lib/wiring/oauth.ts';

const deps = await oauthTokenDeps(readOAuthTokenConfig());

/**
 * POST /api/v1/oauth/token: the client credentials grant (RFC 6749 section 4.4), and a platform's
 * authorization code and refresh token (sections 4.1.3 and 6; docs/platforms.md).
 */
export const handler = oauthEndpoint({
  metrics: deps.metrics,
  limits: deps.limits,
  handle: async ({ form, authorization, dpop, url, sourceIp }) => {
    const grantType = grantTypeOf(form);
    // RFC 9449 section 5: a proof binds the access token to its key (lib/dpop/binding.ts).
    const proof = await tokenRequestProof(dpop, { url, now: new Date() });
    if (grantType === AUTHORIZATION_CODE || grantType === REFRESH_TOKEN) {
      const grant =
        grantType === AUTHORIZATION_CODE
          ? await exchangeCode(deps.platforms, {
              ...parseCodeExchange(form, authorization),
              sourceIp,
              dpop: proof,
            })
          : await refreshConnection(deps.platforms, {
              ...parseRefreshGrant(form, authorization),
              sourceIp,
              dpop: proof,
            });
      return ok(toPlatformTokenResponse(grant), grant.quota);
    }
    const grant = await grantClientToken(deps, {
      ...parseTokenRequest(form, authorization),
      sourceIp,
      dpop: proof,
    });
    return ok(toTokenResponse(grant), grant.quota);
  },
});
