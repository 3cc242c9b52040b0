/**
 * Every protected route as `METHOD/path`, a path parameter as `*`, in the order of
 * lib/scopes.json. Written out rather than read from lib/scopes.json: the tests hold the code
 * to this list, so a route added, dropped or moved there has to be added here too.
 */
export const PROTECTED_ROUTES = [
  'GET/api/v1/tracking/*',
  'POST/api/v1/shipments',
  'GET/api/v1/customer/clients',
  'POST/api/v1/customer/clients',
  'GET/api/v1/customer/clients/*',
  'PATCH/api/v1/customer/clients/*',
  'DELETE/api/v1/customer/clients/*',
  'POST/api/v1/customer/clients/*/secrets',
  'DELETE/api/v1/customer/clients/*/secrets/*',
  'POST/api/v1/customer/clients/*/unlock',
  'GET/api/v1/customer/audit-events',
  'GET/api/v1/customer/administrators',
  'POST/api/v1/customer/administrators',
  'POST/api/v1/customer/administrators/revoke',
  'GET/api/v1/customer/connections',
  'DELETE/api/v1/customer/connections/*',
  'GET/api/v1/customer/passkeys',
  'POST/api/v1/customer/passkeys/options',
  'POST/api/v1/customer/passkeys',
  'DELETE/api/v1/customer/passkeys/*',
  'GET/api/v1/customer/security-policy',
  'PUT/api/v1/customer/security-policy',
] as const;

/** The administrators' API: the routes under /api/v1/customer/, all of scope customer:admin. */
export const CUSTOMER_ROUTES = PROTECTED_ROUTES.filter((route) => route.includes('/api/v1/customer/'));

/** `routes` as method ARNs under a stage prefix (`arn:aws:execute-api:…:<api>/<stage>`), in order. */
export const methodArns = (stagePrefix: string, routes: readonly string[] = PROTECTED_ROUTES): string[] =>
  routes.map((route) => `${stagePrefix}/${route}`);
