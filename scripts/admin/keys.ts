/**
 * `keys init`: the signing key of a stage and its public key set.
 *
 * Local stage: the key files under DATA_DIR/keys, made once (as `npm start` does).
 * AWS stage: a new Ed25519 key whose private JWK goes to an SSM SecureString and whose
 * public key set goes to an SSM String, the parameters the stage's functions read at cold
 * start. Existing parameters are kept unless the operator asks for `--force`: replacing the
 * key makes every token signed with the old one fail verification once containers restart.
 *
 * Only the `kid` (the public key's thumbprint) is ever printed, never key material.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  generateSigningJwk,
  type Jwks,
  parseJwks,
  parsePrivateJwk,
  toPublicJwk,
} from '../../lib/auth/keys.ts';
import { parameterExists, writeParameter } from '../../lib/aws/ssm.ts';
import { keyParameterNames } from '../../lib/stage.ts';
import { localKeyFiles } from '../local/keys.ts';
import { failure, oneLine } from './errors.ts';

export interface LocalKeysResult {
  readonly created: boolean;
  readonly kid: string;
  readonly directory: string;
}

/** Makes the local key files if missing and reports their kid; checks that the two files agree. */
export async function initLocalKeys(
  dataDir: string,
  ensure: (dataDir: string) => Promise<{ created: boolean }>,
): Promise<LocalKeysResult> {
  const { created } = await ensure(dataDir);
  const files = localKeyFiles(dataDir);
  // The parsers name fields only, never key material.
  const load = async <T>(path: string, parse: (text: string) => T): Promise<T> => {
    try {
      return parse(await readFile(path, 'utf8'));
    } catch (error) {
      throw failure(`cannot use ${path}: ${oneLine(error)}`);
    }
  };
  const { kid } = await load(files.signingKeyFile, parsePrivateJwk);
  const jwks = await load(files.jwksFile, parseJwks);
  if (!jwks.keys.some((key) => key.kid === kid)) {
    throw failure(`${files.jwksFile} does not hold the public key of ${files.signingKeyFile}`);
  }
  return { created, kid, directory: dirname(files.signingKeyFile) };
}

/** The parameter store the AWS stages keep their keys in (SSM). */
export interface ParameterStore {
  exists(name: string): Promise<boolean>;
  /** With `overwrite` false an existing parameter is kept and this throws a CliError. */
  put(name: string, value: string, options: { secure: boolean; overwrite: boolean }): Promise<void>;
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

export interface StageKeysResult {
  readonly kid: string;
  readonly replaced: boolean;
}

/** Generates a key for an AWS stage and stores it; refuses to replace keys without `force`. */
export async function initStageKeys(
  stage: string,
  store: ParameterStore,
  force: boolean,
): Promise<StageKeysResult> {
  const names = keyParameterNames(stage);
  const present: string[] = [];
  for (const name of [names.signingKey, names.jwks]) if (await store.exists(name)) present.push(name);
  if (present.length > 0 && !force) {
    throw failure(
      `stage ${stage} has keys already (${present.join(', ')}); --force replaces them, ` +
        'and tokens signed with the old key stop verifying',
    );
  }
  const jwk = await generateSigningJwk();
  const jwks: Jwks = { keys: [toPublicJwk(jwk)] };
  // The private key first: if writing it fails (KMS, permissions), nothing has changed.
  await store.put(names.signingKey, JSON.stringify(jwk), { secure: true, overwrite: force });
  try {
    await store.put(names.jwks, JSON.stringify(jwks), { secure: false, overwrite: force });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw failure(
      `wrote the new signing key ${jwk.kid} but not the key set (${reason}); ` +
        `tokens will not verify until both match: run keys init --stage ${stage} --force`,
    );
  }
  return { kid: jwk.kid, replaced: present.length > 0 };
}
