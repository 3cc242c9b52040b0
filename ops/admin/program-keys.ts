/**
 * The key commands of the admin CLI (`keys init|list|rotate|revoke`); what they do is
 * ops/admin/keys.ts.
 */
import type { Command as Program } from 'commander';
import * as v from 'valibot';
import { usageError } from './errors.ts';
import { group, sub } from './help.ts';
import { type Command, flagOnce, valid } from './parse.ts';

/** A key id as `keys list` prints it: every kid here is a base64url thumbprint. */
const KidSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a kid as keys list prints it'),
);

export function addKeyCommands(program: Program, run: (command: Command) => void): void {
  const KEYS =
    'Keys (a keyring: the active key signs, the next key is published a rotation ahead,\n' +
    'retired keys stay published until the tokens they signed have expired)';
  const keys = group(program, 'keys', KEYS, 'manage the signing keys');
  sub(
    keys,
    'init',
    KEYS,
    'local: create the keyring and key set files if missing. With --stage: create a keyring in ' +
      "SSM (SecureString, encrypted with the stage's keyring key: kmsKeyArn, else the stack's own " +
      'where createKeyringKey is on, else aws/ssm) and its public key set (String)',
  )
    .option(
      '--force',
      'with --stage: replace existing keys; tokens signed with the old keys stop verifying',
      flagOnce('force'),
    )
    .action((options: { force?: boolean }) => run({ name: 'keys init', force: options.force === true }));
  sub(
    keys,
    'list',
    KEYS,
    'one line per key: kid, state (active, next, retired since ...), published or not; exit 1 ' +
      'when a keyring key is not published',
  ).action(() => run({ name: 'keys list' }));
  sub(
    keys,
    'rotate',
    KEYS,
    'the next key signs, a new next key is published, the active key retires; refused within ' +
      'keyReloadInterval of the last rotation. Prints kids only, never key material',
  )
    .option('--force', 'rotate within keyReloadInterval anyway', flagOnce('force'))
    .action((options: { force?: boolean }) => run({ name: 'keys rotate', force: options.force === true }));
  sub(
    keys,
    'revoke',
    KEYS,
    'a key leaked: it leaves the key set and the keyring at once, with no retention, and so does ' +
      'every key that shared the keyring with it (the one it succeeded, the one that succeeded ' +
      'it); revoking the active or the next key replaces both (they share one secret). Every ' +
      "token they signed is refused within keyReloadInterval plus the authorizer's cache " +
      '(docs/deploying.md). The kid goes after --, since a kid may begin with -. --all: a leak of ' +
      'unknown date: every key goes, retired ones included, and a fresh active and next key ' +
      'replace them (counter secret kept)',
  )
    .usage('[--all | -- <kid>]')
    .argument('[kid]', 'as keys list prints it', valid(KidSchema, 'kid'))
    .option('--all', 'every key', flagOnce('all'))
    .action((kid: string | undefined, options: { all?: boolean }) => {
      if (options.all === true && kid !== undefined)
        throw usageError('keys revoke takes either <kid> or --all');
      if (options.all === true) run({ name: 'keys revoke', all: true });
      else if (kid === undefined) throw usageError('keys revoke takes <kid>');
      else run({ name: 'keys revoke', kid });
    });
}
