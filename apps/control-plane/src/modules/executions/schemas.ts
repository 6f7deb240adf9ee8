import { z } from 'zod';
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

/** `POST /api/v1/execute/{target}` and `/execute/async/{target}`: `{ input, webhook? }` (spec §4). */
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

/** The agent's status callback (wire notes). Unknown members are ignored. */
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
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .transform((v) => (v === undefined ? undefined : new Date(v))),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(500).optional(),
});

export const LogsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(500),
});

export const WorkflowIdSchema = printable(256);
export const WorkflowPathSchema = z.object({ workflow_id: WorkflowIdSchema });
