/**
 * The layout of the admin CLI's help: the overview (`help`, `--help`) lists every command on
 * one page, under its group's heading, with its arguments and options; a term longer than its
 * column gets a line of its own. Commander builds the rest.
 */
import { Help, type Option, type Command as Program } from 'commander';
import { collect } from './parse.ts';

/** Descriptions start at column 28 and end by column 94. */
const TERM_WIDTH = 23;
export const HELP_WIDTH = 94;

/** The command's words after the program's name: `client secret add`. */
export const words = (cmd: Program): string =>
  cmd.parent === null ? '' : `${words(cmd.parent)} ${cmd.name()}`.trim();

/** Adds the command `name` under `parent`, listed under `heading` in the overview. */
export const sub = (parent: Program, name: string, heading: string, description: string) =>
  parent.command(name).helpGroup(heading).description(description);

/** A command that only groups others (`user`, `client secret`); `help` is the program's alone. */
export const group = (parent: Program, name: string, heading: string, description: string) =>
  sub(parent, name, heading, description).helpCommand(false);

/** `<username> [--customer <customerId>]`: a command's arguments and options, for its usage line. */
export function synopsis(cmd: Program): string {
  const option = (o: Option) =>
    `${o.mandatory ? o.flags : `[${o.flags}]`}${o.parseArg === collect ? '...' : ''}`;
  return [
    ...cmd.registeredArguments.map((arg) => (arg.required ? `<${arg.name()}>` : `[${arg.name()}]`)),
    ...cmd.options.map(option),
  ].join(' ');
}

export class AdminHelp extends Help {
  override visibleCommands(cmd: Program): Program[] {
    const visible = super.visibleCommands(cmd);
    return cmd.parent === null ? visible.flatMap((sub) => this.leaves(sub)) : visible;
  }

  private leaves(cmd: Program): Program[] {
    const subs = super.visibleCommands(cmd);
    return subs.length === 0 ? [cmd] : subs.flatMap((sub) => this.leaves(sub));
  }

  override subcommandTerm(cmd: Program): string {
    // A command without arguments or options of its own keeps commander's `[options]`.
    const usage = cmd.usage() === '[options]' ? '' : cmd.usage();
    return `${words(cmd)} ${cmd.commands.length === 0 ? usage : '<action>'}`.trim();
  }

  override padWidth(cmd: Program, helper: Help): number {
    return Math.min(super.padWidth(cmd, helper), TERM_WIDTH);
  }

  override formatItem(term: string, termWidth: number, description: string, helper: Help): string {
    if (description === '' || helper.displayWidth(term) <= termWidth)
      return super.formatItem(term, termWidth, description, helper);
    return `  ${term}\n${super.formatItem('', termWidth, description, helper)}`;
  }
}
