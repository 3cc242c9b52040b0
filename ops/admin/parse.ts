/**
 * What the admin command line means once commander has split it (ops/admin/cli.ts): the
 * commands, and the checks of each value against the account and client schemas, made before
 * anything is read or written.
 *
 * Messages name an option or an argument but never repeat the value given: an operator who
 * types a password where a name belongs must not find it echoed into a terminal log.
 */
import * as v from 'valibot';
import { GRANTABLE_SCOPES, isGrantableScope, type Scope, sortScopes } from '../../lib/scopes.ts';
import { usageError } from './errors.ts';

export type Command =
  | { readonly name: 'user add'; readonly username: string; readonly customerId: string | null }
  | {
      readonly name:
        | 'user passwd'
        | 'user disable'
        | 'user enable'
        | 'user logout'
        | 'user remove'
        | 'user show'
        | 'user unlock';
      readonly username: string;
    }
  | { readonly name: 'user admin grant' | 'user admin revoke'; readonly username: string }
  | { readonly name: 'audit list'; readonly customerId: string | undefined; readonly limit: number }
  | { readonly name: 'address add'; readonly customerId: string; readonly depotCode: string }
  | { readonly name: 'address list'; readonly customerId: string }
  | { readonly name: 'keys init' | 'keys rotate'; readonly force: boolean }
  | { readonly name: 'keys list' }
  | { readonly name: 'keys revoke'; readonly kid: string }
  | { readonly name: 'keys revoke'; readonly all: true }
  | {
      readonly name: 'import';
      readonly file: string;
      readonly dryRun: boolean;
      readonly skipInvalid: boolean;
    }
  | { readonly name: 'export'; readonly includePasswordHashes: boolean }
  | {
      readonly name: 'user list';
      readonly customerId: string | undefined;
      readonly disabled: boolean;
      readonly locked: boolean;
    }
  | { readonly name: 'user refold'; readonly dryRun: boolean }
  /** `scopes` null: every scope again (`--all`). */
  | { readonly name: 'user scopes'; readonly username: string; readonly scopes: readonly Scope[] | null }
  | { readonly name: 'customer list' }
  | {
      readonly name: 'client add';
      readonly customerId: string;
      readonly scopes: readonly Scope[];
      readonly clientName: string | undefined;
    }
  | { readonly name: 'client list'; readonly customerId: string | undefined }
  | {
      readonly name:
        | 'client disable'
        | 'client enable'
        | 'client remove'
        | 'client show'
        | 'client unlock'
        | 'client secret add';
      readonly clientId: string;
    }
  | { readonly name: 'client secret remove'; readonly clientId: string; readonly secretId: string };

export type CommandName = Command['name'];

/** Which deployed stage to act on; none means the local stack. */
export interface TargetOptions {
  readonly stage: string | undefined;
  readonly region: string | undefined;
}

/** Serverless stage names: letters, digits and hyphens. */
export const StageSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9-]{1,32}$/, 'must be 1 to 32 letters, digits or hyphens'),
);
export const RegionSchema = v.pipe(
  v.string(),
  v.regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'must be like eu-central-1'),
);
/** Lookups match the stored name exactly, so any name that could have been stored is accepted. */
export const ExistingUsernameSchema = v.pipe(v.string(), v.nonEmpty('must not be empty'));
export const FileSchema = v.pipe(v.string(), v.nonEmpty('must not be empty'));

/** How many audit events `audit list` prints: as text, as commander hands it over. */
export const AuditLimitSchema = v.pipe(
  v.string(),
  v.regex(/^(?:[1-9]\d{0,3}|10000)$/, 'must be a whole number from 1 to 10000'),
);

/** A key id as `keys list` prints it: every kid here is a base64url thumbprint. */
export const KidSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a kid as keys list prints it'),
);

/**
 * A commander argument parser that checks a value against `schema`; the usage error names
 * `what` and the rule, never the value.
 */
export const valid =
  <TSchema extends v.GenericSchema<string, string>>(schema: TSchema, what: string) =>
  (value: string): v.InferOutput<TSchema> => {
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    throw usageError(`invalid ${what}: ${result.issues[0]?.message ?? 'not accepted'}`);
  };

/**
 * A commander option parser for an option given at most once (commander keeps the last);
 * a flag's value is undefined.
 */
export const once =
  <T>(name: string, parse: (value: string) => T) =>
  (value: string | undefined, previous: T | undefined): T => {
    if (previous !== undefined) throw usageError(`option --${name} is given more than once`);
    if (value === undefined) throw usageError(`option --${name} needs a value`);
    return parse(value);
  };

/** A flag given at most once. Commander calls a flag's parser with no value. */
export const flagOnce =
  (name: string) =>
  (_value: string | undefined, previous: boolean | undefined): boolean => {
    if (previous !== undefined) throw usageError(`option --${name} is given more than once`);
    return true;
  };

/** The repeated `--scope` values, in order; checked by {@link scopesOf}. */
export const collect = (value: string, previous: readonly string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

/** Scopes are named by the service itself (lib/scopes.json), so a known one may be echoed. */
const SCOPE_RULE = `must be one of the scopes ${GRANTABLE_SCOPES.join(', ')}`;

/** The `--scope` values: grantable scopes (customer:admin is `user admin grant`'s), none twice, at least one. */
export function scopesOf(values: readonly string[], name: CommandName): Scope[] {
  if (values.length === 0)
    throw usageError(`${name} needs at least one --scope <scope> (${GRANTABLE_SCOPES.join(', ')})`);
  const known = values.filter(isGrantableScope);
  if (known.length < values.length) throw usageError(`invalid --scope: ${SCOPE_RULE}`);
  const twice = known.find((scope, index) => known.indexOf(scope) !== index);
  if (twice !== undefined) throw usageError(`--scope ${twice} is given twice`);
  return sortScopes(known);
}

/** The target of a run; `--region` alone names no stage. */
export function targetOf(options: { stage?: string; region?: string }): TargetOptions {
  if (options.region !== undefined && options.stage === undefined)
    throw usageError('--region applies only with --stage');
  return { stage: options.stage, region: options.region };
}
