import { readFileSync } from 'node:fs';
import { ApiProblem, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { type ExecutionRecord, waitForExecution } from '../executions.ts';
import { CommandFailed, UsageError } from '../failures.ts';
import { duration } from '../format.ts';
import { examples } from '../help.ts';
import { parseAssignment } from '../values.ts';

interface CallOptions {
  input?: string;
  inputFile?: string;
  async?: boolean;
  wait?: boolean;
  workflow?: string;
  session?: string;
  actor?: string;
  webhook?: string;
  webhookSecret?: string;
}

/** The input object from exactly one of --input, --input-file and key=value pairs ({} for none). */
export function readInput(options: CallOptions, pairs: string[]): Record<string, unknown> {
  const given = [options.input !== undefined, options.inputFile !== undefined, pairs.length > 0].filter(
    Boolean,
  );
  if (given.length > 1)
    throw new UsageError('Give the input one way: --input, --input-file or key=value pairs.');
  let text: string | undefined;
  let from = '--input';
  if (options.input !== undefined) text = options.input;
  if (options.inputFile !== undefined) {
    from = options.inputFile === '-' ? 'standard input' : options.inputFile;
    try {
      text = readFileSync(options.inputFile === '-' ? 0 : options.inputFile, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${options.inputFile}: ${(error as Error).message}`);
    }
  }
  if (text === undefined) return Object.fromEntries(pairs.map(parseAssignment));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The input from ${from} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`The input from ${from} must be a JSON object, such as {"text": "hello"}.`);
  }
  return parsed as Record<string, unknown>;
}

/** Prints how an execution ended; fails (exit 1) unless it succeeded. */
function report(
  ctx: Context,
  record: {
    execution_id: string;
    status: string;
    result?: unknown;
    error?: string | null;
    error_message?: string;
    duration_ms: number | null;
  },
): void {
  if (ctx.json) ctx.printJson(record);
  else if (record.status === 'succeeded') {
    ctx.print(JSON.stringify(record.result ?? null, null, 2));
    ctx.note(ctx.errColours.dim(`${record.execution_id} succeeded in ${duration(record.duration_ms)}`));
  }
  if (record.status === 'succeeded') return;
  const why = record.error ?? record.error_message;
  throw new CommandFailed(
    `${record.execution_id} ${record.status}${record.duration_ms === null ? '' : ` after ${duration(record.duration_ms)}`}${why ? `: ${why}` : ''}`,
    `See its record and logs with \`switchyard run ${record.execution_id}\`.`,
  );
}

export function registerCallCommands(program: Command, ctx: Context): void {
  examples(
    program
      .command('call')
      .description(
        'Run a function: synchronously by default (prints its result), --async to queue it (prints the execution id), --wait to queue it and follow it to the end. The exit status says whether it succeeded.',
      )
      .argument('<target>', 'node.function for a reasoner, node.skill:function for a skill')
      .argument(
        '[key=value...]',
        'input fields; a value that parses as JSON is taken as JSON (n=3, ok=true), else as text',
      )
      .option('--input <json>', 'the whole input as a JSON object')
      .option('--input-file <file>', 'read the input (a JSON object) from a file; - reads standard input')
      .option('--async', 'queue the execution and print its id without waiting')
      .option('--wait', 'queue the execution and follow it until it ends (a spinner on a terminal)')
      .option('--workflow <id>', 'the workflow the execution belongs to (X-Workflow-ID)')
      .option('--session <id>', 'the session id sent to the agent (X-Session-ID)')
      .option('--actor <id>', 'who the call is made for (X-Actor-ID)')
      .option(
        '--webhook <url>',
        'with --async or --wait: POST the outcome to this URL when the execution ends',
      )
      .option('--webhook-secret <secret>', 'sign the webhook with this secret (HMAC-SHA256)'),
    'switchyard call hello-agent.summarize text="One. Two. Three." max_sentences=1',
    'switchyard call hello-agent.skill:word_count --input \'{"text": "a b c"}\' --json',
    'id=$(switchyard call hello-agent.summarize text="One." --async) && switchyard run "$id"',
    'switchyard call hello-agent.summarize --input-file input.json --wait',
  ).action(async (target: string, pairs: string[], options: CallOptions) => {
    const input = readInput(options, pairs);
    const headers = {
      ...(options.workflow ? { 'X-Workflow-ID': options.workflow } : {}),
      ...(options.session ? { 'X-Session-ID': options.session } : {}),
      ...(options.actor ? { 'X-Actor-ID': options.actor } : {}),
    };
    if (options.webhook && !(options.async || options.wait)) {
      throw new UsageError('--webhook needs --async or --wait: a synchronous call answers with its result.');
    }
    if (options.async || options.wait) {
      const webhook = options.webhook
        ? { url: options.webhook, ...(options.webhookSecret ? { secret: options.webhookSecret } : {}) }
        : undefined;
      const ack = await unwrap(
        ctx.client.POST('/api/v1/execute/async/{target}', {
          params: { path: { target } },
          body: { input, ...(webhook ? { webhook } : {}) },
          headers,
        }),
      );
      if (ack.webhook_error) {
        ctx.note(ctx.errColours.yellow(`warning: the webhook was not registered: ${ack.webhook_error}`));
      }
      if (!options.wait) {
        if (ctx.json) ctx.printJson(ack);
        else ctx.print(ack.execution_id);
        return;
      }
      const record: ExecutionRecord = await waitForExecution(ctx, ack.execution_id);
      return report(ctx, record);
    }
    let answer: {
      execution_id: string;
      status: string;
      result?: unknown;
      error_message?: string;
      duration_ms: number | null;
    };
    try {
      answer = (await unwrap(
        ctx.client.POST('/api/v1/execute/{target}', {
          params: { path: { target } },
          body: { input },
          headers,
        }),
      )) as typeof answer;
    } catch (error) {
      // A failure the execution was recorded for names it: say where to read more.
      const id =
        error instanceof ApiProblem
          ? (error.problem as { execution_id?: unknown } | undefined)?.execution_id
          : undefined;
      if (error instanceof ApiProblem && typeof id === 'string') {
        if (ctx.json) ctx.printJson(error.problem);
        throw new CommandFailed(
          `${error.title} (${error.status}): ${error.detail}`,
          `${error.resolution ? `${error.resolution} ` : ''}The execution is ${id}: \`switchyard run ${id}\` shows its record and logs.`,
        );
      }
      throw error;
    }
    report(ctx, answer);
  });
}
