/**
 * The admin CLI's signing-key commands: init, list and rotate, on the local stage's key files
 * and on a deployed stage's SSM parameters (an in-memory parameter store here).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyParameterNames } from '../../../lib/stage.ts';
import { epochSeconds } from '../../../lib/time.ts';
import { createTokenIssuer } from '../../../lib/tokens/issue.ts';
import {
  importSigningKey,
  importVerificationKeys,
  type Jwks,
  type Keyring,
  parseJwks,
  parseKeyring,
} from '../../../lib/tokens/keys.ts';
import { createAccessTokenVerifier } from '../../../lib/tokens/verify.ts';
import {
  generateKeyring,
  generateSigningJwk,
  publishedKeys,
  toPublicJwk,
} from '../../../ops/keys/keyring.ts';
import { lines, OTHER_STAGE, useAdminCli } from '../../support/admin-cli.ts';
import { TOKEN_SETTINGS } from '../../support/keys.ts';
import { memoryParameters } from '../../support/parameters.ts';

const { admin, adminOk } = useAdminCli();

/** A stage's own KMS key, as the stage parameter kmsKeyArn names it. */
const KMS_KEY = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** The keys of a stage as they stand, parsed. */
const storedKeys = (stored: Map<string, { value: string }>, stage: string) => {
  const names = keyParameterNames(stage);
  return {
    keyring: parseKeyring(stored.get(names.signingKeyring)?.value ?? ''),
    jwks: parseJwks(stored.get(names.jwks)?.value ?? ''),
  };
};

