/**
 * The admin command line: `<group> <action> <arguments> [options]` (`client secret <action>`
 * for a client's secrets), parsed with node:util `parseArgs` and validated with the account
 * and client schemas before anything is read or written.
 *
 * Messages name an option or an argument but never repeat the value given: an operator who
 * types a password where a name belongs must not find it echoed into a terminal log.
 */
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { CustomerIdSchema, DepotCodeSchema, UsernameSchema } from '../../lib/accounts/repository.ts';
import { ClientIdSchema, SecretIdSchema } from '../../lib/clients/clients.ts';
import { ALL_SCOPES, isScope, type Scope, sortScopes } from '../../lib/scopes.ts';
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
  | { readonly name: 'client add'; readonly customerId: string; readonly scopes: readonly Scope[] }
  | { readonly name: 'client list'; readonly customerId: string | undefined }
  | {
      readonly name:
        | 'client disable'
        | 'client enable'
        | 'client remove'
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

export type Invocation =
  | { readonly kind: 'help' }
  /** No command at all: the usage text, and a failing exit status. */
  | { readonly kind: 'missing' }
  | { readonly kind: 'run'; readonly command: Command; readonly target: TargetOptions };

const OPTIONS = {
  stage: { type: 'string' },
  region: { type: 'string' },
  customer: { type: 'string' },
  depot: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'skip-invalid': { type: 'boolean' },
  'include-password-hashes': { type: 'boolean' },
  disabled: { type: 'boolean' },
  locked: { type: 'boolean' },
  scope: { type: 'string', multiple: true },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionName = keyof typeof OPTIONS;
const TARGET_OPTIONS: readonly OptionName[] = ['stage', 'region', 'help'];

const isOptionName = (name: string): name is OptionName => Object.hasOwn(OPTIONS, name);

interface CommandSpec {
  /** The names of the positional arguments, for messages. */
  readonly args: readonly string[];
  readonly options: readonly OptionName[];
}

const COMMANDS: Record<CommandName, CommandSpec> = {
  'user add': { args: ['username'], options: ['customer'] },
  'user passwd': { args: ['username'], options: [] },
  'user disable': { args: ['username'], options: [] },
  'user enable': { args: ['username'], options: [] },
  'user logout': { args: ['username'], options: [] },
  'user remove': { args: ['username'], options: [] },
  'user show': { args: ['username'], options: [] },
  'user unlock': { args: ['username'], options: [] },
  'address add': { args: ['customerId'], options: ['depot'] },
  'address list': { args: ['customerId'], options: [] },
  'keys init': { args: [], options: ['force'] },
  'keys list': { args: [], options: [] },
  'keys rotate': { args: [], options: ['force'] },
  'keys revoke': { args: ['kid'], options: ['all'] },
  import: { args: ['file'], options: ['dry-run', 'skip-invalid'] },
  export: { args: [], options: ['include-password-hashes'] },
  'user list': { args: [], options: ['customer', 'disabled', 'locked'] },
  'user refold': { args: [], options: ['dry-run'] },
  'user scopes': { args: ['username'], options: ['scope', 'all'] },
  'customer list': { args: [], options: [] },
  'client add': { args: ['customerId'], options: ['scope'] },
  'client list': { args: [], options: ['customer'] },
  'client disable': { args: ['clientId'], options: [] },
  'client enable': { args: ['clientId'], options: [] },
  'client remove': { args: ['clientId'], options: [] },
  'client unlock': { args: ['clientId'], options: [] },
  'client secret add': { args: ['clientId'], options: [] },
  'client secret remove': { args: ['clientId', 'secretId'], options: [] },
};

/** Commands of one word: `import <file>`, `export`. */
const SINGLE_WORD: ReadonlySet<string> = new Set(['import', 'export']);

const GROUPS = new Set(Object.keys(COMMANDS).map((name) => name.split(' ')[0] ?? name));

/** The first two words of commands of three: `client secret add`. */
const SUBGROUPS: ReadonlySet<string> = new Set(
  Object.keys(COMMANDS)
    .filter((name) => name.split(' ').length === 3)
    .map((name) => name.split(' ').slice(0, 2).join(' ')),
);

const isCommandName = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name);

/** Serverless stage names: letters, digits and hyphens. */
const StageSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9-]{1,32}$/, 'must be 1 to 32 letters, digits or hyphens'),
);
const RegionSchema = v.pipe(v.string(), v.regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'must be like eu-central-1'));
/** Lookups match the stored name exactly, so any name that could have been stored is accepted. */
const ExistingUsernameSchema = v.pipe(v.string(), v.nonEmpty('must not be empty'));

