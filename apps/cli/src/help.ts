import type { Command } from 'commander';

/** Adds the examples a command's --help ends with: every command shows at least one. */
export function examples(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`);
}
