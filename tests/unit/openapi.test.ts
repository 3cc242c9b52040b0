/**
 * docs/openapi.yaml is the contract the end-to-end tests hold every answer to
 * (tests/support/http.ts). These tests keep the document itself honest: valid OpenAPI 3.1,
 * request schemas derived from the valibot schemas, scopes from lib/scopes.json, the routes
 * of serverless.yml, the problems and OAuth errors lib/http/problems.ts really sends, and a contract
 * check that can fail.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { decodeJwt } from 'jose';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { functionEnvironment } from '../../infra/function-env.ts';
import { readStageParams } from '../../infra/stage-params.ts';
import { decodeAuditCursor } from '../../lib/audit/audit.ts';
import { LoginRequestSchema } from '../../lib/auth/login.ts';
import { PASSKEY_NOT_ACCEPTED, PasskeyLoginSchema } from '../../lib/auth/passkey-login.ts';
import { INTROSPECTION_SCOPE } from '../../lib/clients/introspect.ts';
import { INTROSPECTION_PATH, REVOCATION_PATH, TOKEN_PATH } from '../../lib/clients/metadata.ts';
import { parseTokenQuery, parseTokenRequest } from '../../lib/clients/token-request.ts';
import { readLoginConfig, readOAuthTokenConfig, readRefreshConfig } from '../../lib/config.ts';
import { REFUSALS } from '../../lib/customer/administration.ts';
import { NO_SUCH_CONNECTION } from '../../lib/customer/connections.ts';
import { PASSKEY_REFUSALS } from '../../lib/customer/passkeys.ts';
import { ClientParamsSchema, CreateClientSchema } from '../../lib/customer/requests.ts';
import { AppError, type ErrorCode } from '../../lib/errors.ts';
import { publicBaseUrl } from '../../lib/http/base-url.ts';
import { endpoint, validate } from '../../lib/http/endpoint.ts';
import { oauthEndpoint } from '../../lib/http/oauth-form.ts';
import { oauthErrorResponse, problemResponse } from '../../lib/http/problems.ts';
import { ok, type Reply } from '../../lib/http/responses.ts';
import { createLogger } from '../../lib/log.ts';
import type { QuotaPolicy } from '../../lib/quota.ts';
import { ADMIN_SCOPE, GRANTABLE_SCOPES, PROTECTED_ROUTES, SCOPES, scopeOf } from '../../lib/scopes.ts';
import { RefreshRequestSchema } from '../../lib/sessions/sessions.ts';
import { ShipmentRequestSchema, TrackingParamsSchema } from '../../lib/shipments/shipments.ts';
import { importVerificationKeys, parseJwks } from '../../lib/tokens/keys.ts';
import { createAccessTokenVerifier, createRefreshTokenVerifier } from '../../lib/tokens/verify.ts';
import { publishedLimits } from '../../lib/wiring/throttle.ts';
import { lambdaContext, tokenEvent, trackingEvent } from '../fixtures/events.ts';
import {
  assertDocumented,
  contractViolations,
  documentedRoutes,
  type ObservedResponse,
  OPENAPI_PATH,
  schemaViolations,
} from '../support/openapi.ts';
import { readServerlessYml } from '../support/serverless-yml.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const openapiScript = (...args: string[]) =>
  run(process.execPath, [join(ROOT, 'dev/openapi.ts'), ...args], { cwd: ROOT });

/** The part of serverless.yml that says which routes exist and which are behind the authorizer. */
const ServerlessRoutesSchema = v.object({
  functions: v.record(
    v.string(),
    v.object({
      events: v.optional(
        v.array(
          v.object({
            http: v.optional(
              v.object({ path: v.string(), method: v.string(), authorizer: v.optional(v.unknown()) }),
            ),
          }),
        ),
      ),
    }),
  ),
});

function serverlessRoutes() {
  const config = v.parse(ServerlessRoutesSchema, readServerlessYml());
  // An `any` route answers the methods a path has no other route for (405): described, not an operation.
  return Object.values(config.functions).flatMap(({ events = [] }) =>
    events.flatMap(({ http }) =>
      http === undefined || http.method === 'any'
        ? []
        : [
            {
              method: http.method.toUpperCase(),
              path: `/${http.path}`,
              bearer: http.authorizer !== undefined,
            },
          ],
    ),
  );
}

/** An `AWS::ApiGateway::GatewayResponse`'s properties, as infra/gateway-responses.yml writes them. */
interface GatewayResponse {
  readonly ResponseType: string;
  readonly StatusCode: string;
  /** `gatewayresponse.header.Name` → a quoted literal, `'value'`. */
  readonly ResponseParameters: Record<string, string>;
  readonly ResponseTemplates: Record<string, string>;
}

/** The gateway response of this type, as infra/gateway-responses.yml writes it. */
async function gatewayResponse(type: string): Promise<GatewayResponse> {
  const gateway = parse(await readFile(join(ROOT, 'infra/gateway-responses.yml'), 'utf8')) as {
    Resources: Record<string, { Properties: GatewayResponse }>;
  };
  const response = Object.values(gateway.Resources)
    .map(({ Properties }) => Properties)
    .find(({ ResponseType }) => ResponseType === type);
  if (response === undefined) throw new Error(`no ${type} gateway response`);
  return response;
}

