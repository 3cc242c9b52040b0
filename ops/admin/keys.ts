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
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GetParameterCommand, PutParameterCommand } from '@aws-sdk/client-ssm';
import type { StageParams } from '../../infra/stage-params.ts';
import { readParameter, ssmClient } from '../../lib/aws/ssm.ts';
import { keyParameterNames } from '../../lib/stage.ts';
import { counterSecretOf, type Jwks, type Keyring, parseJwks, parseKeyring } from '../../lib/tokens/keys.ts';
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
import { failure, oneLine, quote } from './errors.ts';

/** Whether a parameter exists. Reads it without decryption: a secret's value is never fetched. */
async function parameterExists(region: string, name: string): Promise<boolean> {
  try {
    await ssmClient(region).send(new GetParameterCommand({ Name: name, WithDecryption: false }));
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ParameterNotFound') return false;
    throw error;
  }
}

/**
 * Writes a parameter; the value travels in the request body, never on a command line. A
 * secure one is encrypted with `kmsKeyId` when given, else with the AWS-managed key aws/ssm.
 */
async function writeParameter(
  region: string,
  name: string,
  value: string,
  options: { secure: boolean; overwrite: boolean; kmsKeyId?: string | undefined },
): Promise<void> {
  await ssmClient(region).send(
    new PutParameterCommand({
      Name: name,
      Value: value,
      Type: options.secure ? 'SecureString' : 'String',
      Overwrite: options.overwrite,
      ...(options.secure && options.kmsKeyId !== undefined && { KeyId: options.kmsKeyId }),
    }),
  );
}

export interface PutOptions {
  readonly secure: boolean;
  readonly overwrite: boolean;
  readonly kmsKeyId?: string | undefined;
}

/** Where key material is kept: SSM parameters, or files standing in for them locally. */
export interface ParameterStore {
  /** Whether it exists; never reads (or decrypts) the value. */
  exists(name: string): Promise<boolean>;
  /** The (decrypted) value, or undefined when there is none. */
  get(name: string): Promise<string | undefined>;
  /**
   * With `overwrite` false an existing parameter is kept and this throws a CliError. A
   * secure value is encrypted with `kmsKeyId` when given, else with the store's default key.
   */
  put(name: string, value: string, options: PutOptions): Promise<void>;
}

export function createSsmParameterStore(region: string): ParameterStore {
  return {
    async exists(name) {
      try {
        return await parameterExists(region, name);
      } catch (error) {
        throw failure(`SSM: cannot read parameter ${name} (${region}): ${oneLine(error)}`);
      }
    },
    async get(name) {
      try {
        return await readParameter(region, name);
      } catch (error) {
        if (error instanceof Error && error.name === 'ParameterNotFound') return undefined;
        throw failure(`SSM: cannot read parameter ${name} (${region}): ${oneLine(error)}`);
      }
    },
    async put(name, value, options) {
      try {
        await writeParameter(region, name, value, options);
      } catch (error) {
        if (error instanceof Error && error.name === 'ParameterAlreadyExists') {
          throw failure(`SSM parameter ${name} exists already; --force replaces it`);
        }
        throw failure(`SSM: cannot write parameter ${name} (${region}): ${oneLine(error)}`);
      }
    },
  };
}

/**
 * Files as a parameter store: a secure one is readable by its owner only. A replacement is
 * written to a temporary file and renamed over the old one, so the running stack, which
 * re-reads the files, never sees a half-written key set or keyring.
 */
export function createFileParameterStore(): ParameterStore {
  const get = async (path: string) => {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
      throw failure(`cannot read ${path}: ${oneLine(error)}`);
    }
  };
  return {
    exists: async (path) => (await get(path)) !== undefined,
    get,
    async put(path, value, { secure, overwrite }) {
      const mode = secure ? 0o600 : 0o644;
      const temporary = `${path}.${randomUUID()}.tmp`;
      try {
        if (!overwrite) return await writeFile(path, value, { mode, flag: 'wx' });
        await writeFile(temporary, value, { mode, flag: 'wx' });
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        if (error instanceof Error && 'code' in error && error.code === 'EEXIST') {
          throw failure(`${path} exists already`);
        }
        throw failure(`cannot write ${path}: ${oneLine(error)}`);
      }
    },
  };
}

