/**
 * Where a stage's key material is kept: SSM parameters (a SecureString keyring, a String key
 * set), or local files standing in for them. `exists` never fetches, let alone decrypts, a value.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { GetParameterCommand, PutParameterCommand } from '@aws-sdk/client-ssm';
import { readParameter, ssmClient } from '../../lib/aws/ssm.ts';
import { failure, oneLine } from './errors.ts';

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
