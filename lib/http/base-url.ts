/** Where the API was reached: the base of the metadata's URLs, and of a DPoP proof's `htu`. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AppError } from '../errors.ts';
import { header } from './headers.ts';

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/;

/** The host: API Gateway's `domainName` (no caller picks it), else the checked Host header (local stack). */
export function publicBaseUrl(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'path' | 'requestContext'>,
): string {
  const domain = event.requestContext?.domainName;
  const host = domain !== undefined && HOST.test(domain) ? domain : (header(event.headers, 'host') ?? '');
  if (!HOST.test(host))
    throw new AppError('VALIDATION_FAILED', { detail: 'The Host header is not a host name.' });
  const proto =
    header(event.headers, 'x-forwarded-proto')?.split(',')[0]?.trim() === 'https' ? 'https' : 'http';
  const fullPath = event.requestContext?.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${proto}://${host}${/^(\/[A-Za-z0-9._~-]+)*$/.test(prefix) ? prefix : ''}`;
}
