/**
 * The admin program without its commands (ops/admin/program.ts adds them): its name, its
 * global options `--stage` and `--region` and the target they name, and its help's layout
 * (ops/admin/help.ts) and closing text.
 */
import { type Help, Command as Program } from 'commander';
import * as v from 'valibot';
import { usageError } from './errors.ts';
import { AdminHelp } from './help.ts';
import { once, type TargetOptions, valid } from './parse.ts';

/** Serverless stage names: letters, digits and hyphens. */
const StageSchema = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9-]{1,32}$/, 'must be 1 to 32 letters, digits or hyphens'),
);
const RegionSchema = v.pipe(v.string(), v.regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'must be like eu-central-1'));

const PASSWORDS = `Passwords are never arguments. Pipe them, or type them when prompted (not echoed):
  printf '%s\\n' "$NEW_PASSWORD" | npm run --silent admin -- user add alice --customer C-1001
A new password has at least 12 characters (Unicode code points) and at most 72 bytes in
UTF-8 (bcrypt ignores the rest), is not the username in any letter case, and has no control
characters and no U+FFFD (login refuses those).

Exit status: 0 done, 1 the operation failed, 2 a usage error or an invalid value.`;

/** Commander's Command, making its subcommands and help with the admin CLI's help layout. */
class AdminProgram extends Program {
  override createCommand(name?: string): Program {
    return new AdminProgram(name);
  }

  override createHelp(): Help {
    return Object.assign(new AdminHelp(), this.configureHelp());
  }
}

/** The admin program without its commands: its global options (`--stage`, `--region`) and help. */
export function rootProgram(): Program {
  const program = new AdminProgram('npm run admin --')
    .usage('<command> [options]')
    .description(
      'Operator commands of parcel-auth. Without --stage they act on the local stack (npm start):\n' +
        'DynamoDB at 127.0.0.1:$DYNAMODB_PORT (default 8000) and key files under $DATA_DIR (default .data).',
    )
    .option(
      '--stage <name>',
      'a deployed stage: its tables, credentials from the AWS chain (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...)',
      once('stage', valid(StageSchema, '--stage')),
    )
    .option(
      '--region <region>',
      'with --stage; default $AWS_REGION, else eu-central-1',
      once('region', valid(RegionSchema, '--region')),
    )
    .helpOption('-h, --help', 'this text')
    .helpCommand(false)
    // ops/admin/cli.ts reads the option from commander's message, unsuggested, for its own.
    .showSuggestionAfterError(false)
    .addHelpText('after', `\n${PASSWORDS}`);
  return program;
}

/** The target of a run; `--region` alone names no stage. */
export function targetOf(options: { stage?: string; region?: string }): TargetOptions {
  if (options.region !== undefined && options.stage === undefined)
    throw usageError('--region applies only with --stage');
  return { stage: options.stage, region: options.region };
}
