import { z } from 'zod';
import { LIFECYCLE_STATUSES } from '../nodes/index.ts';
import { RECENT_FAILURES, WINDOW_MINUTES } from './queries.ts';

/*
 * What GET /api/ui/v1/overview answers, as the OpenAPI document describes it; queries.ts builds
 * the overview with the types inferred here.
 */

const Timestamp = z.iso.datetime();

const Count = z.int().min(0);

const Millis = z.number().min(0).nullable();

export const MinuteSchema = z.object({
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