/** A gateway response as a client observes it on a route. */
function observedGateway(method: string, path: string, response: GatewayResponse): ObservedResponse {
  const headers = Object.fromEntries(
    Object.entries(response.ResponseParameters).map(([name, value]) => [
      name.slice('gatewayresponse.header.'.length),
      value.slice(1, -1),
    ]),
  );
  return observed(
    method,
    path.replace('{parcelNumber}', '12345678901234'),
    Number(response.StatusCode),
    JSON.parse(response.ResponseTemplates['application/json'] ?? ''),
    { contentType: headers['Content-Type'], headers },
  );
}

/**
 * Every error code once: the token endpoint answers each in RFC 6749's shape
 * (lib/http/problems.ts OAUTH_ERRORS). A code added to ErrorCode without a row here does not compile.
 */
const ERROR_CODES = Object.keys({
  VALIDATION_FAILED: 0,
  MALFORMED_JSON: 0,
  UNSUPPORTED_MEDIA_TYPE: 0,
  PAYLOAD_TOO_LARGE: 0,
  INVALID_CREDENTIALS: 0,
  INVALID_REFRESH_TOKEN: 0,
  TOO_MANY_ATTEMPTS: 0,
  UNAUTHORIZED: 0,
  INSUFFICIENT_SCOPE: 0,
  INVALID_CLIENT: 0,
  INVALID_SCOPE: 0,
  UNSUPPORTED_GRANT_TYPE: 0,
  CONTEXT_MISSING: 0,
  NOT_FOUND: 0,
  ALREADY_EXISTS: 0,
  CONFLICT: 0,
  RECENT_LOGIN_REQUIRED: 0,
  PASSKEY_REQUIRED: 0,
  DEPENDENCY_UNAVAILABLE: 0,
  INTERNAL: 0,
  METHOD_NOT_ALLOWED: 0,
  UNAUTHORIZED_CLIENT: 0,
  INVALID_GRANT: 0,
  INVALID_DPOP_PROOF: 0,
  INVALID_BOUND_TOKEN: 0,
} satisfies Record<ErrorCode, 0>) as ErrorCode[];
/** What POST on the token endpoint can answer: all but the 405 of another method and the self-service API's own. */
const POST_ERROR_CODES = ERROR_CODES.filter(
  (code) =>
    ![
      'METHOD_NOT_ALLOWED',
      'CONFLICT',
      'RECENT_LOGIN_REQUIRED',
      'PASSKEY_REQUIRED',
      'INVALID_BOUND_TOKEN',
    ].includes(code),
);

/**
 * What POST on each OAuth endpoint can answer: every code but those of the other endpoints' own
 * checks (the grant's grant type and scopes, introspection's scope), which it never throws.
 */
const OAUTH_ERROR_CODES: Record<string, readonly ErrorCode[]> = {
  [TOKEN_PATH]: POST_ERROR_CODES.filter((code) => code !== 'INSUFFICIENT_SCOPE'),
  [REVOCATION_PATH]: POST_ERROR_CODES.filter(
    (code) =>
      ![
        'INSUFFICIENT_SCOPE',
        'INVALID_SCOPE',
        'UNSUPPORTED_GRANT_TYPE',
        'UNAUTHORIZED_CLIENT',
        'INVALID_REFRESH_TOKEN',
        'INVALID_GRANT',
        'INVALID_DPOP_PROOF',
      ].includes(code),
  ),
  [INTROSPECTION_PATH]: POST_ERROR_CODES.filter(
    (code) =>
      ![
        'INVALID_SCOPE',
        'UNSUPPORTED_GRANT_TYPE',
        'UNAUTHORIZED_CLIENT',
        'INVALID_REFRESH_TOKEN',
        'INVALID_GRANT',
        'INVALID_DPOP_PROOF',
      ].includes(code),
  ),
};
const OAUTH_ANSWERS = Object.entries(OAUTH_ERROR_CODES).flatMap(([path, codes]) =>
  codes.map((code) => [path, code] as const),
);

/** An OAuth endpoint's answer to an error, as lib/http/problems.ts gives it when the domain throws it. */
const oauthErrorOf = (code: ErrorCode) =>
  oauthErrorResponse(
    new AppError(code, {
      ...(code === 'TOO_MANY_ATTEMPTS' && { retryAfterSeconds: 30 }),
      ...(code === 'VALIDATION_FAILED' && { detail: 'The parameter grant_type is required.' }),
      ...(code === 'INSUFFICIENT_SCOPE' && { requiredScope: INTROSPECTION_SCOPE }),
    }),
  );

const TOKEN = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJl';
const NO_STORE = { 'cache-control': 'no-store' };

/** An answer as `send` would observe it. */
function observed(
  method: string,
  path: string,
  status: number,
  body: unknown,
  { contentType = 'application/json', headers = NO_STORE as Record<string, string> } = {},
): ObservedResponse {
  return { method, path, status, contentType, body, headers: new Headers(headers) };
}

/** lib/http/problems.ts's answer, as `send` would observe it. */
function observedProblem(method: string, path: string, result: APIGatewayProxyResult): ObservedResponse {
  const headers = new Headers(result.headers as Record<string, string>);
  return {
    method,
    path,
    status: result.statusCode,
    contentType: headers.get('content-type'),
    body: JSON.parse(result.body),
    headers,
  };
}

