import { type ApiProblem, type StreamEvent, streamEvents } from '@switchyard/client';
import type { Command } from 'commander';
import { statusColour } from '../colours.ts';
import type { Context } from '../context.ts';
import { CommandFailed } from '../failures.ts';
import { duration } from '../format.ts';
import { examples } from '../help.ts';

interface TailOptions {
  node?: string;
  workflow?: string;
  status?: string;
  lastEventId?: string;
}

type ExecutionEvent = StreamEvent<'/api/ui/v1/executions/events'>;
type NodeEvent = StreamEvent<'/api/ui/v1/nodes/events'>;

/** The clock time of an ISO timestamp, as a log line shows it. */
const clock = (iso: string) => (iso.length >= 23 ? iso.slice(11, 23) : iso);

/** The node of a target (`node.function` or `node.skill:function`). */
const nodeOf = (target: string) =>
  target.slice(0, target.indexOf('.') === -1 ? undefined : target.indexOf('.'));

function executionLine(ctx: Context, event: ExecutionEvent): string {
  const c = ctx.colours;
  const data = event.data;
  const parts = [c.dim(clock(data.timestamp)), event.event.padEnd(28), data.target, data.execution_id];
  parts.push(statusColour(c, data.status));
  if (data.type === 'execution.completed') {
    parts.push(duration(data.duration_ms));
    if (data.error_message) parts.push(c.red(data.error_message));
  }
  if (data.type === 'execution.waiting') {
    parts.push(`for ${data.waiting_for}${data.approval_request_id ? ` ${data.approval_request_id}` : ''}`);
  }
  if (data.type === 'execution.approval_resolved') parts.push(data.decision);
  if (data.type === 'execution.started') parts.push(`on ${data.agent_node_id}`);
  if (data.workflow_id !== data.run_id) parts.push(c.dim(`workflow ${data.workflow_id}`));
  return parts.join('  ');
}

function nodeLine(ctx: Context, event: NodeEvent): string {
  const c = ctx.colours;
  const data = event.data;
  const parts = [c.dim(clock(data.timestamp)), event.event.padEnd(28), `${data.node_id} ${data.version}`];
  if (data.type === 'node.status_changed') {
    parts.push(`${data.old_status ?? '-'} -> ${statusColour(c, data.new_status)}`, c.dim(data.reason));
  }
  return parts.join('  ');
}

export function registerTailCommand(program: Command, ctx: Context): void {
  examples(
    program
      .command('tail')
      .description(
        'Follow live execution and node events until Ctrl-C. A dropped connection (a control-plane restart) is resumed after the last event seen (Last-Event-ID), so no execution event is lost.',
      )
      .option('--node <id>', "only this node's events (its executions and its instances)")
      .option('--workflow <id>', "only this workflow's execution events")
      .option('--status <status>', 'only events reporting this status (execution status or a node state)')
      .option(
        '--last-event-id <id>',
        'start after this execution event id (one a previous tail printed with --json)',
      ),
    'switchyard tail',
    'switchyard tail --workflow wf-42 --json',
    'switchyard tail --node hello-agent --status failed',
  ).action(async (options: TailOptions) => {
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const failures: ApiProblem[] = [];
    const common = {
      baseUrl: ctx.baseUrl,
      ...(ctx.apiKey ? { apiKey: ctx.apiKey } : {}),
      signal: controller.signal,
      reconnect: { maxDelayMs: 5_000 },
    };
    const onError =
      (name: string) =>
      (error: ApiProblem, { retrying }: { retrying: boolean }) => {
        if (retrying) {
          ctx.note(ctx.errColours.yellow(`${name}: ${error.detail} Reconnecting.`));
          return;
        }
        failures.push(error);
        controller.abort();
      };
    const live = new Set<string>();
    const onState = (name: string) => (state: string) => {
      if (state !== 'live' || live.has(name)) return;
      live.add(name);
      ctx.note(ctx.errColours.dim(`${name}: live`));
    };

    const executions = streamEvents({
      ...common,
      path: '/api/ui/v1/executions/events',
      ...(options.lastEventId ? { lastEventId: options.lastEventId } : {}),
      query: options.workflow ? { workflow_id: options.workflow } : {},
      onEvent: (event) => {
        if (options.node && nodeOf(event.data.target) !== options.node) return;
        if (options.status && event.data.status !== options.status) return;
        if (ctx.json)
          ctx.printJsonLine({ stream: 'executions', id: event.id, event: event.event, data: event.data });
        else ctx.print(executionLine(ctx, event));
      },
      onError: onError('execution events'),
      onState: onState('execution events'),
      onReconnect: ({ resumed, lastEventId }) =>
        ctx.note(
          ctx.errColours.dim(
            resumed
              ? `execution events: resumed after ${lastEventId}, none missed`
              : 'execution events: reconnected',
          ),
        ),
    });
    // Node events are not kept by the server: after a reconnection, say that some may be missing.
    const nodes = options.workflow
      ? undefined
      : streamEvents({
          ...common,
          path: '/api/ui/v1/nodes/events',
          query: options.node ? { node_id: options.node } : {},
          onEvent: (event) => {
            if (
              options.status &&
              (event.data.type !== 'node.status_changed' || event.data.new_status !== options.status)
            ) {
              return;
            }
            if (ctx.json)
              ctx.printJsonLine({
                stream: 'nodes',
                id: event.id ?? null,
                event: event.event,
                data: event.data,
              });
            else ctx.print(nodeLine(ctx, event));
          },
          onError: onError('node events'),
          onState: onState('node events'),
          onReconnect: () =>
            ctx.note(
              ctx.errColours.dim(
                'node events: reconnected; node changes while disconnected are not replayed (see `switchyard nodes`)',
              ),
            ),
        });
    await Promise.all([executions.done, nodes?.done]);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    const failure = failures[0];
    if (failure) {
      throw new CommandFailed(
        `The event stream was refused: ${failure.title} (${failure.status}): ${failure.detail}`,
        failure.resolution,
      );
    }
  });
}
