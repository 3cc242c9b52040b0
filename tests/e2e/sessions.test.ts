/**
 * The token lifecycle over the local stack: serverless-offline's API Gateway emulation
 * with the real authorizer, the real handlers, dynalite, and the admin CLI as an operator
 * runs it.
 */
import { execFile } from 'node:child_process';
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, stackAccounts, startLocalStack } from '../../dev/local/stack.ts';
import { hashPassword } from '../../lib/auth/passwords.ts';
import { parseKeyring } from '../../lib/tokens/keys.ts';
import { bearer, send } from '../support/http.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** How long the local stack's authorizer trusts a user's state it has read (REVOCATION_CACHE_TTL). */
const REVOCATION_WINDOW_MS = 1000;
const KEY_RELOAD_MS = 1000;
const PASSWORD = 'an-e2e-password-of-some-length';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ env: { REVOCATION_CACHE_TTL: '1s', KEY_RELOAD_INTERVAL: '1s' } });
  const accounts = stackAccounts(stack);
  const passwordHash = await hashPassword(PASSWORD, 4);
  for (const username of ['carol', 'dave']) {
    await accounts.createUser({ username, passwordHash, customerId: 'DEMO-CUSTOMER' });
  }
});
afterAll(() => stack?.stop());

/** The admin CLI against this stack, as `npm run admin -- ...` would run it. */
const admin = (...args: string[]) =>
  promisify(execFile)(process.execPath, [join(ROOT, 'ops/admin.ts'), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: stack.dataDir,
      DYNAMODB_PORT: String(stack.ports.dynamodb),
      KEY_RELOAD_INTERVAL: '1s',
    },
  });

const login = async (username = stack.demo.username, password = stack.demo.password) => {
  const answer = await send(stack, 'POST', '/login', { body: { username, password } });
  expect(answer.status).toBe(200);
  return { token: String(answer.json.token), refreshToken: String(answer.json.refreshToken) };
};
const refresh = (refreshToken: string) => send(stack, 'POST', '/token/refresh', { body: { refreshToken } });
/** A protected call: 404 for a parcel nobody created means the authorizer let it through. */
const track = (token: string) => send(stack, 'GET', '/tracking/00000000000000', { headers: bearer(token) });
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** Polls `probe` until it returns `expected` or `withinMs` has passed; returns the last value. */
async function eventually<T>(probe: () => Promise<T>, expected: T, withinMs: number): Promise<T> {
  const started = Date.now();
  let value = await probe();
  while (value !== expected && Date.now() - started < withinMs) {
    await sleep(100);
    value = await probe();
  }
  return value;
}

