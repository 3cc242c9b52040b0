/**
 * Platforms end to end (docs/platforms.md): a platform registered with the admin CLI runs the
 * authorization code flow with PKCE and PAR as oauth4webapi (panva's, the OAuth 2.1 / FAPI 2.0
 * library) performs it against the local stack; the page's browser is played by fetch with a
 * cookie jar; the connection's tokens in front of the real authorizer and handlers; the
 * customer's administrator lists and ends the connection through the self-service API.
 */
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { bearer, send } from '../support/http.ts';
import { discover, INSECURE, pushAuthorization } from '../support/platforms.ts';
import { printedValue, stackAdmin } from '../support/stack-admin.ts';

const CUSTOMER = 'C-PLATFORM-1';
const OTHER_CUSTOMER = 'C-PLATFORM-2';
const PASSWORD = 'correct horse battery staple';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SHIPMENT = { recipient: { name: 'Petra Malá', city: 'Ostrava' }, parcels: [{ weightKg: 0.8 }] };

let stack: LocalStack;
let origin: string;
let as: oauth.AuthorizationServer;
let platform: oauth.Client;
let platformAuth: oauth.ClientAuth;
const insecure = INSECURE;

const admin = (args: readonly string[], stdin?: string) => stackAdmin(stack, args, stdin);

async function addUser(username: string, customerId: string, administrator: boolean) {
  await admin(['user', 'add', username, '--customer', customerId], `${PASSWORD}\n`);
  if (administrator) await admin(['user', 'admin', 'grant', username]);
}

/** A browser on the stack's pages: one cookie jar, never following redirects. */
function browser() {
  let cookie: string | undefined;
  const go = async (url: string, form?: Record<string, string>) => {
    const response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      redirect: 'manual',
      headers: {
        ...(cookie !== undefined && { cookie }),
        ...(form !== undefined && { 'content-type': 'application/x-www-form-urlencoded', origin }),
      },
      ...(form !== undefined && { body: new URLSearchParams(form).toString() }),
    });
    const set = response.headers.get('set-cookie');
    if (set !== null) cookie = set.split(';')[0];
    return { status: response.status, headers: response.headers, html: await response.text() };
  };
  return { go };
}

const requestIdOf = (html: string) => /name="request" value="([^"]+)"/.exec(html)?.[1] ?? '';
const AUTHORIZE = () => `${origin}/api/v1/oauth/authorize`;

/** PAR, the page (sign-in and a decision) and the answer at the redirect URI, as the platform sees it. */
async function authorize(options: { username: string; decision: 'approve' | 'deny'; scope?: string }) {
  const { url, verifier, state } = await pushAuthorization(as, platform, platformAuth, {
    redirectUri: REDIRECT_URI,
    scope: options.scope ?? 'tracking:read shipments:write',
  });
  const page = browser();
  const signIn = await page.go(url);
  const request = requestIdOf(signIn.html);
  const consent = await page.go(AUTHORIZE(), {
    request,
    action: 'sign-in',
    username: options.username,
    password: PASSWORD,
  });
  const decided = await page.go(AUTHORIZE(), { request, action: options.decision });
  return { verifier, state, signIn, consent, decided, page, request };
}

async function exchange(location: string, state: string, verifier: string, DPoP?: oauth.DPoPHandle) {
  const params = oauth.validateAuthResponse(as, platform, new URL(location), state);
  return oauth.processAuthorizationCodeResponse(
    as,
    platform,
    await oauth.authorizationCodeGrantRequest(as, platform, platformAuth, params, REDIRECT_URI, verifier, {
      ...insecure,
      ...(DPoP !== undefined && { DPoP }),
    }),
  );
}

const adminToken = async (username: string) => {
  const answer = await send(stack, 'POST', '/login', { body: { username, password: PASSWORD } });
  return String((answer.json as unknown as { token: string }).token);
};

