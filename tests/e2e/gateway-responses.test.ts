/**
 * The local stack answers API Gateway's own errors as AWS does, with the gateway responses of
 * infra/gateway-responses.yml (dev/local/gateway.ts in front of serverless-offline): the
 * real authorizer's refusals, a token without the route's scope, a path with no route. The
 * failures the stack cannot be made to give: tests/integration/gateway-front.test.ts.
 */
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../dev/local/stack.ts';
import { type StatedAnswer, statedGatewayResponse } from '../support/gateway-responses.ts';
import { type Answer, bearer, send } from '../support/http.ts';
import { stackAdmin } from '../support/stack-admin.ts';

const PARCEL = '12345678901234';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(() => stack?.stop());

/** `npm run admin -- …` against the stack, as an operator runs it: its stdout. */
const admin = (args: readonly string[]) => stackAdmin(stack, args);

/** Exactly the stated status and body, and every header it states. */
function expectGatewayAnswer(answer: Pick<Answer, 'status' | 'headers' | 'text'>, stated: StatedAnswer) {
  expect(answer.status).toBe(stated.status);
  expect(answer.text).toBe(stated.body);
  for (const [name, value] of Object.entries(stated.headers))
    expect(answer.headers.get(name), name).toBe(value);
}

const UNAUTHORIZED = statedGatewayResponse('UNAUTHORIZED', 401, 'Unauthorized');

const INVALID_TOKEN =
  'Bearer error="invalid_token", error_description="The access token is missing, invalid, expired or revoked"';

describe('the authorizer’s refusal: UNAUTHORIZED, 401 with RFC 6750’s invalid_token challenge', () => {
  it('answers an invalid token invalid_token, with the same description whatever is wrong with it', async () => {
    for (const answer of [
      await send(stack, 'GET', `/tracking/${PARCEL}`, { headers: bearer('garbage') }),
      await send(stack, 'POST', '/shipments', { body: {}, headers: bearer('eyJhbGciOiJub25lIn0.e30.') }),
    ]) {
      expectGatewayAnswer(answer, UNAUTHORIZED);
      expect(answer.headers.get('www-authenticate')).toBe(INVALID_TOKEN);
    }
  });

  it('answers a request without a token the same: API Gateway gives both one response (docs/clients.md, "Challenges")', async () => {
    const answer = await send(stack, 'GET', `/tracking/${PARCEL}`);
    expectGatewayAnswer(answer, UNAUTHORIZED);
    expect(answer.headers.get('www-authenticate')).toBe(INVALID_TOKEN);
  });
});

describe('a token without the route’s scope: the function’s 403 insufficient_scope, naming the scope', () => {
  it('answers a tracking:read client creating a shipment', async () => {
    const added = await admin(['client', 'add', 'C-1', '--scope', 'tracking:read']);
    const clientId = /^client id: +(\S+)$/m.exec(added)?.[1];
    const secret = /^secret: +(\S+)$/m.exec(added)?.[1];
    expect(clientId && secret, added).toBeTruthy();
    const granted = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(granted.status).toBe(200);
    const { access_token: token } = v.parse(v.object({ access_token: v.string() }), await granted.json());

    const answer = await send(stack, 'POST', '/shipments', {
      body: { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1 }] },
      headers: bearer(token),
    });

    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="shipments:write"',
    );
    expect(JSON.parse(answer.text)).toMatchObject({ type: 'urn:parcel-auth:problem:insufficient-scope' });
    // The scope it has still calls its route.
    expect((await send(stack, 'GET', `/tracking/${PARCEL}`, { headers: bearer(token) })).status).toBe(404);
  });
});

describe('a path or method without a route: 404, MISSING_AUTHENTICATION_TOKEN made a not-found problem', () => {
  const stated = statedGatewayResponse('MISSING_AUTHENTICATION_TOKEN', 403, 'Missing Authentication Token');
  it.each([
    ['GET', '/api/v1/no-such-route'],
    ['GET', '/api/v1/login'],
    ['DELETE', '/api/v1/tracking/12345678901234'],
    // OpenID discovery, which oauth4webapi tries first: a 404 makes it fall back to RFC 8414.
    ['GET', '/.well-known/openid-configuration'],
  ])('answers %s %s', async (method, path) => {
    const response = await fetch(`http://127.0.0.1:${stack.ports.http}${path}`, { method });
    expect(response.status).toBe(404);
    expectGatewayAnswer(
      { status: response.status, headers: response.headers, text: await response.text() },
      stated,
    );
  });
});

describe('another method than POST on the token endpoint: 405, Allow: POST, RFC 6749’s error JSON', () => {
  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers %s', async (method) => {
    const response = await fetch(`${stack.baseUrl}/oauth/token`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'This endpoint accepts POST only.',
    });
  });
});

describe('the functions’ own answers pass unchanged', () => {
  it('keeps the token endpoint’s RFC 6749 invalid_client, JSON with its Basic challenge', async () => {
    const response = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa('no-such-client:secret')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('keeps a login’s invalid-credentials problem', async () => {
    const answer = await send(stack, 'POST', '/login', {
      body: { username: 'demo', password: 'wrong-password' },
    });
    expect(answer.status).toBe(401);
    expect(answer.json.type).toBe('urn:parcel-auth:problem:invalid-credentials');
    expect(answer.headers.get('www-authenticate')).toBeNull();
  });
});
