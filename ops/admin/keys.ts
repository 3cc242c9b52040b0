/**
 * `keys init | list | rotate | revoke`: a stage's keyring (private: the active key that signs,
 * the next key, the retired kids) and its public key set (JWKS), the two pieces of key material
 * the stage's functions read and re-read every `keyReloadInterval`.
 *
 * Local stage: files under DATA_DIR/keys (the keyring readable by its owner only).
 * AWS stage: the SSM parameters `/parcel-auth/<stage>/signing-keyring` (SecureString,
 * encrypted with the stage parameter kmsKeyArn when it is set, else with aws/ssm) and
 * `/parcel-auth/<stage>/jwks` (String).
 *
 * Every write puts the key set first and the keyring second: a key is published before
 * anything can sign with it. Only kids (public key thumbprints) are printed, never key
 * material; the parsers' messages name fields, never values.
 *
 * This file holds the commands that write keys (init, rotate, revoke); keys-list.ts reads them
 * (`keys list`), keys-material.ts says where they are, keys-store.ts keeps them.
 */
import type { StageParams } from '../../infra/stage-params.ts';
import type { Keyring } from '../../lib/tokens/keys.ts';
import {
  earliestRotation,
  generateKeyring,
  nextKeyPublished,
  publishedKeys,
  type Revocation,
  retentionSeconds,
  revokeAll,
  revokeKey,
  rotateKeyring,
} from '../keys/keyring.ts';
import { failure } from './errors.ts';
import { keyEntries, unpublishedKeys } from './keys-list.ts';
import { type KeyLocation, loadKeys, showKid, writeKeys } from './keys-material.ts';

// The parts of the key material the admin CLI's other files and the tests take from here.
export { listKeys } from './keys-list.ts';
export { type KeyLocation, localKeyLocation, readCounterSecret, stageKeyLocation } from './keys-material.ts';
export type { ParameterStore } from './keys-store.ts';

