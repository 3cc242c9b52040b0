/**
 * SSM's parameter store in memory, for the key commands of a deployed stage: SSM has no local
 * implementation. It refuses to overwrite unless told, with the real store's message, and
 * records the order of writes.
 */
import { failure } from '../../ops/admin/errors.ts';
import type { ParameterStore } from '../../ops/admin/keys.ts';

export interface StoredParameter {
  readonly value: string;
  readonly secure: boolean;
  readonly kmsKeyId?: string | undefined;
}

/** Runs one call (`exists jwks`, `put signing-keyring`, ...): where the fault matrix plants SSM's faults. */
export type ParameterCall = (call: string, apply: () => Promise<void>) => Promise<void>;

export function memoryParameters(
  options: {
    /** The parameters, shared with other stores over the same SSM; a new map by default. */
    readonly stored?: Map<string, StoredParameter>;
    /** Makes every write of this name fail. */
    readonly failWrite?: string;
    readonly through?: ParameterCall;
  } = {},
) {
  const stored = options.stored ?? new Map<string, StoredParameter>();
  const writes: string[] = [];
  const through: ParameterCall = options.through ?? ((_call, apply) => apply());
  const short = (name: string) => name.split('/').at(-1) ?? name;
  const store: ParameterStore = {
    async exists(name) {
      let found = false;
      await through(`exists ${short(name)}`, async () => {
        found = stored.has(name);
      });
      return found;
    },
    async get(name) {
      let value: string | undefined;
      await through(`get ${short(name)}`, async () => {
        value = stored.get(name)?.value;
      });
      return value;
    },
    async put(name, value, { secure, overwrite, kmsKeyId }) {
      await through(`put ${short(name)}`, async () => {
        if (name === options.failWrite)
          throw failure(`SSM: cannot write parameter ${name} (test): AccessDenied`);
        if (stored.has(name) && !overwrite) {
          throw failure(`SSM parameter ${name} exists already; --force replaces it`);
        }
        stored.set(name, { value, secure, kmsKeyId });
        writes.push(name);
      });
    },
  };
  return { stored, writes, store };
}