/** A stage's key material: where it is and under which names. */
export interface KeyLocation {
  readonly stage: string;
  readonly store: ParameterStore;
  readonly keyring: string;
  readonly jwks: string;
  /** The KMS key the keyring is encrypted with (the stage's kmsKeyArn); undefined: the default. */
  readonly keyringKmsKey?: string | undefined;
  /** For messages: `in /path/to/keys` or `in SSM (eu-central-1)`. */
  readonly where: string;
  /** The CLI's option for this stage, to repeat in advice: `` or ` --stage prod`. */
  readonly stageOption: string;
}

export const localKeyLocation = (files: { keyringFile: string; jwksFile: string }): KeyLocation => ({
  stage: 'local',
  store: createFileParameterStore(),
  keyring: files.keyringFile,
  jwks: files.jwksFile,
  where: `in ${dirname(files.keyringFile)}`,
  stageOption: '',
});

export function stageKeyLocation(
  stage: string,
  region: string,
  store: ParameterStore,
  keyringKmsKey?: string,
): KeyLocation {
  const names = keyParameterNames(stage);
  return {
    stage,
    store,
    keyring: names.signingKeyring,
    jwks: names.jwks,
    keyringKmsKey,
    where:
      keyringKmsKey === undefined ? `in SSM (${region})` : `in SSM (${region}, KMS key ${keyringKmsKey})`,
    stageOption: ` --stage ${stage}`,
  };
}

/** A kid for a terminal: as is when it is base64url (every thumbprint is), else quoted. */
const showKid = (kid: string) => (/^[A-Za-z0-9_-]+$/.test(kid) ? kid : quote(kid));

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

interface KeyMaterial {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
}

/** Reads and parses both pieces; a missing or invalid one is a failure naming it. */
async function loadKeys(location: KeyLocation): Promise<KeyMaterial> {
  const keyringText = await location.store.get(location.keyring);
  const jwksText = await location.store.get(location.jwks);
  const missing = [
    ...(keyringText === undefined ? [location.keyring] : []),
    ...(jwksText === undefined ? [location.jwks] : []),
  ];
  if (keyringText === undefined || jwksText === undefined) {
    throw failure(
      `stage ${location.stage} has no ${missing.join(' and no ')}; run keys init${location.stageOption}`,
    );
  }
  const parse = <T>(name: string, text: string, parser: (text: string) => T): T => {
    try {
      return parser(text);
    } catch (error) {
      throw failure(`cannot use ${name}: ${oneLine(error)}`);
    }
  };
  return {
    keyring: parse(location.keyring, keyringText, parseKeyring),
    jwks: parse(location.jwks, jwksText, parseJwks),
  };
}

