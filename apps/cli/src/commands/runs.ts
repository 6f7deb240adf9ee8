import { unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import { statusColour } from '../colours.ts';
import type { Context } from '../context.ts';
import { EXECUTION_STATUSES, type ExecutionStatus, getExecution, waitForExecution } from '../executions.ts';
import { ago, cell, duration, indent, table } from '../format.ts';
import { examples } from '../help.ts';
import { integerIn, oneOf, sinceTime } from '../values.ts';

/**
 * A log entry with the members the CLI prints read out of what the agent posted: the API types
 * `entry` as any JSON object, as agents post it.
 */
interface LogEntry {
  id: number;
  received_at: string;
  entry: {
    type?: string;
    level?: string;
    message?: string;
    timestamp?: unknown;
    tags?: string[] | null;
  } & Record<string, unknown>;
}

/** Every log entry of an execution, page after page. */
async function allLogs(ctx: Context, id: string): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  let after: number | undefined;
  for (;;) {
    const page = (await unwrap(
      ctx.client.GET('/api/v1/executions/{execution_id}/logs', {
        params: {
          path: { execution_id: id },
          query: { limit: 500, ...(after === undefined ? {} : { after }) },
        },
      }),
    )) as { entries: LogEntry[]; next_after: number | null };
    entries.push(...page.entries);
    if (page.next_after === null || page.next_after === undefined) return entries;
    after = page.next_after;
  }
}

