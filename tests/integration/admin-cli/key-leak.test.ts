/**
 * A keyring leaked before a routine rotation (docs/deploying.md "A signing key leaked"): the
 * admin CLI on real key files, and the authorizer as a function wires it (lib/wiring/authorizer.ts
 * loading the key set file, the real verifier, the revocation check on the embedded DynamoDB).
 *
 * The authorizer reloads the key set every KEY_RELOAD_INTERVAL (1 s here, 5 min on prod) and
 * has no decision cache in this test (API Gateway's `authorizerCacheTtl`, 300 s on prod): so
 * "refused 1 s after the command" here is "refused within keyReloadInterval +
 * authorizerCacheTtl" on a stage.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { importJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { stageEnv } from '../../../dev/local/handler-env.ts';

import { readAuthorizerConfig } from '../../../lib/config.ts';
import { tableNames } from '../../../lib/stage.ts';
import { epochSeconds } from '../../../lib/time.ts';
import { ACCESS_TOKEN_TYPE } from '../../../lib/tokens/claims.ts';
import { type Keyring, type PrivateJwk, parseJwks, parseKeyring } from '../../../lib/tokens/keys.ts';
import { authorizerDeps } from '../../../lib/wiring/authorizer.ts';
import { localKeyLocation, revokeAllKeys } from '../../../ops/admin/keys.ts';
import { generateKeyring, publishedKeys } from '../../../ops/keys/keyring.ts';
import { authorizerEvent } from '../../fixtures/events.ts';
import { lines, unique, useAdminCli } from '../../support/admin-cli.ts';
import { authorizeEvent } from '../../support/authorizer.ts';

const cli = useAdminCli();
const { adminOk } = cli;

const RELOAD_MS = 1000;
const PASSWORD = 'a-long-test-password';

/** A DATA_DIR whose keyring was made an hour ago (a rotation now is not refused); removed after `use`. */
async function withKeys(use: (dir: string, files: { keyring: string; jwks: string }) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-key-leak-'));
  const files = { keyring: join(dir, 'keys', 'signing-keyring.json'), jwks: join(dir, 'keys', 'jwks.json') };
  try {
    const keyring = await generateKeyring(new Date(Date.now() - 3_600_000));
    await mkdir(join(dir, 'keys'), { recursive: true, mode: 0o700 });
    await writeFile(files.jwks, JSON.stringify(publishedKeys(keyring)), { mode: 0o644 });
    await writeFile(files.keyring, JSON.stringify(keyring), { mode: 0o600 });
    await use(dir, files);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A user the forged tokens speak for: `user add` revokes every token issued before the next second. */
async function newUser(username: string) {
  await adminOk(['user', 'add', username], { password: PASSWORD });
  await sleep(1000);
}

/** The admin CLI's env for the local stage's keys in `dir`, with the authorizer's reload interval. */
const keysEnv = (dir: string) => ({ env: { DATA_DIR: dir, KEY_RELOAD_INTERVAL: `${RELOAD_MS / 1000}s` } });

/** The authorizer of the local stage as a fresh container wires it, reading the key set at `jwks`. */
async function authorizer(jwks: string) {
  const config = readAuthorizerConfig({
    ...stageEnv('local'),
    AWS_REGION: 'local',
    DYNAMODB_ENDPOINT: cli.endpoint,
    ACCOUNTS_TABLE: tableNames('local').accounts,
    VERIFICATION_KEYS: `file:${jwks}`,
    KEY_RELOAD_INTERVAL: `${RELOAD_MS / 1000}s`,
    REVOCATION_CACHE_TTL: '0s',
  });
  const deps = await authorizerDeps(config);
  /** Whether the authorizer allows `token`: true, or the error it throws (`Unauthorized`). */
  const allows = (token: string) =>
    authorizeEvent(deps, authorizerEvent(`Bearer ${token}`)).then(
      () => true,
      (error: Error) => error.message,
    );
  return { config, allows };
}

/** An access token for `username` signed with a private JWK from the copy, issued now. */
async function forge(jwk: PrivateJwk, username: string, tokens: { issuer: string; audience: string }) {
  const now = epochSeconds(new Date());
  return new SignJWT({ customer_id: 'ANY-CUSTOMER' })
    .setProtectedHeader({ alg: 'EdDSA', typ: ACCESS_TOKEN_TYPE, kid: jwk.kid })
    .setIssuer(tokens.issuer)
    .setAudience(tokens.audience)
    .setSubject(username)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(randomUUID())
    .sign(await importJWK(jwk, 'EdDSA'));
}

/** The kid `keys list` shows in `role` (active, next). */
const kidListed = (stdout: string, role: string) =>
  lines(stdout)
    .find((line) => line.split(/ +/)[1] === role)
    ?.split(' ')[0];

describe('a keyring leaked before a routine rotation', () => {
  it('keys revoke of the kid keys list shows as active ends both copied keys: forged tokens are refused once the authorizer reloads', () =>
    withKeys(async (dir, files) => {
      const username = unique('leak-victim');
      await newUser(username);
      const copy: Keyring = parseKeyring(await readFile(files.keyring, 'utf8'));
      await adminOk(['keys', 'rotate'], keysEnv(dir));
      const { config, allows } = await authorizer(files.jwks);
      const forged = () =>
        Promise.all([copy.active, copy.next].map((jwk) => forge(jwk, username, config.tokens)));
      // Before the revocation, a forged token of the copy's next key (now active) passes.
      expect(await allows((await forged())[1] ?? '')).toBe(true);

      const leakedKid = kidListed((await adminOk(['keys', 'list'], keysEnv(dir))).stdout, 'active');
      expect(leakedKid).toBe(copy.next.kid);
      const revoked = await adminOk(['keys', 'revoke', '--', leakedKid ?? ''], keysEnv(dir));
      await sleep(RELOAD_MS + 100);

      for (const token of await forged()) expect(await allows(token)).toBe('Unauthorized');
      for (const kid of [copy.active.kid, copy.next.kid]) expect(revoked.stdout).toContain(`revoked ${kid}`);
      const after = parseKeyring(await readFile(files.keyring, 'utf8'));
      expect(await allows(await forge(after.active, username, config.tokens))).toBe(true);
      const listed = (await adminOk(['keys', 'list'], keysEnv(dir))).stdout;
      expect(listed).not.toContain(copy.active.kid);
      expect(listed).not.toContain(copy.next.kid);
    }));

  it('a rotation alone bounds the copy’s retired key: its published signed_until is the rotation plus keyReloadInterval', () =>
    withKeys(async (dir, files) => {
      const copy = parseKeyring(await readFile(files.keyring, 'utf8'));
      const before = epochSeconds(new Date());

      await adminOk(['keys', 'rotate'], keysEnv(dir));

      const after = epochSeconds(new Date());
      const retired = parseJwks(await readFile(files.jwks, 'utf8')).keys.find(
        ({ kid }) => kid === copy.active.kid,
      );
      expect(retired?.signed_until).toBeGreaterThanOrEqual(before + RELOAD_MS / 1000);
      expect(retired?.signed_until).toBeLessThanOrEqual(after + RELOAD_MS / 1000);
    }));

  it('revoking every key, for a leak of unknown date, refuses tokens forged with any key the stage ever had', () =>
    withKeys(async (dir, files) => {
      const username = unique('leak-victim');
      await newUser(username);
      const copy = parseKeyring(await readFile(files.keyring, 'utf8'));
      await adminOk(['keys', 'rotate'], keysEnv(dir));
      await adminOk(['keys', 'rotate', '--force'], keysEnv(dir));
      const later = parseKeyring(await readFile(files.keyring, 'utf8'));
      const { config, allows } = await authorizer(files.jwks);
      const leaked = [copy.active, copy.next, later.active, later.next];

      const revoked = await revokeAllKeys(
        localKeyLocation({ keyringFile: files.keyring, jwksFile: files.jwks }),
        new Date(),
      );
      await sleep(RELOAD_MS + 100);

      expect(revoked.replaced).toBe(true);
      for (const jwk of leaked) {
        expect(revoked.revoked).toContain(jwk.kid);
        expect(await allows(await forge(jwk, username, config.tokens))).toBe('Unauthorized');
      }
      const after = parseKeyring(await readFile(files.keyring, 'utf8'));
      expect(after.retired).toEqual([]);
      expect(after.counterSecret).toBe(copy.counterSecret);
      expect(parseJwks(await readFile(files.jwks, 'utf8')).keys.map(({ kid }) => kid)).toEqual([
        after.active.kid,
        after.next.kid,
      ]);
      expect(await allows(await forge(after.active, username, config.tokens))).toBe(true);
    }));
});
