/**
 * What each admin command does, given what it needs: the account store, the password on
 * stdin, the stage's bcrypt cost, the key stores, and two writers. Nothing here reads the
 * environment or the process: tests run these against the embedded DynamoDB in-process.
 */
import { BCRYPT_MAX_BYTES, hashPassword, passwordBytes } from '../../lib/auth/passwords.ts';
import { isAppError } from '../../lib/errors.ts';
import type { AccountRepository, UserRecord } from '../../lib/users/repository.ts';
import { failure, quote, usageError } from './errors.ts';
import { initLocalKeys, initStageKeys, type ParameterStore } from './keys.ts';
import type { Command } from './parse.ts';
import type { Target } from './target.ts';

export interface CommandContext {
  readonly target: Target;
  /** The account store of the target; opened on first use. */
  accounts(): AccountRepository;
  /** The first line of stdin. */
  readPassword(): Promise<string>;
  /** The bcrypt cost the target stage's functions use. */
  bcryptCost(): number;
  /** Makes the local key files if missing (scripts/local/keys.ts). */
  ensureLocalKeys(dataDir: string): Promise<{ created: boolean }>;
  /** The SSM parameters of a region. */
  parameters(region: string): ParameterStore;
  /** One result line or JSON document, to stdout. */
  print(text: string): void;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A user as operators see it. Built field by field: the password hash is never among them. */
const publicUser = (user: UserRecord) => ({
  username: user.username,
  enabled: user.enabled,
  customerId: user.customerId,
  depotCode: user.depotCode,
  createdAt: user.createdAt,
  updatedAt: user.updatedAt,
});

/**
 * The new password, checked before it is hashed. bcrypt reads only the first 72 bytes, so a
 * longer password would be silently cut; it is refused instead (and login refuses it too).
 * Messages never contain the password or its length.
 */
async function readNewPassword(context: CommandContext): Promise<string> {
  const password = await context.readPassword();
  if (password === '') throw usageError('the password is empty (it is read from the first line of stdin)');
  if (passwordBytes(password) > BCRYPT_MAX_BYTES) {
    throw usageError(
      `the password is longer than ${BCRYPT_MAX_BYTES} bytes in UTF-8 (bcrypt would ignore the rest; ` +
        'a character outside ASCII takes 2 to 4 bytes)',
    );
  }
  return password;
}

/** Turns the store's NOT_FOUND / ALREADY_EXISTS into the operator's message; rethrows the rest. */
async function onUser<T>(username: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isAppError(error) && error.code === 'NOT_FOUND') throw failure(`user ${quote(username)} not found`);
    if (isAppError(error) && error.code === 'ALREADY_EXISTS') {
      throw failure(error.detail ?? `user ${quote(username)} exists already`);
    }
    throw error;
  }
}

export async function runCommand(command: Command, context: CommandContext): Promise<void> {
  switch (command.name) {
    case 'user add': {
      const password = await readNewPassword(context);
      const passwordHash = await hashPassword(password, context.bcryptCost());
      const { username, customerId } = command;
      await onUser(username, () => context.accounts().createUser({ username, passwordHash, customerId }));
      context.print(
        `created user ${quote(username)}${customerId === null ? '' : ` for customer ${customerId}`}`,
      );
      return;
    }
    case 'user passwd': {
      const password = await readNewPassword(context);
      const passwordHash = await hashPassword(password, context.bcryptCost());
      await onUser(command.username, () =>
        context.accounts().setPasswordHash(command.username, passwordHash),
      );
      context.print(`changed the password of user ${quote(command.username)}`);
      return;
    }
    case 'user disable':
    case 'user enable': {
      const enabled = command.name === 'user enable';
      await onUser(command.username, () => context.accounts().setEnabled(command.username, enabled));
      context.print(`${enabled ? 'enabled' : 'disabled'} user ${quote(command.username)}`);
      return;
    }
    case 'user remove':
      await onUser(command.username, () => context.accounts().removeUser(command.username));
      context.print(`removed user ${quote(command.username)}`);
      return;
    case 'user show': {
      const user = await context.accounts().findByUsername(command.username);
      if (user === null) throw failure(`user ${quote(command.username)} not found`);
      context.print(json(publicUser(user)));
      return;
    }
    case 'address add':
      context.print(json(await context.accounts().addPickupAddress(command.customerId, command.depotCode)));
      return;
    case 'address list':
      context.print(json(await context.accounts().listPickupAddresses(command.customerId)));
      return;
    case 'keys init': {
      const { target } = context;
      if (target.kind === 'local') {
        if (command.force) {
          throw usageError('--force applies only with --stage (local keys are never replaced)');
        }
        const keys = await initLocalKeys(target.dataDir, context.ensureLocalKeys);
        context.print(
          `${keys.created ? 'created the local signing key' : 'the local signing key is already present'} ` +
            `in ${keys.directory}; kid ${keys.kid}`,
        );
        return;
      }
      const keys = await initStageKeys(target.stage, context.parameters(target.region), command.force);
      context.print(
        `${keys.replaced ? 'replaced' : 'created'} the signing key of stage ${target.stage} in SSM (${target.region}); kid ${keys.kid}`,
      );
      return;
    }
  }
}
