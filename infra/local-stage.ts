/**
 * The environment of the local stack, as docs/local-stack.md documents it: the stack's own
 * variables, declared here, and the local stage's overrides of stage settings (lib/settings.ts).
 * `npm start` reads all of it; the admin CLI reads the part that finds the stack (DYNAMODB_PORT,
 * DATA_DIR).
 */
import * as v from 'valibot';
import { ACCESS_TOKEN_TTL } from '../lib/config/schemas.ts';

/** The local stack's own variables: their default and what they change (docs/local-stack.md's rows). */
export const LOCAL_STACK_VARIABLES = {
  PORT: {
    default: '3000',
    description:
      'HTTP port of the API (the gateway front; serverless-offline listens on a free port behind it)',
  },
  LAMBDA_PORT: { default: '3002', description: "serverless-offline's own Lambda invocation port" },
  DYNAMODB_PORT: { default: '8000', description: 'port of the embedded DynamoDB' },
  DYNAMODB_ENDPOINT: {
    default: undefined,
    description:
      'a DynamoDB already running, e.g. `http://127.0.0.1:8001` (DynamoDB Local, or a proxy in front of one, as the fault matrix puts between the code and DynamoDB: `dev/local/dynamodb-proxy.ts`); used instead of the embedded one, its missing tables created, and left running when the stack stops. The admin CLI reads it too',
  },
  DOCS_PORT: { default: '3001', description: 'port of the API reference page' },
  DATA_DIR: {
    default: '.data',
    description:
      'where the local stage keeps its data, signing key, and demo login and API client (`demo-credentials.json`) (git-ignored)',
  },
} as const;

/**
 * The variables `npm start` gives serverless-offline itself (dev/start.ts), whatever the shell
 * holds: the local stage's overrides of them are the stack's, not a developer's.
 */
export const SET_BY_NPM_START = [
  'PORT',
  'LAMBDA_PORT',
  'TOKEN_ISSUER',
  'DYNAMODB_ENDPOINT',
  'LOCAL_SIGNING_KEYRING_FILE',
  'LOCAL_JWKS_FILE',
] as const;

const { PORT, LAMBDA_PORT, DYNAMODB_PORT, DOCS_PORT, DATA_DIR } = LOCAL_STACK_VARIABLES;

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
  DYNAMODB_PORT: v.optional(PortSchema, DYNAMODB_PORT.default),
  DYNAMODB_ENDPOINT: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^https?:\/\/[^\s/]+\/?$/, 'must be an http:// or https:// URL without a path'),
    ),
  ),
  DATA_DIR: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty')), DATA_DIR.default),
});

export const LocalStackEnvSchema = v.object({
  ...LocalStackLocationSchema.entries,
  PORT: v.optional(PortSchema, PORT.default),
  LAMBDA_PORT: v.optional(PortSchema, LAMBDA_PORT.default),
  DOCS_PORT: v.optional(PortSchema, DOCS_PORT.default),
  // Checked here to fail npm start rather than the first login; its default is the local
  // stage's, in lib/settings.ts. The text goes on to serverless-offline unchanged.
  ACCESS_TOKEN_TTL: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => v.is(ACCESS_TOKEN_TTL(), text), 'must be a duration such as 5s, 15m or 24h'),
    ),
  ),
});
