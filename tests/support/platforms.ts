/**
 * A platform as the end-to-end tests drive it with oauth4webapi: the stack's metadata, and a
 * pushed authorization request with a fresh PKCE verifier and state (docs/platforms.md).
 */
import * as oauth from 'oauth4webapi';

/** Plain http, allowed on loopback only: the local stack. */
export const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** The stack's RFC 8414 metadata, discovered from its issuer (its origin). */
export async function discover(origin: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(origin);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...INSECURE, algorithm: 'oauth2' }),
  );
}

/** A pushed request (RFC 9126): the authorization URL to open, and the verifier and state to keep. */
export async function pushAuthorization(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  auth: oauth.ClientAuth,
  request: { readonly redirectUri: string; readonly scope: string },
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const { request_uri } = await oauth.processPushedAuthorizationResponse(
    as,
    client,
    await oauth.pushedAuthorizationRequest(
      as,
      client,
      auth,
      {
        response_type: 'code',
        redirect_uri: request.redirectUri,
        scope: request.scope,
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      INSECURE,
    ),
  );
  const url = new URL(String(as.authorization_endpoint));
  url.search = new URLSearchParams({ client_id: client.client_id, request_uri }).toString();
  return { url: url.href, verifier, state };
}
