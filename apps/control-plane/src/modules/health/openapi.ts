import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { HealthReportSchema } from './responses.ts';

const healthy = {
  status: 'healthy',
  timestamp: '2026-11-22T10:15:00.000Z',
  version: '0.1.0',
  checks: {
    storage: { status: 'healthy', message: 'database reachable', response_time: 1.204 },
    cache: {
      status: 'healthy',
      message: 'discovery cache: 0 entries, 0.0 KiB of 32.0 MiB, empty (ttl 30 s)',
      response_time: 0.021,
      entries: 0,
      bytes: 0,
      max_bytes: 33554432,
      oldest_age_seconds: null,
    },
  },
};

/** The health feature's one route. */
export const healthOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/health': {
    get: {
      operationId: 'getHealth',
      tags: ['Health and metrics'],
      summary: 'Health report',
      description:
        'Runs every check (a real database query, the discovery cache) concurrently. Never behind the API key, so load balancers can call it.',
      security: [],
      responses: {
        '200': {
          description: 'Every check is healthy.',
          content: { 'application/json': { schema: HealthReportSchema, example: healthy } },
        },
        '503': {
          description: 'At least one check failed; the report says which.',
          content: {
            'application/json': {
              schema: HealthReportSchema,
              example: {
                ...healthy,
                status: 'unhealthy',
                checks: {
                  ...healthy.checks,
                  storage: {
                    status: 'unhealthy',
                    message: 'database did not answer within 2000 ms (connection pool exhausted?)',
                    response_time: 2001.5,
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};
