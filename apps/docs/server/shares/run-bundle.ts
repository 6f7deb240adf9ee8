import { z } from 'zod';
import { EXECUTION_STATUSES, RUN_BUNDLE_LIMITS as LIMITS } from '../../contract/site-contract.ts';

/**
 * The run bundle the platform CLI publishes (`POST /api/v1/shares`): one workflow run with its
 * execution nodes and the edges between them, plus short previews of each node's input and
 * output. Two spellings are accepted and stored in one canonical form:
 *
 * - the documented one: nodes `{ execution_id, target, node_id?, finished_at?, error_message? }`;
 * - the platform CLI's: nodes `{ id, agent, func, ended_at, error, cost_usd,
 *   model }` with `""` for a time not reached yet and `null` for what was not measured.
 *
 * Canonical form: `id` → `execution_id`, `agent` → `node_id`, `agent` + `func` → `target`
 * (`agent.func`), `ended_at` → `finished_at`, `error` → `error_message`; an empty time and a null
 * error are left out; other nulls are kept. Unknown members are dropped.
 */

const text = z.string().min(1).max(LIMITS.text);
const isoTimestamp = z.iso.datetime({ offset: true });
/** The CLI sends `""` for a time that has not come yet (`ended_at` of a running node). */
const optionalTime = z.union([z.literal(''), isoTimestamp]).optional();
const amount = z.number().finite().min(0);

/**
 * A preview is text as the CLI cut it, or any JSON value (shown pretty-printed). The body was
 * parsed from JSON, so any value already is JSON; it is kept as it came, because rebuilding it
 * (as z.json() does) turns a "__proto__" key into a prototype and loses it.
 */
const Preview = z
  .unknown()
  .refine((value) => typeof value !== 'string' || value.length <= LIMITS.preview, {
    message: `Too big: expected a string of at most ${LIMITS.preview} characters`,
  })
  .optional();

const errorText = z.string().max(LIMITS.preview);

const RunNodeInputSchema = z
  .object({
    execution_id: text.optional(),
    /** The CLI's name for execution_id. */
    id: text.optional(),
    target: text.optional(),
    /** The CLI names the agent (node id) and the function instead of a target. */
    agent: text.optional(),
    func: text.optional(),
    node_id: z.string().max(LIMITS.text).optional(),
    status: z.enum(EXECUTION_STATUSES),
    duration_ms: amount.nullable().optional(),
    started_at: optionalTime,
    finished_at: optionalTime,
    /** The CLI's name for finished_at. */
    ended_at: optionalTime,
    cost_usd: amount.nullable().optional(),
    model: z.string().max(LIMITS.text).nullable().optional(),
    input_preview: Preview,
    output_preview: Preview,
    error_message: errorText.optional(),
    /** The CLI's name for error_message; null when the node did not fail. */
    error: errorText.nullable().optional(),
  })
  .superRefine((node, ctx) => {
    if (node.execution_id === undefined && node.id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['execution_id'],
        message: 'each node needs an execution_id (or id)',
      });
    }
    if (node.target === undefined && (node.agent === undefined || node.func === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [node.agent === undefined ? 'target' : 'func'],
        message: 'each node needs a target (or agent and func)',
      });
    }
  });

type RunNodeInput = z.infer<typeof RunNodeInputSchema>;

/** One execution of the run, in the canonical form the permalink serves. */
export interface RunNode {
  execution_id: string;
  /** `agent.function` as the control plane names targets. */
  target: string;
  /** The agent (node) that ran the execution. */
  node_id?: string;
  status: (typeof EXECUTION_STATUSES)[number];
  duration_ms?: number | null;
  started_at?: string;
  finished_at?: string;
  cost_usd?: number | null;
  model?: string | null;
  input_preview?: unknown;
  output_preview?: unknown;
  error_message?: string;
}

