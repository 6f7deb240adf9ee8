import { DISCOVERY_FILTER_TYPES, DISCOVERY_FORMATS } from '../schemas/discovery.ts';
import { Counter, Gauge, Histogram, MetricsRegistry } from './registry.ts';

/** Buckets for the DAG depth histogram: depths are small whole numbers, not seconds. */
const DAG_DEPTH_BUCKETS = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50];

/**
 * Every metric of the spec's metrics table (§4), typed by its labels. One instance per app; the
 * execution and memory services increment theirs, discovery increments its own.
 */
export function createServiceMetrics() {
  const registry = new MetricsRegistry();
  const metrics = {
    registry,
    executionsTotal: registry.register(
      new Counter({
        name: 'service_executions_total',
        help: 'Executions by node, type (reasoner or skill) and terminal status.',
        labelNames: ['node', 'type', 'status'] as const,
      }),
    ),
    executionDurationSeconds: registry.register(
      new Histogram({ name: 'service_execution_duration_seconds', help: 'Execution latency in seconds.' }),
    ),
    memoryOperationsTotal: registry.register(
      new Counter({
        name: 'service_memory_operations_total',
        help: 'Memory operations by type and scope.',
        labelNames: ['type', 'scope'] as const,
      }),
    ),
    workflowDagDepth: registry.register(
      new Histogram({
        name: 'service_workflow_dag_depth',
        help: 'Depth of workflow DAGs (executions on the longest parent chain).',
        buckets: DAG_DEPTH_BUCKETS,
      }),
    ),
    queueDepth: registry.register(
      new Gauge({ name: 'service_queue_depth', help: 'Executions waiting in the queue.' }),
    ),
    discoveryRequestsTotal: registry.register(
      new Counter({
        name: 'service_discovery_requests_total',
        help: 'Discovery requests by answer format and outcome (success or error).',
        labelNames: ['format', 'status'] as const,
      }),
    ),
    discoveryRequestDurationSeconds: registry.register(
      new Histogram({
        name: 'service_discovery_request_duration_seconds',
        help: 'Discovery request latency in seconds by answer format.',
        labelNames: ['format'] as const,
      }),
    ),
    discoveryCacheHitsTotal: registry.register(
      new Counter({
        name: 'service_discovery_cache_hits_total',
        help: 'Discovery answers served from cache.',
      }),
    ),
    discoveryCacheMissesTotal: registry.register(
      new Counter({
        name: 'service_discovery_cache_misses_total',
        help: 'Discovery answers computed because the cache had none.',
      }),
    ),
    discoveryFilterUsageTotal: registry.register(
      new Counter({
        name: 'service_discovery_filter_usage_total',
        help: 'Discovery requests using each kind of filter.',
        labelNames: ['filter_type'] as const,
      }),
    ),
  };
  // Label values known in advance are scraped at zero from the start, so rate() and dashboards
  // see every series before the first request instead of a gap.
  for (const format of DISCOVERY_FORMATS) {
    for (const status of ['success', 'error']) metrics.discoveryRequestsTotal.init({ format, status });
    metrics.discoveryRequestDurationSeconds.init({ format });
  }
  for (const filterType of DISCOVERY_FILTER_TYPES) {
    metrics.discoveryFilterUsageTotal.init({ filter_type: filterType });
  }
  return metrics;
}

export type ServiceMetrics = ReturnType<typeof createServiceMetrics>;
