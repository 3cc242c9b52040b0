/**
 * The admin commands as a commander tree: each command's words, arguments, options, the check
 * of every value (ops/admin/parse.ts) and its help. A command's action only records what to
 * run; ops/admin/cli.ts runs the tree and ops/admin/commands.ts does the work.
 */
import { Option, type Command as Program } from 'commander';
import * as v from 'valibot';
import { CustomerIdSchema, DepotCodeSchema, UsernameSchema } from '../../lib/accounts/repository.ts';
import { ClientIdSchema, ClientNameSchema, SecretIdSchema } from '../../lib/clients/clients.ts';
import { ALL_SCOPES } from '../../lib/scopes.ts';
import { usageError } from './errors.ts';
import { group, sub } from './help.ts';
import { type Command, collect, DPOP_OPTION, flagOnce, JWKS_OPTION, once, scopesOf, valid } from './parse.ts';
import { addAuditCommands } from './program-audit.ts';
import { addKeyCommands } from './program-keys.ts';
import { addPasskeyCommands, PASSKEY_OR_ALL } from './program-passkeys.ts';
import { addPlatformCommands, PLATFORM_OPTION_RULE } from './program-platforms.ts';

/** Lookups match the stored name exactly, so any name that could have been stored is accepted. */
const ExistingUsernameSchema = v.pipe(v.string(), v.nonEmpty('must not be empty'));
const FileSchema = v.pipe(v.string(), v.nonEmpty('must not be empty'));

const SCOPES_OR_ALL = 'user scopes takes either --scope <scope> (one or more) or --all';

/**
 * What a command says when commander finds a mandatory option of it left out, or two that
 * exclude each other given (ops/admin/cli.ts); `user scopes` says the same given neither.
 */
export const OPTION_RULES: Readonly<Record<string, string>> = {
  'address add': "address add needs --depot <code> (--depot '' for none)",
  'client add': `client add needs at least one --scope <scope> (${ALL_SCOPES.join(', ')})`,
  'platform add': PLATFORM_OPTION_RULE,
  'user scopes': SCOPES_OR_ALL,
  'customer policy': 'customer policy needs --require-passkey true or false',
  'user passkeys remove': PASSKEY_OR_ALL,
};

const username = valid(ExistingUsernameSchema, 'username');
const customerId = valid(CustomerIdSchema, 'customerId');
const clientId = valid(ClientIdSchema, 'clientId');
const customerOption = once('customer', valid(CustomerIdSchema, '--customer'));

/**
 * Adds every command to `program`, which passes its output settings on to them. `run`
 * receives the command an invocation names, every value checked.
 */
