import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Buckets for the DAG depth histogram: depths are small whole numbers, not seconds. */
const DAG_DEPTH_BUCKETS = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50];

/** The execution metrics of spec §4, registered on the app's registry. */
export function createExecutionMetrics(registry: Registry) {
  const registers = [registry];
  return {
    executionsTotal: new Counter({
      name: 'service_executions_total',
      help: 'Executions by node, type (reasoner or skill) and terminal status.',
      labelNames: ['node', 'type', 'status'] as const,
      registers,
    }),
    executionDurationSeconds: new Histogram({
      name: 'service_execution_duration_seconds',
      help: 'Execution latency in seconds.',
      registers,
    }),
    workflowDagDepth: new Histogram({
      name: 'service_workflow_dag_depth',
      help: 'Depth of workflow DAGs (executions on the longest parent chain).',
      buckets: DAG_DEPTH_BUCKETS,
      registers,
    }),
    queueDepth: new Gauge({
      name: 'service_queue_depth',
      help: 'Executions waiting in the queue.',
      registers,
    }),
  };
}

export type ExecutionMetrics = ReturnType<typeof createExecutionMetrics>;
