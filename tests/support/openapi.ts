/**
 * docs/openapi.yaml as a test oracle: checks an HTTP answer (method, concrete path, status,
 * content type, parsed body, headers) against what the document says that operation answers
 * with that status. An undocumented path, method, status or content type is a violation too,
 * so the document has to grow with the service.
 *
 * OpenAPI 3.1 Schema Objects are JSON Schema 2020-12, so the schemas are compiled as they are
 * by ajv's 2020 dialect (with ajv-formats for `date-time`), in strict mode: a typo in a
 * schema keyword fails the first check that uses it instead of validating nothing.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { parse } from 'yaml';

export const OPENAPI_PATH = resolve(import.meta.dirname, '../../docs/openapi.yaml');

/** An answer as a test received it. */
export interface ObservedResponse {
  readonly method: string;
  /** The concrete path, without query string: `/api/v1/tracking/12345678901234`. */
  readonly path: string;
  readonly status: number;
  /** The Content-Type header as received, or null. */
  readonly contentType: string | null;
  /** The body parsed as JSON; the raw text if it is not JSON; undefined if it is empty. */
  readonly body: unknown;
  readonly headers: Headers;
}

export interface CheckOptions {
  /**
   * Only check that the document gives the operation this status, not the body or the
   * headers. For answers the local stack gives differently from AWS (tests/support/http.ts).
   */
  readonly statusOnly?: boolean;
}

// The parts of an OpenAPI 3.1 document this file reads.
interface Reference {
  readonly $ref: string;
}
interface HeaderObject {
  readonly required?: boolean;
  readonly schema?: object;
}
interface ResponseObject {
  readonly headers?: Readonly<Record<string, HeaderObject | Reference>>;
  readonly content?: Readonly<Record<string, { readonly schema?: object }>>;
}
export interface OperationObject {
  readonly operationId?: string;
  readonly requestBody?: object;
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  readonly responses: Readonly<Record<string, ResponseObject | Reference>>;
}
interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, object>> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The document as parsed from YAML (tests/unit/openapi.test.ts validates it against the OpenAPI 3.1 schema). */
const openApiDocument = parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;

/** A route of the document: a method and a path template. */
export interface DocumentedRoute {
  readonly method: string;
  readonly path: string;
  /** True when the operation requires the `bearer` scheme (the route is behind the authorizer). */
  readonly bearer: boolean;
  readonly operation: OperationObject;
}