describe('POST /api/v1/token/refresh', () => {
  it('gives a new pair whose access token works at the authorizer', async () => {
    const first = await login();
    const answer = await refresh(first.refreshToken);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(answer.json).sort()).toEqual(['expireAt', 'refreshToken', 'token']);
    expect(Date.parse(String(answer.json.expireAt)) / 1000).toBe(decodeJwt(String(answer.json.token)).exp);
    expect((await track(String(answer.json.token))).status).toBe(404);
  });

  it('revokes the session on reuse of a spent token: the newest tokens stop working too, the user’s other sessions do not', async () => {
    const first = await login();
    const other = await login();
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    const third = await refresh(String(second.json.refreshToken));
    expect(third.status).toBe(200);
    // Two generations back: reuse, however soon (the grace window covers only the previous token).
    const reuse = await refresh(first.refreshToken);
    expect(reuse.status).toBe(401);
    expect(reuse.json).toMatchObject({ type: 'urn:parcel-auth:problem:invalid-credentials' });
    expect((await refresh(String(third.json.refreshToken))).status).toBe(401);
    // The thief's access token ends with the chain, within the revocation window.
    const thief = String(second.json.token);
    expect(await eventually(async () => (await track(thief)).status, 401, REVOCATION_WINDOW_MS + 3000)).toBe(
      401,
    );
    expect((await track(first.token)).status).toBe(401);
    expect((await track(other.token)).status).toBe(404);
    expect((await refresh(other.refreshToken)).status).toBe(200);
  });

  it('answers a refresh retried after its answer was lost with the current refresh token, and the session goes on', async () => {
    const { refreshToken } = await login();
    const lost = await refresh(refreshToken);
    expect(lost.status).toBe(200);
    const retry = await refresh(refreshToken);
    expect(retry.status).toBe(200);
    expect(decodeJwt(String(retry.json.refreshToken)).jti).toBe(
      decodeJwt(String(lost.json.refreshToken)).jti,
    );
    expect((await track(String(retry.json.token))).status).toBe(404);
    expect((await refresh(String(retry.json.refreshToken))).status).toBe(200);
  });

  it('answers concurrent refreshes with the same token alike within the grace window: one rotation', async () => {
    const { refreshToken } = await login();
    const answers = await Promise.all(Array.from({ length: 4 }, () => refresh(refreshToken)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const ids = new Set(answers.map((answer) => decodeJwt(String(answer.json.refreshToken)).jti));
    expect(ids.size).toBe(1);
  });

  it('answers an access token with a failed login’s 401 and problem type, and a detail about the token', async () => {
    const { token } = await login();
    const failedLogin = await send(stack, 'POST', '/login', {
      body: { username: stack.demo.username, password: 'not-the-password' },
    });
    const answer = await refresh(token);
    expect(answer.status).toBe(401);
    const { detail, ...problem } = JSON.parse(answer.text) as Record<string, unknown>;
    const { detail: _loginDetail, ...loginProblem } = JSON.parse(failedLogin.text) as Record<string, unknown>;
    expect(problem).toEqual(loginProblem);
    expect(detail).toMatch(/refresh token/);
    expect(detail).not.toMatch(/username|password/);
  });
});

describe('POST /api/v1/logout', () => {
  it('answers 204, and a refresh after it 401; logging out again is 204 too', async () => {
    const { refreshToken } = await login();
    const answer = await send(stack, 'POST', '/logout', { body: { refreshToken } });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await refresh(refreshToken)).status).toBe(401);
    expect((await send(stack, 'POST', '/logout', { body: { refreshToken } })).status).toBe(204);
  });

  it('stops the session’s access token at the authorizer within the revocation window, and no other session’s', async () => {
    const [ended, kept] = [await login('carol', PASSWORD), await login('carol', PASSWORD)];
    expect((await track(ended.token)).status).toBe(404);
    expect(
      (await send(stack, 'POST', '/logout', { body: { refreshToken: ended.refreshToken } })).status,
    ).toBe(204);
    expect(
      await eventually(async () => (await track(ended.token)).status, 401, REVOCATION_WINDOW_MS + 2000),
    ).toBe(401);
    expect((await track(kept.token)).status).toBe(404);
    expect((await refresh(kept.refreshToken)).status).toBe(200);
  });
});

describe('revocation by the operator', () => {
  it('user disable makes an earlier access token fail at the authorizer within the window', async () => {
    const { token, refreshToken } = await login('carol', PASSWORD);
    expect((await track(token)).status).toBe(404);
    await admin('user', 'disable', 'carol');
    expect(await eventually(async () => (await track(token)).status, 401, REVOCATION_WINDOW_MS + 2000)).toBe(
      401,
    );
    expect((await refresh(refreshToken)).status).toBe(401);
  });

  it('user logout ends every session of the user and leaves new logins working', async () => {
    const [one, two] = [await login('dave', PASSWORD), await login('dave', PASSWORD)];
    await admin('user', 'logout', 'dave');
    expect((await refresh(one.refreshToken)).status).toBe(401);
    expect((await refresh(two.refreshToken)).status).toBe(401);
    expect(
      await eventually(async () => (await track(one.token)).status, 401, REVOCATION_WINDOW_MS + 2000),
    ).toBe(401);
    expect((await track((await login('dave', PASSWORD)).token)).status).toBe(404);
  });
});