const problemOf = (code: ErrorCode, options = {}) => problemResponse(new AppError(code, options));
const validationProblem = (schema: v.GenericSchema, input: unknown, root: string) => {
  try {
    validate(schema, input, root);
  } catch (error) {
    if (error instanceof AppError) return problemResponse(error);
  }
  throw new Error('expected a validation failure');
};

describe('docs/openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document, by the official schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(OPENAPI_PATH);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds the request schemas derived from the valibot schemas and the scopes of lib/scopes.json (npm run openapi -- --check)', async () => {
    const { stdout } = await openapiScript('--check');
    expect(stdout).toContain('match the valibot schemas and lib/scopes.json');
  });

  it('documents exactly the routes of serverless.yml, with the bearer scheme on those behind the authorizer', async () => {
    const byRoute = (a: { method: string; path: string }, b: { method: string; path: string }) =>
      `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`);
    const documented = documentedRoutes.map(({ method, path, bearer }) => ({ method, path, bearer }));
    expect(documented.sort(byRoute)).toEqual(serverlessRoutes().sort(byRoute));
  });

  it('documents the answers lib/http/ gives any route: 503; 400, 413 and 415 with a JSON body; 401 behind the authorizer', () => {
    for (const { method, path, bearer, operation } of documentedRoutes) {
      const statuses = Object.keys(operation.responses);
      const route = `${method} ${path}`;
      expect(statuses, route).toContain('503');
      if (JSON.stringify(operation.requestBody ?? {}).includes('application/json')) {
        expect(statuses, route).toEqual(expect.arrayContaining(['400', '413', '415']));
      }
      if (bearer) expect(statuses, route).toEqual(expect.arrayContaining(['401', '403']));
    }
  });

  it.each(Object.entries(OAUTH_ERROR_CODES))(
    'documents on %s every status lib/http/ answers an error with there',
    (path, codes) => {
      const operation = documentedRoutes.find((route) => route.path === path)?.operation;
      const statuses = new Set(codes.map((code) => String(oauthErrorOf(code).statusCode)));
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining([...statuses]));
    },
  );

  it.each(OAUTH_ANSWERS)('documents %s’s RFC 6749 answer to %s', (path, code) => {
    expect(contractViolations(observedProblem('POST', path, oauthErrorOf(code)))).toEqual([]);
  });

  it('documents RFC 7009’s empty 200 and RFC 7662’s answers, active and not', () => {
    const empty = { ...observed('POST', REVOCATION_PATH, 200, undefined), contentType: null };
    expect(contractViolations(empty)).toEqual([]);
    expect(contractViolations(observed('POST', REVOCATION_PATH, 200, {}))).not.toEqual([]);
    const active = {
      active: true,
      scope: 'tracking:read shipments:write',
      client_id: 'login',
      sub: 'alice',
      username: 'alice',
      token_type: 'Bearer',
      exp: 1768471200,
      iat: 1768467600,
      iss: 'https://auth.parcel-carrier.example/prod',
      aud: 'https://api.parcel-carrier.example/prod',
      jti: 'f51afc2a-d9e9-4fa4-b0ad-7253446fbede',
    };
    expect(contractViolations(observed('POST', INTROSPECTION_PATH, 200, active))).toEqual([]);
    expect(contractViolations(observed('POST', INTROSPECTION_PATH, 200, { active: false }))).toEqual([]);
    // An inactive token's answer says nothing more (RFC 7662 section 2.2).
    expect(
      contractViolations(observed('POST', INTROSPECTION_PATH, 200, { active: false, sub: 'alice' })),
    ).not.toEqual([]);
  });

  it('documents API Gateway’s throttled answer, as infra/gateway-responses.yml sends it, on every route', async () => {
    const throttled = await gatewayResponse('THROTTLED');
    for (const { method, path } of documentedRoutes) {
      expect(contractViolations(observedGateway(method, path, throttled)), `${method} ${path}`).toEqual([]);
    }
  });

  it('takes the oauth2 scheme’s token URL and a client’s scopes, and each protected operation’s scope, from lib/scopes.json', async () => {
    const document = parse(await readFile(OPENAPI_PATH, 'utf8')) as {
      components: {
        securitySchemes: Record<string, { flows?: { clientCredentials?: Record<string, unknown> } }>;
      };
    };
    expect(document.components.securitySchemes.oauth2?.flows).toEqual({
      clientCredentials: {
        tokenUrl: TOKEN_PATH,
        scopes: Object.fromEntries(GRANTABLE_SCOPES.map((scope) => [scope, SCOPES[scope]])),
      },
    });
    // No client holds customer:admin: its routes take a user's bearer token only.
    const clientRoutes = Object.values(PROTECTED_ROUTES).filter(({ scope }) => scope !== ADMIN_SCOPE);
    const scoped = documentedRoutes.filter(({ operation }) =>
      (operation.security ?? []).some((requirement) => 'oauth2' in requirement),
    );
    expect(scoped.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      clientRoutes.map(({ method, path }) => `${method.toUpperCase()} /${path}`).sort(),
    );
    for (const { method, path, scope } of Object.values(PROTECTED_ROUTES)) {
      const operation = documentedRoutes.find(
        (route) => route.path === `/${path}` && route.method === method.toUpperCase(),
      )?.operation;
      expect(operation?.security, path).toEqual(
        scope === ADMIN_SCOPE ? [{ bearer: [scope] }] : [{ bearer: [scope] }, { oauth2: [scope] }],
      );
    }
  });

  it('lets the OAuth endpoints authenticate a client by HTTP Basic or in the body, and serves the metadata to anyone', () => {
    const security = (path: string) =>
      documentedRoutes.find((route) => route.path === path)?.operation.security;
    for (const path of [TOKEN_PATH, REVOCATION_PATH, INTROSPECTION_PATH])
      expect(security(path), path).toEqual([{ clientSecretBasic: [] }, {}]);
    expect(security('/.well-known/oauth-authorization-server')).toEqual([]);
  });

  it('gives info the licence package.json names, and names RFC 8725 in the bearer scheme', async () => {
    const document = parse(await readFile(OPENAPI_PATH, 'utf8')) as {
      info: { license?: { name?: string } };
      components: { securitySchemes: { bearer: { description: string } } };
    };
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { license?: string };
    expect(pkg.license).toBeDefined();
    expect(document.info.license?.name).toBe(pkg.license);
    expect(document.components.securitySchemes.bearer.description).toContain('RFC 8725');
  });

  it.each<[string, string, () => APIGatewayProxyResult]>([
    [
      'a missing field',
      'POST /api/v1/login',
      () => validationProblem(LoginRequestSchema, { username: 'x' }, 'body'),
    ],
    [
      'a body that is not an object',
      'POST /api/v1/login',
      () => validationProblem(LoginRequestSchema, [], 'body'),
    ],
    ['malformed JSON', 'POST /api/v1/login', () => problemOf('MALFORMED_JSON')],
    ['a body over the limit', 'POST /api/v1/login', () => problemOf('PAYLOAD_TOO_LARGE')],
    ['a body not declared as JSON', 'POST /api/v1/login', () => problemOf('UNSUPPORTED_MEDIA_TYPE')],
    ['a failed login', 'POST /api/v1/login', () => problemOf('INVALID_CREDENTIALS')],
    [
      'a locked username',
      'POST /api/v1/login',
      () => problemOf('TOO_MANY_ATTEMPTS', { retryAfterSeconds: 30 }),
    ],
    ['a DynamoDB failure', 'POST /api/v1/login', () => problemOf('DEPENDENCY_UNAVAILABLE')],
    ['a login without customer', 'POST /api/v1/login-extended', () => problemOf('CONTEXT_MISSING')],
    ['a refused refresh token', 'POST /api/v1/token/refresh', () => problemOf('INVALID_REFRESH_TOKEN')],
    ['a caller without customer', 'POST /api/v1/shipments', () => problemOf('CONTEXT_MISSING')],
    [
      'a malformed parcel number',
      'GET /api/v1/tracking/1',
      () => validationProblem(TrackingParamsSchema, { parcelNumber: '1' }, 'path'),
    ],
    ['an unknown parcel number', 'GET /api/v1/tracking/12345678901234', () => problemOf('NOT_FOUND')],
    ['an unreadable key set', 'GET /.well-known/jwks.json', () => problemOf('DEPENDENCY_UNAVAILABLE')],
    [
      'a token without the route’s scope',
      'GET /api/v1/tracking/12345678901234',
      () => problemOf('INSUFFICIENT_SCOPE', { requiredScope: scopeOf('trackShipment') }),
    ],
    [
      'a token without the route’s scope',
      'POST /api/v1/shipments',
      () => problemOf('INSUFFICIENT_SCOPE', { requiredScope: scopeOf('createShipment') }),
    ],
    [
      'a Host header that is not a host name',
      'GET /.well-known/oauth-authorization-server',
      () => problemOf('VALIDATION_FAILED', { detail: 'The Host header is not a host name.' }),
    ],
  ])('documents what lib/http/ answers to %s on %s', (_case, route, answer) => {
    const [method = '', path = ''] = route.split(' ');
    expect(contractViolations(observedProblem(method, path, answer()))).toEqual([]);
  });
});

