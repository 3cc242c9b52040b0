/**
 * What each admin command does, given what it needs: the account store, the API clients, the
 * failed-login counters, the audit trail, the password on stdin, the stage's parameters, the
 * key stores, a clock, and a writer. Nothing here reads the environment or the process: tests
 * run these against the embedded DynamoDB in-process.
 */

import type { UserRecord } from '../../lib/accounts/repository.ts';
import { hashPassword, newPasswordProblem } from '../../lib/auth/passwords.ts';
import { isAppError } from '../../lib/errors.ts';
import { usernameCounterKey } from '../../lib/throttle/counters.ts';
import { readNameLocks, unlockName } from '../../lib/throttle/locks.ts';
import { runAdministratorCommand } from './administrators.ts';
import { listAuditEvents } from './audit.ts';
import { exportCommand, importCommand, listCustomers, listUsers, refoldUsers } from './bulk.ts';
import { runClientCommand } from './clients.ts';
import type { CommandContext } from './context.ts';
import { failure, quote, usageError } from './errors.ts';
import {
  initLocalKeys,
  initStageKeys,
  type KeyLocation,
  listKeys,
  localKeyLocation,
  readCounterSecret,
  revokeAllKeys,
  revokeKeys,
  rotateKeys,
  showDuration,
  stageKeyLocation,
} from './keys.ts';
import { failedLogins, unlockedLines } from './locks.ts';
import type { Command } from './parse.ts';
import { runPasskeyCommand } from './passkeys.ts';
import { runPlatformCommand } from './platforms.ts';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A user as operators see it. Built field by field: the password hash is never among them. */
const publicUser = (user: UserRecord) => ({
  username: user.username,
  enabled: user.enabled,
  customerId: user.customerId,
  depotCode: user.depotCode,
  /** null: every scope, including any the service adds later. */
  scopes: user.scopes,
  /** Administers its customer: only when an operator granted it (user admin grant). */
  admin: user.admin,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
});

/** The new password of `username` from stdin, refused (usage error naming the rule) by the policy. */
async function readNewPassword(context: CommandContext, username: string): Promise<string> {
  const password = await context.readPassword();
  if (password === '') throw usageError('the password is empty (it is read from the first line of stdin)');
  const problem = newPasswordProblem(password, username);
  if (problem !== undefined) throw usageError(problem);
  return password;
}

/** The user stored under exactly `username`, or exit 1 naming it. */
async function existingUser(context: CommandContext, username: string): Promise<UserRecord> {
  const user = await context.accounts().findByUsername(username);
  if (user === null) throw failure(`user ${quote(username)} not found`);
  return user;
}

/** Turns the store's NOT_FOUND / ALREADY_EXISTS into the operator's message; rethrows the rest. */
async function onUser<T>(username: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isAppError(error) && error.code === 'NOT_FOUND') throw failure(`user ${quote(username)} not found`);
    if (isAppError(error) && error.reason === 'user-exists')
      throw failure('a user with this name (in any letter case) exists');
    throw error;
  }
}

/** The revocation every command that ends a user's sessions reports. */
const REVOKED = 'revoked its sessions and access tokens';

/** The secret the target keys its username counters with; the local stage's keys are made if missing. */
async function counterSecret(context: CommandContext): Promise<Uint8Array> {
  const { target } = context;
  if (target.kind === 'local') await context.ensureLocalKeys(target.dataDir);
  return readCounterSecret(keyLocation(context));
}

function keyLocation(context: CommandContext): KeyLocation {
  const { target } = context;
  return target.kind === 'local'
    ? localKeyLocation(context.localKeyFiles(target.dataDir))
    : stageKeyLocation(
        target.stage,
        target.region,
        context.parameters(target.region),
        context.stageParams().kmsKeyArn,
      );
}

