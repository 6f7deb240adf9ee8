/**
 * Executions: the synchronous and asynchronous lanes, the durable queue and its dispatchers, the
 * reaper, agents' status reports, cancellation, logs, lists and workflow DAGs.
 */
export { executionEventsOpenApi } from './event-openapi.ts';
export { executionEventsRouter } from './event-routes.ts';
export { EXECUTIONS_STREAM } from './events.ts';
export type { EndedWhileWaiting } from './finisher.ts';
export type { ExecutionLogs } from './logs.ts';
export { createExecutionMetrics, type ExecutionMetrics } from './metrics.ts';
export { executionsOpenApi } from './openapi.ts';
export type { ExecutionPayload, ExecutionQueries } from './queries.ts';
export {
  acknowledgement,
  type ExecutionRow,
  isTerminal,
  statusRecord,
  syncResult,
  type WaitingFor,
} from './records.ts';
export { countQueued } from './repository.ts';
export { EXECUTE_BODY_LIMIT, executionsRouter } from './routes.ts';
export { createExecutionRuntime, type ExecutionRuntime } from './runtime.ts';
export { WorkflowIdSchema, WorkflowPathSchema } from './schemas.ts';
export type { ExecutionQueueSettings, ExecutionService } from './service.ts';
export { executionQueueSettings } from './settings.ts';
export type { ExecutionWaiting } from './waiting.ts';