export const documentedRoutes: readonly DocumentedRoute[] = Object.entries(openApiDocument.paths).flatMap(
  ([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      if (operation === undefined) return [];
      const bearer = (operation.security ?? []).some((requirement) => 'bearer' in requirement);
      return [{ method: method.toUpperCase(), path, bearer, operation }];
    }),
);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Each path template as a regular expression; concrete paths first, as OpenAPI prescribes. */
const pathMatchers = Object.keys(openApiDocument.paths)
  .map((template) => ({
    template,
    params: (template.match(/\{[^}]+\}/g) ?? []).length,
    regex: new RegExp(`^${escapeRegExp(template).replace(/\\\{[^}]+\\\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);

/** The path template a concrete path falls under, if any. */
export const pathTemplateOf = (path: string) => pathMatchers.find(({ regex }) => regex.test(path))?.template;

/** Whether the document puts the `bearer` scheme on this request's operation. */
export function isBearerRoute(method: string, path: string): boolean {
  const template = pathTemplateOf(path);
  return documentedRoutes.some((route) => route.path === template && route.method === method.toUpperCase());
}

/** Follows a local `$ref` (`#/components/...`) to what it names. */
function deref<T extends object>(value: T | Reference): T {
  let current: unknown = value;
  for (let hops = 0; typeof current === 'object' && current !== null && '$ref' in current; hops++) {
    const ref = String(current.$ref);
    if (!ref.startsWith('#/') || hops > 10) throw new Error(`docs/openapi.yaml: cannot follow $ref ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>(
        (node, token) => (typeof node === 'object' && node !== null ? Reflect.get(node, token) : undefined),
        openApiDocument,
      );
    if (current === undefined) throw new Error(`docs/openapi.yaml: $ref ${ref} names nothing`);
  }
  return current as T;
}

// Schemas refer to each other as `#/components/schemas/X`. The components are registered with
// ajv as one schema of their own, and every such $ref is pointed at it.
const COMPONENTS_ID = 'urn:parcel-auth:openapi:components';
function pointRefsAtComponents(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(pointRefsAtComponents);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${value.slice('#/components/schemas/'.length)}`
        : pointRefsAtComponents(value),
    ]),
  );
}

function createAjv({ coerceTypes }: { coerceTypes: boolean }) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, coerceTypes });
  formats.default(ajv);
  // The OpenAPI 3.1 base vocabulary: annotations only, nothing to validate.
  for (const keyword of ['discriminator', 'example', 'externalDocs', 'xml']) ajv.addKeyword(keyword);
  ajv.addSchema(
    pointRefsAtComponents({ $id: COMPONENTS_ID, $defs: openApiDocument.components?.schemas ?? {} }) as object,
  );
  return ajv;
}

/** Compiles each schema once. `asValue` checks a string header value, which ajv can coerce only inside an object. */
function compiler(options: { coerceTypes: boolean; asValue: boolean }) {
  const ajv = createAjv(options);
  const compiled = new WeakMap<object, ValidateFunction>();
  return (schema: object) => {
    let validate = compiled.get(schema);
    if (validate === undefined) {
      const resolved = pointRefsAtComponents(schema) as object;
      validate = ajv.compile(
        options.asValue ? { type: 'object', properties: { value: resolved }, required: ['value'] } : resolved,
      );
      compiled.set(schema, validate);
    }
    return validate;
  };
}

const bodyValidator = compiler({ coerceTypes: false, asValue: false });
// Header values are strings on the wire: `Retry-After: 17` is the integer its schema says.
const headerValidator = compiler({ coerceTypes: true, asValue: true });

/** ajv's errors as lines; `name` stands for the validated value, `root` is a path prefix to drop. */
const describeErrors = (validate: ValidateFunction, name: string, root = '') =>
  (validate.errors ?? []).map((error) => {
    const { additionalProperty, allowedValue, allowedValues } = error.params;
    const named = additionalProperty ?? allowedValue ?? allowedValues;
    const extra = named === undefined ? '' : `: ${JSON.stringify(named)}`;
    return `${name}${error.instancePath.slice(root.length)} ${error.message ?? 'is invalid'}${extra}`;
  });

/** What in `value` a schema of the document (its `$ref`s to components followed) does not allow. */
export function schemaViolations(schema: object, value: unknown): string[] {
  const validate = bodyValidator(schema);
  return validate(value) ? [] : describeErrors(validate, 'value');
}

const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]?.trim().toLowerCase() ?? null;

function headerViolations(response: ResponseObject, observed: ObservedResponse): string[] {
  return Object.entries(response.headers ?? {}).flatMap(([name, header]) => {
    // OpenAPI: a Content-Type header definition is ignored; `content` says it.
    if (name.toLowerCase() === 'content-type') return [];
    const definition = deref(header);
    const value = observed.headers.get(name);
    if (value === null) return definition.required === true ? [`header ${name} is missing`] : [];
    if (definition.schema === undefined) return [];
    const validate = headerValidator(definition.schema);
    return validate({ value })
      ? []
      : describeErrors(validate, `header ${name} ${JSON.stringify(value)}`, '/value');
  });
}

function contentViolations(response: ResponseObject, observed: ObservedResponse): string[] {
  const content = response.content ?? {};
  const documented = Object.keys(content);
  if (documented.length === 0) {
    return observed.body === undefined ? [] : ['the document gives this answer no body, but it has one'];
  }
  const mediaType = mediaTypeOf(observed.contentType);
  const schema = mediaType === null ? undefined : content[mediaType];
  if (schema === undefined) {
    return [`content type ${observed.contentType ?? '(none)'} is not documented (${documented.join(', ')})`];
  }
  if (schema.schema === undefined) return [];
  const validate = bodyValidator(schema.schema);
  return validate(observed.body) ? [] : describeErrors(validate, 'body');
}

/** What in `observed` the document does not allow; empty when it matches. */
export function contractViolations(observed: ObservedResponse, options: CheckOptions = {}): string[] {
  const template = pathTemplateOf(observed.path);
  if (template === undefined) return [`the path ${observed.path} is not documented`];
  const method = METHODS.find((name) => name === observed.method.toLowerCase());
  const operation = method === undefined ? undefined : openApiDocument.paths[template]?.[method];
  if (operation === undefined) return [`${observed.method.toUpperCase()} ${template} is not documented`];
  const responses = operation.responses;
  const documented =
    responses[String(observed.status)] ?? responses[`${String(observed.status)[0]}XX`] ?? responses.default;
  if (documented === undefined) {
    return [`status ${observed.status} is not documented (${Object.keys(responses).join(', ')})`];
  }
  if (options.statusOnly === true) return [];
  const response = deref(documented);
  return [...contentViolations(response, observed), ...headerViolations(response, observed)];
}

/** Throws, naming the route, the status and each violation, unless the document allows `observed`. */
export function assertDocumented(observed: ObservedResponse, options: CheckOptions = {}): void {
  const violations = contractViolations(observed, options);
  if (violations.length === 0) return;
  const method = observed.method.toUpperCase();
  const template = pathTemplateOf(observed.path);
  const route =
    template === undefined || template === observed.path ? observed.path : `${template} (${observed.path})`;
  throw new Error(
    `${method} ${route} answered ${observed.status}, which docs/openapi.yaml does not allow:\n` +
      violations.map((violation) => `  - ${violation}`).join('\n'),
  );
}
