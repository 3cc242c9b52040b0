/**
 * The passkey commands of the admin CLI (docs/admin.md, "Passkeys"): a user's passkeys listed and
 * removed, and a customer's passkey policy set; what they do is ops/admin/passkeys.ts.
 */
import { Option, type Command as Program } from 'commander';
import * as v from 'valibot';
import { CustomerIdSchema } from '../../lib/accounts/repository.ts';
import { PasskeyIdSchema } from '../../lib/passkeys/webauthn.ts';
import { usageError } from './errors.ts';
import { group, sub } from './help.ts';
import { type Command, flagOnce, once, valid } from './parse.ts';

/** The rule `user passkeys remove` states when given neither its id nor --all (ops/admin/program.ts OPTION_RULES). */
export const PASSKEY_OR_ALL = 'user passkeys remove takes either <passkeyId> or --all';

const requirePasskey = once(
  'require-passkey',
  valid(v.picklist(['true', 'false'], 'must be true or false'), '--require-passkey'),
);

export function addPasskeyCommands(
  user: Program,
  customer: Program,
  username: (value: string) => string,
  run: (command: Command) => void,
): void {
  const PASSKEYS =
    'Passkeys (an administrator’s WebAuthn credentials: docs/administrators.md); each removal and\n' +
    'policy change is in the customer’s audit trail';
  const passkeys = group(user, 'passkeys', PASSKEYS, "list or remove a user's passkeys");
  sub(
    passkeys,
    'list',
    PASSKEYS,
    "the user's passkeys: id, name, created, last used, synced (never a key), as JSON Lines",
  )
    .argument('<username>', undefined, username)
    .action((name: string) => run({ name: 'user passkeys list', username: name }));
  sub(
    passkeys,
    'remove',
    PASSKEYS,
    'remove one of the user’s passkeys, or --all of them (a lost phone, a left employee): they sign in no more',
  )
    .argument('<username>', undefined, username)
    .argument('[passkeyId]', undefined, valid(PasskeyIdSchema, 'passkeyId'))
    .addOption(new Option('--all', 'every passkey of the user').argParser(flagOnce('all')))
    .action((name: string, passkeyId: string | undefined, options: { all?: boolean }) => {
      if ((passkeyId === undefined) === (options.all !== true)) throw usageError(PASSKEY_OR_ALL);
      run({ name: 'user passkeys remove', username: name, passkeyId });
    });
  sub(
    customer,
    'policy',
    PASSKEYS,
    "set the customer's passkey policy: --require-passkey false lets its administrators sign in with " +
      'a password again (one who lost every passkey); true requires passkeys of them',
  )
    .argument('<customerId>', undefined, valid(CustomerIdSchema, 'customerId'))
    .requiredOption(
      '--require-passkey <true|false>',
      'whether its administrators must sign in with a passkey',
      requirePasskey,
    )
    .action((customerId: string, options: { requirePasskey: 'true' | 'false' }) =>
      run({ name: 'customer policy', customerId, requirePasskey: options.requirePasskey === 'true' }),
    );
}