export function registerRunCommands(program: Command, ctx: Context): void {
  examples(
    program
      .command('runs')
      .description('List executions, newest first.')
      .option(
        '--status <status>',
        `only executions in this status (${EXECUTION_STATUSES.join(', ')})`,
        oneOf(EXECUTION_STATUSES),
      )
      .option('--target <target>', 'only executions of this function (node.function)')
      .option('--workflow <id>', 'only executions of this workflow')
      .option('--node <id>', 'only executions of this node')
      .option(
        '--since <when>',
        'only executions created since: a span back (30s, 15m, 1h, 2d) or an ISO 8601 time',
        sinceTime(),
      )
      .option('--limit <n>', 'at most this many (1 to 500)', integerIn(1, 500), 50),
    'switchyard runs --status failed --since 1h',
    'switchyard runs --target hello-agent.summarize --limit 5 --json',
  ).action(
    async (options: {
      status?: ExecutionStatus;
      target?: string;
      workflow?: string;
      node?: string;
      since?: string;
      limit: number;
    }) => {
      const answer = await unwrap(
        ctx.client.GET('/api/v1/executions', {
          params: {
            query: {
              limit: options.limit,
              ...(options.status ? { status: options.status } : {}),
              ...(options.target ? { target: options.target } : {}),
              ...(options.workflow ? { workflow_id: options.workflow } : {}),
              ...(options.node ? { node_id: options.node } : {}),
              ...(options.since ? { since: options.since } : {}),
            },
          },
        }),
      );
      const { executions } = answer;
      if (ctx.json) return ctx.printJson(answer);
      if (executions.length === 0) return ctx.print('No executions match.');
      ctx.print(
        table(
          ['EXECUTION', 'TARGET', 'STATUS', 'DURATION', 'CREATED', 'WORKFLOW'],
          executions.map((e) => [
            e.execution_id,
            e.target,
            statusColour(ctx.colours, e.status),
            duration(e.duration_ms),
            ago(e.created_at),
            e.workflow_id,
          ]),
        ),
      );
      if (answer.next_cursor)
        ctx.note(ctx.errColours.dim(`More match: raise --limit (at most 500) or narrow the filters.`));
    },
  );

  examples(
    program
      .command('run')
      .description(
        'Show one execution: its record, result or error, log entries, notes and webhook deliveries.',
      )
      .argument('<execution-id>', 'the execution id (exec_...)')
      .option('--wait', 'first follow the execution until it ends (a spinner on a terminal)'),
    'switchyard run exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
    'id=$(switchyard call hello-agent.summarize text="One. Two." --async) && switchyard run "$id" --wait',
    'switchyard run exec_3v8b1n6r4t9c2d7f5k0m3q8w1x --json',
  ).action(async (id: string, options: { wait?: boolean }) => {
    const record = options.wait ? await waitForExecution(ctx, id) : await getExecution(ctx, id);
    const [logs, deliveries] = await Promise.all([
      allLogs(ctx, id),
      unwrap(
        ctx.client.GET('/api/ui/v1/executions/{execution_id}/webhook/deliveries', {
          params: { path: { execution_id: id } },
        }),
      ).then((answer) => answer.deliveries),
    ]);
    const notes = logs.filter((entry) => entry.entry.type === 'note');
    const otherLogs = logs.filter((entry) => entry.entry.type !== 'note');
    if (ctx.json)
      return ctx.printJson({ execution: record, logs: otherLogs, notes, webhook_deliveries: deliveries });
    const c = ctx.colours;
    const fields: Array<[string, string]> = [
      ['execution', record.execution_id],
      ['target', record.target],
      ['status', statusColour(c, record.status)],
      ['node', record.routed_version ? `${record.node_id} ${record.routed_version}` : record.node_id],
      ['workflow', record.workflow_id],
      ['run', record.run_id],
      ['parent', record.parent_execution_id ?? '-'],
      ['created', record.created_at],
      ['duration', duration(record.duration_ms)],
    ];
    if (record.waiting_for) {
      fields.push([
        'waiting for',
        `${record.waiting_for.type}${record.waiting_for.approval_request_id ? ` ${record.waiting_for.approval_request_id}` : ''}`,
      ]);
    }
    if (record.error) fields.push(['error', c.red(record.error)]);
    if (record.webhook_error) fields.push(['webhook error', record.webhook_error]);
    const width = Math.max(...fields.map(([name]) => name.length));
    for (const [name, value] of fields) ctx.print(`${c.dim(`${name}:`.padEnd(width + 1))}  ${value}`);
    if (record.result !== null && record.result !== undefined) {
      ctx.print();
      ctx.print(c.bold('Result'));
      ctx.print(indent(JSON.stringify(record.result, null, 2)));
    }
    ctx.print();
    ctx.print(c.bold('Logs'));
    if (otherLogs.length === 0) ctx.print('  (none)');
    for (const { entry, received_at } of otherLogs) {
      ctx.print(`  ${received_at}  ${cell(entry.level)}  ${entry.message ?? JSON.stringify(entry)}`);
    }
    ctx.print();
    ctx.print(c.bold('Notes'));
    if (notes.length === 0) ctx.print('  (none)');
    for (const { entry, received_at } of notes) {
      const tags = entry.tags?.length ? `  [${entry.tags.join(', ')}]` : '';
      ctx.print(`  ${received_at}  ${entry.message ?? ''}${tags}`);
    }
    ctx.print();
    ctx.print(c.bold('Webhook deliveries'));
    if (deliveries.length === 0) ctx.print('  (none)');
    else {
      ctx.print(
        indent(
          table(
            ['DELIVERY', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'URL'],
            deliveries.map((d) => [
              d.delivery_id,
              d.event,
              statusColour(c, d.status),
              String(d.attempt_count),
              d.last_error ?? cell(d.last_status_code),
              d.url,
            ]),
          ),
        ),
      );
    }
  });

  examples(
    program
      .command('cancel')
      .description('Cancel an execution that has not ended; the agent is told to stop.')
      .argument('<execution-id>', 'the execution id'),
    'switchyard cancel exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
  ).action(async (id: string) => {
    const answer = await unwrap(
      ctx.client.POST('/api/v1/executions/{execution_id}/cancel', { params: { path: { execution_id: id } } }),
    );
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(`${answer.execution_id} ${statusColour(ctx.colours, answer.status)}`);
  });

  examples(
    program
      .command('retry-webhook')
      .description("Send an execution's webhook again (after its delivery failed or went dead).")
      .argument('<execution-id>', 'the execution id'),
    'switchyard retry-webhook exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
  ).action(async (id: string) => {
    const answer = await unwrap(
      ctx.client.POST('/api/ui/v1/executions/{execution_id}/webhook/retry', {
        params: { path: { execution_id: id } },
      }),
    );
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(
      `${answer.delivery_id} ${statusColour(ctx.colours, answer.status)}: the delivery to ${answer.url} is queued again.`,
    );
  });
}
