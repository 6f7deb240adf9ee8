import { z } from 'zod';
import { timeQuery } from '../../platform/http/timestamps.ts';
import { findUnstorable } from '../../platform/json-storable.ts';
import { nullable } from '../../platform/nullable.ts';
import { EXECUTION_STATUSES } from './records.ts';

/** Visible ASCII (and spaces): what context headers can carry, and nothing the database refuses. */
const PRINTABLE = /^[\x20-\x7e]+$/;
const printable = (max: number) =>
  z.string().min(1).max(max).regex(PRINTABLE, 'use printable ASCII characters');

/** Executions are keyed by unguessable ids; anything longer, or not visible ASCII, names none. */
export const ExecutionIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'not an execution id');

/** A JSON object passed through as parsed (zod's record would drop a `__proto__` key). */
const JsonObject = z
  .custom<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    { message: 'Invalid input: expected object' },
  )
  .meta({ type: 'object', additionalProperties: {} });

/** `POST /api/v1/execute/{target}` and `/execute/async/{target}`: `{ input, webhook? }`. */
export const ExecuteBodySchema = z.object({
  input: JsonObject.meta({
    description: "The function's input; validated against its registered input_schema.",
  }),
  webhook: z.unknown().optional().meta({
    description:
      'Async lane only: `{ url, secret?, headers? }`. An invalid webhook does not fail the call: the answer says webhook_registered false with webhook_error.',
  }),
});

/** Ids per batch-status request: each record may carry a result of megabytes. */
export const MAX_BATCH_IDS = 100;

/** The agent's status callback. Unknown members are ignored. */
export const StatusReportSchema = z.object({
  status: z.enum(['succeeded', 'failed', 'cancelled', 'running']),
  result: z.unknown().optional(),
  error: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .nullish()
    .transform((value) =>
      value === null || value === undefined
        ? value
        : typeof value === 'string'
          ? value.slice(0, 16_384)
          : JSON.stringify(value).slice(0, 16_384),
    ),
  error_details: z.unknown().optional(),
  duration_ms: z.number().nullish(),
  completed_at: z.string().max(100).nullish(),
  progress: z
    .number()
    .min(0)
    .max(100)
    .nullish()
    .transform((v) => (typeof v === 'number' ? Math.round(v) : v)),
});

export const BatchStatusSchema = z.object({
  execution_ids: z.array(ExecutionIdSchema).min(1).max(MAX_BATCH_IDS),
});

export const ListQuerySchema = z.object({
  status: z.enum(EXECUTION_STATUSES).optional(),
  target: printable(500).optional(),
  workflow_id: printable(256).optional(),
  node_id: printable(200).optional(),
  since: timeQuery().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(500).optional(),
});

export const LogsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(500),
});

export const WorkflowIdSchema = printable(256);
export const WorkflowPathSchema = z.object({ workflow_id: WorkflowIdSchema });

/** Refuses strings the database cannot store (NUL, lone surrogates) anywhere in a body, naming where. */
function refuseUnstorable(value: unknown, ctx: z.RefinementCtx): void {
  const path = findUnstorable(value);
  if (path)
    ctx.addIssue({
      code: 'custom',
      message: 'strings may not contain U+0000 or a lone UTF-16 surrogate',
      path,
    });
}

/** A function id as agents register it (and as SDKs name a local call's function). */
const FunctionIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/, 'use letters, digits, "_" and "-"');

/**
 * `POST /api/v1/workflow/executions/events`: an SDK ran a function of its own agent in process
 * (a local call) and reports it, once `running` (with `input_data`) and once ended (`succeeded`
 * with `result`, `failed` with `error`), so the workflow DAG shows the step. Unknown members
 * (`type`, `root_workflow_id`, `parent_workflow_id`) are accepted and ignored.
 */
export const LocalCallEventSchema = z
  .object({
    execution_id: ExecutionIdSchema.meta({ description: 'The id the SDK gave the local call (a UUID).' }),
    run_id: printable(256),
    workflow_id: nullable(printable(256)),
    reasoner_id: FunctionIdSchema.meta({ description: 'The function the agent ran.' }),
    agent_node_id: printable(200).meta({ description: 'The node whose agent ran it.' }),
    status: z.enum(['running', 'waiting', 'succeeded', 'failed']),
    status_reason: nullable(z.string().max(1000)),
    parent_execution_id: nullable(ExecutionIdSchema),
    input_data: z.unknown().optional(),
    result: z.unknown().optional(),
    error: nullable(z.string().max(16_384)),
    error_details: z.unknown().optional(),
    duration_ms: nullable(
      z
        .number()
        .min(0)
        .max(366 * 24 * 3_600_000),
    ),
  })
  .superRefine(refuseUnstorable);
export type LocalCallEvent = z.infer<typeof LocalCallEventSchema>;

/**
 * `POST /api/ui/v1/executions/note`: a note an agent attaches to the execution named by its
 * X-Execution-ID header (the SDKs write one when an execution pauses for approval).
 */
export const NoteSchema = z
  .object({
    message: z.string().min(1).max(10_000),
    tags: nullable(z.array(z.string().min(1).max(100)).max(50)),
    timestamp: nullable(
      z
        .number()
        .min(0)
        .max(253_402_300_799)
        .meta({ description: 'When the agent wrote it, in seconds since the epoch (fractions allowed).' }),
    ),
    agent_node_id: nullable(printable(200)),
  })
  .superRefine(refuseUnstorable);
export type Note = z.infer<typeof NoteSchema>;
