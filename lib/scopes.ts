// Scopes and each protected route's scope, declared once in lib/scopes.json for serverless.yml, the
// authorizer, the functions and docs/openapi.yaml (why these: docs/clients.md, "Scopes").
import * as v from 'valibot';
import declaration from './scopes.json' with { type: 'json' };

export type Scope = keyof typeof declaration.scopes;
export type ProtectedFunction = keyof typeof declaration.routes;

/** As serverless.yml writes them: `method` in lower case, `path` without the leading slash. */
export interface ProtectedRoute {
  readonly method: string;
  readonly path: string;
  readonly scope: Scope;
}

export const SCOPES: Readonly<Record<Scope, string>> = Object.freeze(declaration.scopes);
export const ALL_SCOPES: readonly Scope[] = Object.freeze(Object.keys(SCOPES) as Scope[]);
export const PROTECTED_ROUTES = Object.freeze(
  declaration.routes as Record<ProtectedFunction, ProtectedRoute>,
);

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value);

/**
 * The scopes some protected route needs, in the declaration's order: what a user's token may
 * hold ({@link ADMIN_SCOPE} an administrator's only). A scope no route needs
 * (`tokens:introspect`, an OAuth endpoint's) is a client's only.
 */
export const ROUTE_SCOPES: readonly Scope[] = Object.freeze(
  ALL_SCOPES.filter((scope) => Object.values(declaration.routes).some((route) => route.scope === scope)),
);
export const isRouteScope = (scope: Scope) => ROUTE_SCOPES.includes(scope);

/**
 * A customer's administration (docs/administrators.md): a route scope that is never a default.
 * Only a user granted administration (`admin` on the user item) gets it, at each login and
 * refresh; no API client and no operator's scope list ever holds it.
 */
export const ADMIN_SCOPE = 'customer:admin' as const satisfies Scope;

/**
 * A user's scopes when an operator has not narrowed them, and those of a user's token signed
 * before tokens had a `scope` claim: every route scope but the administrator's.
 */
export const DEFAULT_USER_SCOPES: readonly Scope[] = Object.freeze(
  ROUTE_SCOPES.filter((scope) => scope !== ADMIN_SCOPE),
);

/**
 * What an operator may give (`client add`, `user scopes`, a client's import) and an API client
 * may hold: every declared scope but the administrator's, which only `user admin grant` gives.
 */
export const GRANTABLE_SCOPES: readonly Scope[] = Object.freeze(
  ALL_SCOPES.filter((scope) => scope !== ADMIN_SCOPE),
);
export const isGrantableScope = (value: string): value is Scope =>
  isScope(value) && GRANTABLE_SCOPES.includes(value);

/** What an administrator may give a client it creates: the grantable scopes some route needs. */
export const SELF_SERVICE_CLIENT_SCOPES: readonly Scope[] = Object.freeze(
  GRANTABLE_SCOPES.filter(isRouteScope),
);

// A route naming a scope that is not declared would be unreachable for every token: refused at init.
for (const [fn, route] of Object.entries(declaration.routes)) {
  if (!isScope(route.scope))
    throw new Error(`lib/scopes.json: route ${fn} needs the undeclared scope ${route.scope}`);
}

export const scopeOf = (fn: ProtectedFunction): Scope => PROTECTED_ROUTES[fn].scope;

/** RFC 6749 section 3.3 `scope`; only known scopes, none twice: the rest of the service meets no other. */
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

/**
 * The `scope` of a user's access token: its narrowed scopes (null: the defaults) among the
 * defaults, plus {@link ADMIN_SCOPE} only when `admin`. A narrowed list naming it adds nothing:
 * administration is the user item's `admin`, which ending revokes the user's tokens.
 */
export const userTokenScopes = (user: {
  readonly scopes?: readonly Scope[] | null;
  readonly admin?: boolean;
}): Scope[] =>
  sortScopes([
    ...(user.scopes ?? DEFAULT_USER_SCOPES).filter((scope) => DEFAULT_USER_SCOPES.includes(scope)),
    ...(user.admin === true ? [ADMIN_SCOPE] : []),
  ]);

/** The `scope` claim and answer: space-delimited (RFC 6749 section 3.3, RFC 9068 section 2.2.3). */
export const scopeString = (scopes: readonly Scope[]) => sortScopes(scopes).join(' ');

/** Every route `scopes` allow (a path parameter as `*`): a cached decision serves all the token calls. */
export function allowedMethodArns(stagePrefix: string, scopes: readonly Scope[]): string[] {
  const granted = new Set(scopes);
  return Object.values(PROTECTED_ROUTES)
    .filter((route) => granted.has(route.scope))
    .map((route) => `${stagePrefix}/${route.method.toUpperCase()}/${route.path.replace(/\{[^/]+\}/g, '*')}`);
}