/** The secret that keys the username counters of the stage's login throttle. */
export async function readCounterSecret(location: KeyLocation): Promise<Uint8Array> {
  const { keyring } = await loadKeys(location);
  try {
    return counterSecretOf(keyring);
  } catch (error) {
    throw failure(
      `cannot use ${location.keyring}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export interface KeyEntry {
  readonly kid: string;
  /** `unknown`: published, but not in the keyring. */
  readonly role: 'active' | 'next' | 'retired' | 'unknown';
  /** When it became active (the last rotation) or retired. */
  readonly since: string | undefined;
  /** A retired key's successor, the key it shared the keyring with; undefined if not recorded. */
  readonly successor?: string | undefined;
  readonly published: boolean;
  /** The published `signed_until`: verifiers refuse its tokens issued later. */
  readonly signedUntil?: number | undefined;
}

/** Every key of the keyring, then every published key the keyring does not know. */
export function keyEntries({ keyring, jwks }: KeyMaterial): KeyEntry[] {
  const published = new Map(jwks.keys.map((key) => [key.kid, key]));
  const entries: KeyEntry[] = [
    { kid: keyring.active.kid, role: 'active' as const, since: keyring.rotatedAt },
    { kid: keyring.next.kid, role: 'next' as const, since: undefined },
    ...keyring.retired.map(({ kid, retiredAt, successor }) => ({
      kid,
      role: 'retired' as const,
      since: retiredAt,
      successor,
    })),
  ].map((entry) => ({
    ...entry,
    published: published.has(entry.kid),
    signedUntil: published.get(entry.kid)?.signed_until,
  }));
  const known = new Set(entries.map(({ kid }) => kid));
  for (const { kid, signed_until } of jwks.keys) {
    if (!known.has(kid))
      entries.push({ kid, role: 'unknown', since: undefined, published: true, signedUntil: signed_until });
  }
  return entries;
}

const describeState = ({ role, since, successor }: KeyEntry) => {
  if (role === 'unknown') return 'not in the keyring';
  const state = since === undefined ? role : `${role} since ${since}`;
  if (role !== 'retired') return state;
  return `${state}, succeeded by ${successor === undefined ? '(not recorded)' : showKid(successor)}`;
};

const describePublished = ({ published, signedUntil }: KeyEntry) => {
  if (!published) return 'NOT PUBLISHED';
  if (signedUntil === undefined) return 'published';
  return `published, signed until ${new Date(signedUntil * 1000).toISOString()}`;
};

/**
 * One aligned line per key: kid, state (a retired key's with its successor, so the chain of
 * keys that shared a keyring can be followed), whether the key set holds it and until when it signed.
 */
export function formatKeyEntries(entries: readonly KeyEntry[]): string[] {
  const rows = entries.map((entry) => ({ ...entry, kid: showKid(entry.kid), state: describeState(entry) }));
  const kidWidth = Math.max(...rows.map(({ kid }) => kid.length));
  const stateWidth = Math.max(...rows.map(({ state }) => state.length));
  return rows.map(
    (row) => `${row.kid.padEnd(kidWidth)}  ${row.state.padEnd(stateWidth)}  ${describePublished(row)}`,
  );
}

const unpublishedKeys = (entries: readonly KeyEntry[]) =>
  entries.filter(({ role, published }) => role !== 'unknown' && !published);

/**
 * `keys list`: prints one line per key, then fails when a key of the keyring is not
 * published: tokens signed with it do not verify (or, for the next key, will not).
 */
export async function listKeys(location: KeyLocation, print: (text: string) => void): Promise<void> {
  const entries = keyEntries(await loadKeys(location));
  for (const line of formatKeyEntries(entries)) print(line);
  const unpublished = unpublishedKeys(entries);
  if (unpublished.length > 0) {
    throw failure(
      `the key set ${location.jwks} lacks ${unpublished.length} key(s) of the keyring ` +
        `(${unpublished.map(({ kid, role }) => `${showKid(kid)} ${role}`).join(', ')}): tokens signed ` +
        `with them do not verify; if a keys rotate failed half-way, run keys rotate${location.stageOption} again`,
    );
  }
}

/**
 * Writes a stage's key material, the key set first: a key is published before anything can
 * sign with it, and a revoked one is unpublished before anything else. A failed keyring
 * write is a failure saying `onKeyringFailure` (what it means, and how to finish).
 */
async function writeKeys(
  location: KeyLocation,
  material: KeyMaterial,
  options: { readonly overwrite: boolean; readonly onKeyringFailure: (reason: string) => string },
): Promise<void> {
  const { store } = location;
  await store.put(location.jwks, JSON.stringify(material.jwks), {
    secure: false,
    overwrite: options.overwrite,
  });
  try {
    await store.put(location.keyring, JSON.stringify(material.keyring), {
      secure: true,
      overwrite: options.overwrite,
      kmsKeyId: location.keyringKmsKey,
    });
  } catch (error) {
    throw failure(options.onKeyringFailure(error instanceof Error ? error.message : String(error)));
  }
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
