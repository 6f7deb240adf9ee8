import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { LIFECYCLE_STATUSES } from '../nodes/index.ts';
import { RECENT_FAILURES, WINDOW_MINUTES } from './queries.ts';

const Timestamp = z.iso.datetime();
const Count = z.int().min(0);
const Millis = z.number().min(0).nullable();

const MinuteSchema = z.object({
  minute: Timestamp.meta({ description: 'Start of the minute (UTC).' }),
  started: Count.meta({ description: 'Executions accepted in the minute.' }),
  succeeded: Count.meta({ description: 'Executions that ended `succeeded` in the minute.' }),
  failed: Count.meta({ description: 'Executions that ended `failed` or `timeout` in the minute.' }),
  cancelled: Count.meta({ description: 'Executions cancelled in the minute.' }),
});

export const OverviewSchema = z
  .object({
    generated_at: Timestamp,
    docs_url: z.url().meta({
      description:
        'The documentation site this control plane links to (`SWITCHYARD_DOCS_URL`), so a UI can link to its pages.',
    }),
    connector: z.object({
      enabled: z.boolean().meta({
        description:
          'Whether the connector API is on (`SERVICE_CONNECTOR_TOKEN` set), so a UI knows whether to offer changes that go through it, such as traffic weights.',
      }),
    }),
    window: z.object({
      from: Timestamp,
      to: Timestamp.meta({ description: 'The end of the current minute: the window holds it whole.' }),
      minutes: z.literal(WINDOW_MINUTES),
    }),
    nodes: z.object({
      total: Count.meta({ description: 'Distinct node ids registered.' }),
      instances: Count.meta({ description: 'Registered instances (one per node and version).' }),
      by_state: z
        .object(
          Object.fromEntries(LIFECYCLE_STATUSES.map((s) => [s, Count])) as Record<
            (typeof LIFECYCLE_STATUSES)[number],
            typeof Count
          >,
        )
        .meta({ description: 'Instances in each lifecycle state.' }),
    }),
    executions: z.object({
      queue_depth: Count.meta({
        description: 'Executions `queued` now (the async lane waiting for dispatch).',
      }),
      running: Count,
      waiting: Count.meta({ description: 'Executions paused for an approval or a child now.' }),
      last_hour: z.object({
        started: Count,
        finished: Count.meta({ description: 'Executions that ended in the window, whatever the outcome.' }),
        succeeded: Count,
        failed: Count.meta({ description: 'Ended `failed` or `timeout`.' }),
        cancelled: Count,
        failure_rate: z.number().min(0).max(1).nullable().meta({
          description:
            'failed / (succeeded + failed) over the window; cancelled executions are left out. Null when none of either ended.',
        }),
        p50_ms: Millis.meta({
          description: 'Median duration of executions that succeeded or failed in the window.',
        }),
        p95_ms: Millis.meta({ description: '95th percentile of the same durations.' }),
      }),
      per_minute: z.array(MinuteSchema).length(WINDOW_MINUTES).meta({
        description: 'One entry per minute of the window, oldest first; minutes with nothing are zeros.',
      }),
      recent_failures: z
        .array(
          z.object({
            execution_id: z.string(),
            workflow_id: z.string(),
            target: z.string(),
            status: z.enum(['failed', 'timeout']),
            error_message: z.string().nullable(),
            completed_at: Timestamp,
            duration_ms: Millis,
          }),
        )
        .max(RECENT_FAILURES)
        .meta({
          description: `The ${RECENT_FAILURES} newest executions that ended failed or timeout, newest first, at any time.`,
        }),
    }),
    approvals: z.object({
      pending: Count.meta({ description: 'Approval requests waiting for a decision.' }),
    }),
    webhooks: z.object({
      dead_lettered: Count.meta({ description: 'Webhook deliveries in the dead-letter queue.' }),
    }),
  })
  .meta({ id: 'Overview' });

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
