/**
 * `user admin grant` and `user admin revoke`: a user administers its own customer's credentials
 * only while an operator has granted it (docs/admin.md, "Administrators"). Each change is an
 * event of the customer's audit trail; a command that changes nothing records nothing.
 */
import { isAppError } from '../../lib/errors.ts';
import { recordOperatorEvent } from './audit.ts';
import type { CommandContext } from './context.ts';
import { failure, quote } from './errors.ts';
import type { Command } from './parse.ts';

type AdministratorCommand = Extract<Command, { name: 'user admin grant' | 'user admin revoke' }>;

const noCustomer = (username: string) =>
  failure(
    `user ${quote(username)} has no customer to administer ` +
      '(only a user added with --customer acts for one)',
  );

export async function runAdministratorCommand(
  command: AdministratorCommand,
  context: CommandContext,
): Promise<void> {
  const { username } = command;
  const accounts = context.accounts();
  const notFound = () => failure(`user ${quote(username)} not found`);
  const user = await accounts.findByUsername(username);
  if (user === null) throw notFound();
  const grant = command.name === 'user admin grant';
  const { customerId } = user;
  if (customerId === null) {
    if (grant) throw noCustomer(username);
    context.print(`user ${quote(username)} administers no customer; nothing changed`);
    return;
  }
  if (user.admin === grant) {
    context.print(
      `user ${quote(username)} ${grant ? 'administers' : 'does not administer'} customer ${customerId} already; nothing changed`,
    );
    return;
  }
  try {
    await accounts.setAdministrator(username, grant);
  } catch (error) {
    if (isAppError(error) && error.code === 'NOT_FOUND') throw notFound();
    if (isAppError(error) && error.reason === 'no-customer') throw noCustomer(username);
    throw error;
  }
  await recordOperatorEvent(context, {
    type: grant ? 'user.admin.granted' : 'user.admin.revoked',
    customerId,
    username,
  });
  context.print(
    grant
      ? `user ${quote(username)} administers customer ${customerId} now`
      : `user ${quote(username)} no longer administers customer ${customerId}; revoked its sessions and access tokens`,
  );
}