beforeAll(async () => {
  stack = await startLocalStack();
  origin = new URL(stack.baseUrl).origin;
  as = await discover(origin);
  const added = await admin([
    'platform',
    'add',
    'Shoply',
    '--redirect-uri',
    REDIRECT_URI,
    '--scope',
    'tracking:read',
    '--scope',
    'shipments:write',
  ]);
  platform = { client_id: printedValue(added, 'client id') };
  platformAuth = oauth.ClientSecretBasic(printedValue(added, 'secret'));
  await addUser('pf-admin', CUSTOMER, true);
  await addUser('pf-clerk', CUSTOMER, false);
  await addUser('pf-other-admin', OTHER_CUSTOMER, true);
}, 120_000);
afterAll(async () => {
  if (process.env.SHOW_STACK === '1')
    console.log(
      stack
        ?.output()
        .split('\n')
        .filter((l) => /"level":"(ERROR|WARN)"|error/i.test(l))
        .slice(-20)
        .join('\n'),
    );
  await stack?.stop();
});

describe('a platform connects to a customer with the authorization code, PKCE and PAR', () => {
  let tokens: oauth.TokenEndpointResponse;

  it('shows the platform, its scopes in words and a sign-in, framed by no one, and binds the request to the browser', async () => {
    const flow = await authorize({ username: 'pf-admin', decision: 'approve' });
    expect(flow.signIn.status).toBe(200);
    expect(flow.signIn.html).toContain('Shoply');
    expect(flow.signIn.html).toContain("Track the customer's parcels".replace("'", '&#39;'));
    expect(flow.signIn.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(flow.signIn.headers.get('content-security-policy')).toContain("default-src 'none'");
    const cookie = flow.signIn.headers.get('set-cookie') ?? '';
    for (const attribute of ['HttpOnly', 'Secure', 'SameSite=Lax']) expect(cookie).toContain(attribute);
    expect(flow.consent.status).toBe(200);
    expect(flow.consent.html).toContain(CUSTOMER);
    expect(flow.decided.status).toBe(303);
    const location = flow.decided.headers.get('location') ?? '';
    expect(new URL(location).searchParams.get('iss')).toBe(as.issuer);
    tokens = await exchange(location, flow.state, flow.verifier);
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      scope: 'tracking:read shipments:write',
      customer_id: CUSTOMER,
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    // A second use of the same code: refused, and what the first issued ends (RFC 6749 section 4.1.2).
    const again = await oauth.authorizationCodeGrantRequest(
      as,
      platform,
      platformAuth,
      oauth.validateAuthResponse(as, platform, new URL(location), flow.state),
      REDIRECT_URI,
      flow.verifier,
      insecure,
    );
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
    const refreshed = await oauth.refreshTokenGrantRequest(
      as,
      platform,
      platformAuth,
      String(tokens.refresh_token),
      insecure,
    );
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('issues an RFC 9068 token naming the platform and the customer, which works for that customer only', async () => {
    const flow = await authorize({ username: 'pf-admin', decision: 'approve' });
    tokens = await exchange(flow.decided.headers.get('location') ?? '', flow.state, flow.verifier);
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({
      client_id: platform.client_id,
      sub: platform.client_id,
      customer_id: CUSTOMER,
    });
    expect(claims.connection_id).toMatch(/^con_/);
    expect(claims).not.toHaveProperty('secret_id');
    const created = await send(stack, 'POST', '/shipments', {
      body: SHIPMENT,
      headers: bearer(tokens.access_token),
    });
    expect(created.status).toBe(201);
    const parcel = String((created.json as unknown as { parcelNumber: string }).parcelNumber);
    expect(
      (await send(stack, 'GET', `/tracking/${parcel}`, { headers: bearer(tokens.access_token) })).status,
    ).toBe(200);
  });

  it('rotates the refresh token, and answers a retry of the spent one within the grace window', async () => {
    const first = String(tokens.refresh_token);
    const next = await oauth.processRefreshTokenResponse(
      as,
      platform,
      await oauth.refreshTokenGrantRequest(as, platform, platformAuth, first, insecure),
    );
    expect(next.refresh_token).not.toBe(first);
    expect(next).toMatchObject({ customer_id: CUSTOMER, scope: 'tracking:read shipments:write' });
    // Within the grace window the spent token is answered with the current one: a lost answer does not orphan the connection.
    const retried = await oauth.processRefreshTokenResponse(
      as,
      platform,
      await oauth.refreshTokenGrantRequest(as, platform, platformAuth, first, insecure),
    );
    expect(retried.access_token).toEqual(expect.any(String));
    tokens = next;
  });

  it('lists the connection for the customer’s administrator, and ending it stops its refresh token at once', async () => {
    const token = await adminToken('pf-admin');
    const listed = await send(stack, 'GET', '/customer/connections', { headers: bearer(token) });
    expect(listed.status).toBe(200);
    const connections = (
      listed.json as unknown as { connections: { connectionId: string; clientId: string }[] }
    ).connections;
    expect(connections).toEqual([
      expect.objectContaining({
        clientId: platform.client_id,
        name: 'Shoply',
        approvedBy: 'pf-admin',
        scopes: ['tracking:read', 'shipments:write'],
      }),
    ]);
    // Another customer's administrator sees none of it and cannot end it.
    const other = await adminToken('pf-other-admin');
    expect((await send(stack, 'GET', '/customer/connections', { headers: bearer(other) })).json).toEqual({
      connections: [],
    });
    const id = connections[0]?.connectionId ?? '';
    expect(
      (await send(stack, 'DELETE', `/customer/connections/${id}`, { headers: bearer(other) })).status,
    ).toBe(404);
    expect(
      (await send(stack, 'DELETE', `/customer/connections/${id}`, { headers: bearer(token) })).status,
    ).toBe(204);
    const refused = await oauth.refreshTokenGrantRequest(
      as,
      platform,
      platformAuth,
      String(tokens.refresh_token),
      insecure,
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
    // The customer's trail: who approved and who ended it, from where.
    const trail = await send(stack, 'GET', '/customer/audit-events', { headers: bearer(token) });
    const events = (trail.json as unknown as { events: { type: string; connectionId?: string }[] }).events;
    const ofConnection = events.filter((event) => event.connectionId === id);
    expect(ofConnection.map((event) => event.type)).toEqual(['connection.ended', 'connection.approved']);
    expect(ofConnection[0]).toMatchObject({
      actor: 'user:pf-admin',
      reason: 'ended by an administrator',
      sourceIp: expect.any(String),
    });
    // Its access token too, within the revocation bound (the local stage's: a second).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await send(stack, 'GET', '/tracking/X1', { headers: bearer(tokens.access_token) })).status).toBe(
      401,
    );
  });
});

describe('a platform binds its access tokens to a key (DPoP, RFC 9449)', () => {
  it('exchanges its code and refreshes with oauth4webapi’s proofs: DPoP tokens that create shipments only with a proof', async () => {
    const keys = (await generateKeyPair('ES256', { extractable: true })) as oauth.CryptoKeyPair;
    const DPoP = oauth.DPoP(platform, keys);
    const flow = await authorize({ username: 'pf-admin', decision: 'approve' });
    const tokens = await exchange(
      flow.decided.headers.get('location') ?? '',
      flow.state,
      flow.verifier,
      DPoP,
    );
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({
      jkt: await calculateJwkThumbprint(await exportJWK(keys.publicKey)),
    });
    const shipments = new URL(`${stack.baseUrl}/shipments`);
    const create = (token: string, options: oauth.ProtectedResourceRequestOptions) =>
      oauth.protectedResourceRequest(
        token,
        'POST',
        shipments,
        new Headers({ 'content-type': 'application/json' }),
        JSON.stringify(SHIPMENT),
        { ...insecure, ...options },
      );
    expect((await create(tokens.access_token, { DPoP })).status).toBe(201);
    const asBearer = await send(stack, 'POST', '/shipments', {
      headers: bearer(tokens.access_token),
      body: SHIPMENT,
    });
    expect(asBearer.status).toBe(401);
    // The refresh token stays the platform's (bound to its credentials, RFC 9449 section 5): a
    // refresh with a proof binds the next access token, one without gets a bearer token.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      platform,
      await oauth.refreshTokenGrantRequest(as, platform, platformAuth, String(tokens.refresh_token), {
        ...insecure,
        DPoP,
      }),
    );
    expect(refreshed.token_type).toBe('dpop');
    expect((await create(refreshed.access_token, { DPoP })).status).toBe(201);
  });
});

describe('a platform revokes its refresh token (RFC 7009)', () => {
  it('ends the connection: the refresh token gets invalid_grant, the customer lists it no more', async () => {
    const flow = await authorize({ username: 'pf-admin', decision: 'approve' });
    const tokens = await exchange(flow.decided.headers.get('location') ?? '', flow.state, flow.verifier);
    const revoked = await oauth.revocationRequest(
      as,
      platform,
      platformAuth,
      String(tokens.refresh_token),
      insecure,
    );
    expect(revoked.status).toBe(200);
    const refused = await oauth.refreshTokenGrantRequest(
      as,
      platform,
      platformAuth,
      String(tokens.refresh_token),
      insecure,
    );
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });
    const listed = await send(stack, 'GET', '/customer/connections', {
      headers: bearer(await adminToken('pf-admin')),
    });
    expect(listed.json).toEqual({ connections: [] });
  });
});

