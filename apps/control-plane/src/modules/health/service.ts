import { nowIso } from '@switchyard/shared';
import type { Database } from '@switchyard/shared/db';
import type { z } from 'zod';
import type { HealthProbe } from '../../platform/health-probe.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { HealthCheckSchema, HealthReportSchema } from './responses.ts';

export type { HealthProbe };

/** One check: its schema is loose on purpose, for the figures a probe reports besides its message. */
export type HealthCheck = z.output<typeof HealthCheckSchema>;

export type HealthReport = ResponseBody<typeof HealthReportSchema>;

async function runProbe(probe: HealthProbe): Promise<HealthCheck> {
  const started = performance.now();
  try {
    const outcome = await probe();
    const { message, details } = typeof outcome === 'string' ? { message: outcome, details: {} } : outcome;
    const check: HealthCheck = { status: 'healthy', message, response_time: elapsed(started) };
    // Extra figures follow the standard members and never replace them.
    for (const [name, value] of Object.entries(details)) if (!(name in check)) check[name] = value;
    return check;
  } catch (error) {
    return { status: 'unhealthy', message: (error as Error).message, response_time: elapsed(started) };
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

/**
 * Probes the database with a real query, giving up after `timeoutMs`: with the connection pool
 * exhausted the query would wait for a connection (knex: up to a minute), and a health check that
 * hangs tells a load balancer nothing, so the report answers unhealthy instead.
 */
export function storageProbe(db: Database, timeoutMs = 2_000): HealthProbe {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, fail) => {
      timer = setTimeout(
        () => fail(new Error(`database did not answer within ${timeoutMs} ms (connection pool exhausted?)`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([db.raw('select 1'), expired]);
    } finally {
      clearTimeout(timer);
    }
    return 'database reachable';
  };
}

export interface HealthServiceDeps {
  version: string;
  probes: Record<string, HealthProbe>;
}

/** Runs every probe concurrently; the report is healthy only when every check is. */
export function createHealthService(deps: HealthServiceDeps) {
  return {
    async report(): Promise<HealthReport> {
      const names = Object.keys(deps.probes);
      const results = await Promise.all(names.map((name) => runProbe(deps.probes[name]!)));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]!]));
      const healthy = results.every((r) => r.status === 'healthy');
      return {
        status: healthy ? 'healthy' : 'unhealthy',
        timestamp: nowIso(),
        version: deps.version,
        checks,
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
