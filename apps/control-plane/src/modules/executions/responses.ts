import { z } from 'zod';
import { MAX_DAG_NODES } from './queries.ts';
import { EXECUTION_STATUSES } from './records.ts';

/*
 * What the execution API answers: the shapes records.ts, queries.ts and logs.ts build, as the
 * OpenAPI document describes them. Response objects list the members clients rely on and allow
 * more, so a member added to a record does not break clients; one renamed or removed fails to
 * compile where the record is built, and test/openapi.test.ts.
 */

const Timestamp = z.iso.datetime();

const ExecutionStatus = z.enum(EXECUTION_STATUSES).meta({
  description:
    '`queued`: waiting for a dispatcher (async lane); `running`: with the agent; `waiting`: paused for an approval. Terminal: `succeeded`, `failed`, `cancelled`, `timeout`. `pending` is a legacy name the control plane never writes.',
});

const FunctionType = z.enum(['reasoner', 'skill']);

const WaitingForSchema = z
  .union([
    z.looseObject({
      type: z.literal('approval'),
      approval_request_id: z.string(),
      approval_request_url: z
        .string()
        .nullable()
        .meta({ description: 'Where a person reviews it; null when the agent named no page.' }),
      expires_at: Timestamp.nullable(),
    }),
    z.looseObject({
      type: z.literal('child'),
      reason: z.string().nullable().meta({ description: "The agent's words, e.g. `awaiting child exec_…`." }),
      since: Timestamp,
    }),
  ])
  .meta({
    id: 'ExecutionWaitingFor',
    description:
      'What a `waiting` execution waits for: its own approval request (`approval`), or a paused child its agent awaits (`child`, reported through awaiter-status).',
  });

export const StatusRecordSchema = z
  .looseObject({
    execution_id: z.string(),
    run_id: z.string(),
    workflow_id: z.string(),
    parent_execution_id: z.string().nullable().meta({ description: 'From X-Parent-Execution-ID.' }),
    target: z.string().meta({ description: 'The target in its canonical spelling.' }),
    node_id: z.string(),
    type: FunctionType,
    status: ExecutionStatus,
    created_at: Timestamp,
    started_at: Timestamp.nullable().meta({
      description: 'When it was sent to the agent; null while queued.',
    }),
    completed_at: Timestamp.nullable().meta({ description: 'Null until terminal.' }),
    duration_ms: z
      .int()
      .nullable()
      .meta({ description: 'From started_at to completed_at; null until terminal.' }),
    result: z.unknown().meta({ description: "The agent's result (any JSON); null unless succeeded." }),
    error: z.string().nullable().meta({ description: 'Why it failed, was cancelled or timed out.' }),
    error_details: z.unknown().meta({ description: 'Structured error data from the agent, or null.' }),
    progress: z.int().min(0).max(100).nullable().meta({ description: 'Last progress the agent reported.' }),
    routed_version: z.string().nullable().meta({ description: 'The version of the node that runs it.' }),
    webhook_registered: z.boolean(),
    webhook_error: z.string().nullable().meta({ description: 'Why the submitted webhook was refused.' }),
    waiting_for: WaitingForSchema.optional().meta({ description: 'Only while `waiting`.' }),
    result_truncated: z.literal(true).optional().meta({
      description:
        'Only in the list (results over 64 KiB) and batch-status (over 256 KiB): result (or error_details) was left out; GET the execution by id for it.',
    }),
  })
  .meta({ id: 'ExecutionStatusRecord', description: 'Where one execution is, and how it ended.' });

export const SyncResultSchema = z
  .looseObject({
    execution_id: z.string(),
    run_id: z.string(),
    workflow_id: z.string(),
    status: ExecutionStatus,
    result: z.unknown().meta({ description: "The agent's result (any JSON); null unless succeeded." }),
    error_message: z.string().optional().meta({ description: 'Present whenever status is not `succeeded`.' }),
    duration_ms: z.int().nullable(),
    finished_at: Timestamp.nullable(),
  })
  .meta({ id: 'ExecutionResult', description: 'The outcome of a synchronous execution.' });

