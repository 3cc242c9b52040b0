/**
 * The authorization request (RFC 6749 section 4.1.1 with PKCE, RFC 7636; OAuth 2.1 section 4.1.1),
 * pushed (RFC 9126) or sent to the authorization endpoint. Checked in two steps: the client and
 * its redirect URI first, which nothing is redirected to unless both are right (RFC 6749 section
 * 4.1.2.1: no open redirect); then the rest, whose errors go back to the platform's redirect URI.
 */

import * as v from 'valibot';
import type { PlatformClient } from '../clients/clients.ts';
import { grantedScopes } from '../clients/clients.ts';
import { type Scope, ScopeListSchema } from '../scopes.ts';
import { CODE_CHALLENGE, S256 } from './pkce.ts';

/** What a client may echo back; bounded, as it is stored and written into a URI. */
export const MAX_STATE_LENGTH = 512;

export interface AuthorizationRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly Scope[];
  readonly state?: string;
  readonly codeChallenge: string;
}

/** An error the platform is told at its redirect URI (section 4.1.2.1). */
export interface RedirectedError {
  readonly error: 'invalid_request' | 'invalid_scope' | 'unsupported_response_type' | 'access_denied';
  readonly description: string;
}

export type Checked =
  | { readonly ok: true; readonly request: AuthorizationRequest }
  | {
      readonly ok: false;
      readonly redirectUri: string;
      readonly state?: string;
      readonly problem: RedirectedError;
    };

/** The parameters that are each allowed once, in a query or a form. */
const PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'request_uri',
];

const invalid = (description: string): RedirectedError => ({ error: 'invalid_request', description });

/**
 * The redirect URI this request may be answered at: the one given, when the platform registered
 * exactly it (OAuth 2.1 requires it in every request). Undefined: nothing may be redirected.
 */
export function registeredRedirectUri(client: PlatformClient, params: Readonly<Record<string, string>>) {
  const uri = params.redirect_uri;
  return uri !== undefined && client.platform.redirectUris.includes(uri) ? uri : undefined;
}

/** The rest of the request, once its client and redirect URI are known to be right. */
export function checkAuthorizationRequest(
  client: PlatformClient,
  redirectUri: string,
  params: Readonly<Record<string, string>>,
): Checked {
  const state = params.state;
  const fail = (problem: RedirectedError): Checked => ({
    ok: false,
    redirectUri,
    ...(state !== undefined && state.length <= MAX_STATE_LENGTH && { state }),
    problem,
  });
  if (state !== undefined && (state === '' || state.length > MAX_STATE_LENGTH))
    return fail(invalid(`The parameter state must be 1 to ${MAX_STATE_LENGTH} characters.`));
  if (params.response_type === undefined) return fail(invalid('The parameter response_type is required.'));
  if (params.response_type !== 'code')
    return fail({ error: 'unsupported_response_type', description: 'Only response_type=code is supported.' });
  if (params.code_challenge === undefined)
    return fail(invalid('PKCE is required: send code_challenge and code_challenge_method=S256.'));
  if (params.code_challenge_method !== S256) return fail(invalid('The code_challenge_method must be S256.'));
  if (!CODE_CHALLENGE.test(params.code_challenge))
    return fail(invalid('The code_challenge must be 43 base64url characters (RFC 7636 section 4.2).'));
  let asked: Scope[] | undefined;
  if (params.scope !== undefined && params.scope !== '') {
    const parsed = v.safeParse(ScopeListSchema, params.scope);
    if (!parsed.success)
      return fail({ error: 'invalid_scope', description: 'The requested scope is unknown.' });
    asked = parsed.output;
  }
  const scopes = grantedScopes(client, asked);
  if (scopes === null || scopes.length === 0)
    return fail({ error: 'invalid_scope', description: "The requested scope is beyond the platform's." });
  return {
    ok: true,
    request: {
      clientId: client.clientId,
      redirectUri,
      scopes,
      ...(state !== undefined && { state }),
      codeChallenge: params.code_challenge,
    },
  };
}

/** Names a parameter sent twice, or undefined (RFC 6749 section 3.1: parameters MUST NOT be repeated). */
export function repeatedParameter(pairs: Iterable<[string, string]>): string | undefined {
  const seen = new Set<string>();
  for (const [name] of pairs) {
    if (seen.has(name) && PARAMETERS.includes(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/**
 * The answer at the platform's redirect URI (section 4.1.2, RFC 9207's `iss`), its own query
 * parameters kept.
 */
export function redirectTo(
  redirectUri: string,
  issuer: string,
  params: Readonly<Record<string, string | undefined>>,
) {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.append(name, value);
  url.searchParams.append('iss', issuer);
  return url.href;
}
