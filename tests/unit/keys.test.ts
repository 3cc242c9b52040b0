import { jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { epochSeconds } from '../../lib/time.ts';
import {
  counterSecretOf,
  importSigningKey,
  importVerificationKeys,
  type Jwks,
  parseJwks,
  parseKeyring,
} from '../../lib/tokens/keys.ts';
import { CLOCK_TOLERANCE_SECONDS } from '../../lib/tokens/verify.ts';
import {
  generateKeyring,
  generateSigningJwk,
  nextKeyPublished,
  publishedKeys,
  retentionSeconds,
  revokeAll,
  revokeKey,
  rotateKeyring,
  toPublicJwk,
} from '../../ops/keys/keyring.ts';

const T0 = new Date('2026-11-01T00:00:00Z');
const DAY = 86_400;
const at = (days: number) => new Date(T0.getTime() + days * DAY * 1000);
/** The stage's keyReloadInterval, seconds. */
const RELOAD = 300;

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
      reloadIntervalSeconds: RELOAD,
    });
    expect(rotation.keyring.active).toEqual(keyring.next);
    expect(rotation.keyring.next.kid).not.toBe(keyring.next.kid);
    expect(rotation.keyring.retired).toEqual([
      { kid: keyring.active.kid, retiredAt: at(10).toISOString(), successor: keyring.next.kid },
    ]);
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
      reloadIntervalSeconds: RELOAD,
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
      reloadIntervalSeconds: RELOAD,
    });
    const third = await rotateKeyring({
      ...second,
      now: at(40),
      retentionSeconds: 31 * DAY,
      reloadIntervalSeconds: RELOAD,
    });
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
      reloadIntervalSeconds: RELOAD,
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
      reloadIntervalSeconds: RELOAD,
    });

    // Act
    const third = await rotateKeyring({
      ...second,
      now: at(2),
      retentionSeconds: DAY,
      reloadIntervalSeconds: RELOAD,
    });

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
    const rotated = await rotateKeyring({
      keyring: one,
      jwks,
      now: at(1),
      retentionSeconds: DAY,
      reloadIntervalSeconds: RELOAD,
    });
    expect(rotated.keyring.counterSecret).toBe(one.counterSecret);
    const { counterSecret: _none, ...older } = one;
    expect(() => counterSecretOf(older)).toThrow('keyring has no counterSecret: run keys rotate');
    const upgraded = await rotateKeyring({
      keyring: older,
      jwks,
      now: at(1),
      retentionSeconds: DAY,
      reloadIntervalSeconds: RELOAD,
    });
    expect(counterSecretOf(upgraded.keyring)).toHaveLength(32);
  });
});

/**
 * A keyring rotated `rotations` times a day apart, with its key set: `chain` lists its keys
 * oldest first, each having shared a keyring with the ones beside it (the last two are the
 * active and the next key).
 */
async function rotated(rotations: number) {
  const first = await generateKeyring(T0);
  let state = { keyring: first, jwks: publishedKeys(first) };
  const chain = [first.active, first.next];
  for (let day = 1; day <= rotations; day += 1) {
    state = await rotateKeyring({
      ...state,
      now: at(day),
      retentionSeconds: 30 * DAY,
      reloadIntervalSeconds: RELOAD,
    });
    chain.push(state.keyring.next);
  }
  return { ...state, chain: chain.map(({ kid }) => kid) };
}

const sorted = (kids: readonly (string | undefined)[]) => [...kids].sort();

