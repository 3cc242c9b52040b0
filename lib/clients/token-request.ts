// A token request (RFC 6749 sections 2.3.1, 3.2 and 4.4.2), checked before any read or secret
// comparison: a malformed request costs nothing.
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import { type Scope, ScopeListSchema } from '../scopes.ts';
import { ClientIdSchema } from './clients.ts';

export const CLIENT_CREDENTIALS = 'client_credentials';

/** Longer than any secret we issue (47 characters); bounds the hashing a request can cause. */
const MAX_SECRET_LENGTH = 256;

export interface TokenRequest {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Undefined: the client's own scopes. */
  readonly scopes: readonly Scope[] | undefined;
}

const invalidClient = () => new AppError('INVALID_CLIENT');
const invalidRequest = (detail: string) => new AppError('VALIDATION_FAILED', { detail });

/** Section 2.3.1: id and secret are form-urlencoded before they are joined by a colon and base64-encoded. */
function basicCredentials(value: string): { id: string; secret: string } {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(value);
  if (match?.[1] === undefined) throw invalidClient();
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient();
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      throw invalidClient();
    }
  };
  return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
}

export function parseTokenRequest(
  form: Record<string, string>,
  authorization: readonly string[],
): TokenRequest {
  const grantType = form.grant_type;
  if (grantType === undefined || grantType === '')
    throw invalidRequest('The parameter grant_type is required.');
  if (grantType !== CLIENT_CREDENTIALS) throw new AppError('UNSUPPORTED_GRANT_TYPE');
  if (authorization.length > 1) throw invalidRequest('Send one Authorization header.');

  let credentials: { id: string; secret: string };
  if (authorization.length === 1) {
    credentials = basicCredentials(authorization[0] ?? '');
    // Section 2.3: one authentication method. A client_id beside Basic must name the same client.
    if (form.client_secret !== undefined)
      throw invalidRequest('Authenticate with HTTP Basic or with client_secret in the body, not both.');
    if (form.client_id !== undefined && form.client_id !== credentials.id)
      throw invalidRequest('The client_id in the body is not the one in the Authorization header.');
  } else {
    if (form.client_id === undefined || form.client_secret === undefined) throw invalidClient();
    credentials = { id: form.client_id, secret: form.client_secret };
  }
  if (
    !v.is(ClientIdSchema, credentials.id) ||
    credentials.secret === '' ||
    credentials.secret.length > MAX_SECRET_LENGTH
  )
    throw invalidClient();

  let scopes: Scope[] | undefined;
  if (form.scope !== undefined && form.scope !== '') {
    const parsed = v.safeParse(ScopeListSchema, form.scope);
    if (!parsed.success) throw new AppError('INVALID_SCOPE');
    scopes = parsed.output;
  }
  return { clientId: credentials.id, clientSecret: credentials.secret, scopes };
}

/** The body of a successful answer (RFC 6749 section 5.1): no refresh token for this grant (section 4.4.3). */
export const toTokenResponse = (grant: {
  accessToken: string;
  expiresIn: number;
  scopes: readonly Scope[];
}) => ({
  access_token: grant.accessToken,
  token_type: 'Bearer',
  expires_in: grant.expiresIn,
  scope: grant.scopes.join(' '),
});
