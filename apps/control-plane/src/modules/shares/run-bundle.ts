import {
  ProblemError,
  RUN_BUNDLE_LIMITS,
  RUN_BUNDLE_VERSION,
  RUN_PREVIEW_CHARS,
  RUN_PREVIEW_REDACTED,
  RUN_PREVIEW_TRUNCATED,
} from '@switchyard/shared';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { ExecutionPayload, ExecutionQueries } from '../executions/index.ts';
import type { RunBundleSchema } from './responses.ts';

/** A workflow run as the docs site publishes it (`POST /api/v1/shares`, schema version 1). */
export type RunBundle = ResponseBody<typeof RunBundleSchema>;

/** One execution in a run bundle: started_at is "" before it started, ended_at "" until it ended. */
export type RunBundleNode = RunBundle['nodes'][number];

export interface BundleOptions {
  /** Withhold every input, output and error text (each becomes "[redacted]"). */
  redact: boolean;
  /** Left out of the bundle when empty. */
  title?: string;
  now: Date;
}

/** A text cut to RUN_PREVIEW_CHARS, marked when it was longer; "" when there is none. */
function clipped(text: string | null): string {
  if (text === null || text === '') return '';
  return text.length > RUN_PREVIEW_CHARS
    ? `${text.slice(0, RUN_PREVIEW_CHARS)}${RUN_PREVIEW_TRUNCATED}`
    : text;
}

function preview(text: string | null, redact: boolean): string {
  if (text === null || text === '') return '';
  return redact ? RUN_PREVIEW_REDACTED : clipped(text);
}

/** The function's name: the stored one, else the target without its agent. */
function functionName(target: string, agent: string, payload: ExecutionPayload | undefined): string {
  if (payload?.function_name) return payload.function_name;
  return target.startsWith(`${agent}.`) ? target.slice(agent.length + 1) : target;
}

const ACTIVE = new Set(['queued', 'pending', 'running', 'waiting']);

/**
 * The run's wall-clock time, first start to last end; null until every execution has ended (a
 * span that is still growing is not a duration) or when none has started.
 */
function spanMs(nodes: Array<{ status: string; started_at: string | null; completed_at: string | null }>) {
  if (nodes.some((node) => ACTIVE.has(node.status))) return null;
  const starts = nodes.flatMap((node) => (node.started_at ? [Date.parse(node.started_at)] : []));
  const ends = nodes.flatMap((node) => (node.completed_at ? [Date.parse(node.completed_at)] : []));
  if (starts.length === 0 || ends.length === 0) return null;
  return Math.max(0, Math.max(...ends) - Math.min(...starts));
}

/**
 * Builds the run bundle of a workflow from the executions feature's reads: the DAG (nodes and
 * parent → child edges, oldest first) and each execution's input, result and error, pretty JSON
 * cut in the database. A workflow with more executions than a bundle may hold is refused, never
 * cut: a bundle missing executions would show a different run.
 */
export async function buildRunBundle(
  queries: Pick<ExecutionQueries, 'dag' | 'payloads'>,
  workflowId: string,
  options: BundleOptions,
): Promise<RunBundle> {
  const dag = await queries.dag(workflowId);
  if (dag.truncated || dag.nodes.length > RUN_BUNDLE_LIMITS.nodes) {
    throw new ProblemError(
      'conflict',
      `Workflow "${workflowId.slice(0, 200)}" has ${dag.truncated ? 'more than ' : ''}${dag.nodes.length} executions; a run bundle holds at most ${RUN_BUNDLE_LIMITS.nodes}, the most the docs site accepts.`,
      {
        resolution: `Share a smaller workflow (at most ${RUN_BUNDLE_LIMITS.nodes} executions); a larger one can be read whole at GET /api/v1/workflows/{workflow_id}/dag.`,
        extensions: { executions: dag.nodes.length, limit: RUN_BUNDLE_LIMITS.nodes },
      },
    );
  }
  const payloads = await queries.payloads(workflowId, {
    chars: RUN_PREVIEW_CHARS,
    limit: RUN_BUNDLE_LIMITS.nodes,
  });
  const nodes = dag.nodes.map((node): RunBundleNode => {
    const payload = payloads.get(node.execution_id);
    return {
      id: node.execution_id,
      agent: node.node_id,
      func: functionName(node.target, node.node_id, payload),
      status: node.status,
      started_at: node.started_at ?? '',
      ended_at: node.completed_at ?? '',
      duration_ms: node.duration_ms,
      cost_usd: null,
      model: null,
      input_preview: preview(payload?.input ?? null, options.redact),
      output_preview: preview(payload?.result ?? null, options.redact),
      error: payload?.error ? (options.redact ? RUN_PREVIEW_REDACTED : clipped(payload.error)) : null,
    };
  });
  const title = options.title?.trim();
  return {
    version: RUN_BUNDLE_VERSION,
    workflow_id: workflowId,
    ...(title ? { title } : {}),
    generated_at: options.now.toISOString(),
    totals: {
      agents: new Set(dag.nodes.map((node) => node.node_id)).size,
      duration_ms: spanMs(dag.nodes),
      cost_usd: null,
    },
    nodes,
    edges: dag.edges,
  };
}
