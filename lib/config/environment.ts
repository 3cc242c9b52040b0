// A function's environment as lib/settings.ts gives it, read once: a bad value fails init, never a request.
import * as v from 'valibot';
import type { ENVIRONMENT, FunctionName, SETTINGS } from '../settings.ts';
import type { Words } from './shape.ts';

export type Env = Readonly<Record<string, string | undefined>>;

type Readers<TEntry> = TEntry extends { readonly readBy: infer TList extends string } ? Words<TList> : never;
type Settings = typeof SETTINGS;
type Others = typeof ENVIRONMENT;

/**
 * The variables lib/settings.ts gives `TFunction` for its config: those whose `readBy` names it
 * (LOG_LEVEL, every function's, lib/log.ts reads).
 */
export type ConfigVariables<TFunction extends FunctionName> =
  | {
      [K in keyof Settings]: TFunction extends Readers<Settings[K]>
        ? Settings[K] extends { readonly variable: infer TVariable }
          ? TVariable
          : never
        : never;
    }[keyof Settings]
  | { [K in keyof Others]: TFunction extends Readers<Others[K]> ? K : never }[keyof Others];

/** A variable's schema, built when its reader asks for it (lib/config/schemas.ts). */
export type SchemaOf = () => v.GenericSchema;
/** The schemas `TFactories` build, by variable. */
export type Built<TFactories extends Readonly<Record<string, SchemaOf>>> = {
  -readonly [K in keyof TFactories]: ReturnType<TFactories[K]>;
};

/**
 * The schema of each variable function `name` reads, built from `factories`: exactly the variables
 * lib/settings.ts gives it, or this does not compile (a missing one is a missing key, another an
 * excess one), so a function's config is picked by the manifest's `readBy`.
 */
export function variablesOf<
  TFunction extends FunctionName,
  const TFactories extends { readonly [TVariable in ConfigVariables<TFunction>]: SchemaOf },
>(
  _name: TFunction,
  factories: TFactories & {
    readonly [TExtra in Exclude<keyof TFactories, ConfigVariables<TFunction>>]: never;
  },
): Built<TFactories> {
  return Object.fromEntries(
    Object.entries<SchemaOf>(factories).map(([name, build]) => [name, build()]),
  ) as Built<TFactories>;
}

/** `env` parsed with `schema`, or an error naming every variable missing or out of bounds. */
export function parse<TSchema extends v.GenericSchema>(schema: TSchema, env: Env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path === null ? issue.message : `${path} ${issue.message}`;
  });
  throw new Error(`Invalid configuration: ${problems.join('; ')}`);
}
