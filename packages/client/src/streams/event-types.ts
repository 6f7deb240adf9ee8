/*
 * The payloads of the control plane's event streams as the server writes them: one `data:` line
 * of JSON per frame, its `type` repeating the frame's `event:` name. The OpenAPI document types
 * these streams only as text, so the payloads are declared here; test/event-types.test.ts holds
 * them to the server's own declarations.
 */

/** Execution statuses an event can report. */
export type ExecutionStatus =
  | 'queued'
  | 'pending'
  | 'running'
  | 'waiting'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'timeout';
/** States an execution never leaves. */
export type TerminalExecutionStatus = 'succeeded' | 'failed' | 'cancelled' | 'timeout';
/** Lifecycle states of a node instance. */
export type NodeLifecycleStatus = 'starting' | 'ready' | 'degraded' | 'offline';

/** What every execution event carries: what ran and where it belongs. */
interface ExecutionEventBase {
  execution_id: string;
  /** `agent.function`. */
  target: string;
  workflow_id: string;
  run_id: string;
  /** When the event happened (ISO 8601, UTC). */
  timestamp: string;
}

/** The execution was handed to an agent. */
export interface ExecutionStartedPayload extends ExecutionEventBase {
  type: 'execution.started';
  status: 'running';
  agent_node_id: string;
}

/** The execution reached a terminal state (`status` says which). */
export interface ExecutionCompletedPayload extends ExecutionEventBase {
  type: 'execution.completed';
  status: TerminalExecutionStatus;
  duration_ms: number | null;
  /** Only when the execution did not succeed. */
  error_message?: string;
}

/** The execution paused: for an approval (with approval_request_id) or a paused child (with reason). */
export interface ExecutionWaitingPayload extends ExecutionEventBase {
  type: 'execution.waiting';
  status: 'waiting';
  waiting_for: 'approval' | 'child';
  approval_request_id?: string;
  reason?: string | null;
}

/** A parent that awaited a child goes on. */
export interface ExecutionResumedPayload extends ExecutionEventBase {
  type: 'execution.resumed';
  status: 'running';
}

/** The approval request was decided; `status` is the execution's status after it. */
export interface ExecutionApprovalResolvedPayload extends ExecutionEventBase {
  type: 'execution.approval_resolved';
  status: string;
  approval_request_id: string;
  /** `approved`, `rejected`, `request_changes` or `expired`. */
  decision: string;
}

/** Each event of GET /api/ui/v1/executions/events by name. */
export interface ExecutionEventPayloads {
  'execution.started': ExecutionStartedPayload;
  'execution.waiting': ExecutionWaitingPayload;
  'execution.approval_resolved': ExecutionApprovalResolvedPayload;
  'execution.resumed': ExecutionResumedPayload;
  'execution.completed': ExecutionCompletedPayload;
}

/** An instance registered (or re-registered with the same id and version). */
export interface NodeRegisteredPayload {
  type: 'node.registered';
  node_id: string;
  version: string;
  timestamp: string;
}

/** The lifecycle status of one instance changed; `reason` says which rule moved it. */
export interface NodeStatusChangedPayload {
  type: 'node.status_changed';
  node_id: string;
  version: string;
  old_status: NodeLifecycleStatus | null;
  new_status: NodeLifecycleStatus;
  reason: string;
  timestamp: string;
}

/** An instance was evicted: a live fleet view drops its row. */
export interface NodeRemovedPayload {
  type: 'node.removed';
  node_id: string;
  version: string;
  timestamp: string;
}

/** Each event of GET /api/ui/v1/nodes/events by name. */
export interface NodeEventPayloads {
  'node.registered': NodeRegisteredPayload;
  'node.status_changed': NodeStatusChangedPayload;
  'node.removed': NodeRemovedPayload;
}

/** A change of key-value memory. */
export interface MemoryChangePayload {
  type: 'memory_change';
  scope: 'workflow' | 'session' | 'actor' | 'global';
  scope_id: string;
  key: string;
  action: 'set' | 'delete';
  /** The value written; for a delete, the value removed. */
  data: unknown;
  /** When the change was applied (ISO 8601, UTC). */
  timestamp: string;
}

/** Each event of GET /api/v1/memory/events/sse by name. */
export interface MemoryEventPayloads {
  memory_change: MemoryChangePayload;
}
