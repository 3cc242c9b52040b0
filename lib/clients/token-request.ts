// The requests of the OAuth endpoints (RFC 6749 sections 3.2 and 4.4.2, RFC 7009 and RFC 7662
// section 2.1), checked before any read or secret comparison: a malformed request costs nothing.
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import { type Scope, ScopeListSchema } from '../scopes.ts';
import { type ClientCredentials, clientCredentials } from './client-auth.ts';

export const CLIENT_CREDENTIALS = 'client_credentials';
/** A platform's grants (docs/platforms.md): lib/authorization/grants.ts. */
export const AUTHORIZATION_CODE = 'authorization_code';
export const REFRESH_TOKEN = 'refresh_token';
export const GRANT_TYPES = [CLIENT_CREDENTIALS, AUTHORIZATION_CODE, REFRESH_TOKEN] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export type TokenRequest = ClientCredentials & {
  /** Undefined: the client's own scopes. */
  readonly scopes: readonly Scope[] | undefined;
};

const invalidRequest = (detail: string) => new AppError('VALIDATION_FAILED', { detail });

/** The request's grant type, one this endpoint grants. */
export function grantTypeOf(form: Record<string, string>): GrantType {
  const grantType = form.grant_type;
  if (grantType === undefined || grantType === '')
    throw invalidRequest('The parameter grant_type is required.');
  if (!(GRANT_TYPES as readonly string[]).includes(grantType)) throw new AppError('UNSUPPORTED_GRANT_TYPE');
  return grantType as GrantType;
}

/** Longer than any code or refresh token we issue; bounds the work of a request. */
const MAX_GRANT_LENGTH = 4096;

/** A parameter the grant needs, present and bounded. */
function required(form: Record<string, string>, name: string): string {
  const value = form[name];
  if (value === undefined || value === '') throw invalidRequest(`The parameter ${name} is required.`);
  if (value.length > MAX_GRANT_LENGTH) throw invalidRequest(`The parameter ${name} is too long.`);
  return value;
}

/** grant_type=authorization_code (RFC 6749 section 4.1.3, RFC 7636 section 4.5). */
export const parseCodeExchange = (form: Record<string, string>, authorization: readonly string[]) => ({
  ...clientCredentials(form, authorization),
  code: required(form, 'code'),
  redirectUri: required(form, 'redirect_uri'),
  codeVerifier: required(form, 'code_verifier'),
});

/**
 * grant_type=refresh_token (section 6): `scope`, when sent, narrows this access token to those of
 * the approved scopes (the refresh token keeps them all).
 */
export function parseRefreshGrant(form: Record<string, string>, authorization: readonly string[]) {
  const credentials = clientCredentials(form, authorization);
  const refreshToken = required(form, 'refresh_token');
  if (form.scope === undefined || form.scope === '')
    return { ...credentials, refreshToken, scopes: undefined };
  const parsed = v.safeParse(ScopeListSchema, form.scope);
  if (!parsed.success) throw new AppError('INVALID_SCOPE');
  return { ...credentials, refreshToken, scopes: parsed.output };
}

/** grant_type=client_credentials (section 4.4.2). */
export function parseTokenRequest(
  form: Record<string, string>,
  authorization: readonly string[],
): TokenRequest {
  if (grantTypeOf(form) !== CLIENT_CREDENTIALS) throw new AppError('UNSUPPORTED_GRANT_TYPE');
  const credentials = clientCredentials(form, authorization);

  let scopes: Scope[] | undefined;
  if (form.scope !== undefined && form.scope !== '') {
    const parsed = v.safeParse(ScopeListSchema, form.scope);
    if (!parsed.success) throw new AppError('INVALID_SCOPE');
    scopes = parsed.output;
  }
  return { ...credentials, scopes };
}

/** A request about a token, to revoke it (RFC 7009) or to introspect it (RFC 7662). */
export type TokenQuery = ClientCredentials & {
  readonly token: string;
};

/**
 * The client's credentials first (RFC 7009 section 2.1), then `token`. `token_type_hint` is
 * allowed and ignored: a token's signed `typ` and `client_id` say what it is, and a server
 * that does not find a token by its hint must look further anyway (RFC 7662 section 2.1).
 */
export function parseTokenQuery(form: Record<string, string>, authorization: readonly string[]): TokenQuery {
  const credentials = clientCredentials(form, authorization);
  const token = form.token;
  if (token === undefined || token === '') throw invalidRequest('The parameter token is required.');
  return { ...credentials, token };
}

/** RFC 6750's, or RFC 9449's for a token bound to a DPoP key (section 5.1). */
export const tokenTypeOf = (grant: { readonly jkt?: string | undefined }) =>
  grant.jkt === undefined ? 'Bearer' : 'DPoP';

/** The body of a successful answer (RFC 6749 section 5.1): no refresh token for this grant (section 4.4.3). */
export const toTokenResponse = (grant: {
  accessToken: string;
  expiresIn: number;
  scopes: readonly Scope[];
  jkt?: string | undefined;
}) => ({
  access_token: grant.accessToken,
  token_type: tokenTypeOf(grant),
  expires_in: grant.expiresIn,
  scope: grant.scopes.join(' '),
});
