/**
 * The OAuth endpoints (token: RFC 6749 section 3.2; revocation: RFC 7009; introspection: RFC 7662):
 * a form body, RFC 6749's errors, answers `no-store` (RFC 6749 section 5.1).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AppError } from '../errors.ts';
import { logger as defaultLogger, type LambdaLogger } from '../log.ts';
import type { FlushingMetrics } from '../metrics/powertools.ts';
import type { QuotaPolicy } from '../quota.ts';
import { publicBaseUrl } from './base-url.ts';
import { guardBody } from './body.ts';
import { header, headerValues } from './headers.ts';
import { mapErrors, oauthErrorResponse } from './problems.ts';
import { rateLimitFields } from './rate-limit.ts';
import { BASE_HEADERS, jsonResponse, type Reply } from './responses.ts';

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** Section 3.2: a parameter sent twice is refused, as is any other media type. */
export function formParameters(
  event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded' | 'headers'>,
): Record<string, string> {
  const contentType = header(event.headers, 'content-type');
  if (contentType?.split(';')[0]?.trim().toLowerCase() !== FORM_MEDIA_TYPE)
    throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  const text = event.isBase64Encoded
    ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
    : (event.body ?? '');
  const parameters: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(parameters, name))
      throw new AppError('VALIDATION_FAILED', {
        detail: `The parameter ${safeName(name)} is sent more than once.`,
      });
    parameters[name] = value;
  }
  return parameters;
}

/** A parameter's name in a description: the names RFC 6749 defines are quoted, any other is not. */
const safeName = (name: string) => (/^[a-z_]{1,32}$/.test(name) ? name : 'a parameter');

export interface OAuthInput {
  readonly form: Record<string, string>;
  readonly authorization: string[];
  /** Every value of the DPoP header (RFC 9449 section 4.1). */
  readonly dpop: string[];
  /** The URL the client called, a DPoP proof's `htu`: read (and the Host checked) only when asked. */
  readonly url: () => string;
  readonly sourceIp: string;
}

export function oauthEndpoint(spec: {
  readonly logger?: LambdaLogger;
  readonly metrics?: Pick<FlushingMetrics, 'powertools'>;
  /** The limits every answer publishes (RateLimit-Policy); what is left rides on the Reply or the AppError. */
  readonly limits?: readonly QuotaPolicy[];
  readonly handle: (input: OAuthInput) => Promise<Reply>;
}) {
  const log = spec.logger ?? defaultLogger;
  const limits = rateLimitFields(spec.limits ?? []);
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(injectLambdaContext(log.powertools, { logEvent: false }))
    .use(mapErrors(log, oauthErrorResponse, limits));
  if (spec.metrics !== undefined) chain.use(logMetrics(spec.metrics.powertools));
  chain.use(guardBody);
  return chain.handler(async (event) => {
    const reply = await spec.handle({
      form: formParameters(event),
      authorization: headerValues(event, 'authorization'),
      dpop: headerValues(event, 'dpop'),
      url: () => `${publicBaseUrl(event)}${event.path}`,
      sourceIp: event.requestContext?.identity?.sourceIp ?? '',
    });
    const headers = { ...reply.headers, ...limits(reply.quota) };
    // RFC 7009 section 2.2's 200 says all in its status: no body, so no media type either.
    if (reply.body === undefined)
      return { statusCode: reply.status, headers: { ...BASE_HEADERS, ...headers }, body: '' };
    return jsonResponse(reply.status, 'application/json', reply.body, headers);
  });
}
