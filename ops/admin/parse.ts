/**
 * What an admin command line means, and the glue commander needs to check it. Commander
 * (ops/admin/program.ts) parses, counts the arguments, requires options and refuses options
 * that exclude each other; the argument parsers here check each value against the account and
 * client schemas, before anything is read or written, and refuse an option given twice, which
 * commander would take the last of. What each command then does: ops/admin/commands.ts.
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
  | { readonly name: 'user passkeys list'; readonly username: string }
  /** `passkeyId` undefined: every passkey of the user (`--all`). */
  | {
      readonly name: 'user passkeys remove';
      readonly username: string;
      readonly passkeyId: string | undefined;
    }
  | { readonly name: 'customer policy'; readonly customerId: string; readonly requirePasskey: boolean }
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
      /** A JWK Set's file: a client of keys (private_key_jwt), no secret. */
      readonly jwksFile: string | undefined;
      /** Every token request must carry a DPoP proof (`dpop_bound_access_tokens`). */
      readonly dpop: boolean;
    }
  | { readonly name: 'client list'; readonly customerId: string | undefined }
  | {
      readonly name: 'client disable' | 'client enable' | 'client remove' | 'client show' | 'client unlock';
      readonly clientId: string;
    }
  | { readonly name: 'client secret add'; readonly clientId: string; readonly jwksFile: string | undefined }
  | { readonly name: 'client secret remove'; readonly clientId: string; readonly secretId: string }
  | {
      readonly name: 'platform add';
      readonly platformName: string;
      readonly redirectUris: readonly string[];
      readonly scopes: readonly Scope[];
      readonly jwksFile: string | undefined;
      readonly dpop: boolean;
    }
  | { readonly name: 'platform list' }
  | {
      readonly name: 'platform show' | 'platform disable' | 'platform enable' | 'platform remove';
      readonly clientId: string;
    }
  | {
      readonly name: 'platform redirect-uri add' | 'platform redirect-uri remove';
      readonly clientId: string;
      readonly uri: string;
    };

export type CommandName = Command['name'];

/** Which deployed stage to act on; none means the local stack. */
export interface TargetOptions {
  readonly stage: string | undefined;
  readonly region: string | undefined;
}

/**
 * A commander argument parser that checks a value against `schema`, giving its output; the
 * usage error names `what` and the rule, never the value.
 */
export const valid =
  <TSchema extends v.GenericSchema<string, unknown>>(schema: TSchema, what: string) =>
  (value: string): v.InferOutput<TSchema> => {
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    throw usageError(`invalid ${what}: ${result.issues[0]?.message ?? 'not accepted'}`);
  };

/** `client add`'s and `platform add`'s `--jwks`. */
export const JWKS_OPTION =
  'a JWK Set file of its public keys (one, or two for a rotation; EdDSA, ES256 or PS256): it then ' +
  'authenticates with private_key_jwt and gets no secret (docs/clients.md)';

/** `client add`'s and `platform add`'s `--dpop`. */
export const DPOP_OPTION =
  'require DPoP-bound tokens (RFC 9449 dpop_bound_access_tokens): a token request without a DPoP ' +
  'proof is refused (docs/clients.md)';

/** A commander option parser for an option given at most once (commander keeps the last). */
export const once =
  <T>(name: string, parse: (value: string) => T) =>
  (value: string, previous: T | undefined): T => {
    if (previous !== undefined) throw usageError(`option --${name} is given more than once`);
    return parse(value);
  };

/** A flag given at most once. */
export const flagOnce = (name: string) => once(name, () => true);

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