export function addCommands(program: Program, run: (command: Command) => void): void {
  const USERS = 'Users';
  const user = group(program, 'user', USERS, 'manage users');
  sub(user, 'add', USERS, 'create a user, enabled; the password is the first line of stdin')
    .argument('<username>', undefined, valid(UsernameSchema, 'username'))
    .option('--customer <customerId>', 'the customer the user acts for', customerOption)
    .action((name: string, options: { customer?: string }) =>
      run({ name: 'user add', username: name, customerId: options.customer ?? null }),
    );
  const byName = (
    action: 'passwd' | 'disable' | 'enable' | 'logout' | 'remove' | 'show' | 'unlock',
    description: string,
  ) =>
    sub(user, action, USERS, description)
      .argument('<username>', undefined, username)
      .action((name: string) => run({ name: `user ${action}`, username: name }));
  byName(
    'passwd',
    "set a new password, read from the first line of stdin; revokes the user's sessions and access tokens",
  );
  byName('disable', "refuse the user's logins; revokes its sessions and access tokens");
  byName('enable', 'allow them again (revoked sessions stay revoked)');
  byName('logout', 'revoke every session and access token the user has now');
  byName('remove', 'delete the user; its sessions and access tokens stop verifying');
  byName(
    'show',
    'print the user as JSON (never the password hash), with its scopes (null: every scope) and ' +
      'failed logins: failures, lastAttemptAt, lockedUntil (for unknown sources; null when not ' +
      'locked), knownSources (how many) and knownSourcesLocked (each locked on its own)',
  );
  byName(
    'unlock',
    'clear the failed logins of the username and of its known sources, ending every lock of ' +
      'it; its known sources stay known; the counters of source addresses are not touched ' +
      '(they only decay)',
  );
  sub(user, 'list', USERS, 'every user (never a hash), as JSON Lines, or a table on a terminal')
    .option('--customer <customerId>', "only the customer's users", customerOption)
    .option('--disabled', 'only disabled users', flagOnce('disabled'))
    .option('--locked', 'only users whose logins are locked now', flagOnce('locked'))
    .action((options: { customer?: string; disabled?: boolean; locked?: boolean }) =>
      run({
        name: 'user list',
        customerId: options.customer,
        disabled: options.disabled === true,
        locked: options.locked === true,
      }),
    );
  sub(
    user,
    'scopes',
    USERS,
    "narrow the user's tokens to these scopes, or --all: every scope again (also any added " +
      'later); either revokes its sessions and access tokens (it logs in again for tokens with ' +
      'the new scopes)',
  )
    .argument('<username>', undefined, username)
    .option('--scope <scope>', `one of ${ALL_SCOPES.join(', ')}; repeated for more`, collect)
    .addOption(new Option('--all', 'every scope').argParser(flagOnce('all')).conflicts('scope'))
    .action((name: string, options: { scope?: string[]; all?: boolean }) => {
      // Commander refuses both; neither is refused here.
      if (options.all === true) run({ name: 'user scopes', username: name, scopes: null });
      else if (options.scope === undefined) throw usageError(SCOPES_OR_ALL);
      else run({ name: 'user scopes', username: name, scopes: scopesOf(options.scope, 'user scopes') });
    });
  const admin = group(user, 'admin', USERS, "grant or revoke a user's administration of its customer");
  sub(
    admin,
    'grant',
    USERS,
    "the user administers its own customer's API clients (no other customer's); refused for a " +
      'user without a customer. Recorded in the audit trail',
  )
    .argument('<username>', undefined, username)
    .action((name: string) => run({ name: 'user admin grant', username: name }));
  sub(
    admin,
    'revoke',
    USERS,
    'the user no longer administers its customer; revokes its sessions and access tokens. ' +
      'Recorded in the audit trail',
  )
    .argument('<username>', undefined, username)
    .action((name: string) => run({ name: 'user admin revoke', username: name }));
  sub(
    user,
    'refold',
    USERS,
    'once per stage, before deploying a version that folds usernames in full: move each user ' +
      '(and membership) stored under the key of the old folding to its new key; names that now ' +
      'fold alike are listed, left as they are, and exit 1',
  )
    .option('--dry-run', 'write nothing', flagOnce('dry-run'))
    .action((options: { dryRun?: boolean }) => run({ name: 'user refold', dryRun: options.dryRun === true }));

  const customer = group(program, 'customer', 'Customers', 'list customers, set their passkey policy');
  sub(customer, 'list', 'Customers', 'every customer with its number of addresses and depot code').action(
    () => run({ name: 'customer list' }),
  );
  addPasskeyCommands(user, customer, username, run);

  const CLIENTS = `API clients (OAuth 2.0 client credentials for an integrator's systems: docs/admin.md);\na <scope> is one of ${ALL_SCOPES.join(', ')}`;
  const client = group(program, 'client', CLIENTS, 'manage API clients');
  sub(
    client,
    'add',
    CLIENTS,
    'create a client acting for the customer with these scopes; prints its client id, secret id ' +
      'and secret on stdout, the secret only this once (only its digest is stored)',
  )
    .argument('<customerId>', undefined, customerId)
    .requiredOption('--scope <scope>', 'a scope of its tokens; repeated for more', collect)
    .option(
      '--name <name>',
      'what its administrators call it: 1 to 100 characters, no control character, no space at either end',
      once('name', valid(ClientNameSchema, '--name')),
    )
    .option('--jwks <file>', JWKS_OPTION, once('jwks', String))
    .option('--dpop', DPOP_OPTION)
    .action((id: string, options: { scope: string[]; name?: string; jwks?: string; dpop?: boolean }) =>
      run({
        name: 'client add',
        customerId: id,
        scopes: scopesOf(options.scope, 'client add'),
        clientName: options.name,
        jwksFile: options.jwks,
        dpop: options.dpop === true,
      }),
    );
  sub(
    client,
    'list',
    CLIENTS,
    'every client: id, customer, name, scopes, enabled, live secrets (id, createdAt, expiresAt ' +
      'and last use, never a digest), as JSON Lines, or a table on a terminal',
  )
    .option('--customer <customerId>', "only the customer's clients", customerOption)
    .action((options: { customer?: string }) => run({ name: 'client list', customerId: options.customer }));
  const byClient = (
    parent: Program,
    action: 'disable' | 'enable' | 'remove' | 'show' | 'unlock',
    description: string,
  ) =>
    sub(parent, action.split(' ').at(-1) ?? action, CLIENTS, description)
      .argument('<clientId>', undefined, clientId)
      .action((id: string) => run({ name: `client ${action}`, clientId: id }));
  byClient(
    client,
    'disable',
    "refuse the client's grants; its access tokens stop within the stage's revocation bound " +
      '(revocationCacheTtl + authorizerCacheTtl)',
  );
  byClient(client, 'enable', 'allow its grants again (revoked tokens stay revoked)');
  byClient(client, 'remove', 'delete the client; its access tokens stop as with disable');
  byClient(
    client,
    'show',
    'print the client as JSON (never a digest), with its failed authentications as user show ' +
      'prints failed logins',
  );
  byClient(
    client,
    'unlock',
    'clear the failed authentications of the client id and of its known sources, ending every ' +
      'lock of it (anyone who knows a client id can lock it, as a username); its known sources ' +
      'stay known; the counters of source addresses are not touched',
  );
  const secret = group(client, 'secret', CLIENTS, "manage a client's secrets");
  sub(
    secret,
    'add',
    CLIENTS,
    'a second live secret, printed once as with client add; refused when the client has two live ones (remove one first)',
  )
    .argument('<clientId>', undefined, clientId)
    .option(
      '--jwks <file>',
      'for a client of keys: a JWK Set file of its one next public key (a rotation), instead of a secret',
      once('jwks', String),
    )
    .action((id: string, options: { jwks?: string }) =>
      run({ name: 'client secret add', clientId: id, jwksFile: options.jwks }),
    );
  sub(
    secret,
    'remove',
    CLIENTS,
    'the secret stops working, and so do the tokens granted with it; refused for the client’s last live secret',
  )
    .argument('<clientId>', undefined, clientId)
    .argument('<secretId>', undefined, valid(SecretIdSchema, 'secretId'))
    .action((id: string, secretId: string) => run({ name: 'client secret remove', clientId: id, secretId }));

  addPlatformCommands(program, run);
  addAuditCommands(program, run);

  const BULK =
    'Import and export (JSON Lines, one customer, user or client per line, or users alone in a\n' +
    '.csv file with a header row: docs/import-format.md)';
  sub(
    program,
    'import',
    BULK,
    'check every record, then write customers, users and clients in batches; existing ones are ' +
      'never overwritten. Nothing is written if a record is invalid (--skip-invalid writes the ' +
      'valid ones). Running it again changes nothing; an interrupted import resumes',
  )
    .argument('<file>', undefined, valid(FileSchema, 'file'))
    .option('--dry-run', 'check every record, write nothing', flagOnce('dry-run'))
    .option('--skip-invalid', 'write the valid records', flagOnce('skip-invalid'))
    .action((file: string, options: { dryRun?: boolean; skipInvalid?: boolean }) =>
      run({
        name: 'import',
        file,
        dryRun: options.dryRun === true,
        skipInvalid: options.skipInvalid === true,
      }),
    );
  sub(
    program,
    'export',
    BULK,
    "every customer, user and client as import records, to stdout; users' password hashes and " +
      "clients' secret digests only with the option (a file with them is as secret as the stage's accounts)",
  )
    .option('--include-password-hashes', 'with the hashes and digests', flagOnce('include-password-hashes'))
    .action((options: { includePasswordHashes?: boolean }) =>
      run({ name: 'export', includePasswordHashes: options.includePasswordHashes === true }),
    );

  const ADDRESSES = 'Pickup addresses';
  const address = group(program, 'address', ADDRESSES, "manage customers' pickup addresses");
  sub(address, 'add', ADDRESSES, 'append a pickup address and print it as JSON')
    .argument('<customerId>', undefined, customerId)
    .requiredOption(
      '--depot <code>',
      "its depot code (--depot '' for none)",
      once('depot', valid(DepotCodeSchema, '--depot')),
    )
    .action((id: string, options: { depot: string }) =>
      run({ name: 'address add', customerId: id, depotCode: options.depot }),
    );
  sub(address, 'list', ADDRESSES, "print the customer's pickup addresses in order, as JSON")
    .argument('<customerId>', undefined, customerId)
    .action((id: string) => run({ name: 'address list', customerId: id }));

  addKeyCommands(program, run);
}
