import { collectDefaultMetrics, Registry } from 'prom-client';

export type { Registry as MetricsRegistry } from 'prom-client';

/**
 * The one metrics registry of an app: every feature registers its service_* metrics here, next
 * to prom-client's standard process metrics (heap, event-loop lag, GC, file descriptors, CPU).
 * One registry per app (not prom-client's global one) so apps built side by side in tests, or
 * two in one process, never share series.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