export async function runCommand(command: Command, context: CommandContext): Promise<void> {
  switch (command.name) {
    case 'user add': {
      const password = await readNewPassword(context, command.username);
      const passwordHash = await hashPassword(password, context.stageParams().bcryptCost);
      const { username, customerId } = command;
      await onUser(username, () => context.accounts().createUser({ username, passwordHash, customerId }));
      context.print(
        `created user ${quote(username)}${customerId === null ? '' : ` for customer ${customerId}`}`,
      );
      return;
    }
    case 'user passwd': {
      const password = await readNewPassword(context, command.username);
      const passwordHash = await hashPassword(password, context.stageParams().bcryptCost);
      await onUser(command.username, () =>
        context.accounts().setPasswordHash(command.username, passwordHash),
      );
      context.print(`changed the password of user ${quote(command.username)} and ${REVOKED}`);
      return;
    }
    case 'user disable':
      await onUser(command.username, () => context.accounts().setEnabled(command.username, false));
      context.print(`disabled user ${quote(command.username)} and ${REVOKED}`);
      return;
    case 'user enable':
      await onUser(command.username, () => context.accounts().setEnabled(command.username, true));
      context.print(`enabled user ${quote(command.username)}`);
      return;
    case 'user logout':
      await onUser(command.username, () => context.accounts().revokeUserTokens(command.username));
      context.print(`revoked the sessions and access tokens of user ${quote(command.username)}`);
      return;
    case 'user scopes': {
      const { username, scopes } = command;
      await onUser(username, () => context.accounts().setUserScopes(username, scopes));
      const what =
        scopes === null
          ? `gave user ${quote(username)} every scope again`
          : `narrowed user ${quote(username)} to the scopes ${scopes.join(' ')}`;
      // Its tokens carry the scopes they were issued with: the user logs in again for the new ones.
      context.print(`${what} and ${REVOKED}; it logs in again for tokens with these scopes`);
      return;
    }
    case 'user remove':
      // No token of a user that does not exist verifies, and a user created later under the
      // same name starts with its own revocation cutoff.
      await onUser(command.username, () => context.accounts().removeUser(command.username));
      context.print(`removed user ${quote(command.username)} and ${REVOKED}`);
      return;
    case 'user show': {
      // The counters only of a user that exists: for any other name it is "not found", as ever.
      const user = await existingUser(context, command.username);
      const key = usernameCounterKey(user.username, await counterSecret(context));
      const locks = await readNameLocks(context.loginFailures(), key, context.stageParams(), context.now());
      context.print(json({ ...publicUser(user), failedLogins: failedLogins(locks) }));
      return;
    }
    case 'user unlock': {
      // The username's counter and its known sources': a source address's counter stays, and only decays.
      const user = await existingUser(context, command.username);
      const key = usernameCounterKey(user.username, await counterSecret(context));
      const store = context.loginFailures();
      const locks = await readNameLocks(store, key, context.stageParams(), context.now());
      await unlockName(store, key, locks);
      for (const line of unlockedLines(`the failed logins of user ${quote(user.username)}`, locks))
        context.print(line);
      return;
    }
    case 'user admin grant':
    case 'user admin revoke':
      await runAdministratorCommand(command, context);
      return;
    case 'user passkeys list':
    case 'user passkeys remove':
    case 'customer policy':
      await runPasskeyCommand(command, context);
      return;
    case 'audit list':
      await listAuditEvents(command, context);
      return;
    case 'address add':
      context.print(json(await context.accounts().addPickupAddress(command.customerId, command.depotCode)));
      return;
    case 'address list':
      context.print(json(await context.accounts().listPickupAddresses(command.customerId)));
      return;
    case 'keys init': {
      const { target } = context;
      const location = keyLocation(context);
      if (target.kind === 'local') {
        if (command.force) {
          throw usageError(
            '--force applies only with --stage (local keys are never replaced; keys rotate changes them)',
          );
        }
        const keys = await initLocalKeys(location, () => context.ensureLocalKeys(target.dataDir));
        context.print(
          `${keys.created ? 'created the local signing keyring' : 'the local signing keyring is already present'} ` +
            `${location.where}; active kid ${keys.active}, next kid ${keys.next}`,
        );
        return;
      }
      const keys = await initStageKeys(location, context.now(), command.force);
      context.print(
        `${keys.created ? 'created' : 'replaced'} the signing keyring of stage ${target.stage} ${location.where}; ` +
          `active kid ${keys.active}, next kid ${keys.next}`,
      );
      return;
    }
    case 'keys list':
      await listKeys(keyLocation(context), context.print);
      return;
    case 'keys revoke': {
      const location = keyLocation(context);
      const params = context.stageParams();
      const revoked =
        'all' in command
          ? await revokeAllKeys(location, context.now())
          : await revokeKeys(location, command.kid, context.now(), params.keyReloadIntervalSeconds);
      for (const kid of revoked.revoked)
        context.print(`revoked ${kid}: no longer published, nor in the keyring`);
      if (revoked.replaced) {
        context.print(`active  ${revoked.active} (new: signs as soon as a function reloads)`);
        context.print(`next    ${revoked.next} (new)`);
      }
      context.print(
        `the functions load the change within ${showDuration(params.keyReloadIntervalSeconds)}; ` +
          'tokens signed by a revoked key are refused from then (docs/deploying.md: a signing key leaked)',
      );
      return;
    }
    case 'import':
      await importCommand(command, context);
      return;
    case 'export':
      await exportCommand(command, context);
      return;
    case 'user list':
      await listUsers(command, context, () => counterSecret(context));
      return;
    case 'user refold':
      await refoldUsers(command, context);
      return;
    case 'customer list':
      await listCustomers(context);
      return;
    case 'client add':
    case 'client list':
    case 'client disable':
    case 'client enable':
    case 'client remove':
    case 'client show':
    case 'client unlock':
    case 'client secret add':
    case 'client secret remove':
      await runClientCommand(command, context, () => counterSecret(context));
      return;
    case 'platform add':
    case 'platform list':
    case 'platform show':
    case 'platform disable':
    case 'platform enable':
    case 'platform remove':
    case 'platform redirect-uri add':
    case 'platform redirect-uri remove':
      await runPlatformCommand(command, context);
      return;
    case 'keys rotate': {
      const location = keyLocation(context);
      const params = context.stageParams();
      const rotated = await rotateKeys({ location, params, now: () => context.now(), force: command.force });
      context.print(
        `rotated the signing keys of stage ${location.stage} ${location.where}; ` +
          `the functions load them within ${showDuration(params.keyReloadIntervalSeconds)}`,
      );
      context.print(`active  ${rotated.active} (was next)`);
      context.print(`next    ${rotated.next} (new: published now, signs after the next rotation)`);
      context.print(
        `retired ${rotated.retired} (was active: published until a rotation after ${rotated.retiredUntil})`,
      );
      const dropped = rotated.dropped.map(({ kid, retiredAt }) => `dropped ${kid} (retired ${retiredAt})`);
      for (const line of dropped.length === 0 ? ['dropped none'] : dropped) context.print(line);
      return;
    }
  }
}