describe('a rotation records the chain and bounds the retired key', () => {
  it('records which key succeeded the retiring one, and publishes the last iat it can have signed: the rotation plus a reload interval', async () => {
    const keyring = await generateKeyring(T0);

    const rotation = await rotateKeyring({
      keyring,
      jwks: publishedKeys(keyring),
      now: at(1),
      retentionSeconds: DAY,
      reloadIntervalSeconds: RELOAD,
    });

    expect(rotation.keyring.retired[0]?.successor).toBe(keyring.next.kid);
    const retiring = rotation.jwks.keys.find(({ kid }) => kid === keyring.active.kid);
    expect(retiring?.signed_until).toBe(epochSeconds(at(1)) + RELOAD);
    expect(rotation.jwks.keys.filter(({ signed_until }) => signed_until !== undefined)).toHaveLength(1);
    expect(parseJwks(JSON.stringify(rotation.jwks))).toEqual(rotation.jwks);
  });

  it('bounds a retired key published before the bound existed, from its retirement in the keyring', async () => {
    const old = await generateSigningJwk();
    const keyring = {
      ...(await generateKeyring(T0)),
      retired: [{ kid: old.kid, retiredAt: at(1).toISOString() }],
    };
    const jwks = publishedKeys(keyring, { keys: [toPublicJwk(old)] });

    const rotation = await rotateKeyring({
      keyring,
      jwks,
      now: at(2),
      retentionSeconds: 30 * DAY,
      reloadIntervalSeconds: RELOAD,
    });

    expect(rotation.jwks.keys.find(({ kid }) => kid === old.kid)?.signed_until).toBe(
      epochSeconds(at(1)) + RELOAD,
    );
  });

  it('bounds the retiring key from the rotation that finishes, when one cut short had published it bounded already', async () => {
    const keyring = await generateKeyring(T0);
    const rotate = (jwks: Jwks, now: Date) =>
      rotateKeyring({ keyring, jwks, now, retentionSeconds: DAY, reloadIntervalSeconds: RELOAD });
    const cutShort = await rotate(publishedKeys(keyring), at(1));

    const finished = await rotate(cutShort.jwks, at(2));

    const retiring = finished.jwks.keys.filter(({ kid }) => kid === keyring.active.kid);
    expect(retiring.map(({ signed_until }) => signed_until)).toEqual([epochSeconds(at(2)) + RELOAD]);
  });

  it('loads a keyring and a key set written before the chain and the bound were recorded', async () => {
    const keyring = await generateKeyring(T0);
    const old = { ...keyring, retired: [{ kid: 'k-old', retiredAt: at(1).toISOString() }] };
    const jwks = { keys: publishedKeys(keyring).keys };

    expect(parseKeyring(JSON.stringify(old))).toEqual(old);
    expect(parseJwks(JSON.stringify(jwks))).toEqual(jwks);
  });

  it.each([
    ['a string', '1790000000'],
    ['a fraction', 1_790_000_000.5],
    ['negative', -1],
  ])('refuses a key set whose signed_until is %s', (_name, value) => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: 'eb6ydu6BuMkFnt0m8ab6kWuP71Wyce1VSsbeY9eiK88', kid: 'k' };

    expect(() => parseJwks(JSON.stringify({ keys: [{ ...jwk, signed_until: value }] }))).toThrow(
      'key set is not valid: keys.0.signed_until',
    );
  });

  it('gives the verifiers the bound of each bounded key, and none for the keys that still sign', async () => {
    const { jwks, keyring } = await rotated(1);

    const keys = await importVerificationKeys(jwks);

    expect([...keys.signedUntil]).toEqual([[keyring.retired[0]?.kid, epochSeconds(at(1)) + RELOAD]]);
    expect(keys.size).toBe(3);
  });
});

