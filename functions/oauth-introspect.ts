import { introspectToken } from '../lib/clients/introspect.ts';
import { parseTokenQuery } from '../lib/clients/token-request.ts';
import { readOAuthIntrospectConfig } from '../lib/config.ts';
import { oauthEndpoint } from '../lib/http/oauth-form.ts';
import { ok } from '../lib/http/responses.ts';
import { oauthIntrospectDeps } from '../lib/wiring/oauth.ts';

const deps = await oauthIntrospectDeps(readOAuthIntrospectConfig());

/** POST /api/v1/oauth/introspect: token introspection (RFC 7662) for clients holding tokens:introspect. */
export const handler = oauthEndpoint({
  metrics: deps.metrics,
  handle: async ({ form, authorization, sourceIp }) =>
    ok(await introspectToken(deps, { ...parseTokenQuery(form, authorization), sourceIp })),
});
