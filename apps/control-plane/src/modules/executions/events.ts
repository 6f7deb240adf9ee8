import { type ExecutionRow, isTerminal, type TerminalStatus } from './records.ts';

/** The event-log stream execution events are appended to (and GET /api/ui/v1/executions/events reads). */
export const EXECUTIONS_STREAM = 'executions';

/** The execution events of the SSE stream (content/api/events-and-ui.md), in the order an execution can emit them. */
export const EXECUTION_EVENT_NAMES = [
  'execution.started',
  'execution.waiting',
  'execution.approval_resolved',
  'execution.resumed',
  'execution.completed',
] as const;
export type ExecutionEventName = (typeof EXECUTION_EVENT_NAMES)[number];

export function isExecutionEventName(name: string): name is ExecutionEventName {
  return (EXECUTION_EVENT_NAMES as readonly string[]).includes(name);
}

/**
 * Members every execution event carries besides the spec's: `target`, `workflow_id` and `run_id`
 * name what ran and where it belongs, so a stream can be filtered by them and a dashboard can
 * place an event without looking the execution up.
 */
interface ExecutionEventBase {
  execution_id: string;
  target: string;
  workflow_id: string;
  run_id: string;
  timestamp: string;
}

export interface ExecutionStartedPayload extends ExecutionEventBase {
  status: 'running';
  agent_node_id: string;
}

export interface ExecutionCompletedPayload extends ExecutionEventBase {
  status: TerminalStatus;
  duration_ms: number | null;
  /** Only when the execution did not succeed. */
  error_message?: string;
}

export interface ExecutionWaitingPayload extends ExecutionEventBase {
  status: 'waiting';
  /** What it waits for: `approval` (with approval_request_id) or `child` (with reason). */
  waiting_for: 'approval' | 'child';
  approval_request_id?: string;
  reason?: string | null;
}

/** A parent that awaited a child goes on (its agent reported `running`). */
export interface ExecutionResumedPayload extends ExecutionEventBase {
  status: 'running';
}

export interface ExecutionApprovalResolvedPayload extends ExecutionEventBase {
  /** The execution's status after the decision (usually `running` again, or terminal when rejected). */
  status: string;
  approval_request_id: string;
  decision: string;
}

export interface ExecutionEventPayloads {
  'execution.started': ExecutionStartedPayload;
  'execution.completed': ExecutionCompletedPayload;
  'execution.waiting': ExecutionWaitingPayload;
  'execution.approval_resolved': ExecutionApprovalResolvedPayload;
  'execution.resumed': ExecutionResumedPayload;
}

/** The members of an execution row the payloads read. */
export type ExecutionEventSource = Pick<
  ExecutionRow,
  'execution_id' | 'target' | 'workflow_id' | 'run_id' | 'node_id' | 'status' | 'duration_ms' | 'error'
>;

function base(row: ExecutionEventSource, now: Date): ExecutionEventBase {
  return {
    execution_id: row.execution_id,
    target: row.target,
    workflow_id: row.workflow_id,
    run_id: row.run_id,
    timestamp: now.toISOString(),
  };
}

/** `execution.started`: the execution was handed to an agent (sync lane) or claimed by a dispatcher. */
export function startedPayload(row: ExecutionEventSource, now: Date): ExecutionStartedPayload {
  return { ...base(row, now), status: 'running', agent_node_id: row.node_id };
}

/** `execution.completed`: the execution reached a terminal state, whichever (the row's status says). */
export function completedPayload(row: ExecutionEventSource, now: Date): ExecutionCompletedPayload {
  // Callers hold a row their terminal update returned; anything else is a bug worth failing loudly.
  if (!isTerminal(row.status)) {
    throw new Error(`execution ${row.execution_id} is ${row.status}, not terminal: no execution.completed`);
  }
  return {
    ...base(row, now),
    status: row.status,
    // Whole milliseconds, as in the status record.
    duration_ms: row.duration_ms === null ? null : Math.round(row.duration_ms),
    ...(row.status !== 'succeeded' && row.error ? { error_message: row.error } : {}),
  };
}

/** `execution.waiting`: the execution paused for an approval request. */
export function waitingPayload(
  row: ExecutionEventSource,
  approvalRequestId: string,
  now: Date,
): ExecutionWaitingPayload {
  return {
    ...base(row, now),
    status: 'waiting',
    waiting_for: 'approval',
    approval_request_id: approvalRequestId,
  };
}

/** `execution.waiting` of a parent that awaits a paused child. */
export function childWaitingPayload(
  row: ExecutionEventSource,
  reason: string | null,
  now: Date,
): ExecutionWaitingPayload {
  return { ...base(row, now), status: 'waiting', waiting_for: 'child', reason };
}

/** `execution.resumed`: the parent no longer awaits a child. */
export function resumedPayload(row: ExecutionEventSource, now: Date): ExecutionResumedPayload {
  return { ...base(row, now), status: 'running' };
}

/** `execution.approval_resolved`: the approval request was decided; `status` is the execution's status after it. */
export function approvalResolvedPayload(
  row: ExecutionEventSource,
  approvalRequestId: string,
  decision: string,
  now: Date,
): ExecutionApprovalResolvedPayload {
  return { ...base(row, now), status: row.status, approval_request_id: approvalRequestId, decision };
}