/** A fresh DATA_DIR for a test that changes key files; removed after `use`. */
async function withDataDir(use: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-auth-admin-keys-'));
  try {
    await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const keyFiles = (dir: string) => ({
  keyring: join(dir, 'keys', 'signing-keyring.json'),
  jwks: join(dir, 'keys', 'jwks.json'),
});

/** Writes local key files as `npm start` would have, with whatever keyring a test needs. */
async function writeLocalKeys(dir: string, keyring: Keyring, jwks: Jwks = publishedKeys(keyring)) {
  await mkdir(join(dir, 'keys'), { recursive: true, mode: 0o700 });
  await writeFile(keyFiles(dir).jwks, JSON.stringify(jwks), { mode: 0o644 });
  await writeFile(keyFiles(dir).keyring, JSON.stringify(keyring), { mode: 0o600 });
}

async function readLocalKeys(dir: string) {
  return {
    keyring: parseKeyring(await readFile(keyFiles(dir).keyring, 'utf8')),
    jwks: parseJwks(await readFile(keyFiles(dir).jwks, 'utf8')),
  };
}

const kids = (jwks: Jwks) => jwks.keys.map(({ kid }) => kid);

/** A keyring last rotated `hoursAgo` hours ago: a rotation now is not refused. */
const keyringFrom = (hoursAgo: number) => generateKeyring(new Date(Date.now() - hoursAgo * 3_600_000));

/** An access token signed with `keyring`'s active key, as a login function would sign it. */
async function signWith(keyring: Keyring) {
  const signingKey = await importSigningKey(keyring.active);
  const issuer = createTokenIssuer({ signingKey: async () => signingKey, settings: TOKEN_SETTINGS });
  const now = epochSeconds(new Date());
  const { accessToken } = await issuer.issue({
    subject: { username: 'rotation-user', customerId: null },
    sessionId: randomUUID(),
    refreshJti: randomUUID(),
    authTime: now,
    method: 'password',
    issuedAt: now,
    notAfter: now + TOKEN_SETTINGS.refreshTtlSeconds,
  });
  return accessToken;
}

/** The username of a token the authorizer's verifier accepts with `jwks`. */
async function verifyWith(jwks: Jwks, token: string) {
  const keys = await importVerificationKeys(jwks);
  const verifier = createAccessTokenVerifier({ keys: async () => keys, settings: TOKEN_SETTINGS });
  const claims = await verifier.verify(token);
  return claims.kind === 'user' ? claims.username : claims.clientId;
}

/** The local stage's env for key commands: a long reload interval, so the refusal is testable. */
const keysEnv = (dir: string) => ({ DATA_DIR: dir, KEY_RELOAD_INTERVAL: '10m' });

/**
 * A deployed stage's keys half-way through a rotation: the rotation published the new key
 * set, then its write of the keyring failed. `token` was signed before, `stored`/`store`
 * hold the keys as they were, `failing` the keys after the failed rotation.
 */
async function halfRotatedStage() {
  const names = keyParameterNames(OTHER_STAGE);
  const before = await keyringFrom(1);
  const { stored, writes, store } = memoryParameters();
  await store.put(names.jwks, JSON.stringify(publishedKeys(before)), { secure: false, overwrite: false });
  await store.put(names.signingKeyring, JSON.stringify(before), { secure: true, overwrite: false });
  writes.length = 0;
  const token = await signWith(before);
  const failing = memoryParameters({ failWrite: names.signingKeyring });
  for (const [name, value] of stored) failing.stored.set(name, value);
  const halfWay = await admin(['keys', 'rotate', '--stage', OTHER_STAGE], { parameters: failing.store });
  return { names, before, token, stored, writes, store, failing, halfWay };
}

describe('admin CLI: keys', () => {
  it('keys init creates the local keyring, the private key file private, printing only kids', () =>
    withDataDir(async (dir) => {
      const first = await admin(['keys', 'init'], { env: { DATA_DIR: dir } });

      expect(first).toMatchObject({ code: 0, stderr: [] });
      const { keyring, jwks } = await readLocalKeys(dir);
      expect(first.stdout).toBe(
        `created the local signing keyring in ${join(dir, 'keys')}; ` +
          `active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`,
      );
      expect((await stat(keyFiles(dir).keyring)).mode & 0o077).toBe(0);
      expect(kids(jwks)).toEqual([keyring.active.kid, keyring.next.kid]);
      expect(first.stdout).not.toContain(keyring.active.d);
      expect(first.stdout).not.toContain(keyring.next.d);
    }));

  it('keys init run again reports the local keyring present and leaves it', () =>
    withDataDir(async (dir) => {
      await adminOk(['keys', 'init'], { env: { DATA_DIR: dir } });
      const { keyring } = await readLocalKeys(dir);

      const second = await admin(['keys', 'init'], { env: { DATA_DIR: dir } });

      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/^the local signing keyring is already present in /);
      expect(second.stdout).toContain(`active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`);
      expect((await readLocalKeys(dir)).keyring).toEqual(keyring);
    }));

  it('keys init refuses --force without --stage with exit 2 and leaves the local keyring', () =>
    withDataDir(async (dir) => {
      await adminOk(['keys', 'init'], { env: { DATA_DIR: dir } });
      const { keyring } = await readLocalKeys(dir);

      const forced = await admin(['keys', 'init', '--force'], { env: { DATA_DIR: dir } });

      expect(forced.code).toBe(2);
      expect(forced.stderr).toEqual([expect.stringMatching(/^error: --force applies only with --stage/)]);
      expect((await readLocalKeys(dir)).keyring).toEqual(keyring);
    }));

  it('keys init --stage publishes the key set before it writes the keyring, a secure parameter', async () => {
    const { stored, writes, store } = memoryParameters();
    const names = keyParameterNames(OTHER_STAGE);

    const first = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });

    expect(first.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    expect(stored.get(names.signingKeyring)?.secure).toBe(true);
    expect(stored.get(names.jwks)?.secure).toBe(false);
    const { keyring, jwks } = storedKeys(stored, OTHER_STAGE);
    expect(kids(jwks)).toEqual([keyring.active.kid, keyring.next.kid]);
    expect(stored.get(names.jwks)?.value).not.toContain('"d"');
    expect(first.stdout).toBe(
      `created the signing keyring of stage ${OTHER_STAGE} in SSM (eu-central-1); ` +
        `active kid ${keyring.active.kid}, next kid ${keyring.next.kid}`,
    );
  });

  it('keys init --stage encrypts the keyring, and only the keyring, with the stage’s own KMS key', async () => {
    const { stored, store } = memoryParameters();
    const names = keyParameterNames(OTHER_STAGE);

    const run = await admin(['keys', 'init', '--stage', OTHER_STAGE], {
      parameters: store,
      stageParams: { kmsKeyArn: KMS_KEY },
    });

    expect(run.code).toBe(0);
    expect(stored.get(names.signingKeyring)).toMatchObject({ secure: true, kmsKeyId: KMS_KEY });
    expect(stored.get(names.jwks)).toMatchObject({ secure: false, kmsKeyId: undefined });
    expect(run.stdout).toMatch(
      new RegExp(
        `^created the signing keyring of stage ${OTHER_STAGE} in SSM \\(eu-central-1, KMS key ${KMS_KEY}\\);`,
      ),
    );
  });

  it('keys init --stage leaves the keyring to SSM’s default key when the stage names none', async () => {
    const { stored, store } = memoryParameters();

    await adminOk(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });

    expect(stored.get(keyParameterNames(OTHER_STAGE).signingKeyring)).toMatchObject({
      secure: true,
      kmsKeyId: undefined,
    });
  });

  it('keys rotate --stage writes the keyring with the stage’s KMS key, also one written before the key was set', async () => {
    const names = keyParameterNames(OTHER_STAGE);
    const { stored, store } = memoryParameters();
    const before = await keyringFrom(1);
    await store.put(names.jwks, JSON.stringify(publishedKeys(before)), { secure: false, overwrite: false });
    await store.put(names.signingKeyring, JSON.stringify(before), { secure: true, overwrite: false });

    await adminOk(['keys', 'rotate', '--stage', OTHER_STAGE], {
      parameters: store,
      stageParams: { kmsKeyArn: KMS_KEY },
    });

    expect(stored.get(names.signingKeyring)).toMatchObject({ secure: true, kmsKeyId: KMS_KEY });
    expect(storedKeys(stored, OTHER_STAGE).keyring.active.kid).toBe(before.next.kid);
    expect(stored.get(names.jwks)).toMatchObject({ secure: false, kmsKeyId: undefined });
  });

  it('keys init --stage refuses to replace a stage’s keys without --force, with exit 1', async () => {
    const { stored, store } = memoryParameters();
    await adminOk(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    const { keyring } = storedKeys(stored, OTHER_STAGE);

    const refused = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });

    expect(refused.code).toBe(1);
    expect(refused.stderr).toEqual([
      expect.stringMatching(/has keys already.*keys rotate.*--force replaces/),
    ]);
    expect(storedKeys(stored, OTHER_STAGE).keyring).toEqual(keyring);
  });

  it('keys init --stage finishes an init cut short after the key set, without --force', async () => {
    const names = keyParameterNames(OTHER_STAGE);
    const cut = memoryParameters({ failWrite: names.signingKeyring });
    expect((await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: cut.store })).code).toBe(1);
    const { stored, store } = memoryParameters();
    for (const [name, value] of cut.stored) stored.set(name, value);

    const finished = await admin(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });

    expect(finished.code).toBe(0);
    expect(finished.stdout).toMatch(/^created the signing keyring/);
    const { keyring, jwks } = storedKeys(stored, OTHER_STAGE);
    expect(jwks.keys.map(({ kid }) => kid)).toEqual(
      expect.arrayContaining([keyring.active.kid, keyring.next.kid]),
    );
  });

  it('keys init --stage --force replaces a stage’s keys with new ones, all published', async () => {
    const { stored, store } = memoryParameters();
    await adminOk(['keys', 'init', '--stage', OTHER_STAGE], { parameters: store });
    const { keyring } = storedKeys(stored, OTHER_STAGE);

    const forced = await admin(['keys', 'init', '--stage', OTHER_STAGE, '--force'], { parameters: store });

    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^replaced the signing keyring/);
    const replaced = storedKeys(stored, OTHER_STAGE);
    expect(replaced.keyring.active.kid).not.toBe(keyring.active.kid);
    expect(kids(replaced.jwks)).toEqual([replaced.keyring.active.kid, replaced.keyring.next.kid]);
  });

  it('keys list prints each key with its state, a retired key’s successor, and whether and until when it is published', () =>
    withDataDir(async (dir) => {
      const [older, retired] = await Promise.all([generateSigningJwk(), generateSigningJwk()]);
      const base = await keyringFrom(2);
      const keyring: Keyring = {
        ...base,
        retired: [
          { kid: retired.kid, retiredAt: '2025-06-01T08:00:00.000Z', successor: base.active.kid },
          { kid: older.kid, retiredAt: '2025-05-01T08:00:00.000Z' },
        ],
      };
      const bounded = { ...toPublicJwk(retired), signed_until: Date.parse('2025-06-01T08:05:00Z') / 1000 };
      await writeLocalKeys(dir, keyring, publishedKeys(keyring, { keys: [bounded, toPublicJwk(older)] }));

      const listed = await admin(['keys', 'list'], { env: { DATA_DIR: dir } });

      expect(listed).toMatchObject({ code: 0, stderr: [] });
      // States are padded to the longest, here the retired key's.
      const retiredState = `retired since 2025-06-01T08:00:00.000Z, succeeded by ${base.active.kid}`;
      const pad = (state: string) => state.padEnd(retiredState.length);
      expect(lines(listed.stdout)).toEqual([
        `${keyring.active.kid}  ${pad(`active since ${keyring.rotatedAt}`)}  published`,
        `${keyring.next.kid}  ${pad('next')}  published`,
        `${retired.kid}  ${retiredState}  published, signed until 2025-06-01T08:05:00.000Z`,
        `${older.kid}  ${pad('retired since 2025-05-01T08:00:00.000Z, succeeded by (not recorded)')}  published`,
      ]);
      expect(listed.stdout).not.toContain(keyring.active.d);
    }));

  it('keys list refuses --force with exit 2', () =>
    withDataDir(async (dir) => {
      await writeLocalKeys(dir, await keyringFrom(2));

      const run = await admin(['keys', 'list', '--force'], { env: { DATA_DIR: dir } });

      expect(run.code).toBe(2);
    }));

  it('keys list fails with exit 1 when a key of the keyring is not published', () =>
    withDataDir(async (dir) => {
      const keyring = await keyringFrom(2);
      await writeLocalKeys(dir, keyring, { keys: [toPublicJwk(keyring.active)] });

      const listed = await admin(['keys', 'list'], { env: { DATA_DIR: dir } });

      expect(listed.code).toBe(1);
      expect(lines(listed.stdout)[1]).toMatch(new RegExp(`^${keyring.next.kid} +next +NOT PUBLISHED$`));
      expect(listed.stderr).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: the key set .*jwks.json lacks 1 key\\(s\\) of the keyring \\(${keyring.next.kid} next\\)`,
          ),
        ),
      ]);
    }));

  it('keys rotate makes the next key active and keeps the old active key published, so its tokens still verify', () =>
    withDataDir(async (dir) => {
      const before = await keyringFrom(1);
      await writeLocalKeys(dir, before);
      const token = await signWith(before);

      const rotated = await admin(['keys', 'rotate'], { env: keysEnv(dir) });

      expect(rotated).toMatchObject({ code: 0, stderr: [] });
      const after = await readLocalKeys(dir);
      expect(after.keyring.active).toEqual(before.next);
      expect([before.active.kid, before.next.kid]).not.toContain(after.keyring.next.kid);
      expect(after.keyring.retired).toEqual([
        { kid: before.active.kid, retiredAt: expect.any(String), successor: before.next.kid },
      ]);
      expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid, before.active.kid]);
      // Containers sign with it until they reload: for keyReloadInterval (10m) after the rotation.
      expect(after.jwks.keys[2]?.signed_until).toBe(
        epochSeconds(new Date(after.keyring.retired[0]?.retiredAt ?? '')) + 600,
      );
      expect((await stat(keyFiles(dir).keyring)).mode & 0o077).toBe(0);
      expect(await verifyWith(after.jwks, token)).toBe('rotation-user');
      expect(await verifyWith(after.jwks, await signWith(after.keyring))).toBe('rotation-user');
      expect(lines(rotated.stdout)).toEqual([
        `rotated the signing keys of stage local in ${join(dir, 'keys')}; the functions load them within 10m`,
        `active  ${before.next.kid} (was next)`,
        `next    ${after.keyring.next.kid} (new: published now, signs after the next rotation)`,
        expect.stringMatching(
          new RegExp(
            `^retired ${before.active.kid} \\(was active: published until a rotation after \\S+Z\\)$`,
          ),
        ),
        'dropped none',
      ]);
      for (const jwk of [before.active, before.next, after.keyring.next])
        expect(rotated.stdout).not.toContain(jwk.d);
    }));

  it('keys rotate refuses a second rotation within keyReloadInterval with exit 1 and changes nothing', () =>
    withDataDir(async (dir) => {
      await writeLocalKeys(dir, await keyringFrom(1));
      await adminOk(['keys', 'rotate'], { env: keysEnv(dir) });
      const once = await readLocalKeys(dir);

      const refused = await admin(['keys', 'rotate'], { env: keysEnv(dir) });

      expect(refused.code).toBe(1);
      expect(refused.stderr).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: the keys of stage local were rotated at ${once.keyring.rotatedAt}, less than ` +
              `keyReloadInterval \\(10m\\) ago: .*\\(${once.keyring.next.kid}\\); wait until \\S+Z, or add --force`,
          ),
        ),
      ]);
      expect(await readLocalKeys(dir)).toEqual(once);
    }));

  it('keys rotate --force rotates again within keyReloadInterval, keeping every retired key published', () =>
    withDataDir(async (dir) => {
      const initial = await keyringFrom(1);
      await writeLocalKeys(dir, initial);
      await adminOk(['keys', 'rotate'], { env: keysEnv(dir) });
      const once = await readLocalKeys(dir);

      const forced = await admin(['keys', 'rotate', '--force'], { env: keysEnv(dir) });

      expect(forced.code).toBe(0);
      const twice = await readLocalKeys(dir);
      expect(twice.keyring.active).toEqual(once.keyring.next);
      expect(twice.keyring.retired.map(({ kid }) => kid)).toEqual([initial.next.kid, initial.active.kid]);
      expect(kids(twice.jwks)).toEqual([
        twice.keyring.active.kid,
        twice.keyring.next.kid,
        initial.next.kid,
        initial.active.kid,
      ]);
    }));

  it('keys rotate drops retired keys older than the token lifetimes plus the reload interval', () =>
    withDataDir(async (dir) => {
      const [expired, recent] = await Promise.all([generateSigningJwk(), generateSigningJwk()]);
      const recentlyRetired = new Date(Date.now() - 86_400_000).toISOString();
      const keyring: Keyring = {
        ...(await keyringFrom(1)),
        retired: [
          { kid: recent.kid, retiredAt: recentlyRetired },
          { kid: expired.kid, retiredAt: '2020-01-01T00:00:00.000Z' },
        ],
      };
      await writeLocalKeys(
        dir,
        keyring,
        publishedKeys(keyring, { keys: [toPublicJwk(recent), toPublicJwk(expired)] }),
      );

      const rotated = await admin(['keys', 'rotate'], { env: keysEnv(dir) });

      expect(rotated.code).toBe(0);
      expect(lines(rotated.stdout).at(-1)).toBe(`dropped ${expired.kid} (retired 2020-01-01T00:00:00.000Z)`);
      const after = await readLocalKeys(dir);
      expect(after.keyring.retired.map(({ kid }) => kid)).toEqual([keyring.active.kid, recent.kid]);
      expect(kids(after.jwks)).toEqual([
        keyring.next.kid,
        after.keyring.next.kid,
        keyring.active.kid,
        recent.kid,
      ]);
    }));

  it('keys rotate --stage whose keyring write fails has published the new key set first, so every token still verifies', async () => {
    const { names, before, token, failing, halfWay } = await halfRotatedStage();

    expect(halfWay.code).toBe(1);
    expect(halfWay.stderr).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error: published the new key set but could not write the keyring ${names.signingKeyring} .*AccessDenied.*` +
            `every token verifies, but tokens the active key signs after \\S+Z will not: ` +
            `run keys rotate --stage ${OTHER_STAGE} again to finish$`,
        ),
      ),
    ]);
    const half = storedKeys(failing.stored, OTHER_STAGE);
    expect(half.keyring).toEqual(before);
    expect(await verifyWith(half.jwks, token)).toBe('rotation-user');
    expect(kids(half.jwks)).toEqual(expect.arrayContaining([before.active.kid, before.next.kid]));
  });

  it('keys list --stage after a failed keyring write lists the new key as published, not in the keyring', async () => {
    const { failing } = await halfRotatedStage();

    const listed = await admin(['keys', 'list', '--stage', OTHER_STAGE], { parameters: failing.store });

    expect(listed.code).toBe(0);
    expect(lines(listed.stdout).at(-1)).toMatch(/ not in the keyring +published$/);
  });

  it('keys rotate --stage run again after a failed keyring write finishes the rotation, the key set first', async () => {
    const { names, before, token, stored, writes, store, failing } = await halfRotatedStage();
    for (const [name, value] of failing.stored) stored.set(name, value);

    const rerun = await admin(['keys', 'rotate', '--stage', OTHER_STAGE], { parameters: store });

    expect(rerun.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    const after = storedKeys(stored, OTHER_STAGE);
    expect(after.keyring.active).toEqual(before.next);
    expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid, before.active.kid]);
    expect(await verifyWith(after.jwks, token)).toBe('rotation-user');
  });

  it('keys rotate reports a stage without keys with exit 1 and points to keys init', async () => {
    const { store } = memoryParameters();

    const run = await admin(['keys', 'rotate', '--stage', 'emptystage'], { parameters: store });

    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([
      'error: stage emptystage has no /parcel-auth/emptystage/signing-keyring and no /parcel-auth/emptystage/jwks; ' +
        'run keys init --stage emptystage',
    ]);
  });
});

describe('keys revoke', () => {
  /** A deployed stage whose keyring also remembers one retired key, still published. */
  async function stageWithRetiredKey() {
    const names = keyParameterNames(OTHER_STAGE);
    const { stored, writes, store } = memoryParameters();
    const retired = await generateSigningJwk();
    const keyring: Keyring = {
      ...(await keyringFrom(1)),
      retired: [{ kid: retired.kid, retiredAt: new Date().toISOString() }],
    };
    const jwks = { keys: [...publishedKeys(keyring).keys, toPublicJwk(retired)] };
    await store.put(names.jwks, JSON.stringify(jwks), { secure: false, overwrite: false });
    await store.put(names.signingKeyring, JSON.stringify(keyring), { secure: true, overwrite: false });
    writes.length = 0;
    return { names, stored, writes, store, keyring, retired };
  }

  it('revoking the active key unpublishes it, the next key and the retired key it succeeded at once and replaces the pair, keeping the counter secret', async () => {
    const { names, stored, writes, store, keyring, retired } = await stageWithRetiredKey();
    const forged = await signWith(keyring);
    const forgedRetired = await signWith({ ...keyring, active: retired });

    const run = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--', keyring.active.kid], {
      parameters: store,
      stageParams: { kmsKeyArn: KMS_KEY },
    });

    expect(run.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    expect(stored.get(names.signingKeyring)).toMatchObject({ secure: true, kmsKeyId: KMS_KEY });
    const after = storedKeys(stored, OTHER_STAGE);
    expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid]);
    expect([after.keyring.active.kid, after.keyring.next.kid]).not.toContain(keyring.active.kid);
    expect([after.keyring.active.kid, after.keyring.next.kid]).not.toContain(keyring.next.kid);
    // The keyring did not record the retired key's successor: it may be the active key.
    expect(after.keyring.retired).toEqual([]);
    expect(after.keyring.counterSecret).toBe(keyring.counterSecret);
    await expect(verifyWith(after.jwks, forged)).rejects.toThrow();
    await expect(verifyWith(after.jwks, forgedRetired)).rejects.toThrow();
    expect(await verifyWith(after.jwks, await signWith(after.keyring))).toBe('rotation-user');
    expect(lines(run.stdout)).toEqual([
      `revoked ${keyring.active.kid}: no longer published, nor in the keyring`,
      `revoked ${keyring.next.kid}: no longer published, nor in the keyring`,
      `revoked ${retired.kid}: no longer published, nor in the keyring`,
      `active  ${after.keyring.active.kid} (new: signs as soon as a function reloads)`,
      `next    ${after.keyring.next.kid} (new)`,
      'the functions load the change within 5m; tokens signed by a revoked key are refused from then ' +
        '(docs/deploying.md: a signing key leaked)',
    ]);
    expect(run.stdout).not.toContain('"d"');
  });

  it('revoking a retired key drops it with the keys it shared the keyring with, even within a reload interval of the last rotation', async () => {
    const { stored, store, keyring, retired } = await stageWithRetiredKey();
    const successor = await generateSigningJwk();
    const recent: Keyring = {
      ...keyring,
      rotatedAt: new Date().toISOString(),
      retired: [
        { kid: successor.kid, retiredAt: new Date().toISOString(), successor: 'a-revoked-kid' },
        { kid: retired.kid, retiredAt: new Date().toISOString(), successor: successor.kid },
      ],
    };
    await store.put(keyParameterNames(OTHER_STAGE).signingKeyring, JSON.stringify(recent), {
      secure: true,
      overwrite: true,
    });

    const run = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--', retired.kid], {
      parameters: store,
    });

    expect(run.code).toBe(0);
    const after = storedKeys(stored, OTHER_STAGE);
    expect(kids(after.jwks)).toEqual([keyring.active.kid, keyring.next.kid]);
    expect(after.keyring).toEqual({ ...recent, retired: [] });
    expect(lines(run.stdout).slice(0, 2)).toEqual([
      `revoked ${successor.kid}: no longer published, nor in the keyring`,
      `revoked ${retired.kid}: no longer published, nor in the keyring`,
    ]);
  });

  it('keys revoke --all revokes every key of the stage, retired and unknown ones too, and keeps the counter secret', async () => {
    const { names, stored, writes, store, keyring, retired } = await stageWithRetiredKey();
    const forged = [await signWith(keyring), await signWith({ ...keyring, active: retired })];

    const run = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--all'], { parameters: store });

    expect(run.code).toBe(0);
    expect(writes).toEqual([names.jwks, names.signingKeyring]);
    const after = storedKeys(stored, OTHER_STAGE);
    expect(kids(after.jwks)).toEqual([after.keyring.active.kid, after.keyring.next.kid]);
    expect(after.keyring.retired).toEqual([]);
    expect(after.keyring.counterSecret).toBe(keyring.counterSecret);
    for (const token of forged) await expect(verifyWith(after.jwks, token)).rejects.toThrow();
    for (const kid of [keyring.active.kid, keyring.next.kid, retired.kid])
      expect(lines(run.stdout)).toContain(`revoked ${kid}: no longer published, nor in the keyring`);
  });

  it('keys revoke takes a kid or --all, not both', async () => {
    const run = await admin(['keys', 'revoke', '--all', '--', 'a'.repeat(43)]);

    expect(run.code).toBe(2);
    expect(run.stderr).toEqual(['error: keys revoke takes either <kid> or --all']);
  });

  it('refuses a kid the stage does not know, changing nothing', async () => {
    const { stored, writes, store } = await stageWithRetiredKey();
    const before = new Map(stored);

    const run = await admin(['keys', 'revoke', 'no-such-kid', '--stage', OTHER_STAGE], { parameters: store });

    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([
      `error: no key no-such-kid in the keyring or the key set of stage ${OTHER_STAGE} in SSM (eu-central-1) ` +
        `(see keys list --stage ${OTHER_STAGE})`,
    ]);
    expect(writes).toEqual([]);
    expect(stored).toEqual(before);
  });

  it('takes a kid that begins with - after --, as a thumbprint may', async () => {
    const { store } = await stageWithRetiredKey();
    const kid = `-${'a'.repeat(42)}`;

    const run = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--', kid], { parameters: store });

    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([expect.stringMatching(new RegExp(`^error: no key ${kid} in the keyring`))]);
  });

  it('takes exactly one kid, as keys list prints it', async () => {
    const runs = [
      await admin(['keys', 'revoke']),
      await admin(['keys', 'revoke', 'a', 'b']),
      await admin(['keys', 'revoke', 'not a kid']),
    ];

    for (const run of runs) expect(run.code).toBe(2);
  });

  it('a failed keyring write leaves the revoked key unpublished and says how to finish', async () => {
    const names = keyParameterNames(OTHER_STAGE);
    const keyring = await keyringFrom(1);
    const failing = memoryParameters({ failWrite: names.signingKeyring });
    await failing.stored.set(names.jwks, { value: JSON.stringify(publishedKeys(keyring)), secure: false });
    failing.stored.set(names.signingKeyring, { value: JSON.stringify(keyring), secure: true });

    const run = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--', keyring.active.kid], {
      parameters: failing.store,
    });

    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([
      expect.stringMatching(
        new RegExp(`run keys revoke --stage ${OTHER_STAGE} -- ${keyring.active.kid} again to finish$`),
      ),
    ]);
    expect(kids(storedKeys(failing.stored, OTHER_STAGE).jwks)).not.toContain(keyring.active.kid);
    // Running it again with a working store finishes the revocation from where it stopped.
    const again = await admin(['keys', 'revoke', '--stage', OTHER_STAGE, '--', keyring.active.kid], {
      parameters: (() => {
        const store = memoryParameters();
        for (const [name, entry] of failing.stored) store.stored.set(name, entry);
        return store.store;
      })(),
    });
    expect(again.code).toBe(0);
  });
});
