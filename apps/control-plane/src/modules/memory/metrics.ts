import { Counter, type Registry } from 'prom-client';

/** The memory metric (content/operations/monitoring.md), registered on the app's registry. */
export function createMemoryMetrics(registry: Registry) {
  return {
    operationsTotal: new Counter({
      name: 'service_memory_operations_total',
      help: 'Memory operations by type and scope.',
      labelNames: ['type', 'scope'] as const,
      registers: [registry],
    }),
  };
}

export type MemoryMetrics = ReturnType<typeof createMemoryMetrics>;
