/**
 * The admin command line parsed by commander (the tree: ops/admin/program.ts). Commander's
 * own messages are replaced by ours, since some repeat the value given (an excess argument,
 * an unknown `--option=value`) and an operator who types a password where a name belongs
 * must not find it echoed into a terminal log; and help lists every command on one page.
 */
import type { CommanderError, Command as Program } from 'commander';
import { CliError, usageError } from './errors.ts';
import { HELP_WIDTH, synopsis, words } from './help.ts';
import type { Command, TargetOptions } from './parse.ts';
import { addCommands, OPTION_RULES } from './program.ts';
import { rootProgram, targetOf } from './program-root.ts';

export type Invocation =
  /** Help was asked for (exit 0), or no command was named (the overview, exit 2). */
  | { readonly kind: 'help'; readonly text: string; readonly exitCode: 0 | 2 }
  | { readonly kind: 'run'; readonly command: Command; readonly target: TargetOptions };

/** Thrown once help is written; commander would otherwise exit the process. */
class HelpShown extends Error {
  readonly exitCode: 0 | 2;

  constructor(exitCode: 0 | 2) {
    super('help shown');
    this.exitCode = exitCode;
  }
}

/** Every command of the tree under `cmd`, `cmd` included. */
const everyCommand = (cmd: Program): Program[] => [cmd, ...cmd.commands.flatMap(everyCommand)];

/** Names the unknown command only when it looks like one: a mistyped password is not shown. */
const unknownCommand = (words: string) =>
  usageError(
    `unknown command${/^[a-z]{1,20}( [a-z]{1,20}){0,2}$/.test(words) ? ` "${words}"` : ''} (see: npm run admin -- help)`,
  );

/** Our message for an error commander found in `cmd`'s part of the command line. */
function translate(error: CommanderError, cmd: Program, program: Program): never {
  const name = words(cmd);
  switch (error.code) {
    case 'commander.helpDisplayed':
      throw new HelpShown(0);
    // Commander shows help "as an error" for a command that has subcommands but was given none.
    case 'commander.help':
      if (cmd === program) throw new HelpShown(2);
      throw usageError(`${name} needs an action (see: npm run admin -- help)`);
    case 'commander.unknownCommand':
      throw unknownCommand(`${name} ${cmd.args[0] ?? ''}`.trim());
    case 'commander.unknownOption': {
      // `--name=value` is named without its value, `-abc` by its first letter.
      const given = /^error: unknown option '(.*)'$/s.exec(error.message)?.[1] ?? '';
      const flag = given.startsWith('--') ? (given.split('=')[0] ?? '') : given.slice(0, 2);
      if (given.includes('=') && cmd.options.some((option) => option.long === flag))
        throw usageError(`option ${flag} takes no value`);
      const known = everyCommand(program).some((each) => each.options.some((option) => option.long === flag));
      if (!known) throw usageError(`unknown option ${flag}`);
      // Before the command's words (`--customer C-1 user list`), an option names no command yet.
      if (cmd.commands.length > 0) throw usageError(`option ${flag} comes after its command's words`);
      throw usageError(`option ${flag} does not apply to ${name}`);
    }
    case 'commander.optionMissingArgument':
      throw usageError(`option ${/--[a-z-]+/.exec(error.message)?.[0] ?? ''} needs a value`);
    case 'commander.missingMandatoryOptionValue':
      throw usageError(OPTION_RULES[name] ?? `${name} is missing an option`);
    case 'commander.conflictingOption':
      throw usageError(OPTION_RULES[name] ?? `${name} takes options that exclude each other`);
    case 'commander.missingArgument':
    case 'commander.excessArguments': {
      const args = cmd.registeredArguments.map((arg) => `<${arg.name()}>`);
      const hint = name === 'user add' || name === 'user passwd' ? '; the password is read from stdin' : '';
      throw usageError(`${name} takes ${args.length === 0 ? 'no arguments' : args.join(' ')}${hint}`);
    }
    default:
      throw usageError(`the command line is not valid (see: npm run admin -- help)`);
  }
}

/** Parses `argv` (without the node and script paths). Throws a usage CliError. */
export function parseInvocation(argv: readonly string[]): Invocation {
  let found: Command | undefined;
  let help = '';
  const program = rootProgram()
    .configureHelp({ helpWidth: HELP_WIDTH, showGlobalOptions: true })
    .configureOutput({
      writeOut: (text) => {
        help += text;
      },
      writeErr: (text) => {
        help += text;
      },
      outputError: () => {},
    });
  addCommands(program, (command) => {
    found = command;
  });
  program.command('help [command...]', { hidden: true }).action((named: string[]) => {
    let cmd = program;
    for (const word of named) cmd = cmd.commands.find((sub) => sub.name() === word) ?? cmd;
    cmd.outputHelp();
    throw new HelpShown(0);
  });
  for (const cmd of everyCommand(program)) {
    if (cmd.commands.length === 0 && cmd.usage().startsWith('[options]')) cmd.usage(synopsis(cmd));
    cmd.exitOverride((error) => translate(error, cmd, program));
  }

  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof HelpShown) return { kind: 'help', text: help.trimEnd(), exitCode: error.exitCode };
    throw error;
  }
  if (found === undefined) throw new CliError('no command was run', 2);
  return { kind: 'run', command: found, target: targetOf(program.opts()) };
}