/** Scopes are named by the service itself (lib/scopes.json), so a known one may be echoed. */
const SCOPE_RULE = `must be one of the scopes ${ALL_SCOPES.join(', ')}`;

/** The `--scope` values: each a known scope, none twice, at least one. */
function scopesOf(values: readonly string[], name: CommandName): Scope[] {
  if (values.length === 0)
    throw usageError(`${name} needs at least one --scope <scope> (${ALL_SCOPES.join(', ')})`);
  const known = values.filter(isScope);
  if (known.length < values.length) throw usageError(`invalid --scope: ${SCOPE_RULE}`);
  const twice = known.find((scope, index) => known.indexOf(scope) !== index);
  if (twice !== undefined) throw usageError(`--scope ${twice} is given twice`);
  return sortScopes(known);
}

/** A key id as `keys list` prints it: every kid here is a base64url thumbprint. */
const KidSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a kid as keys list prints it'),
);

function check<TSchema extends v.GenericSchema<string, string>>(
  schema: TSchema,
  value: string,
  what: string,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw usageError(`invalid ${what}: ${result.issues[0]?.message ?? 'not accepted'}`);
}

/** Parses `argv` (without the node and script paths). Throws a usage CliError. */
export function parseInvocation(argv: readonly string[]): Invocation {
  const { positionals, tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  const given = new Map<OptionName, string | true>();
  /** The values of the options that may be given more than once, in order. */
  const repeated = new Map<OptionName, string[]>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (!isOptionName(token.name)) throw usageError(`unknown option ${token.rawName.split('=')[0]}`);
    const spec: { type: 'string' | 'boolean'; multiple?: boolean } = OPTIONS[token.name];
    if (given.has(token.name) && spec.multiple !== true)
      throw usageError(`option --${token.name} is given more than once`);
    if (spec.type === 'string' && token.value === undefined) {
      throw usageError(`option --${token.name} needs a value`);
    }
    if (spec.type === 'boolean' && token.value !== undefined) {
      throw usageError(`option --${token.name} takes no value`);
    }
    given.set(token.name, token.value ?? true);
    if (spec.multiple === true && token.value !== undefined)
      repeated.set(token.name, [...(repeated.get(token.name) ?? []), token.value]);
  }
  const text = (name: OptionName) => {
    const value = given.get(name);
    return typeof value === 'string' ? value : undefined;
  };

  const [group, ...rest] = positionals;
  if (given.has('help') || group === 'help') return { kind: 'help' };
  if (group === undefined) return { kind: 'missing' };
  if (!GROUPS.has(group)) throw unknownCommand(group);
  const single = SINGLE_WORD.has(group);
  const [action] = rest;
  if (!single && action === undefined)
    throw usageError(`${group} needs an action (see: npm run admin -- help)`);
  let name = single ? group : `${group} ${action}`;
  let args = single ? rest : rest.slice(1);
  if (SUBGROUPS.has(name)) {
    const [subaction] = args;
    if (subaction === undefined) throw usageError(`${name} needs an action (see: npm run admin -- help)`);
    name = `${name} ${subaction}`;
    args = args.slice(1);
  }
  if (!isCommandName(name)) throw unknownCommand(name);

  const spec = COMMANDS[name];
  for (const option of given.keys()) {
    if (!TARGET_OPTIONS.includes(option) && !spec.options.includes(option)) {
      throw usageError(`option --${option} does not apply to ${name}`);
    }
  }
  // `keys revoke --all` names no kid: every key goes.
  const revokeAll = name === 'keys revoke' && given.has('all');
  if (revokeAll && args.length > 0) throw usageError('keys revoke takes either <kid> or --all');
  if (!revokeAll && args.length !== spec.args.length) {
    const expected = spec.args.length === 0 ? 'no arguments' : spec.args.map((arg) => `<${arg}>`).join(' ');
    const passwordHint =
      name === 'user add' || name === 'user passwd' ? '; the password is read from stdin' : '';
    throw usageError(`${name} takes ${expected}${passwordHint}`);
  }

  const stage = text('stage');
  const region = text('region');
  if (region !== undefined && stage === undefined) throw usageError('--region applies only with --stage');
  const target: TargetOptions = {
    stage: stage === undefined ? undefined : check(StageSchema, stage, '--stage'),
    region: region === undefined ? undefined : check(RegionSchema, region, '--region'),
  };

  const [first = '', second = ''] = args;
  const command = ((): Command => {
    switch (name) {
      case 'user add': {
        const customer = text('customer');
        return {
          name,
          username: check(UsernameSchema, first, 'username'),
          customerId: customer === undefined ? null : check(CustomerIdSchema, customer, '--customer'),
        };
      }
      case 'user passwd':
      case 'user disable':
      case 'user enable':
      case 'user logout':
      case 'user remove':
      case 'user show':
      case 'user unlock':
        return { name, username: check(ExistingUsernameSchema, first, 'username') };
      case 'address add': {
        const depot = text('depot');
        if (depot === undefined) throw usageError("address add needs --depot <code> (--depot '' for none)");
        return {
          name,
          customerId: check(CustomerIdSchema, first, 'customerId'),
          depotCode: check(DepotCodeSchema, depot, '--depot'),
        };
      }
      case 'address list':
        return { name, customerId: check(CustomerIdSchema, first, 'customerId') };
      case 'keys init':
      case 'keys rotate':
        return { name, force: given.has('force') };
      case 'keys list':
        return { name };
      case 'keys revoke':
        return revokeAll ? { name, all: true } : { name, kid: check(KidSchema, first, 'kid') };
      case 'import':
        return {
          name,
          file: check(v.pipe(v.string(), v.nonEmpty('must not be empty')), first, 'file'),
          dryRun: given.has('dry-run'),
          skipInvalid: given.has('skip-invalid'),
        };
      case 'export':
        return { name, includePasswordHashes: given.has('include-password-hashes') };
      case 'user list': {
        const customer = text('customer');
        return {
          name,
          customerId: customer === undefined ? undefined : check(CustomerIdSchema, customer, '--customer'),
          disabled: given.has('disabled'),
          locked: given.has('locked'),
        };
      }
      case 'user refold':
        return { name, dryRun: given.has('dry-run') };
      case 'user scopes': {
        const scopes = repeated.get('scope') ?? [];
        if (given.has('all') ? scopes.length > 0 : scopes.length === 0)
          throw usageError('user scopes takes either --scope <scope> (one or more) or --all');
        return {
          name,
          username: check(ExistingUsernameSchema, first, 'username'),
          scopes: given.has('all') ? null : scopesOf(scopes, name),
        };
      }
      case 'customer list':
        return { name };
      case 'client add':
        return {
          name,
          customerId: check(CustomerIdSchema, first, 'customerId'),
          scopes: scopesOf(repeated.get('scope') ?? [], name),
        };
      case 'client list': {
        const customer = text('customer');
        return {
          name,
          customerId: customer === undefined ? undefined : check(CustomerIdSchema, customer, '--customer'),
        };
      }
      case 'client disable':
      case 'client enable':
      case 'client remove':
      case 'client unlock':
      case 'client secret add':
        return { name, clientId: check(ClientIdSchema, first, 'clientId') };
      case 'client secret remove':
        return {
          name,
          clientId: check(ClientIdSchema, first, 'clientId'),
          secretId: check(SecretIdSchema, second, 'secretId'),
        };
    }
  })();
  return { kind: 'run', command, target };
}

/** Names the unknown command only when it looks like one: a mistyped password is not shown. */
const unknownCommand = (words: string) =>
  usageError(
    `unknown command${/^[a-z]{1,20}( [a-z]{1,20}){0,2}$/.test(words) ? ` "${words}"` : ''} (see: npm run admin -- help)`,
  );
