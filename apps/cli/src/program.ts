import { Command, Option } from 'commander';
import { registerApprovalCommands } from './commands/approvals.ts';
import { registerCallCommands } from './commands/call.ts';
import { registerCompletionCommand } from './commands/completion.ts';
import { registerConfigCommands } from './commands/config.ts';
import { registerDagCommand } from './commands/dag.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerMemoryCommands } from './commands/memory.ts';
import { registerNodeCommands } from './commands/nodes.ts';
import { registerRunCommands } from './commands/runs.ts';
import { registerShareCommand } from './commands/share.ts';
import { registerTailCommand } from './commands/tail.ts';
import type { Context } from './context.ts';
import { examples } from './help.ts';

export const VERSION = '0.1.0';

/** The whole command line: global options, then every command group. */
export function buildProgram(ctx: Context): Command {
  const program = new Command('switchyard');
  program
    .description('The command line of the Switchyard control plane.')
    .version(VERSION, '-V, --version')
    .option('--url <url>', 'the control plane (else SWITCHYARD_URL, the config file, http://127.0.0.1:8080)')
    .option('--api-key <key>', 'the API key (else SERVICE_API_KEY, the config file)')
    .addOption(new Option('--json', 'print one JSON document (JSON lines for streams) instead of tables'))
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      outputError: (text, write) => write(ctx.errColours.red(text)),
    })
    .hook('preAction', (_program, action) => {
      ctx.globals = action.optsWithGlobals();
    });
  examples(
    program,
    'switchyard nodes',
    'switchyard call hello-agent.summarize text="One. Two."',
    'switchyard doctor',
  );
  registerNodeCommands(program, ctx);
  registerCallCommands(program, ctx);
  registerRunCommands(program, ctx);
  registerTailCommand(program, ctx);
  registerDagCommand(program, ctx);
  registerApprovalCommands(program, ctx);
  registerMemoryCommands(program, ctx);
  registerShareCommand(program, ctx);
  registerDoctorCommand(program, ctx);
  registerCompletionCommand(program, ctx);
  registerConfigCommands(program, ctx);
  return program;
}