/** An example of the document, the schema it must satisfy and, in a body, its media type. */
interface DocumentExample {
  readonly where: string;
  readonly schema: object;
  readonly value: unknown;
  readonly mediaType: string | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every example of `node`: a media type's `example` and named `examples` (Swagger UI shows
 * them as the body), and a schema's `examples` (Swagger UI builds a body from them).
 */
function examplesOf(node: unknown, path: readonly string[] = []): DocumentExample[] {
  if (Array.isArray(node)) return node.flatMap((item, index) => examplesOf(item, [...path, String(index)]));
  if (!isRecord(node)) return [];
  const where = path.join(' > ');
  const found: DocumentExample[] = [];
  if (isRecord(node.schema)) {
    const mediaType = path.at(-2) === 'content' ? path.at(-1) : undefined;
    if ('example' in node) found.push({ where, schema: node.schema, value: node.example, mediaType });
    for (const [name, named] of Object.entries(isRecord(node.examples) ? node.examples : {})) {
      const value = isRecord(named) ? named.value : undefined;
      found.push({ where: `${where} > ${name}`, schema: node.schema, value, mediaType });
    }
  }
  if (Array.isArray(node.examples)) {
    for (const [index, value] of node.examples.entries())
      found.push({ where: `${where} > examples > ${index}`, schema: node, value, mediaType: undefined });
  }
  const inner = Object.entries(node).filter(([key]) => key !== 'example' && key !== 'examples');
  return [...found, ...inner.flatMap(([key, value]) => examplesOf(value, [...path, key]))];
}

