/**
 * `user passkeys list|remove` and `customer policy` (docs/admin.md, "Passkeys"): an operator's
 * recovery for an administrator who lost a passkey, or a customer locked out by its own policy.
 * Each change is an event of the customer's audit trail; a command that changes nothing records
 * nothing.
 */
import { passkeyView } from '../../lib/customer/passkeys.ts';
import { recordOperatorEvent } from './audit.ts';
import type { CommandContext } from './context.ts';
import { failure, quote } from './errors.ts';
import type { Command } from './parse.ts';

type PasskeyCommand = Extract<
  Command,
  { name: 'user passkeys list' | 'user passkeys remove' | 'customer policy' }
>;

export async function runPasskeyCommand(command: PasskeyCommand, context: CommandContext): Promise<void> {
  if (command.name === 'customer policy') {
    const current = await context.policies().find(command.customerId);
    // The DPoP rule stays as the customer's administrators set it.
    const policy = { ...current, administratorsRequirePasskey: command.requirePasskey };
    if (current.administratorsRequirePasskey === command.requirePasskey) {
      context.print(`customer ${command.customerId}'s policy is already that; nothing changed`);
      return;
    }
    await context.policies().set(command.customerId, policy, { actor: context.actor, at: context.now() });
    await recordOperatorEvent(context, {
      type: command.requirePasskey ? 'policy.passkeys.required' : 'policy.passkeys.optional',
      customerId: command.customerId,
    });
    context.print(
      command.requirePasskey
        ? `customer ${command.customerId} requires passkeys of its administrators now`
        : `customer ${command.customerId}'s administrators may sign in with a password again`,
    );
    return;
  }
  const { username } = command;
  const user = await context.accounts().findByUsername(username);
  if (user === null) throw failure(`user ${quote(username)} not found`);
  const passkeys = await context.passkeys().list(username);
  if (command.name === 'user passkeys list') {
    for (const passkey of passkeys) context.print(JSON.stringify(passkeyView(passkey)));
    return;
  }
  const removing =
    command.passkeyId === undefined ? passkeys : passkeys.filter((p) => p.passkeyId === command.passkeyId);
  if (removing.length === 0) {
    if (command.passkeyId !== undefined)
      throw failure(`user ${quote(username)} has no passkey ${command.passkeyId}`);
    context.print(`user ${quote(username)} has no passkeys; nothing changed`);
    return;
  }
  for (const passkey of removing) {
    // Gone since the list: another removal's.
    if (!(await context.passkeys().remove(username, passkey.passkeyId))) continue;
    if (user.customerId !== null)
      await recordOperatorEvent(context, {
        type: 'passkey.removed',
        customerId: user.customerId,
        username,
        passkeyId: passkey.passkeyId,
      });
    context.print(`removed passkey ${passkey.passkeyId} (${passkey.name}) of user ${quote(username)}`);
  }
}
