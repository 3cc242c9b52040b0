import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { pushRequest } from '../lib/authorization/authorize.ts';
import { authorizationEndpoint, errorPage } from '../lib/authorization/http.ts';
import { readOAuthAuthorizeConfig } from '../lib/config.ts';
import { guardBody } from '../lib/http/body.ts';
import { oauthEndpoint } from '../lib/http/oauth-form.ts';
import { mapErrors } from '../lib/http/problems.ts';
import { logger } from '../lib/log.ts';
import { oauthAuthorizeDeps } from '../lib/wiring/authorize.ts';

const deps = await oauthAuthorizeDeps(readOAuthAuthorizeConfig());

/** POST /api/v1/oauth/par (RFC 9126): a platform pushes its authorization request. */
const par = oauthEndpoint({
  metrics: deps.metrics,
  handle: async ({ form, authorization, sourceIp }) => {
    const pushed = await pushRequest(deps, { form, authorization, sourceIp });
    return { status: 201, body: { request_uri: pushed.requestUri, expires_in: pushed.expiresIn } };
  },
});

/** GET and POST /api/v1/oauth/authorize: the authorization page (docs/platforms.md). */
const page = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
  .use(injectLambdaContext(logger.powertools, { logEvent: false }))
  .use(mapErrors(logger, errorPage))
  .use(logMetrics(deps.metrics.powertools))
  .use(guardBody)
  .handler((event) => authorizationEndpoint(deps, event));

export const handler = (event: APIGatewayProxyEvent, context: Context) =>
  event.resource?.endsWith('/par') === true || event.path?.endsWith('/par') === true
    ? par(event, context)
    : page(event, context);
