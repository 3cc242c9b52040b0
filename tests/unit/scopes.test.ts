/** lib/scopes.ts: which scopes a route needs, a user holds by default, an operator or an administrator may give. */
import { describe, expect, it } from 'vitest';
import {
  ADMIN_SCOPE,
  ALL_SCOPES,
  allowedMethodArns,
  DEFAULT_USER_SCOPES,
  GRANTABLE_SCOPES,
  isGrantableScope,
  PROTECTED_ROUTES,
  ROUTE_SCOPES,
  SELF_SERVICE_CLIENT_SCOPES,
  userTokenScopes,
} from '../../lib/scopes.ts';
import { scopesOf } from '../../ops/admin/parse.ts';
import { CUSTOMER_ROUTES, methodArns } from '../support/routes.ts';

describe('customer:admin among the scopes', () => {
  it('is the scope of every /api/v1/customer/ route and of no other', () => {
    for (const route of Object.values(PROTECTED_ROUTES)) {
      expect(route.scope === ADMIN_SCOPE, route.path).toBe(route.path.startsWith('api/v1/customer/'));
    }
    expect(ROUTE_SCOPES).toEqual(['tracking:read', 'shipments:write', ADMIN_SCOPE]);
  });

  it('is not a default of users, nor grantable by an operator, nor given by an administrator to a client', () => {
    expect(DEFAULT_USER_SCOPES).toEqual(['tracking:read', 'shipments:write']);
    expect(GRANTABLE_SCOPES).toEqual(['tracking:read', 'shipments:write', 'tokens:introspect']);
    expect(SELF_SERVICE_CLIENT_SCOPES).toEqual(['tracking:read', 'shipments:write']);
    expect(isGrantableScope(ADMIN_SCOPE)).toBe(false);
    expect(isGrantableScope('tokens:introspect')).toBe(true);
    expect(isGrantableScope('tracking:write')).toBe(false);
    expect(ALL_SCOPES).toContain(ADMIN_SCOPE);
  });

  it('lists the administrator’s routes as method ARNs, each path parameter as *', () => {
    const prefix = 'arn:aws:execute-api:eu-central-1:1:api/prod';
    expect(allowedMethodArns(prefix, [ADMIN_SCOPE])).toEqual(methodArns(prefix, CUSTOMER_ROUTES));
  });
});

describe('a user’s token scopes', () => {
  it('are the defaults, or the narrowed ones among them, plus customer:admin only for an administrator', () => {
    expect(userTokenScopes({ scopes: null, admin: false })).toEqual(['tracking:read', 'shipments:write']);
    expect(userTokenScopes({})).toEqual(['tracking:read', 'shipments:write']);
    expect(userTokenScopes({ scopes: null, admin: true })).toEqual([
      'tracking:read',
      'shipments:write',
      ADMIN_SCOPE,
    ]);
    expect(userTokenScopes({ scopes: ['shipments:write'], admin: true })).toEqual([
      'shipments:write',
      ADMIN_SCOPE,
    ]);
  });

  it('never take customer:admin or tokens:introspect from a narrowed list', () => {
    expect(
      userTokenScopes({ scopes: [ADMIN_SCOPE, 'tokens:introspect', 'tracking:read'], admin: false }),
    ).toEqual(['tracking:read']);
  });
});

describe('an operator’s --scope', () => {
  it.each(['client add', 'user scopes'] as const)(
    'refuses customer:admin for %s, naming the grantable scopes',
    (name) => {
      expect(() => scopesOf(['tracking:read', ADMIN_SCOPE], name)).toThrow(
        'invalid --scope: must be one of the scopes tracking:read, shipments:write, tokens:introspect',
      );
      expect(scopesOf(['shipments:write', 'tracking:read'], name)).toEqual([
        'tracking:read',
        'shipments:write',
      ]);
    },
  );
});
