/**
 * Scopes, and the scope each protected route needs: declared once, in lib/scopes.json, which
 * serverless.yml (the routes' paths and methods), the authorizer (the policy it returns), the
 * functions (their re-check) and docs/openapi.yaml (dev/openapi.ts) all read. docs/clients.md
 * says why these scopes.
 */
import * as v from 'valibot';
import declaration from './scopes.json' with { type: 'json' };

export type Scope = keyof typeof declaration.scopes;
export type ProtectedFunction = keyof typeof declaration.routes;

export interface ProtectedRoute {
  /** Lower case, as serverless.yml writes it. */
  readonly method: string;
  /** Without the leading slash, as serverless.yml writes it. */
  readonly path: string;
  readonly scope: Scope;
}

/** Every scope the service knows, with what it allows, in the declaration's order. */
export const SCOPES: Readonly<Record<Scope, string>> = Object.freeze(declaration.scopes);
export const ALL_SCOPES: readonly Scope[] = Object.freeze(Object.keys(SCOPES) as Scope[]);
/** Every route behind the authorizer, by its function's name in serverless.yml. */
export const PROTECTED_ROUTES = Object.freeze(
  declaration.routes as Record<ProtectedFunction, ProtectedRoute>,
);

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value);

// A route naming a scope that is not declared would be unreachable for every token: refused at init.
for (const [fn, route] of Object.entries(declaration.routes)) {
  if (!isScope(route.scope))
    throw new Error(`lib/scopes.json: route ${fn} needs the undeclared scope ${route.scope}`);
}

/** The scope a protected function's route needs. */
export const scopeOf = (fn: ProtectedFunction): Scope => PROTECTED_ROUTES[fn].scope;

/**
 * RFC 6749 section 3.3 `scope`: space-delimited, each a token of printable ASCII but `"` and `\`.
 * Here also each one the service knows, none twice: the rest of the service never meets another.
 */
export const ScopeListSchema = v.pipe(
  v.string(),
  v.maxLength(1024, 'must be at most 1024 characters'),
  v.regex(
    /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/,
    'must be scopes separated by one space',
  ),
  v.transform((text) => text.split(' ')),
  v.check((names) => names.every(isScope), `must name only the scopes ${ALL_SCOPES.join(', ')}`),
  v.check((names) => new Set(names).size === names.length, 'must not name a scope twice'),
  v.transform((names) => sortScopes(names as Scope[])),
);

/** In the declaration's order, so one set of scopes has one spelling (claims, logs, answers). */
export const sortScopes = (scopes: Iterable<Scope>): Scope[] => {
  const set = new Set(scopes);
  return ALL_SCOPES.filter((scope) => set.has(scope));
};

/** The `scope` claim and answer: space-delimited (RFC 6749 section 3.3, RFC 9068 section 2.2.3). */
export const scopeString = (scopes: readonly Scope[]) => sortScopes(scopes).join(' ');

/**
 * The method ARNs a token with `scopes` may call, under the stage's ARN prefix
 * (`arn:aws:execute-api:region:account:apiId/stage`): one per route its scopes allow, a path
 * parameter as `*`. API Gateway reuses a cached decision for every route the token calls, so
 * the policy lists all of them, never only the route of the request that filled the cache.
 */
export function allowedMethodArns(stagePrefix: string, scopes: readonly Scope[]): string[] {
  const granted = new Set(scopes);
  return Object.values(PROTECTED_ROUTES)
    .filter((route) => granted.has(route.scope))
    .map((route) => `${stagePrefix}/${route.method.toUpperCase()}/${route.path.replace(/\{[^/]+\}/g, '*')}`);
}