/** The published key set's kids, as a verifier fetches it. */
const publishedKeys = async () => {
  // The key set lives at the root of the API, not under /api/v1.
  const response = await fetch(new URL('/.well-known/jwks.json', stack.baseUrl));
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toMatch(/^public, max-age=[01]$/);
  return ((await response.json()) as { keys: { kid: string; kty: string; crv: string; x: string }[] }).keys;
};

describe('keys', () => {
  it('publishes a key set that verifies an issued token with an independent verifier', async () => {
    const { token } = await login();
    const { kid } = decodeProtectedHeader(token);
    const jwk = (await publishedKeys()).find((key) => key.kid === kid);
    expect(jwk).toBeDefined();
    // node:crypto alone, no jose: the signature over header.payload with the published key.
    const [header, payload, signature] = token.split('.');
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk?.x ?? '' }, format: 'jwk' });
    expect(
      verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature ?? '', 'base64url')),
    ).toBe(true);
  });

  it('rotates without downtime: old tokens keep working, new tokens carry the new kid', async () => {
    const before = await login();
    const oldKid = decodeProtectedHeader(before.token).kid;
    const keysBefore = (await publishedKeys()).map((key) => key.kid);
    // keys rotate refuses within a reload interval of the previous rotation (the stack's start).
    await sleep(KEY_RELOAD_MS);
    await admin('keys', 'rotate');
    // The login functions pick the new active key up within their reload interval.
    const kidOfNewLogin = async () => decodeProtectedHeader((await login()).token).kid;
    const newKid = await eventually(kidOfNewLogin, keysBefore[1], KEY_RELOAD_MS + 3000);
    expect(newKid).not.toBe(oldKid);
    const after = await login();
    // The new active key was published before the rotation, as the next key.
    expect(keysBefore).toContain(newKid);
    expect((await publishedKeys()).map((key) => key.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect((await track(before.token)).status).toBe(404);
    expect((await track(after.token)).status).toBe(404);
    expect((await refresh(before.refreshToken)).status).toBe(200);
  });
});

describe('a signing key leaked', () => {
  it('keys revoke: a token forged with the leaked keyring passes before, and is refused within the reload interval after', async () => {
    // The attacker holds the keyring file: they sign an access token for dave, acting for a
    // customer of their choosing, and hold a refresh token of a real session.
    const leaked = parseKeyring(await readFile(join(stack.dataDir, 'keys', 'signing-keyring.json'), 'utf8'));
    const genuine = decodeJwt((await login()).token);
    const forge = async () =>
      new SignJWT({ ...genuine, sub: 'dave', customer_id: 'ANY-CUSTOMER', jti: randomUUID() })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: leaked.active.kid })
        .sign(await importJWK(leaked.active, 'EdDSA'));
    const session = await login();
    expect((await track(await forge())).status).toBe(404);

    const { stdout } = await admin('keys', 'revoke', '--', leaked.active.kid);
    const revokedAt = Date.now();

    expect(stdout).toContain(`revoked ${leaked.active.kid}`);
    expect(stdout).toContain(`revoked ${leaked.next.kid}`);
    // Bound: KEY_RELOAD_INTERVAL (1 s) plus the authorizer's cache (0 on the local stage).
    expect(await eventually(async () => (await track(await forge())).status, 401, KEY_RELOAD_MS + 3000)).toBe(
      401,
    );
    // Each function reloads on its own: refresh has by a reload interval after the command.
    await sleep(Math.max(0, revokedAt + KEY_RELOAD_MS + 500 - Date.now()));
    expect((await refresh(session.refreshToken)).status).toBe(401);
    // Logins sign with the new active key once they reload, and the authorizer accepts it.
    const freshLogin = async () => {
      const { token } = await login();
      const fresh = !([leaked.active.kid, leaked.next.kid] as unknown[]).includes(
        decodeProtectedHeader(token).kid,
      );
      return fresh && (await track(token)).status === 404;
    };
    expect(await eventually(freshLogin, true, KEY_RELOAD_MS + 3000)).toBe(true);
    const published = (await publishedKeys()).map((key) => key.kid);
    expect(published).not.toContain(leaked.active.kid);
    expect(published).not.toContain(leaked.next.kid);
  });
});
