/**
 * The published interface, end to end: HTTP through serverless-offline's API Gateway
 * emulation, the real authorizer in front of the real handlers, the embedded DynamoDB.
 */
import { base64url, decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { importSigningKey } from '../../lib/tokens/keys.ts';
import { generateSigningJwk } from '../../ops/keys/keyring.ts';
import { type Answer, bearer, send } from '../support/http.ts';

let stack: LocalStack;
let demo: { username: string; password: string };
const OTHER_PASSWORD = 'other-customer-password';

beforeAll(async () => {
  // These tests fail logins on purpose, more than the default limit: throttling has its own
  // end-to-end tests (throttle.test.ts).
  stack = await startLocalStack({ env: { LOGIN_FAILURE_LIMIT: '0' } });
  demo = stack.demo;
  const accounts = stackAccounts(stack);
  const hash = await hashPassword(OTHER_PASSWORD, 4);
  await accounts.createUser({ username: 'solo', passwordHash: hash, customerId: null });
  await accounts.createUser({ username: 'bob', passwordHash: hash, customerId: 'C-2002' });
  await accounts.createUser({ username: 'retired', passwordHash: hash, customerId: 'C-2002' });
  await accounts.setEnabled('retired', false);
});
afterAll(() => stack?.stop());

const login = (body: unknown, path = '/login') => send(stack, 'POST', path, { body });
const track = (parcelNumber: string, headers: Record<string, string> = {}) =>
  send(stack, 'GET', `/tracking/${parcelNumber}`, { headers });
const expectProblem = (answer: Answer, status: number) => {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  expect(answer.json).toMatchObject({ status, type: expect.stringMatching(/^urn:parcel-auth:problem:/) });
  expect(answer.text).not.toMatch(/token|at .*\.(ts|js|mjs):\d+/i);
};

describe('POST /api/v1/login', () => {
  it('200: returns token and refreshToken, not cacheable', async () => {
    const answer = await login(demo);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json).sort()).toEqual(['refreshToken', 'token']);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(decodeJwt(String(answer.json.token)).sub).toBe('demo');
  });

  it('400: a missing field, naming it', async () => {
    const answer = await login({ username: demo.username });
    expectProblem(answer, 400);
    expect(answer.json.invalidParams).toEqual([{ name: 'password', reason: 'is required' }]);
  });

  it('400: malformed JSON', async () => {
    expectProblem(await send(stack, 'POST', '/login', { raw: '{"username":' }), 400);
  });

  it('401: invalid credentials', async () => {
    expectProblem(await login({ ...demo, password: 'wrong-password' }), 401);
  });

  it('401: the username in the wrong case, with the same body as a wrong password', async () => {
    const wrongCase = await login({ ...demo, username: 'Demo' });
    const wrongPassword = await login({ ...demo, password: 'wrong-password' });
    expectProblem(wrongCase, 401);
    expect(wrongCase.text).toBe(wrongPassword.text);
  });

  it('401: one identical body for unknown user, wrong password, wrong case and disabled user', async () => {
    const answers = await Promise.all([
      login({ username: 'nobody-here', password: 'whatever-password' }),
      login({ ...demo, password: 'wrong-password' }),
      login({ ...demo, username: 'DEMO' }),
      login({ username: 'retired', password: OTHER_PASSWORD }),
      login({ username: 'nobody-here', password: 'whatever-password' }, '/login-extended'),
      login({ username: 'retired', password: OTHER_PASSWORD }, '/login-extended'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  });
});

describe('the limits the login routes publish (docs/integrators.md, "Limits")', () => {
  // This stack's: LOGIN_FAILURE_LIMIT 0 turns the username's counter off; the local stage's
  // ipFailureLimit 100 in 1h and loginRateLimit 50, no web ACL.
  const POLICY = '"address";q=100;w=3600, "route";q=50;w=1';
  // An address of its own, so what is left of it is this test's alone.
  const from = '127.0.0.35';
  const post = (body: unknown, path = '/login') => send(stack, 'POST', path, { body, from });

  it('publishes RateLimit-Policy on every answer, and what is left of the address after each login', async () => {
    const succeeded = await post(demo);
    const failed = await post({ ...demo, password: 'wrong-password' });
    const invalid = await post({ username: demo.username });
    const extended = await post({ username: 'solo', password: OTHER_PASSWORD }, '/login-extended');
    expect([succeeded, failed, invalid, extended].map((answer) => answer.status)).toEqual([
      200, 401, 400, 403,
    ]);
    for (const answer of [succeeded, failed, invalid, extended])
      expect(answer.headers.get('ratelimit-policy')).toBe(POLICY);
    // A success takes nothing of the address's quota, a failure one, whole again within two windows.
    expect(succeeded.headers.get('ratelimit')).toBe('"address";r=100;t=0');
    const reset = Number(/^"address";r=99;t=(\d+)$/.exec(failed.headers.get('ratelimit') ?? '')?.[1]);
    expect(reset).toBeGreaterThan(3600);
    expect(reset).toBeLessThanOrEqual(7200);
    expect(extended.headers.get('ratelimit')).toMatch(/^"address";r=99;t=\d+$/);
    // Nothing is counted for a body refused before the password is looked at.
    expect(invalid.headers.get('ratelimit')).toBeNull();
  });

  it('publishes on refresh the route’s rate alone', async () => {
    const { refreshToken } = (await post(demo)).json;
    const answer = await send(stack, 'POST', '/token/refresh', { body: { refreshToken }, from });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-policy')).toBe('"route";q=50;w=1');
    expect(answer.headers.get('ratelimit')).toBeNull();
  });
});

describe('POST /api/v1/login-extended', () => {
  it('200: tokens, userName, the first non-empty depot code and expireAt equal to the token exp', async () => {
    const answer = await login(demo, '/login-extended');
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json).sort()).toEqual([
      'depotCode',
      'expireAt',
      'refreshToken',
      'token',
      'userName',
    ]);
    expect(answer.json).toMatchObject({ userName: 'demo', depotCode: 'PRG01' });
    const expireAt = String(answer.json.expireAt);
    expect(expireAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(expireAt) / 1000).toBe(decodeJwt(String(answer.json.token)).exp);
    // The local stage's default access TTL is 24 hours.
    expect(Date.parse(expireAt) - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
  });

  it('200: depotCode null for a customer without any depot code', async () => {
    const answer = await login({ username: 'bob', password: OTHER_PASSWORD }, '/login-extended');
    expect(answer.status).toBe(200);
    expect(answer.json.depotCode).toBeNull();
  });

  it('400: validation error', async () => {
    expectProblem(await login({ username: '', password: 'x' }, '/login-extended'), 400);
  });

  it('401: invalid credentials', async () => {
    expectProblem(await login({ ...demo, password: 'nope-nope' }, '/login-extended'), 401);
  });

  it('403: the auto-login context is missing, and no token is issued', async () => {
    const answer = await login({ username: 'solo', password: OTHER_PASSWORD }, '/login-extended');
    expectProblem(answer, 403);
    expect(answer.json.type).toBe('urn:parcel-auth:problem:auto-login-context-missing');
  });

  it('401 before 403: a wrong password of a user without context is 401', async () => {
    expectProblem(await login({ username: 'solo', password: 'wrong-password' }, '/login-extended'), 401);
  });
});

describe('protected endpoints behind the authorizer', () => {
  let token: string;
  let refreshToken: string;
  beforeAll(async () => {
    const answer = await login(demo);
    token = String(answer.json.token);
    refreshToken = String(answer.json.refreshToken);
  });

  it('creates a shipment (201) and tracks it (200) with the access token', async () => {
    const shipment = { recipient: { name: 'Eva Dvořáková', city: 'Olomouc' }, parcels: [{ weightKg: 2.5 }] };
    const created = await send(stack, 'POST', '/shipments', { body: shipment, headers: bearer(token) });
    expect(created.status).toBe(201);
    const parcelNumber = String(created.json.parcelNumber);
    expect(created.headers.get('location')).toBe(`/api/v1/tracking/${parcelNumber}`);
    const tracked = await track(parcelNumber, bearer(token));
    expect(tracked.status).toBe(200);
    expect(tracked.json).toMatchObject({ parcelNumber, status: 'registered', shipment });
  });

  it('answers 404 to a user of another customer', async () => {
    const created = await send(stack, 'POST', '/shipments', { body: { a: 1 }, headers: bearer(token) });
    const bob = await login({ username: 'bob', password: OTHER_PASSWORD });
    expectProblem(await track(String(created.json.parcelNumber), bearer(bob.json.token)), 404);
  });

  it('accepts the bearer scheme in lower case', async () => {
    expect((await track('12345678901234', { authorization: `bearer ${token}` })).status).toBe(404);
  });

  it('401: no Authorization header', async () => {
    expect((await track('12345678901234')).status).toBe(401);
  });

  it('401: a refresh token presented as an access token', async () => {
    expect((await track('12345678901234', bearer(refreshToken))).status).toBe(401);
  });

  it('401: a tampered token', async () => {
    const [header, , signature] = token.split('.');
    const claims = { ...decodeJwt(token), customer_id: 'C-2002' };
    const tampered = `${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`;
    expect((await track('12345678901234', bearer(tampered))).status).toBe(401);
  });

  it('401: alg none', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }));
    const unsigned = `${header}.${token.split('.')[1]}.`;
    expect((await track('12345678901234', bearer(unsigned))).status).toBe(401);
  });

  it('401: a token signed by another key, claiming the service’s kid', async () => {
    const foreign = await importSigningKey(await generateSigningJwk());
    const claims = decodeJwt(token);
    const forged = await new SignJWT(claims)
      .setProtectedHeader({
        alg: 'EdDSA',
        typ: 'at+jwt',
        kid: String(JSON.parse(atob(token.split('.')[0] ?? '')).kid),
      })
      .sign(foreign.key);
    expect((await track('12345678901234', bearer(forged))).status).toBe(401);
  });

  it('401: a malformed token and another scheme', async () => {
    expect((await track('12345678901234', bearer('garbage'))).status).toBe(401);
    expect((await track('12345678901234', { authorization: `Basic ${btoa('demo:x')}` })).status).toBe(401);
  });
});
