import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Buckets for the DAG depth histogram: depths are small whole numbers, not seconds. */
const DAG_DEPTH_BUCKETS = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50];

/**
 * The execution metrics (content/operations/monitoring.md), registered on the app's registry. `queueDepth` is read from
 * the database at scrape time (the queue is shared by every replica, so no replica's own count
 * would be the backlog).
 */
export function createExecutionMetrics(
  registry: Registry,
  queueDepth: () => Promise<number> = async () => 0,
) {
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
      help: 'Depth in its workflow DAG of each finished execution (1 for a root, parent depth + 1 for a child).',
      buckets: DAG_DEPTH_BUCKETS,
      registers,
    }),
    queueDepth: new Gauge({
      name: 'service_queue_depth',
      help: 'Executions waiting in the queue (all replicas).',
      registers,
      async collect() {
        this.set(await queueDepth());
      },
    }),
  };
}

export type ExecutionMetrics = ReturnType<typeof createExecutionMetrics>;