/** Every body of an answer the document gives (`responses > … > content > <media type>`), by where it is. */
function responseContents(node: unknown, path: readonly string[] = []): [string, Record<string, unknown>][] {
  if (!isRecord(node)) return [];
  const own =
    path.includes('responses') && isRecord(node.content)
      ? Object.entries(node.content).flatMap(([mediaType, content]): [string, Record<string, unknown>][] =>
          isRecord(content) ? [[`${path.join(' > ')} > ${mediaType}`, content]] : [],
        )
      : [];
  return [...own, ...Object.entries(node).flatMap(([key, value]) => responseContents(value, [...path, key]))];
}

const isErrorBody = (value: unknown) =>
  isRecord(value) &&
  ((typeof value.type === 'string' && value.type.startsWith('urn:parcel-auth:problem:')) ||
    typeof value.error === 'string');

/** The AppError `act` throws. */
function thrown(act: () => unknown): AppError {
  try {
    act();
  } catch (error) {
    if (error instanceof AppError) return error;
  }
  throw new Error('expected an AppError');
}

/**
 * Every error body the service and API Gateway give: each code's problem and RFC 6749 error
 * (lib/http/problems.ts), a validation failure of each request schema, and the gateway responses of
 * infra/gateway-responses.yml with a fixed body.
 */
async function errorBodies(): Promise<unknown[]> {
  const bodyOf = (result: APIGatewayProxyResult): unknown => JSON.parse(result.body);
  const gateway = parse(await readFile(join(ROOT, 'infra/gateway-responses.yml'), 'utf8')) as {
    Resources: Record<string, { Properties: GatewayResponse }>;
  };
  const templates = Object.values(gateway.Resources).flatMap(({ Properties }) => {
    try {
      return [JSON.parse(Properties.ResponseTemplates['application/json'] ?? '') as unknown];
    } catch {
      return []; // A template with API Gateway variables in it (DEFAULT_4XX): no fixed body.
    }
  });
  const event = trackingEvent();
  const badHost = {
    ...event,
    headers: { Host: 'not a host' },
    requestContext: { ...event.requestContext, domainName: '' },
  };
  return [
    ...ERROR_CODES.map((code) => bodyOf(problemOf(code))),
    ...ERROR_CODES.map((code) => bodyOf(oauthErrorResponse(new AppError(code)))),
    bodyOf(validationProblem(LoginRequestSchema, { username: 'demo' }, 'body')),
    bodyOf(validationProblem(RefreshRequestSchema, {}, 'body')),
    bodyOf(validationProblem(ShipmentRequestSchema, [], 'body')),
    bodyOf(validationProblem(TrackingParamsSchema, { parcelNumber: '1' }, 'path')),
    bodyOf(problemResponse(thrown(() => publicBaseUrl(badHost)))),
    bodyOf(oauthErrorResponse(thrown(() => parseTokenRequest({}, [])))),
    bodyOf(
      oauthErrorResponse(thrown(() => parseTokenQuery({}, ['Basic cGNsXzAxMjM0NTY3ODlhYmNkZWYwMTIzOng=']))),
    ),
    bodyOf(oauthErrorOf('INSUFFICIENT_SCOPE')),
    bodyOf(validationProblem(ClientParamsSchema, { clientId: 'pcl_zz' }, 'path')),
    bodyOf(validationProblem(CreateClientSchema, { name: '', scopes: ['tracking:read'] }, 'body')),
    bodyOf(problemResponse(thrown(() => decodeAuditCursor('abc')))),
    ...Object.values(REFUSALS).map((detail) =>
      bodyOf(problemOf(detail.startsWith('No such') ? 'NOT_FOUND' : 'CONFLICT', { detail })),
    ),
    bodyOf(problemOf('NOT_FOUND', { detail: 'The console has no such file.' })),
    bodyOf(problemOf('NOT_FOUND', { detail: NO_SUCH_CONNECTION })),
    bodyOf(problemOf('INVALID_CREDENTIALS', { detail: PASSKEY_NOT_ACCEPTED })),
    bodyOf(validationProblem(PasskeyLoginSchema, {}, 'body')),
    bodyOf(problemOf('CONFLICT', { detail: PASSKEY_REFUSALS.full })),
    bodyOf(problemOf('NOT_FOUND', { detail: PASSKEY_REFUSALS.noSuchPasskey })),
    bodyOf(problemOf('VALIDATION_FAILED', { detail: PASSKEY_REFUSALS.challenge })),
    ...templates,
  ];
}