/** A number of seconds as the shortest duration string serverless.yml would use. */
export function showDuration(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

export interface InitResult {
  readonly created: boolean;
  readonly active: string;
  readonly next: string;
}

/**
 * Local `keys init`: makes the key files if missing (as `npm start` does) and reports their
 * kids, after checking that the key set publishes the active and next keys.
 */
export async function initLocalKeys(
  location: KeyLocation,
  ensure: () => Promise<{ created: boolean }>,
): Promise<InitResult> {
  const { created } = await ensure();
  const material = await loadKeys(location);
  const unpublished = unpublishedKeys(keyEntries(material));
  if (unpublished.length > 0) {
    throw failure(`${location.jwks} lacks the ${unpublished.map(({ role }) => role).join(' and ')} key`);
  }
  return { created, active: showKid(material.keyring.active.kid), next: showKid(material.keyring.next.kid) };
}

/**
 * `keys init --stage`: a new keyring for an AWS stage. Existing keys are kept unless
 * `force`: replacing them makes every token signed with the old keys fail verification
 * (`keys rotate` is the way to change keys without that).
 */
export async function initStageKeys(location: KeyLocation, now: Date, force: boolean): Promise<InitResult> {
  const { store, stage } = location;
  const present: string[] = [];
  for (const name of [location.jwks, location.keyring]) if (await store.exists(name)) present.push(name);
  // A key set without a keyring is an init cut short after the key set: nothing signs, so
  // nothing is lost by replacing it, and the second run finishes without --force.
  const unfinished = !present.includes(location.keyring);
  if (present.length > 0 && !force && !unfinished) {
    throw failure(
      `stage ${stage} has keys already (${present.join(', ')}); keys rotate${location.stageOption} changes ` +
        'them without ending sessions; --force replaces them, and tokens signed with the old keys stop verifying',
    );
  }
  const keyring = await generateKeyring(now);
  const kids = { active: showKid(keyring.active.kid), next: showKid(keyring.next.kid) };
  // A fresh stage has no keyring, so nothing signs; a replaced stage still signs with the old
  // active key, which the new key set no longer holds. Both end once the keyring is written.
  await writeKeys(
    location,
    { keyring, jwks: publishedKeys(keyring) },
    {
      overwrite: force || unfinished,
      onKeyringFailure: (reason) =>
        `published the new key set (active ${kids.active}) but could not write the keyring (${reason}); ` +
        `until both match no new token verifies: run keys init${location.stageOption} --force`,
    },
  );
  return { created: unfinished, ...kids };
}

export interface RevokeResult {
  readonly revoked: readonly string[];
  readonly replaced: boolean;
  readonly active: string;
  readonly next: string;
}

/**
 * Writes a revocation, the key set first, so the revoked keys stop verifying even if the
 * keyring write fails; `again` is the command that finishes it then.
 */
async function writeRevocation(location: KeyLocation, revocation: Revocation, again: string) {
  // Unpublished even if the keyring write fails; the old keyring then still signs with a
  // revoked key, so every new token is refused too until it is written.
  await writeKeys(location, revocation, {
    overwrite: true,
    onKeyringFailure: (reason) =>
      `unpublished ${revocation.revoked.map(showKid).join(' and ')} but could not write the keyring ` +
      `(${reason}); until it is written no new token verifies: run ${again} again to finish`,
  });
  return {
    revoked: revocation.revoked.map(showKid),
    replaced: revocation.replaced,
    active: showKid(revocation.keyring.active.kid),
    next: showKid(revocation.keyring.next.kid),
  };
}

/**
 * `keys revoke <kid>`: a leaked key leaves the key set and the keyring at once, with every key
 * it shared a keyring with (ops/keys/keyring.ts revokeKey says which keys go and what replaces
 * them). Never refused for timing, unlike a rotation: an attacker's key is worse than
 * containers that must reload to know the new one.
 */
export async function revokeKeys(
  location: KeyLocation,
  kid: string,
  now: Date,
  reloadIntervalSeconds: number,
): Promise<RevokeResult> {
  const { keyring, jwks } = await loadKeys(location);
  let revocation: Revocation;
  try {
    revocation = await revokeKey({ keyring, jwks, kid, now, reloadIntervalSeconds });
  } catch (error) {
    throw failure(
      `${error instanceof Error ? error.message : String(error)} of stage ${location.stage} ${location.where} (see keys list${location.stageOption})`,
    );
  }
  return writeRevocation(location, revocation, `keys revoke${location.stageOption} -- ${showKid(kid)}`);
}

/**
 * `keys revoke --all`: for a leak whose date is unknown, every key goes (a fresh active and
 * next key, nothing retired, nothing else published); the counter secret is kept, as by
 * `keys revoke`. Never refused for timing either.
 */
export async function revokeAllKeys(location: KeyLocation, now: Date): Promise<RevokeResult> {
  const { keyring, jwks } = await loadKeys(location);
  return writeRevocation(
    location,
    await revokeAll({ keyring, jwks, now }),
    `keys revoke${location.stageOption} --all`,
  );
}

export interface RotateResult {
  readonly active: string;
  readonly next: string;
  readonly retired: string;
  /** The earliest time a rotation may drop the key that just retired. */
  readonly retiredUntil: string;
  readonly dropped: readonly { kid: string; retiredAt: string }[];
}

/**
 * `keys rotate`: the next key becomes active, a new next key is published, the active key
 * retires and stays published for `retentionSeconds`; older retired keys are dropped.
 *
 * Refused (unless `force`) within `keyReloadInterval` of the previous rotation: a container
 * that has not reloaded since then does not know the next key that would become active, and
 * would reject every token it signs. Refused too when the next key is not published.
 */
export async function rotateKeys(input: {
  readonly location: KeyLocation;
  readonly params: StageParams;
  readonly now: () => Date;
  readonly force: boolean;
}): Promise<RotateResult> {
  const { location, params, now, force } = input;
  const { keyring, jwks } = await loadKeys(location);
  const forceOption = force ? ' --force' : '';
  const interval = params.keyReloadIntervalSeconds;
  const started = now();
  const allowedAt = earliestRotation(keyring, interval).getTime();
  if (!force && started.getTime() < allowedAt) {
    throw failure(
      `the keys of stage ${location.stage} were rotated at ${keyring.rotatedAt}, less than keyReloadInterval ` +
        `(${showDuration(interval)}) ago: containers that have not reloaded since do not know the key that ` +
        `would become active (${showKid(keyring.next.kid)}); wait until ${new Date(allowedAt).toISOString()}, ` +
        'or add --force to accept that such containers reject new tokens until they reload',
    );
  }
  if (!force && !nextKeyPublished(keyring, jwks)) {
    throw failure(
      `the key set ${location.jwks} does not hold the next key ${showKid(keyring.next.kid)}, so tokens it ` +
        'would sign once active would not verify; --force rotates anyway and publishes it',
    );
  }

  const retention = retentionSeconds({
    tokenLifetimeSeconds: Math.max(params.accessTokenTtlSeconds, params.refreshTokenTtlSeconds),
    reloadIntervalSeconds: params.keyReloadIntervalSeconds,
  });
  const rotation = await rotateKeyring({
    keyring,
    jwks,
    now: started,
    retentionSeconds: retention,
    reloadIntervalSeconds: interval,
  });
  // The next rotation must wait a reload interval from when the new next key was published,
  // not from when this one started: a container may have read the old key set until then.
  const rotated: Keyring = { ...rotation.keyring, rotatedAt: now().toISOString() };
  // Half-way (key set written, keyring not): the old keyring's active key still signs and is
  // published, as retired with its signed_until; its next key is published (as active). Every
  // token verifies until that bound; running keys rotate again finishes with another next key
  // and bounds the retired key from then (the tokens refused in between verify again).
  const signedUntil = rotation.jwks.keys.find(({ kid }) => kid === keyring.active.kid)?.signed_until ?? 0;
  await writeKeys(
    location,
    { keyring: rotated, jwks: rotation.jwks },
    {
      overwrite: true,
      onKeyringFailure: (reason) =>
        `published the new key set but could not write the keyring ${location.keyring} (${reason}); ` +
        `nothing signs with a new key yet and every token verifies, but tokens the active key signs after ` +
        `${new Date(signedUntil * 1000).toISOString()} will not: run keys rotate` +
        `${location.stageOption}${forceOption} again to finish`,
    },
  );
  const retiredBefore = new Map(keyring.retired.map(({ kid, retiredAt }) => [kid, retiredAt]));
  return {
    active: showKid(rotated.active.kid),
    next: showKid(rotated.next.kid),
    retired: showKid(keyring.active.kid),
    retiredUntil: new Date(started.getTime() + retention * 1000).toISOString(),
    dropped: rotation.dropped.map((kid) => ({
      kid: showKid(kid),
      retiredAt: retiredBefore.get(kid) ?? started.toISOString(),
    })),
  };
}
