import { z } from 'zod';

/*
 * What GET /api/v1/health answers, as the OpenAPI document describes it; service.ts builds the
 * report with the types inferred here.
 */

/** One named check of the report. Probes may add figures of their own (the cache's `entries`). */
export const HealthCheckSchema = z
  .looseObject({
    status: z.enum(['healthy', 'unhealthy']),
    message: z.string(),
    response_time: z.number().min(0).meta({ description: 'How long the check took, in milliseconds.' }),
  })
  .meta({ id: 'HealthCheck' });

/** GET /api/v1/health (content/api/health-and-metrics.md), as service.ts builds it. */
export const HealthReportSchema = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    timestamp: z.iso.datetime(),
    version: z.string(),
    checks: z
      .record(z.string(), HealthCheckSchema)
      .meta({ description: 'By check name: `storage`, `cache`.' }),
  })
  .meta({ id: 'HealthReport' });
