import { jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  counterSecretOf,
  importSigningKey,
  importVerificationKeys,
  parseJwks,
  parseKeyring,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/tokens.ts';
import {
  generateKeyring,
  nextKeyPublished,
  publishedKeys,
  retentionSeconds,
  revokeKey,
  rotateKeyring,
} from '../../ops/keys/keyring.ts';

const T0 = new Date('2026-11-01T00:00:00Z');
const DAY = 86_400;
const at = (days: number) => new Date(T0.getTime() + days * DAY * 1000);

const signWith = async (jwk: Parameters<typeof importSigningKey>[0]) => {
  const { kid, key } = await importSigningKey(jwk);
  return new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'EdDSA', kid }).sign(key);
};

const verifiesWith = async (token: string, jwks: Parameters<typeof importVerificationKeys>[0]) => {
  const keys = await importVerificationKeys(jwks);
  return jwtVerify(token, (header) => {
    const key = keys.get(header.kid ?? '');
    if (key === undefined) throw new Error('unknown kid');
    return key;
  }).then(
    () => true,
    () => false,
  );
};

describe('keyring', () => {
  it('publishes the active and the next key, and no private part', async () => {
    const keyring = await generateKeyring(T0);
    const jwks = publishedKeys(keyring);
    expect(jwks.keys.map((key) => key.kid)).toEqual([keyring.active.kid, keyring.next.kid]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');
    expect(parseJwks(JSON.stringify(jwks))).toEqual(jwks);
    expect(parseKeyring(JSON.stringify(keyring))).toEqual(keyring);
  });

  it('rotates: the next key signs, a new next key is published, the old active key retires', async () => {
    const keyring = await generateKeyring(T0);
    const rotation = await rotateKeyring({
      keyring,
      jwks: publishedKeys(keyring),
      now: at(10),
      retentionSeconds: 31 * DAY,
    });
    expect(rotation.keyring.active).toEqual(keyring.next);
    expect(rotation.keyring.next.kid).not.toBe(keyring.next.kid);
    expect(rotation.keyring.retired).toEqual([{ kid: keyring.active.kid, retiredAt: at(10).toISOString() }]);
    expect(rotation.jwks.keys.map((key) => key.kid).sort()).toEqual(
      [keyring.active.kid, keyring.next.kid, rotation.keyring.next.kid].sort(),
    );
    expect(rotation.dropped).toEqual([]);
  });

  it('keeps tokens of the retired key verifying, and new tokens verify with the key set of before', async () => {
    const keyring = await generateKeyring(T0);
    const before = publishedKeys(keyring);
    const oldToken = await signWith(keyring.active);
    const { keyring: rotated, jwks: after } = await rotateKeyring({
      keyring,
      jwks: before,
      now: at(1),
      retentionSeconds: 31 * DAY,
    });
    const newToken = await signWith(rotated.active);
    expect(await verifiesWith(oldToken, after)).toBe(true);
    // A verifier that has not reloaded since the rotation already knows the new active key.
    expect(await verifiesWith(newToken, before)).toBe(true);
  });

  it('drops retired keys from the key set once the retention has passed', async () => {
    const first = await generateKeyring(T0);
    const second = await rotateKeyring({
      keyring: first,
      jwks: publishedKeys(first),
      now: at(1),
      retentionSeconds: 31 * DAY,
    });
    const third = await rotateKeyring({ ...second, now: at(40), retentionSeconds: 31 * DAY });
    expect(third.dropped).toEqual([first.active.kid]);
    expect(third.jwks.keys.map((key) => key.kid)).not.toContain(first.active.kid);
    expect(third.jwks.keys.map((key) => key.kid)).toContain(second.keyring.active.kid);
    expect(await verifiesWith(await signWith(first.active), third.jwks)).toBe(false);
  });

  it('refuses a keyring that is not one, naming fields but not key material', async () => {
    const keyring = await generateKeyring(T0);
    const { next: _next, rotatedAt: _rotatedAt, ...broken } = keyring;
    let message = '';
    try {
      parseKeyring(JSON.stringify(broken));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('keyring is not valid: next, rotatedAt');
    expect(message).not.toContain(keyring.active.d);
  });

  it('refuses a keyring that is not JSON, without echoing it', () => {
    // Arrange
    const text = '{"active": {"d": "secret-material"';

    // Act
    const parse = () => parseKeyring(text);

    // Assert
    expect(parse).toThrow(new Error('keyring is not valid JSON'));
  });

  it('names the key set, not the keyring, when a published key set is broken', () => {
    // Arrange
    const text = JSON.stringify({ keys: 'none' });

    // Act
    const parse = () => parseJwks(text);

    // Assert
    expect(parse).toThrow(new Error('key set is not valid: keys'));
  });

  it('publishes only the active and next keys when there is no earlier key set to keep retired keys from', async () => {
    // Arrange
    const first = await generateKeyring(T0);
    const { keyring } = await rotateKeyring({
      keyring: first,
      jwks: publishedKeys(first),
      now: at(1),
      retentionSeconds: DAY,
    });

    // Act
    const jwks = publishedKeys(keyring);

    // Assert
    expect(jwks.keys.map((key) => key.kid)).toEqual([keyring.active.kid, keyring.next.kid]);
  });

  it('drops a retired key exactly when its retention has passed, not a second later', async () => {
    // Arrange
    const first = await generateKeyring(T0);
    const second = await rotateKeyring({
      keyring: first,
      jwks: publishedKeys(first),
      now: at(1),
      retentionSeconds: DAY,
    });

    // Act
    const third = await rotateKeyring({ ...second, now: at(2), retentionSeconds: DAY });

    // Assert
    expect(third.dropped).toEqual([first.active.kid]);
  });

  it('keeps a retired key published for a token lifetime, a reload interval and the clock tolerance', () => {
    // Arrange
    const stage = { tokenLifetimeSeconds: 3600, reloadIntervalSeconds: 300 };

    // Act
    const seconds = retentionSeconds(stage);

    // Assert
    expect(seconds).toBe(3600 + 300 + CLOCK_TOLERANCE_SECONDS);
  });

  it("tells whether the published key set holds the keyring's next key", async () => {
    // Arrange
    const keyring = await generateKeyring(T0);
    const withNext = publishedKeys(keyring);
    const withoutNext = { keys: withNext.keys.filter((key) => key.kid !== keyring.next.kid) };

    // Act
    const published = [nextKeyPublished(keyring, withNext), nextKeyPublished(keyring, withoutNext)];

    // Assert
    expect(published).toEqual([true, false]);
  });

  it('refuses to import a symmetric key as a signing or verification key', async () => {
    // Arrange
    const secret = { kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', kid: 'k-oct' };

    // Act
    const signing = importSigningKey(secret as never);
    const verifying = importVerificationKeys({ keys: [secret] } as never);

    // Assert
    await expect(signing).rejects.toThrow('signing key imported as a symmetric secret');
    await expect(verifying).rejects.toThrow('verification key imported as a symmetric secret');
  });
});

describe('the counter secret', () => {
  it('is a fresh 32 bytes per keyring, kept by a rotation, and added to a keyring without one', async () => {
    const [one, two] = await Promise.all([generateKeyring(T0), generateKeyring(T0)]);
    expect(counterSecretOf(one)).toHaveLength(32);
    expect(one.counterSecret).not.toBe(two.counterSecret);
    const jwks = publishedKeys(one);
    const rotated = await rotateKeyring({ keyring: one, jwks, now: at(1), retentionSeconds: DAY });
    expect(rotated.keyring.counterSecret).toBe(one.counterSecret);
    const { counterSecret: _none, ...older } = one;
    expect(() => counterSecretOf(older)).toThrow('keyring has no counterSecret: run keys rotate');
    const upgraded = await rotateKeyring({ keyring: older, jwks, now: at(1), retentionSeconds: DAY });
    expect(counterSecretOf(upgraded.keyring)).toHaveLength(32);
  });
});

describe('revoking a key', () => {
  const rotatedOnce = async () => {
    const first = await generateKeyring(T0);
    return rotateKeyring({
      keyring: first,
      jwks: publishedKeys(first),
      now: at(1),
      retentionSeconds: DAY * 30,
    });
  };

  it('takes the active and the next key out at once, with fresh ones in their place and the retired kept', async () => {
    const { keyring, jwks } = await rotatedOnce();
    const retired = keyring.retired[0]?.kid;

    const revoked = await revokeKey({ keyring, jwks, kid: keyring.next.kid, now: at(2) });

    expect(revoked.revoked).toEqual([keyring.active.kid, keyring.next.kid]);
    expect(revoked.replaced).toBe(true);
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      revoked.keyring.active.kid,
      revoked.keyring.next.kid,
      retired,
    ]);
    expect(revoked.keyring.retired).toEqual(keyring.retired);
    expect(revoked.keyring.counterSecret).toBe(keyring.counterSecret);
    expect(revoked.keyring.rotatedAt).toBe(at(2).toISOString());
  });

  it('takes a retired key out of the key set and the keyring, and touches nothing else', async () => {
    const { keyring, jwks } = await rotatedOnce();
    const retired = keyring.retired[0]?.kid ?? '';

    const revoked = await revokeKey({ keyring, jwks, kid: retired, now: at(2) });

    expect(revoked).toMatchObject({ revoked: [retired], replaced: false });
    expect(revoked.keyring).toEqual({ ...keyring, retired: [] });
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([keyring.active.kid, keyring.next.kid]);
  });

  it('refuses a kid neither the keyring nor the key set holds', async () => {
    const { keyring, jwks } = await rotatedOnce();
    await expect(revokeKey({ keyring, jwks, kid: 'unknown', now: at(2) })).rejects.toThrow(
      'no key unknown in the keyring or the key set',
    );
  });
});
