import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { WINDOW_MINUTES } from './queries.ts';
import { OverviewSchema } from './responses.ts';

const minute = (i: number) => new Date(Date.UTC(2026, 10, 27, 9, i)).toISOString();

export const overviewOpenApi: ZodOpenApiPathsObject = {
  '/api/ui/v1/overview': {
    get: {
      operationId: 'getOverview',
      tags: ['Dashboard'],
      summary: 'The fleet at a glance (the dashboard overview)',
      description: `Nodes by state, the last ${WINDOW_MINUTES} minutes of executions minute by minute with their failure rate and p50/p95 duration, the queue depth, the newest failures, pending approvals and dead-lettered webhooks. Read from the database in one snapshot, so every replica answers the same figures.`,
      responses: {
        '200': {
          description: 'The overview.',
          content: {
            'application/json': {
              schema: OverviewSchema,
              example: {
                generated_at: '2026-11-27T09:59:41.512Z',
                docs_url: 'http://127.0.0.1:4321',
                connector: { enabled: true },
                window: { from: minute(0), to: minute(60), minutes: WINDOW_MINUTES },
                nodes: {
                  total: 2,
                  instances: 3,
                  by_state: { starting: 0, ready: 2, degraded: 0, offline: 1 },
                },
                executions: {
                  queue_depth: 4,
                  running: 2,
                  waiting: 1,
                  last_hour: {
                    started: 120,
                    finished: 115,
                    succeeded: 110,
                    failed: 4,
                    cancelled: 1,
                    failure_rate: 4 / 114,
                    p50_ms: 182.5,
                    p95_ms: 1204,
                  },
                  per_minute: Array.from({ length: WINDOW_MINUTES }, (_, i) => ({
                    minute: minute(i),
                    started: 2,
                    succeeded: 2,
                    failed: i === 59 ? 1 : 0,
                    cancelled: 0,
                  })),
                  recent_failures: [
                    {
                      execution_id: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
                      workflow_id: 'wf_7k2m9p4q1r8s3t6v',
                      target: 'researcher.summarize',
                      status: 'failed',
                      error_message: 'agent answered 500: model quota exceeded',
                      completed_at: '2026-11-27T09:59:12.004Z',
                      duration_ms: 812,
                    },
                  ],
                },
                approvals: { pending: 1 },
                webhooks: { dead_lettered: 0 },
              },
            },
          },
        },
      },
    },
  },
};