function canonicalNode(node: RunNodeInput): RunNode {
  const finishedAt = node.finished_at || node.ended_at;
  const errorMessage = node.error_message ?? node.error ?? undefined;
  const nodeId = node.node_id ?? node.agent;
  // Members are set only when present so the stored JSON carries no `undefined` holes, and in a
  // fixed order so every bundle reads the same.
  const canonical: RunNode = {
    execution_id: (node.execution_id ?? node.id)!,
    target: node.target ?? `${node.agent}.${node.func}`,
    status: node.status,
  };
  if (nodeId !== undefined) canonical.node_id = nodeId;
  if (node.duration_ms !== undefined) canonical.duration_ms = node.duration_ms;
  if (node.started_at) canonical.started_at = node.started_at;
  if (finishedAt) canonical.finished_at = finishedAt;
  if (node.cost_usd !== undefined) canonical.cost_usd = node.cost_usd;
  if (node.model !== undefined) canonical.model = node.model;
  if (node.input_preview !== undefined) canonical.input_preview = node.input_preview;
  if (node.output_preview !== undefined) canonical.output_preview = node.output_preview;
  if (errorMessage !== undefined) canonical.error_message = errorMessage;
  return canonical;
}

export const RunNodeSchema = RunNodeInputSchema.transform(canonicalNode);

export const RunEdgeSchema = z.object({ from: text, to: text });

const TOTAL_KEY = /^[a-z][a-z0-9_]*$/;

/**
 * Counts a run summary may carry (number of agents or nodes, total duration, cost); null where
 * the CLI could not measure (`cost_usd`). z.record silently drops a "__proto__" key (it builds
 * a plain object), so keys are checked on the parsed body first: such a key is refused like any
 * other name that is not snake_case, never stored in one place and missing from another.
 */
const TotalsSchema = z
  .unknown()
  .superRefine((totals, ctx) => {
    if (typeof totals === 'object' && totals !== null && Object.hasOwn(totals, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: 'totals keys are snake_case names' });
    }
  })
  .pipe(
    z
      .record(
        z.string().min(1).max(LIMITS.totalKey).regex(TOTAL_KEY, 'totals keys are snake_case names'),
        amount.nullable(),
      )
      .refine(
        (totals) => Object.keys(totals).length <= LIMITS.totals,
        `totals holds at most ${LIMITS.totals} counts`,
      ),
  );

export const RunBundleSchema = z
  .object({
    version: z.literal(1),
    workflow_id: text,
    /** The CLI leaves the title out when the run has none. */
    title: z.string().trim().min(1).max(LIMITS.text).optional(),
    generated_at: isoTimestamp,
    totals: TotalsSchema,
    nodes: z.array(RunNodeSchema).max(LIMITS.nodes),
    edges: z.array(RunEdgeSchema).max(LIMITS.edges),
  })
  .superRefine((bundle, ctx) => {
    const ids = new Set<string>();
    bundle.nodes.forEach((node, i) => {
      // A node that failed its own checks arrives here untransformed, possibly still spelling its
      // id the CLI's way; its edges are not reported as dangling on top of its own problem.
      const id = node.execution_id ?? (node as { id?: string }).id;
      if (id === undefined) return;
      if (ids.has(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['nodes', i, 'execution_id'],
          message: 'duplicate execution_id',
        });
      }
      ids.add(id);
    });
    bundle.edges.forEach((edge, i) => {
      for (const end of ['from', 'to'] as const) {
        if (!ids.has(edge[end])) {
          ctx.addIssue({
            code: 'custom',
            path: ['edges', i, end],
            message: `no node has execution_id "${edge[end]}"`,
          });
        }
      }
    });
  });

export type RunBundle = z.infer<typeof RunBundleSchema>;

/** The title a share is shown under: the bundle's own, or one made from the workflow id. */
export function displayTitle(bundle: Pick<RunBundle, 'title' | 'workflow_id'>): string {
  return bundle.title ?? `Workflow ${bundle.workflow_id}`;
}

/** A stored share: the bundle plus where and when it was published. */
export interface RunShare {
  id: string;
  url: string;
  created_at: string;
  bundle: RunBundle;
}