describe('the authorization page refuses', () => {
  it('a user who is no administrator, and approves nothing for them', async () => {
    const flow = await authorize({ username: 'pf-clerk', decision: 'approve' });
    expect(flow.consent.status).toBe(200);
    expect(flow.consent.html).toContain('An administrator must approve');
    expect(flow.decided.status).not.toBe(303);
  });

  it('a denial, sent back as access_denied with state and iss', async () => {
    const flow = await authorize({ username: 'pf-admin', decision: 'deny' });
    expect(flow.decided.status).toBe(303);
    expect(() =>
      oauth.validateAuthResponse(
        as,
        platform,
        new URL(flow.decided.headers.get('location') ?? ''),
        flow.state,
      ),
    ).toThrow(oauth.AuthorizationResponseError);
    const params = new URL(flow.decided.headers.get('location') ?? '').searchParams;
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe(flow.state);
  });

  it('an unregistered redirect URI or an unknown client, with a page and never a redirect', async () => {
    const page = browser();
    const url = new URL(AUTHORIZE());
    for (const [client, redirect] of [
      [platform.client_id, 'https://attacker.example/cb'],
      ['pcl_00000000000000000000', REDIRECT_URI],
    ] as const) {
      url.search = new URLSearchParams({
        client_id: client,
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      const answer = await page.go(url.href);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
    }
  });

  it('a plain request without PKCE, back at the registered redirect URI with invalid_request', async () => {
    const url = new URL(AUTHORIZE());
    url.search = new URLSearchParams({
      client_id: platform.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      state: 's1',
    }).toString();
    const answer = await browser().go(url.href);
    expect(answer.status).toBe(303);
    const params = new URL(answer.headers.get('location') ?? '').searchParams;
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('s1');
    expect(params.get('iss')).toBe(as.issuer);
  });

  it('a form posted from another origin (CSRF), and a request opened in another browser', async () => {
    const flow = await authorize({ username: 'pf-admin', decision: 'deny' });
    expect(flow.decided.status).toBe(303);
    const forged = await fetch(AUTHORIZE(), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://attacker.example' },
      body: new URLSearchParams({ request: flow.request, action: 'approve' }).toString(),
    });
    expect(forged.status).toBe(403);
    const stranger = await browser().go(AUTHORIZE(), { request: flow.request, action: 'approve' });
    expect(stranger.status).not.toBe(303);
  });
});

describe('isolation', () => {
  it('refuses a customer’s API client the platform grants, and a platform the client credentials grant', async () => {
    const added = await admin(['client', 'add', CUSTOMER, '--scope', 'tracking:read']);
    const customerClient = { client_id: printedValue(added, 'client id') };
    const refused = await oauth.refreshTokenGrantRequest(
      as,
      customerClient,
      oauth.ClientSecretBasic(printedValue(added, 'secret')),
      'x.y.z',
      insecure,
    );
    expect(await refused.json()).toMatchObject({ error: 'unauthorized_client' });
    const own = await oauth.clientCredentialsGrantRequest(as, platform, platformAuth, {}, insecure);
    expect(await own.json()).toMatchObject({ error: 'unauthorized_client' });
  });
});