/** The parts of the document the token examples are read from. */
const TokenExamplesSchema = v.object({
  components: v.object({
    schemas: v.object({
      Jwks: v.object({ examples: v.tuple([v.unknown()]) }),
      AccessToken: v.object({ examples: v.tuple([v.string()]) }),
      RefreshToken: v.object({ examples: v.tuple([v.string()]) }),
      ExpireAt: v.object({ examples: v.tuple([v.string()]) }),
      LoginExtendedResponse: v.object({
        properties: v.object({ userName: v.object({ examples: v.tuple([v.string()]) }) }),
      }),
      TokenResponse: v.object({
        properties: v.object({
          access_token: v.object({ examples: v.tuple([v.string()]) }),
          expires_in: v.object({ examples: v.tuple([v.number()]) }),
          scope: v.object({ examples: v.tuple([v.string()]) }),
        }),
      }),
      AuthorizationServerMetadata: v.object({ examples: v.tuple([v.object({ issuer: v.string() })]) }),
    }),
    requestBodies: v.object({
      RefreshToken: v.object({
        content: v.object({
          'application/json': v.object({ example: v.object({ refreshToken: v.string() }) }),
        }),
      }),
    }),
  }),
});

describe('the published limits in docs/openapi.yaml (RateLimit-Policy, RateLimit)', () => {
  const LOGIN = '/api/v1/login';
  const REFRESH = '/api/v1/token/refresh';
  /** The operations whose functions publish limits, and whether one of their answers can say what is left. */
  const PUBLISHING = { [LOGIN]: true, '/api/v1/login-extended': true, [TOKEN_PATH]: true, [REFRESH]: false };
  const document = parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
    components: { responses: Record<string, { headers?: Record<string, unknown> }> };
  };
  const headersOf = (response: object) => {
    const ref = '$ref' in response ? String(response.$ref) : undefined;
    const resolved =
      ref === undefined ? response : document.components.responses[ref.split('/').at(-1) ?? ''];
    return Object.keys((resolved as { headers?: object } | undefined)?.headers ?? {});
  };

  it('names RateLimit-Policy on every answer those functions give, RateLimit where they may count, and Retry-After on their 429s', () => {
    for (const [path, counts] of Object.entries(PUBLISHING)) {
      const operation = documentedRoutes.find((route) => route.path === path)?.operation;
      expect(operation, path).toBeDefined();
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const headers = headersOf(response);
        const where = `POST ${path} ${status}`;
        if (status === '429') expect(headers, where).toContain('Retry-After');
        // Refresh's 429 is API Gateway's or AWS WAF's alone: no function publishes anything on it.
        if (path === REFRESH && status === '429') expect(headers, where).not.toContain('RateLimit-Policy');
        else expect(headers, where).toContain('RateLimit-Policy');
        if (!counts) expect(headers, where).not.toContain('RateLimit');
      }
      if (counts) expect(headersOf(operation?.responses['200'] ?? {}), path).toContain('RateLimit');
    }
  });

  const log = createLogger('error', () => {});
  const fails = (error: AppError) => async (): Promise<Reply> => {
    throw error;
  };
  /** What an endpoint publishing `limits` answers when `handle` gives or throws what it does. */
  const answer = (limits: readonly QuotaPolicy[], handle: () => Promise<Reply>) =>
    endpoint({ logger: log, limits, handle })(trackingEvent(), lambdaContext());
  const oauthAnswer = (limits: readonly QuotaPolicy[], handle: () => Promise<Reply>) =>
    oauthEndpoint({ logger: log, limits, handle })(tokenEvent({}), lambdaContext());
  const withHeaders = (answer: ObservedResponse, headers: Record<string, string>) => ({
    ...answer,
    headers: new Headers({ ...Object.fromEntries(answer.headers), ...headers }),
  });

  it.each(['default', 'local', 'dev', 'prod'])(
    'accepts the fields as the functions of %s publish them: a login’s 200, a lock’s 429, a refused refresh',
    async (stage) => {
      const login = publishedLimits(readLoginConfig(functionEnvironment('login', stage, {})), false);
      const token = publishedLimits(readOAuthTokenConfig(functionEnvironment('oauthToken', stage, {})), true);
      const refresh = readRefreshConfig(functionEnvironment('refresh', stage, {})).gatewayLimits;
      // A 429 names only the counter that refused.
      const left = (policy: string) => [{ policy, remaining: 0, resetSeconds: 30 }];
      const locked = (policy: string) =>
        new AppError('TOO_MANY_ATTEMPTS', { retryAfterSeconds: 30, quota: left(policy) });
      const answers = [
        [
          'POST',
          LOGIN,
          await answer(login, async () =>
            ok({ token: TOKEN, refreshToken: TOKEN }, [
              { policy: 'username', remaining: 5, resetSeconds: 0 },
            ]),
          ),
        ],
        ['POST', LOGIN, await answer(login, fails(locked('username')))],
        ['POST', TOKEN_PATH, await oauthAnswer(token, fails(locked('client')))],
        ['POST', REFRESH, await answer(refresh, fails(new AppError('INVALID_REFRESH_TOKEN')))],
      ] as const;
      for (const [method, path, result] of answers) {
        expect(result.headers, `${path} ${result.statusCode}`).toHaveProperty('RateLimit-Policy');
        expect(
          contractViolations(observedProblem(method, path, result)),
          `${path} ${result.statusCode}`,
        ).toEqual([]);
      }
      const [loggedIn, userLocked, clientLocked] = answers.map(([, , result]) => result.headers);
      expect(loggedIn).toMatchObject({ RateLimit: '"username";r=5;t=0' });
      expect(userLocked).toMatchObject({
        'Retry-After': '30',
        RateLimit: '"username";r=0;t=30',
      });
      expect(clientLocked).toMatchObject({
        'Retry-After': '30',
        RateLimit: '"client";r=0;t=30',
      });
    },
  );

  it('rejects a field the draft does not allow: a name that is not a String, a missing window, a fraction', () => {
    const loggedIn = observed('POST', LOGIN, 200, { token: TOKEN, refreshToken: TOKEN });
    for (const policy of ['username;q=5;w=86400', '"username";q=5', '"route";q=0.5;w=1'])
      expect(contractViolations(withHeaders(loggedIn, { 'RateLimit-Policy': policy })), policy).toEqual([
        expect.stringMatching(/^header RateLimit-Policy .* must match pattern/),
      ]);
    expect(contractViolations(withHeaders(loggedIn, { RateLimit: '"username";r=-1;t=5' }))).toEqual([
      expect.stringMatching(/^header RateLimit .* must match pattern/),
    ]);
  });
});

