/**
 * Executions. Today this holds what the rest of the app already declares for them: the
 * `execution_queue` settings (validated at start) and the execution metrics of spec §4.
 */
export { createExecutionMetrics, type ExecutionMetrics } from './metrics.ts';
export { executionQueueSettings } from './settings.ts';
