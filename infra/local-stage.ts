/**
 * The environment of the local stack, as docs/local-stack.md documents it. `npm start` reads all of
 * it; the admin CLI reads the part that finds the stack (DYNAMODB_PORT, DATA_DIR).
 */
import * as v from 'valibot';
import { SETTINGS } from '../lib/config.ts';

const PortSchema = v.pipe(
  v.string(),
  v.regex(/^\d{1,5}$/, 'must be a port number'),
  v.transform(Number),
  v.minValue(1, 'must be a port number'),
  v.maxValue(65535, 'must be a port number'),
);

/**
 * Where the local stack's DynamoDB listens and where it keeps its data. DYNAMODB_ENDPOINT: a
 * DynamoDB already running (DynamoDB Local, a proxy in front of one) instead of the embedded one.
 */
export const LocalStackLocationSchema = v.object({
  DYNAMODB_PORT: v.optional(PortSchema, '8000'),
  DYNAMODB_ENDPOINT: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^https?:\/\/[^\s/]+\/?$/, 'must be an http:// or https:// URL without a path'),
    ),
  ),
  DATA_DIR: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty')), '.data'),
});

export const LocalStackEnvSchema = v.object({
  ...LocalStackLocationSchema.entries,
  PORT: v.optional(PortSchema, '3000'),
  LAMBDA_PORT: v.optional(PortSchema, '3002'),
  DOCS_PORT: v.optional(PortSchema, '3001'),
  // Checked here to fail npm start rather than the first login; its default is the local
  // stage's, in serverless.yml. The text goes on to serverless-offline unchanged.
  ACCESS_TOKEN_TTL: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => v.is(SETTINGS.ACCESS_TOKEN_TTL, text), 'must be a duration such as 5s, 15m or 24h'),
    ),
  ),
});
