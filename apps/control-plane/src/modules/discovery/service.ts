import { createAnswerCache } from '../../platform/answer-cache.ts';
import type { HealthProbe } from '../../platform/health-probe.ts';
import type { NodeInstance } from '../nodes/index.ts';
import { buildCapabilityListing } from './catalog.ts';
import type { DiscoveryMetrics } from './metrics.ts';
import { type RenderedDiscovery, renderListing } from './render.ts';
import type { DiscoveryFormat, DiscoveryQuery } from './schemas.ts';

/** Default bound on the bytes of the answers the discovery cache keeps (keys included). */
export const DISCOVERY_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/**
 * An answer larger than this is never cached: one huge query must not push out dozens of
 * ordinary ones, and it is recomputed from the cached fleet snapshot anyway.
 */
export const DISCOVERY_CACHE_MAX_ENTRY_BYTES = 4 * 1024 * 1024;

export interface DiscoveryServiceDeps {
  /** Every registered node instance (node storage's listNodeInstances bound to the database). */
  listInstances: () => Promise<NodeInstance[]>;
  metrics: DiscoveryMetrics;
  /** How long an answer is served from cache; 0 disables the cache. */
  cacheTtlMs: number;
  /** Bytes of answers the cache keeps, oldest evicted first; 32 MiB by default. */
  cacheMaxBytes?: number;
  /** An answer larger than this is not cached; 4 MiB by default. */
  cacheMaxEntryBytes?: number;
  clock?: { now(): number };
}

interface Snapshot {
  instances: NodeInstance[];
  readAt: string;
}

export interface DiscoveryAnswer extends RenderedDiscovery {
  /** True when the answer came from the cache. */
  cached: boolean;
}

/** A byte count for the health message: KiB below one MiB, MiB from there. */
function readableBytes(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes < MiB ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / MiB).toFixed(1)} MiB`;
}

/** Capability discovery (GET /api/v1/discovery/capabilities) with its cache and metrics. */
export function createDiscoveryService(deps: DiscoveryServiceDeps) {
  const now = () => (deps.clock ?? Date).now();
  const maxBytes = deps.cacheMaxBytes ?? DISCOVERY_CACHE_MAX_BYTES;
  // Bounded by the bytes of the rendered answers, not their count: a single answer can be
  // megabytes (schemas and descriptions of a large fleet), so a count bound bounds nothing.
  const cache = createAnswerCache<RenderedDiscovery>({
    ttlMs: deps.cacheTtlMs,
    now,
    sizeOf: (answer) => answer.body.byteLength,
    maxBytes,
    maxEntryBytes: deps.cacheMaxEntryBytes ?? DISCOVERY_CACHE_MAX_ENTRY_BYTES,
  });
  // The fleet snapshot is cached under the same rules as the answers (TTL, cleared by node
  // events), so different queries within a TTL share one database read: reading 1,000 instances
  // costs far more than filtering and rendering them.
  const fleet = createAnswerCache<Snapshot>({ ttlMs: deps.cacheTtlMs, now, maxEntries: 1 });
  const { metrics } = deps;

  /** The fleet, and when it was read (an answer's discovered_at). */
  async function snapshot(): Promise<Snapshot> {
    const { value } = await fleet.remember('fleet', async () => {
      const readAt = new Date(now()).toISOString();
      return { instances: await deps.listInstances(), readAt };
    });
    return value;
  }

  return {
    /** Answers a validated query, from cache when a fresh answer for the same query exists. */
    async discover(query: DiscoveryQuery): Promise<DiscoveryAnswer> {
      // Usage counts every request that used a filter, cached or not: it measures demand.
      if (query.agents.length > 0) metrics.filterUsageTotal.inc({ filter_type: 'agent' });
      if (query.reasoner !== undefined) metrics.filterUsageTotal.inc({ filter_type: 'reasoner' });
      if (query.skill !== undefined) metrics.filterUsageTotal.inc({ filter_type: 'skill' });
      if (query.tags.length > 0) metrics.filterUsageTotal.inc({ filter_type: 'tag' });
      if (query.healthStatus !== undefined) metrics.filterUsageTotal.inc({ filter_type: 'health_status' });

      const key = JSON.stringify(query);
      const hit = cache.get(key);
      if (hit) {
        metrics.cacheHitsTotal.inc();
        return { ...hit, cached: true };
      }
      metrics.cacheMissesTotal.inc();
      const generation = cache.generation();
      const { instances, readAt } = await snapshot();
      const listing = buildCapabilityListing(instances, query, readAt);
      const rendered = renderListing(listing, query.format);
      cache.set(key, rendered, generation);
      return { ...rendered, cached: false };
    },

    /** Records one finished request: its outcome counter and latency histogram. */
    record(format: DiscoveryFormat, status: 'success' | 'error', seconds: number): void {
      metrics.requestsTotal.inc({ format, status });
      metrics.requestDurationSeconds.observe({ format }, seconds);
    },

    /** Drops every cached answer; called for each event on the `nodes` topic. */
    invalidate(): void {
      cache.invalidate();
      fleet.invalidate();
    },

    /** The `cache` check of the health report: entries, their bytes and the age of the oldest. */
    cacheProbe(): HealthProbe {
      return async () => {
        const { entries, bytes, oldestAgeMs } = cache.stats();
        const ttl = `ttl ${deps.cacheTtlMs / 1000} s${deps.cacheTtlMs === 0 ? ', disabled' : ''}`;
        const age = oldestAgeMs === null ? 'empty' : `oldest ${(oldestAgeMs / 1000).toFixed(1)} s old`;
        const size = `${readableBytes(bytes)} of ${readableBytes(maxBytes)}`;
        return {
          message: `discovery cache: ${entries} ${entries === 1 ? 'entry' : 'entries'}, ${size}, ${age} (${ttl})`,
          details: {
            entries,
            bytes,
            max_bytes: maxBytes,
            oldest_age_seconds: oldestAgeMs === null ? null : oldestAgeMs / 1000,
          },
        };
      };
    },
  };
}

export type DiscoveryService = ReturnType<typeof createDiscoveryService>;