export const AcknowledgementSchema = z
  .looseObject({
    execution_id: z.string(),
    workflow_id: z.string(),
    run_id: z.string(),
    status: ExecutionStatus.meta({ description: '`queued`.' }),
    target: z.string(),
    type: FunctionType,
    created_at: Timestamp,
    webhook_registered: z.boolean(),
    webhook_error: z
      .string()
      .nullable()
      .meta({ description: 'Why the webhook was refused (the execution is queued anyway); null otherwise.' }),
  })
  .meta({ id: 'ExecutionAccepted', description: 'An execution queued on the async lane.' });

export const ExecutionListSchema = z.looseObject({
  executions: z.array(StatusRecordSchema).meta({ description: 'Newest first.' }),
  next_cursor: z
    .string()
    .nullable()
    .meta({ description: 'The `cursor` of the next page; null on the last.' }),
});

export const CancelAnswerSchema = StatusRecordSchema.extend({
  agent_notified: z.boolean().meta({
    description: 'Whether the agent running it took the cancel notice; false for a queued execution.',
  }),
  agent_error: z.string().nullable().meta({ description: 'Why the notice did not reach the agent.' }),
}).meta({ id: 'ExecutionCancelled' });

export const LogsAcceptedSchema = z.looseObject({
  execution_id: z.string(),
  accepted: z.int().min(0).meta({ description: 'Entries stored.' }),
});

export const LogsPageSchema = z.looseObject({
  execution_id: z.string(),
  entries: z.array(
    z.looseObject({
      id: z.int().min(1).meta({ description: 'Increases with every entry stored.' }),
      received_at: Timestamp,
      entry: z.record(z.string(), z.unknown()).meta({ description: 'The entry as posted.' }),
    }),
  ),
  next_after: z.int().nullable().meta({ description: 'The `after` of the next page; null on the last.' }),
});

export const DagSchema = z
  .looseObject({
    workflow_id: z.string(),
    run_id: z.string().meta({ description: 'The run of the oldest execution.' }),
    depth: z.int().min(1).meta({ description: 'The deepest level: root executions are at 1.' }),
    total_nodes: z.int().min(1),
    truncated: z.boolean().meta({
      description: `True when the workflow has more than ${MAX_DAG_NODES} executions; only the oldest are listed.`,
    }),
    nodes: z.array(
      z.looseObject({
        execution_id: z.string(),
        parent_execution_id: z.string().nullable(),
        node_id: z.string(),
        target: z.string(),
        status: ExecutionStatus,
        duration_ms: z.int().nullable(),
        depth: z.int().min(1),
        started_at: Timestamp.nullable(),
        completed_at: Timestamp.nullable(),
      }),
    ),
    edges: z
      .array(z.looseObject({ from: z.string(), to: z.string() }))
      .meta({ description: 'Parent → child, between executions of this workflow.' }),
  })
  .meta({ id: 'WorkflowDag', description: "A workflow's executions as a graph, oldest first." });

export const LogEntry = z.record(z.string(), z.unknown()).meta({
  description: 'One structured log line: any JSON object (SDKs send level, message, timestamp, …).',
});

/** batch-status: the status record of each id found, keyed by execution id. */
export const BatchStatusRecordsSchema = z.record(z.string(), StatusRecordSchema);

/** GET /api/v1/executions/{execution_id}/input. */
export const ExecutionInputSchema = z.object({
  execution_id: z.string(),
  target: z.string(),
  input: z.unknown().meta({
    description:
      'The input as recorded: the JSON object of an execute request, or the JSON an agent reported for a call it ran itself (`input_data`, any JSON value).',
  }),
});

/** POST /api/ui/v1/executions/note: the note as kept in the log. */
export const NoteAnswerSchema = z.looseObject({ execution_id: z.string(), note: LogEntry });
