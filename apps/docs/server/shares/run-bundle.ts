import { z } from 'zod';

/**
 * The run bundle the platform CLI publishes (`POST /api/v1/shares`): one workflow run with its
 * execution nodes and the edges between them, as the control plane's DAG endpoint describes it,
 * plus short previews of each node's input and output.
 */

const MAX_TEXT = 200;
const MAX_PREVIEW = 20_000;

/** The execution statuses the control plane reports (control-plane API spec, §3). */
export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
  'waiting',
] as const;

const isoTimestamp = z.iso.datetime({ offset: true });

/**
 * A preview is text as the CLI cut it, or any JSON value (shown pretty-printed). The body was
 * parsed from JSON, so any value already is JSON; it is kept as it came, because rebuilding it
 * (as z.json() does) turns a "__proto__" key into a prototype and loses it.
 */
const Preview = z
  .unknown()
  .refine((value) => typeof value !== 'string' || value.length <= MAX_PREVIEW, {
    message: `Too big: expected a string of at most ${MAX_PREVIEW} characters`,
  })
  .optional();

export const RunNodeSchema = z
  .object({
    execution_id: z.string().min(1).max(MAX_TEXT).optional(),
    /** Accepted as a synonym of execution_id. */
    id: z.string().min(1).max(MAX_TEXT).optional(),
    node_id: z.string().max(MAX_TEXT).optional(),
    target: z.string().min(1).max(MAX_TEXT),
    status: z.enum(EXECUTION_STATUSES),
    duration_ms: z.number().finite().min(0).nullable().optional(),
    started_at: isoTimestamp.optional(),
    finished_at: isoTimestamp.optional(),
    input_preview: Preview,
    output_preview: Preview,
    error_message: z.string().max(MAX_PREVIEW).optional(),
  })
  .refine((node) => node.execution_id !== undefined || node.id !== undefined, {
    message: 'each node needs an execution_id (or id)',
    path: ['execution_id'],
  })
  .transform(({ id, execution_id, ...node }) => ({ execution_id: (execution_id ?? id)!, ...node }));

export const RunEdgeSchema = z.object({
  from: z.string().min(1).max(MAX_TEXT),
  to: z.string().min(1).max(MAX_TEXT),
});

/** Counts a run summary may carry (number of nodes per status, total duration, …). */
const TotalsSchema = z
  .record(
    z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z][a-z0-9_]*$/, 'totals keys are snake_case names'),
    z.number().finite().min(0),
  )
  .refine((totals) => Object.keys(totals).length <= 32, 'totals holds at most 32 counts');

export const RunBundleSchema = z
  .object({
    version: z.literal(1),
    workflow_id: z.string().min(1).max(MAX_TEXT),
    title: z.string().trim().min(1).max(MAX_TEXT),
    generated_at: isoTimestamp,
    totals: TotalsSchema,
    nodes: z.array(RunNodeSchema).max(2000),
    edges: z.array(RunEdgeSchema).max(10_000),
  })
  .superRefine((bundle, ctx) => {
    const ids = new Set<string>();
    bundle.nodes.forEach((node, i) => {
      if (ids.has(node.execution_id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['nodes', i, 'execution_id'],
          message: 'duplicate execution_id',
        });
      }
      ids.add(node.execution_id);
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
export type RunNode = RunBundle['nodes'][number];

/** A stored share: the bundle plus where and when it was published. */
export interface RunShare {
  id: string;
  url: string;
  created_at: string;
  bundle: RunBundle;
}