describe('revoking a key', () => {
  it('revokes the active key with the retired key it succeeded and the next key: a leaked copy held one pair or the other', async () => {
    const { keyring, jwks, chain } = await rotated(2);
    const [oldest, retired, active, next] = chain;

    const revoked = await revokeKey({
      keyring,
      jwks,
      kid: keyring.active.kid,
      now: at(3),
      reloadIntervalSeconds: 300,
    });

    expect(active).toBe(keyring.active.kid);
    expect(sorted(revoked.revoked)).toEqual(sorted([retired, active, next]));
    expect(revoked.replaced).toBe(true);
    expect(revoked.keyring.retired.map(({ kid }) => kid)).toEqual([oldest]);
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      revoked.keyring.active.kid,
      revoked.keyring.next.kid,
      oldest,
    ]);
    expect(revoked.keyring.counterSecret).toBe(keyring.counterSecret);
    expect(revoked.keyring.rotatedAt).toBe(at(3).toISOString());
  });

  it('revokes the next key with the active key, and not the retired key that never shared a keyring with the next one', async () => {
    const { keyring, jwks } = await rotated(1);

    const revoked = await revokeKey({
      keyring,
      jwks,
      kid: keyring.next.kid,
      now: at(2),
      reloadIntervalSeconds: 300,
    });

    expect(sorted(revoked.revoked)).toEqual(sorted([keyring.active.kid, keyring.next.kid]));
    expect(revoked.replaced).toBe(true);
    expect(revoked.keyring.retired).toEqual(keyring.retired);
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      revoked.keyring.active.kid,
      revoked.keyring.next.kid,
      keyring.retired[0]?.kid,
    ]);
  });

  it('revokes a retired key with the key it succeeded and the key that succeeded it, leaving the active and next keys', async () => {
    const { keyring, jwks, chain } = await rotated(4);
    const [oldest, older, old] = chain;

    const revoked = await revokeKey({
      keyring,
      jwks,
      kid: older ?? '',
      now: at(5),
      reloadIntervalSeconds: 300,
    });

    expect(sorted(revoked.revoked)).toEqual(sorted([oldest, older, old]));
    expect(revoked.replaced).toBe(false);
    expect(revoked.keyring).toEqual({ ...keyring, retired: keyring.retired.slice(0, 1) });
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      keyring.active.kid,
      keyring.next.kid,
      keyring.retired[0]?.kid,
    ]);
  });

  it('replaces the active and next keys when the retired key revoked is the one the active key succeeded', async () => {
    const { keyring, jwks } = await rotated(1);

    const revoked = await revokeKey({
      keyring,
      jwks,
      kid: keyring.retired[0]?.kid ?? '',
      now: at(2),
      reloadIntervalSeconds: 300,
    });

    expect(sorted(revoked.revoked)).toEqual(
      sorted([keyring.retired[0]?.kid, keyring.active.kid, keyring.next.kid]),
    );
    expect(revoked.replaced).toBe(true);
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      revoked.keyring.active.kid,
      revoked.keyring.next.kid,
    ]);
  });

  it('takes, in a keyring that recorded no successors, each retired key as the neighbour of the one listed before it', async () => {
    const { keyring, jwks, chain } = await rotated(2);
    const unrecorded = {
      ...keyring,
      retired: keyring.retired.map(({ kid, retiredAt }) => ({ kid, retiredAt })),
    };

    const ofActive = await revokeKey({
      keyring: unrecorded,
      jwks,
      kid: keyring.active.kid,
      now: at(3),
      reloadIntervalSeconds: 300,
    });
    const ofOldest = await revokeKey({
      keyring: unrecorded,
      jwks,
      kid: chain[0] ?? '',
      now: at(3),
      reloadIntervalSeconds: 300,
    });

    expect(sorted(ofActive.revoked)).toEqual(sorted(chain.slice(1)));
    expect(sorted(ofOldest.revoked)).toEqual(sorted(chain.slice(0, 2)));
  });

  it('does not take a retired key for a neighbour of keys that replaced a revoked pair', async () => {
    const { keyring, jwks } = await rotated(1);
    const first = await revokeKey({
      keyring,
      jwks,
      kid: keyring.next.kid,
      now: at(2),
      reloadIntervalSeconds: 300,
    });

    const second = await revokeKey({
      ...first,
      kid: first.keyring.active.kid,
      now: at(3),
      reloadIntervalSeconds: 300,
    });

    expect(second.keyring.retired).toEqual(keyring.retired);
  });

  it('ends a keyring copied before a rotation, revoked by the kid keys list shows as active: tokens of both copied keys are refused', async () => {
    const copy = await generateKeyring(T0);
    const rotation = await rotateKeyring({
      keyring: copy,
      jwks: publishedKeys(copy),
      now: at(1),
      retentionSeconds: 30 * DAY,
      reloadIntervalSeconds: RELOAD,
    });
    const forged = [await signWith(copy.active), await signWith(copy.next)];
    expect(await verifiesWith(forged[0] ?? '', rotation.jwks)).toBe(true);

    const revoked = await revokeKey({
      ...rotation,
      kid: rotation.keyring.active.kid,
      now: at(2),
      reloadIntervalSeconds: 300,
    });

    for (const token of forged) expect(await verifiesWith(token, revoked.jwks)).toBe(false);
    expect(await verifiesWith(await signWith(revoked.keyring.active), revoked.jwks)).toBe(true);
  });

  it('bounds a kept retired key published without signed_until (an older key set) from its retirement, as a rotation would', async () => {
    const { keyring, jwks } = await rotated(2);
    const older = keyring.retired[1];
    const unbounded = { keys: jwks.keys.map(({ signed_until: _until, ...key }) => key) };

    const revoked = await revokeKey({
      keyring,
      jwks: unbounded,
      kid: keyring.next.kid,
      now: at(3),
      reloadIntervalSeconds: 300,
    });

    const kept = revoked.jwks.keys.find(({ kid }) => kid === older?.kid);
    expect(kept?.signed_until).toBe(Date.parse(older?.retiredAt ?? '') / 1000 + 300);
  });

  it('refuses a kid neither the keyring nor the key set holds', async () => {
    const { keyring, jwks } = await rotated(1);
    await expect(
      revokeKey({ keyring, jwks, kid: 'unknown', now: at(2), reloadIntervalSeconds: 300 }),
    ).rejects.toThrow('no key unknown in the keyring or the key set');
  });
});

describe('revoking every key, for a leak of unknown date', () => {
  it('replaces the active and next keys, drops every retired and unknown published key, and keeps the counter secret', async () => {
    const { keyring, jwks } = await rotated(2);
    const stray = toPublicJwk(await generateSigningJwk());
    const withStray = { keys: [...jwks.keys, stray] };

    const revoked = await revokeAll({ keyring, jwks: withStray, now: at(3) });

    expect(sorted(revoked.revoked)).toEqual(sorted(withStray.keys.map(({ kid }) => kid)));
    expect(revoked.replaced).toBe(true);
    expect(revoked.keyring.retired).toEqual([]);
    expect(revoked.keyring.counterSecret).toBe(keyring.counterSecret);
    expect(revoked.keyring.rotatedAt).toBe(at(3).toISOString());
    expect(revoked.jwks.keys.map(({ kid }) => kid)).toEqual([
      revoked.keyring.active.kid,
      revoked.keyring.next.kid,
    ]);
    expect(withStray.keys.map(({ kid }) => kid)).not.toContain(revoked.keyring.active.kid);
  });
});
