import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { AcknowledgementSchema, StatusRecordSchema, SyncResultSchema } from './responses.ts';

/**
 * Execution statuses (content/concepts/executions.md). `pending` is a legacy name the control plane
 * never writes.
 */
export const EXECUTION_STATUSES = [
  'queued',
  'pending',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timeout',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** States an execution never leaves; each triggers the registered webhook. */
export const TERMINAL_STATUSES = ['succeeded', 'failed', 'cancelled', 'timeout'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isTerminal(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** A `waiting` execution's approval request (see /docs/concepts/approvals). */
export interface ApprovalWait {
  type: 'approval';
  approval_request_id: string;
  /** null when the agent named no review page (the SDKs' pause() without a URL). */
  approval_request_url: string | null;
  expires_at: string;
}

/**
 * A parent that awaits a paused child: its agent said so with awaiter-status `waiting`, and it
 * waits until the agent reports `running` again or the execution ends.
 */
export interface ChildWait {
  type: 'child';
  /** The agent's words, e.g. "awaiting child exec_…"; null when it gave none. */
  reason: string | null;
  since: string;
}

/** What a `waiting` execution waits for. */
export type WaitingFor = ApprovalWait | ChildWait;

/** One row of `executions`, as the database hands it back. */
export interface ExecutionRow {
  execution_id: string;
  run_id: string;
  workflow_id: string;
  parent_execution_id: string | null;
  session_id: string | null;
  actor_id: string | null;
  caller_node_id: string | null;
  target: string;
  node_id: string;
  function_name: string;
  function_type: 'reasoner' | 'skill';
  /** `local`: a function the agent ran in process and reported (local-calls.ts). */
  lane: 'sync' | 'async' | 'local';
  status: ExecutionStatus;
  /** Absent from rows that writes hand back (see RETURNED in repository.ts). */
  input: unknown;
  result: unknown;
  error: string | null;
  error_details: unknown;
  progress: number | null;
  routed_version: string | null;
  agent_base_url: string | null;
  webhook: { url: string; secret?: string; headers: Record<string, string> } | null;
  webhook_registered: boolean;
  webhook_error: string | null;
  depth: number;
  available_at: Date | string;
  dispatched_by: string | null;
  dispatch_count: number;
  accepted_at: Date | string | null;
  dispatched_at: Date | string | null;
  created_at: Date | string;
  started_at: Date | string | null;
  completed_at: Date | string | null;
  duration_ms: number | null;
  updated_at: Date | string;
  /** What a `waiting` execution waits for (jsonb); cleared on resume, kept by an end while waiting. */
  waiting_for: WaitingFor | null;
  /** Reads of many executions leave out large results (see repository.ts) and say so here. */
  result_truncated?: boolean;
}

export function iso(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** Whole milliseconds: sub-millisecond digits are clock noise, not information. */
function millis(value: number | null): number | null {
  return value === null ? null : Math.round(value);
}

/**
 * The spec's `waiting_for`, members in the spec's order (jsonb keeps its own). jsonb arrives
 * parsed from both drivers; a text value (a driver without the parser) is parsed here.
 */
function waitingForOf(value: WaitingFor | string): WaitingFor {
  const stored = typeof value === 'string' ? (JSON.parse(value) as WaitingFor) : value;
  if (stored.type === 'child') return { type: 'child', reason: stored.reason ?? null, since: stored.since };
  return {
    type: stored.type,
    approval_request_id: stored.approval_request_id,
    approval_request_url: stored.approval_request_url ?? null,
    expires_at: stored.expires_at,
  };
}

/** The status record of `GET /api/v1/executions/{id}`, plus where the execution sits. */
export function statusRecord(row: ExecutionRow): ResponseBody<typeof StatusRecordSchema> {
  return {
    execution_id: row.execution_id,
    run_id: row.run_id,
    workflow_id: row.workflow_id,
    parent_execution_id: row.parent_execution_id,
    target: row.target,
    node_id: row.node_id,
    type: row.function_type,
    status: row.status,
    created_at: iso(row.created_at) as string,
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
    duration_ms: millis(row.duration_ms),
    result: row.result ?? null,
    error: row.error,
    error_details: row.error_details ?? null,
    progress: row.progress,
    routed_version: row.routed_version,
    webhook_registered: row.webhook_registered,
    webhook_error: row.webhook_error,
    // Only while waiting (content/api/execution.md). A resume clears the column; an end keeps it
    // (what the execution waited for when it ended), which the status hides here.
    ...(row.status === 'waiting' && row.waiting_for ? { waiting_for: waitingForOf(row.waiting_for) } : {}),
    // Only in lists and batches, when the result was too large to include: read it by id.
    ...(row.result_truncated ? { result_truncated: true } : {}),
  };
}
export type StatusRecord = ReturnType<typeof statusRecord>;

/** The synchronous result of `POST /api/v1/execute/{target}`. */
export function syncResult(
  row: Pick<
    ExecutionRow,
    'execution_id' | 'run_id' | 'workflow_id' | 'status' | 'result' | 'duration_ms' | 'completed_at' | 'error'
  >,
): ResponseBody<typeof SyncResultSchema> {
  return {
    execution_id: row.execution_id,
    run_id: row.run_id,
    workflow_id: row.workflow_id,
    status: row.status,
    result: row.result ?? null,
    duration_ms: millis(row.duration_ms),
    finished_at: iso(row.completed_at),
    ...(row.status !== 'succeeded' ? { error_message: row.error ?? `execution ${row.status}` } : {}),
  };
}

/** The 202 acknowledgement of `POST /api/v1/execute/async/{target}`. */
export function acknowledgement(
  row: Pick<
    ExecutionRow,
    | 'execution_id'
    | 'workflow_id'
    | 'run_id'
    | 'status'
    | 'target'
    | 'function_type'
    | 'created_at'
    | 'webhook_registered'
    | 'webhook_error'
  >,
): ResponseBody<typeof AcknowledgementSchema> {
  return {
    execution_id: row.execution_id,
    workflow_id: row.workflow_id,
    run_id: row.run_id,
    status: row.status,
    target: row.target,
    type: row.function_type,
    created_at: iso(row.created_at) as string,
    webhook_registered: row.webhook_registered,
    webhook_error: row.webhook_error,
  };
}