describe('the examples of docs/openapi.yaml, which the API reference page shows', () => {
  const document: unknown = parse(readFileSync(OPENAPI_PATH, 'utf8'));
  const examples = examplesOf(document);

  it('each satisfy the schema they illustrate', () => {
    expect(examples.length).toBeGreaterThan(40);
    for (const example of examples)
      expect(schemaViolations(example.schema, example.value), example.where).toEqual([]);
  });

  it('give every error answer an example, so that the page makes none up from the Problem schema', () => {
    const errorContents = responseContents(document).filter(
      ([where, content]) =>
        where.endsWith('application/problem+json') || JSON.stringify(content.schema).includes('OAuthError'),
    );
    expect(errorContents.length).toBeGreaterThan(20);
    for (const [where, content] of errorContents)
      expect('example' in content || 'examples' in content, where).toBe(true);
  });

  it('show only error bodies the service or API Gateway sends, invalidParams only in a failed validation', async () => {
    const sent = await errorBodies();
    const errors = examples.filter(({ mediaType, value }) => mediaType !== undefined && isErrorBody(value));
    expect(errors.length).toBeGreaterThan(20);
    for (const { where, value } of errors) {
      expect(sent, where).toContainEqual(value);
      if (isRecord(value) && 'invalidParams' in value)
        expect(value.type, where).toBe('urn:parcel-auth:problem:validation-failed');
    }
  });

  it('show tokens the service’s own verifiers accept from the example key set, with prod’s issuer, audience and lifetimes', async () => {
    const { schemas, requestBodies } = v.parse(TokenExamplesSchema, document).components;
    const [accessToken] = schemas.AccessToken.examples;
    const [refreshToken] = schemas.RefreshToken.examples;
    const [clientToken] = schemas.TokenResponse.properties.access_token.examples;
    const params = v.parse(
      v.object({
        params: v.object({ default: v.object({ tokenIssuer: v.string(), tokenAudience: v.string() }) }),
      }),
      readServerlessYml(),
    ).params.default;
    const prod = readStageParams('prod');
    const forProd = (value: string) => value.replaceAll(/\$\{sls:stage\}/g, 'prod');
    const settings = {
      issuer: forProd(params.tokenIssuer),
      audience: forProd(params.tokenAudience),
      accessTtlSeconds: prod.accessTokenTtlSeconds,
      clientAccessTtlSeconds: schemas.TokenResponse.properties.expires_in.examples[0],
      refreshTtlSeconds: prod.refreshTokenTtlSeconds,
    };
    const keys = await importVerificationKeys(parseJwks(JSON.stringify(schemas.Jwks.examples[0])));
    // The examples were issued at one instant; they are verified a minute after it.
    const issuedAt = decodeJwt(accessToken).iat ?? 0;
    const deps = { keys: async () => keys, settings, clock: () => new Date((issuedAt + 60) * 1000) };
    const accessVerifier = createAccessTokenVerifier(deps);

    const user = await accessVerifier.verify(accessToken);
    const client = await accessVerifier.verify(clientToken);
    const refresh = await createRefreshTokenVerifier(deps).verify(refreshToken);

    expect(user).toMatchObject({
      kind: 'user',
      username: schemas.LoginExtendedResponse.properties.userName.examples[0],
    });
    expect(new Date(user.expiresAt * 1000).toISOString()).toBe(schemas.ExpireAt.examples[0]);
    expect(client).toMatchObject({
      kind: 'client',
      scopes: schemas.TokenResponse.properties.scope.examples[0].split(' '),
    });
    expect(refresh).toMatchObject({
      username: user.kind === 'user' ? user.username : '',
      sessionId: user.kind === 'user' ? user.sessionId : '',
    });
    expect(schemas.AuthorizationServerMetadata.examples[0].issuer).toBe(settings.issuer);
    expect(requestBodies.RefreshToken.content['application/json'].example.refreshToken).toBe(refreshToken);
  });
});

