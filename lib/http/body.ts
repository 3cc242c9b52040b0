/** What is checked of a request body before anything parses it. */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { AppError } from '../errors.ts';
import limits from '../limits.json' with { type: 'json' };
import { header } from './headers.ts';

/** Larger bodies get 413 before parsing. In limits.json, so serverless.yml's web ACL refuses the same. */
export const MAX_BODY_BYTES: number = limits.maxBodyBytes;

const bodyBytes = (body: string, base64: boolean) =>
  base64 ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, 'utf8');

/** Content-Type is passed on as `content-type`, the only spelling @middy/http-json-body-parser reads. */
export const guardBody: middy.MiddlewareObj<APIGatewayProxyEvent> = {
  before({ event }) {
    if (typeof event.body === 'string' && bodyBytes(event.body, event.isBase64Encoded) > MAX_BODY_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE');
    }
    const headers = event.headers ?? {};
    event.headers = { ...headers, 'content-type': header(headers, 'content-type') };
  },
};

/**
 * For a body the endpoint does not require: none (whatever Content-Type says, as `curl -X POST`
 * with a JSON header sends) is read as `{}`.
 */
export const absentBodyAsEmpty: middy.MiddlewareObj<APIGatewayProxyEvent> = {
  before({ event }) {
    if (event.body === null || event.body === undefined || event.body === '') {
      event.body = '{}';
      event.isBase64Encoded = false;
      event.headers = { ...event.headers, 'content-type': 'application/json' };
    }
  },
};
