/**
 * docs/openapi.yaml is the contract the end-to-end tests hold every answer to
 * (tests/support/http.ts). These tests keep the document itself honest: valid OpenAPI 3.1,
 * request schemas derived from the valibot schemas, the routes of serverless.yml, the
 * problems lib/http.ts really sends, and a contract check that can fail.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { APIGatewayProxyResult } from 'aws-lambda';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LoginRequestSchema } from '../../lib/auth/login.ts';
import { AppError, type ErrorCode } from '../../lib/errors.ts';
import { problemResponse, validate } from '../../lib/http.ts';
import { TrackingParamsSchema } from '../../lib/shipments/shipments.ts';
import {
  assertDocumented,
  contractViolations,
  documentedRoutes,
  type ObservedResponse,
  OPENAPI_PATH,
} from '../support/openapi.ts';

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

async function serverlessRoutes() {
  // CloudFormation's short tags (!GetAtt, !Join, !Ref) are not YAML's: left unresolved, unlogged.
  const config = v.parse(
    ServerlessRoutesSchema,
    parse(await readFile(join(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }),
  );
  return Object.values(config.functions).flatMap(({ events = [] }) =>
    events.flatMap(({ http }) =>
      http === undefined
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

/** lib/http.ts's answer, as `send` would observe it. */
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

  it('holds the request schemas derived from the valibot schemas (npm run openapi -- --check)', async () => {
    const { stdout } = await openapiScript('--check');
    expect(stdout).toContain('match the valibot schemas');
  });

  it('documents exactly the routes of serverless.yml, with the bearer scheme on those behind the authorizer', async () => {
    const byRoute = (a: { method: string; path: string }, b: { method: string; path: string }) =>
      `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`);
    const documented = documentedRoutes.map(({ method, path, bearer }) => ({ method, path, bearer }));
    expect(documented.sort(byRoute)).toEqual((await serverlessRoutes()).sort(byRoute));
  });

  it('documents the answers lib/http.ts gives any route: 503; 400, 413 and 415 with a body; 401 behind the authorizer', () => {
    for (const { method, path, bearer, operation } of documentedRoutes) {
      const statuses = Object.keys(operation.responses);
      const route = `${method} ${path}`;
      expect(statuses, route).toContain('503');
      if (operation.requestBody !== undefined) {
        expect(statuses, route).toEqual(expect.arrayContaining(['400', '413', '415']));
      }
      if (bearer) expect(statuses, route).toContain('401');
    }
  });

  it('documents API Gateway’s throttled answer, as infra/gateway-responses.yml sends it, on every route', async () => {
    const gateway = parse(await readFile(join(ROOT, 'infra/gateway-responses.yml'), 'utf8')) as {
      Resources: Record<string, { Properties: GatewayResponse }>;
    };
    const throttled = Object.values(gateway.Resources)
      .map(({ Properties }) => Properties)
      .find(({ ResponseType }) => ResponseType === 'THROTTLED');
    if (throttled === undefined) throw new Error('no THROTTLED gateway response');
    const headers = Object.fromEntries(
      Object.entries(throttled.ResponseParameters).map(([name, value]) => [
        name.slice('gatewayresponse.header.'.length),
        value.slice(1, -1),
      ]),
    );
    for (const { method, path } of documentedRoutes) {
      const concrete = path.replace('{parcelNumber}', '12345678901234');
      const answer = observed(
        method,
        concrete,
        Number(throttled.StatusCode),
        JSON.parse(throttled.ResponseTemplates['application/json'] ?? ''),
        { contentType: headers['Content-Type'], headers },
      );
      expect(contractViolations(answer), `${method} ${path}`).toEqual([]);
    }
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
  ])('documents what lib/http.ts answers to %s on %s', (_case, route, answer) => {
    const [method = '', path = ''] = route.split(' ');
    expect(contractViolations(observedProblem(method, path, answer()))).toEqual([]);
  });
});

describe('dev/openapi.ts --check', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-auth-openapi-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('fails, naming the schema, when a generated request schema was edited by hand', async () => {
    const text = await readFile(OPENAPI_PATH, 'utf8');
    const edited = text.replace('maxLength: 256', 'maxLength: 255');
    expect(edited).not.toBe(text);
    const file = join(dir, 'openapi.yaml');
    await writeFile(file, edited);
    const failure = await openapiScript('--check', file).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(/LoginRequest differ/);
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
    expect(contractViolations(observed('GET', '/api/v1/tracking/12345678901234', 403, {}))).toEqual([
      'status 403 is not documented (200, 400, 401, 404, 429, 500, 503)',
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