describe('dev/openapi.ts --check', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-auth-openapi-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** `--check` on a copy of the document with `edit` applied: its exit code and error output. */
  const checkEdited = async (edit: (text: string) => string) => {
    const text = await readFile(OPENAPI_PATH, 'utf8');
    const edited = edit(text);
    expect(edited).not.toBe(text);
    const file = join(dir, 'openapi.yaml');
    await writeFile(file, edited);
    return openapiScript('--check', file).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
  };

  it('fails, naming the schema, when a generated request schema was edited by hand', async () => {
    const failure = await checkEdited((text) => {
      const at = text.indexOf('    LoginRequest:\n');
      return `${text.slice(0, at)}${text.slice(at).replace('maxLength: 256', 'maxLength: 255')}`;
    });
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(/LoginRequest differ/);
  });

  it('fails, naming the operation, when a protected operation’s scope was edited by hand', async () => {
    const failure = await checkEdited((text) =>
      text.replace('- bearer:\n            - tracking:read', '- bearer:\n            - shipments:write'),
    );
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(/the security of GET \/api\/v1\/tracking\/\{parcelNumber\} differ/);
  });

  it('fails when a generated security block sits under another operation', async () => {
    const failure = await checkEdited((text) =>
      text
        .replace('routes.trackShipment: do not edit.', 'routes.swapped: do not edit.')
        .replace('routes.createShipment: do not edit.', 'routes.trackShipment: do not edit.')
        .replace('routes.swapped: do not edit.', 'routes.createShipment: do not edit.'),
    );
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(/is not where it belongs/);
  });
});

describe('the contract check the end-to-end tests use (tests/support/openapi.ts)', () => {
  const loginOk = () => observed('POST', '/api/v1/login', 200, { token: TOKEN, refreshToken: TOKEN });

  it('accepts an answer the document describes', () => {
    expect(contractViolations(loginOk())).toEqual([]);
    expect(contractViolations(observed('POST', '/api/v1/logout', 204, undefined))).toEqual([]);
  });

  it('rejects a body that does not match the schema: a missing field, an extra one, a wrong type', () => {
    expect(contractViolations(observed('POST', '/api/v1/login', 200, { token: TOKEN }))).toEqual([
      "body must have required property 'refreshToken'",
    ]);
    expect(
      contractViolations(
        observed('POST', '/api/v1/login', 200, { token: TOKEN, refreshToken: TOKEN, d: 'x' }),
      ),
    ).toEqual(['body must NOT have additional properties: "d"']);
    expect(contractViolations(observed('POST', '/api/v1/login', 200, 'not json'))).toEqual([
      'body must be object',
    ]);
  });

  it('rejects a problem whose type belongs to another status', () => {
    const body = { type: 'urn:parcel-auth:problem:not-found', title: 'Not found', status: 404 };
    expect(
      contractViolations(
        observed('POST', '/api/v1/login', 401, body, { contentType: 'application/problem+json' }),
      ),
    ).not.toEqual([]);
  });

  it('rejects an undocumented status', () => {
    expect(contractViolations(observed('GET', '/api/v1/tracking/12345678901234', 409, {}))).toEqual([
      'status 409 is not documented (200, 400, 401, 403, 404, 429, 500, 503)',
    ]);
  });

  it('rejects an undocumented path and an undocumented method', () => {
    expect(contractViolations(observed('GET', '/api/v1/users', 200, {}))).toEqual([
      'the path /api/v1/users is not documented',
    ]);
    expect(contractViolations(observed('GET', '/api/v1/login', 200, {}))).toEqual([
      'GET /api/v1/login is not documented',
    ]);
  });

  it('rejects an undocumented content type, and a body where the document has none', () => {
    expect(contractViolations({ ...loginOk(), contentType: 'text/html' })).toEqual([
      'content type text/html is not documented (application/json)',
    ]);
    expect(contractViolations(observed('POST', '/api/v1/logout', 204, {}))).toEqual([
      'the document gives this answer no body, but it has one',
    ]);
  });

  it('rejects a missing required header and a header value of the wrong type', () => {
    const locked = {
      type: 'urn:parcel-auth:problem:too-many-attempts',
      title: 'Too many attempts',
      status: 429,
    };
    const contentType = 'application/problem+json';
    expect(contractViolations(observed('POST', '/api/v1/login', 429, locked, { contentType }))).toEqual([
      'header Retry-After is missing',
    ]);
    const headers = { ...NO_STORE, 'retry-after': 'soon' };
    expect(
      contractViolations(observed('POST', '/api/v1/login', 429, locked, { contentType, headers })),
    ).toEqual(['header Retry-After "soon" must be integer']);
    expect(contractViolations({ ...loginOk(), headers: new Headers() })).toEqual([
      'header Cache-Control is missing',
    ]);
  });

  it('throws naming the route, the status and every violation', () => {
    const answer = observed('GET', '/api/v1/tracking/12345678901234', 200, { parcelNumber: '1' });
    expect(() => assertDocumented(answer)).toThrow(
      [
        'GET /api/v1/tracking/{parcelNumber} (/api/v1/tracking/12345678901234) answered 200, which docs/openapi.yaml does not allow:',
        "  - body must have required property 'status'",
        "  - body must have required property 'createdAt'",
        "  - body must have required property 'shipment'",
        '  - body/parcelNumber must match pattern "^\\d{14}$"',
      ].join('\n'),
    );
  });

  it('checks only the status when asked to, and still rejects an undocumented one', () => {
    const offline = { statusCode: 401, error: 'Unauthorized', message: 'Unauthorized' };
    const answer = observed('GET', '/api/v1/tracking/12345678901234', 401, offline, { headers: {} });
    expect(contractViolations(answer)).not.toEqual([]);
    expect(contractViolations(answer, { statusOnly: true })).toEqual([]);
    expect(contractViolations({ ...answer, status: 418 }, { statusOnly: true })).not.toEqual([]);
  });
});
