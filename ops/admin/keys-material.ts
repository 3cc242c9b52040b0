/**
 * A stage's key material: where it is (files, or SSM parameters under the stage's names), read
 * and parsed, and written key set first. Only kids are shown, never key material.
 */
import { dirname } from 'node:path';
import { keyParameterNames } from '../../lib/stage.ts';
import { counterSecretOf, type Jwks, type Keyring, parseJwks, parseKeyring } from '../../lib/tokens/keys.ts';
import { failure, oneLine, quote } from './errors.ts';
import { createFileParameterStore, type ParameterStore } from './keys-store.ts';

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
export const showKid = (kid: string) => (/^[A-Za-z0-9_-]+$/.test(kid) ? kid : quote(kid));

export interface KeyMaterial {
  readonly keyring: Keyring;
  readonly jwks: Jwks;
}

/** Reads and parses both pieces; a missing or invalid one is a failure naming it. */
export async function loadKeys(location: KeyLocation): Promise<KeyMaterial> {
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

/**
 * Writes a stage's key material, the key set first: a key is published before anything can
 * sign with it, and a revoked one is unpublished before anything else. A failed keyring
 * write is a failure saying `onKeyringFailure` (what it means, and how to finish).
 */
export async function writeKeys(
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
