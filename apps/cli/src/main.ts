import { CommanderError } from 'commander';
import { Context } from './context.ts';
import { describeFailure, EXIT_OK, EXIT_USAGE, exitCodeOf } from './failures.ts';
import { buildProgram } from './program.ts';

/** Runs the command line and answers its exit status: 0 done, 1 failed, 2 wrong usage. */
export async function main(argv: string[], ctx: Context): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end this way too; commander already printed what it had to say.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version'
        ? EXIT_OK
        : EXIT_USAGE;
    }
    let baseUrl: string | undefined;
    try {
      baseUrl = ctx.baseUrl;
    } catch {
      baseUrl = undefined;
    }
    for (const line of describeFailure(error, ctx.errColours, baseUrl)) ctx.note(line);
    return exitCodeOf(error);
  }
}

const ctx = new Context(process.env, process.stdout, process.stderr);
process.exitCode = await main(process.argv.slice(2), ctx);
