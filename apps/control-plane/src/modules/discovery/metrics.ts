import { Counter, Histogram, type Registry } from 'prom-client';
import { DISCOVERY_FILTER_TYPES, DISCOVERY_FORMATS } from './schemas.ts';

/** Discovery's metrics (listed in content/operations/monitoring.md), registered on the app's registry. */
export function createDiscoveryMetrics(registry: Registry) {
  const registers = [registry];
  const metrics = {
    requestsTotal: new Counter({
      name: 'service_discovery_requests_total',
      help: 'Discovery requests by answer format and outcome (success or error).',
      labelNames: ['format', 'status'] as const,
      registers,
    }),
    requestDurationSeconds: new Histogram({
      name: 'service_discovery_request_duration_seconds',
      help: 'Discovery request latency in seconds by answer format.',
      labelNames: ['format'] as const,
      registers,
    }),
    cacheHitsTotal: new Counter({
      name: 'service_discovery_cache_hits_total',
      help: 'Discovery answers served from cache.',
      registers,
    }),
    cacheMissesTotal: new Counter({
      name: 'service_discovery_cache_misses_total',
      help: 'Discovery answers computed because the cache had none.',
      registers,
    }),
    filterUsageTotal: new Counter({
      name: 'service_discovery_filter_usage_total',
      help: 'Discovery requests using each kind of filter.',
      labelNames: ['filter_type'] as const,
      registers,
    }),
  };
  // Label values known in advance are scraped at zero from the start, so rate() and dashboards
  // see every series before the first request instead of a gap.
  for (const format of DISCOVERY_FORMATS) {
    for (const status of ['success', 'error']) metrics.requestsTotal.inc({ format, status }, 0);
    metrics.requestDurationSeconds.zero({ format });
  }
  for (const filterType of DISCOVERY_FILTER_TYPES)
    metrics.filterUsageTotal.inc({ filter_type: filterType }, 0);
  return metrics;
}

export type DiscoveryMetrics = ReturnType<typeof createDiscoveryMetrics>;
