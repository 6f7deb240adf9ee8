import { type components, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import { statusColour } from '../colours.ts';
import type { Context } from '../context.ts';
import { duration } from '../format.ts';
import { examples } from '../help.ts';

type Dag = components['schemas']['WorkflowDag'];
type DagNode = Dag['nodes'][number];

/** The error of every execution of the workflow that did not succeed, by execution id. */
async function errorsOf(ctx: Context, workflowId: string, dag: Dag): Promise<Map<string, string>> {
  const errors = new Map<string, string>();
  if (!dag.nodes.some((node) => ['failed', 'timeout', 'cancelled'].includes(node.status))) return errors;
  for (const status of ['failed', 'timeout', 'cancelled'] as const) {
    const page = await unwrap(
      ctx.client.GET('/api/v1/executions', {
        params: { query: { workflow_id: workflowId, status, limit: 500 } },
      }),
    );
    for (const execution of page.executions as Array<{ execution_id: string; error: string | null }>) {
      if (execution.error) errors.set(execution.execution_id, execution.error);
    }
  }
  return errors;
}

/** The workflow as an indented tree: each execution under the one that called it, in start order. */
export function renderTree(ctx: Context, dag: Dag, errors: Map<string, string>): string[] {
  const c = ctx.colours;
  const ids = new Set(dag.nodes.map((node) => node.execution_id));
  const children = new Map<string | null, DagNode[]>();
  for (const node of dag.nodes) {
    const parent =
      node.parent_execution_id && ids.has(node.parent_execution_id) ? node.parent_execution_id : null;
    children.set(parent, [...(children.get(parent) ?? []), node]);
  }
  const byStart = (a: DagNode, b: DagNode) => (a.started_at ?? '').localeCompare(b.started_at ?? '');
  const lines: string[] = [];
  const walk = (parent: string | null, prefix: string) => {
    const list = [...(children.get(parent) ?? [])].sort(byStart);
    list.forEach((node, index) => {
      const last = index === list.length - 1;
      const error = errors.get(node.execution_id);
      const parts = [
        `${prefix}${last ? '└─ ' : '├─ '}${c.bold(node.target)}`,
        statusColour(c, node.status),
        duration(node.duration_ms),
        c.dim(node.execution_id),
      ];
      if (error) parts.push(c.red(`error: ${error}`));
      lines.push(parts.join('  '));
      walk(node.execution_id, `${prefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(null, '');
  return lines;
}

export function registerDagCommand(program: Command, ctx: Context): void {
  examples(
    program
      .command('dag')
      .description(
        "Show a workflow's executions as a tree (who called whom) with status, duration and errors.",
      )
      .argument('<workflow-id>', 'the workflow id (X-Workflow-ID, or the run id of a call without one)'),
    'switchyard dag wf-report-42',
    'switchyard dag wf-report-42 --json',
  ).action(async (workflowId: string) => {
    const dag: Dag = await unwrap(
      ctx.client.GET('/api/v1/workflows/{workflow_id}/dag', {
        params: { path: { workflow_id: workflowId } },
      }),
    );
    const errors = await errorsOf(ctx, workflowId, dag);
    if (ctx.json) {
      return ctx.printJson({
        ...dag,
        nodes: dag.nodes.map((node) => ({ ...node, error: errors.get(node.execution_id) ?? null })),
      });
    }
    const count = `${dag.total_nodes} execution${dag.total_nodes === 1 ? '' : 's'}, depth ${dag.depth}`;
    ctx.print(`${ctx.colours.bold(dag.workflow_id)}  ${count}`);
    for (const line of renderTree(ctx, dag, errors)) ctx.print(line);
    if (dag.truncated) {
      ctx.note(
        ctx.errColours.yellow(
          `The workflow has more executions than the control plane draws; --json has those it sent.`,
        ),
      );
    }
  });
}
