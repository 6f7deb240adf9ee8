import { docsBaseUrl } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { LIFECYCLE_STATUSES, type LifecycleStatus } from '../nodes/index.ts';
import type { MinuteSchema, OverviewSchema } from './responses.ts';

/** The overview covers the last hour, minute by minute. */
export const WINDOW_MINUTES = 60;
/** How many of the newest failures the overview lists. */
export const RECENT_FAILURES = 10;

/** Execution statuses that count as failures in the failure rate (cancelled is a choice, not one). */
const FAILED = ['failed', 'timeout'] as const;

/** One minute of the window: executions accepted in it, and those that ended in it by outcome. */
export type MinuteCounts = ResponseBody<typeof MinuteSchema>;

/** The overview; nodes are counted by distinct id, by instance (one per version) and by state. */
export type Overview = ResponseBody<typeof OverviewSchema>;

export type RecentFailure = Overview['executions']['recent_failures'][number];

const count = (value: unknown) => Number(value ?? 0);
const minuteKey = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000).toISOString();

/**
 * The dashboard's overview, read from the database in one repeatable-read snapshot so every
 * replica answers the same figures and the figures agree with each other (a failure counted in
 * the rate is also in the per-minute series). Aggregates run in SQL: nothing is loaded row by row.
 */
export async function readOverview(
  db: Knex,
  now: Date,
  deployment: { connectorEnabled: boolean },
): Promise<Overview> {
  const to = new Date(Math.floor(now.getTime() / 60_000) * 60_000 + 60_000);
  const from = new Date(to.getTime() - WINDOW_MINUTES * 60_000);
  return db.transaction(
    async (trx) => {
      const nodeRows = (await trx('node_instances')
        .select('lifecycle_status')
        .count({ n: '*' })
        .groupBy('lifecycle_status')) as Array<{ lifecycle_status: string; n: unknown }>;
      const distinctNodes = (await trx('node_instances').countDistinct({ n: 'node_id' }).first()) as {
        n: unknown;
      };

      const live = (await trx('executions')
        .whereIn('status', ['queued', 'running', 'waiting'])
        .select('status')
        .count({ n: '*' })
        .groupBy('status')) as Array<{ status: string; n: unknown }>;

      const startedRows = (await trx('executions')
        .where('created_at', '>=', from)
        .andWhere('created_at', '<', to)
        .select(trx.raw(`date_trunc('minute', created_at) as minute`))
        .count({ n: '*' })
        .groupByRaw('1')) as Array<{ minute: Date; n: unknown }>;

      const endedRows = (await trx('executions')
        .where('completed_at', '>=', from)
        .andWhere('completed_at', '<', to)
        .whereIn('status', ['succeeded', 'cancelled', ...FAILED])
        .select(trx.raw(`date_trunc('minute', completed_at) as minute`))
        .select(trx.raw(`count(*) filter (where status = 'succeeded') as succeeded`))
        .select(trx.raw(`count(*) filter (where status in ('failed', 'timeout')) as failed`))
        .select(trx.raw(`count(*) filter (where status = 'cancelled') as cancelled`))
        .groupByRaw('1')) as Array<{ minute: Date; succeeded: unknown; failed: unknown; cancelled: unknown }>;

      const durations = (await trx('executions')
        .where('completed_at', '>=', from)
        .andWhere('completed_at', '<', to)
        .whereNotNull('duration_ms')
        .whereIn('status', ['succeeded', ...FAILED])
        .select(
          trx.raw('percentile_cont(0.5) within group (order by duration_ms) as p50'),
          trx.raw('percentile_cont(0.95) within group (order by duration_ms) as p95'),
        )
        .first()) as { p50: unknown; p95: unknown } | undefined;

      const failures = (await trx('executions')
        .whereNotNull('completed_at')
        .whereIn('status', [...FAILED])
        .orderBy([
          { column: 'completed_at', order: 'desc' },
          { column: 'execution_id', order: 'desc' },
        ])
        .limit(RECENT_FAILURES)
        .select(
          'execution_id',
          'workflow_id',
          'target',
          'status',
          'error',
          'completed_at',
          'duration_ms',
        )) as Array<{
        execution_id: string;
        workflow_id: string;
        target: string;
        status: (typeof FAILED)[number];
        error: string | null;
        completed_at: Date;
        duration_ms: number | null;
      }>;

      const pending = (await trx('approval_requests')
        .where({ status: 'pending' })
        .count({ n: '*' })
        .first()) as {
        n: unknown;
      };
      const dead = (await trx('webhook_deliveries').where({ status: 'dead' }).count({ n: '*' }).first()) as {
        n: unknown;
      };

      const byState = Object.fromEntries(LIFECYCLE_STATUSES.map((s) => [s, 0])) as Record<
        LifecycleStatus,
        number
      >;
      let instances = 0;
      for (const row of nodeRows) {
        if (row.lifecycle_status in byState) byState[row.lifecycle_status as LifecycleStatus] = count(row.n);
        instances += count(row.n);
      }
      const liveCount = (status: string) => count(live.find((row) => row.status === status)?.n);

      const minutes = new Map<string, MinuteCounts>();
      for (let i = 0; i < WINDOW_MINUTES; i++) {
        const minute = new Date(from.getTime() + i * 60_000).toISOString();
        minutes.set(minute, { minute, started: 0, succeeded: 0, failed: 0, cancelled: 0 });
      }
      for (const row of startedRows) {
        const bucket = minutes.get(minuteKey(new Date(row.minute)));
        if (bucket) bucket.started = count(row.n);
      }
      for (const row of endedRows) {
        const bucket = minutes.get(minuteKey(new Date(row.minute)));
        if (!bucket) continue;
        bucket.succeeded = count(row.succeeded);
        bucket.failed = count(row.failed);
        bucket.cancelled = count(row.cancelled);
      }
      const series = [...minutes.values()];
      const sum = (pick: (m: MinuteCounts) => number) => series.reduce((total, m) => total + pick(m), 0);
      const succeeded = sum((m) => m.succeeded);
      const failed = sum((m) => m.failed);
      const cancelled = sum((m) => m.cancelled);
      const decided = succeeded + failed;
      const percentile = (value: unknown) => (value === null || value === undefined ? null : Number(value));

      return {
        generated_at: now.toISOString(),
        docs_url: docsBaseUrl(),
        connector: { enabled: deployment.connectorEnabled },
        window: { from: from.toISOString(), to: to.toISOString(), minutes: WINDOW_MINUTES },
        nodes: { total: count(distinctNodes?.n), instances, by_state: byState },
        executions: {
          queue_depth: liveCount('queued'),
          running: liveCount('running'),
          waiting: liveCount('waiting'),
          last_hour: {
            started: sum((m) => m.started),
            finished: succeeded + failed + cancelled,
            succeeded,
            failed,
            cancelled,
            failure_rate: decided === 0 ? null : failed / decided,
            p50_ms: percentile(durations?.p50),
            p95_ms: percentile(durations?.p95),
          },
          per_minute: series,
          recent_failures: failures.map((row) => ({
            execution_id: row.execution_id,
            workflow_id: row.workflow_id,
            target: row.target,
            status: row.status,
            error_message: row.error,
            completed_at: new Date(row.completed_at).toISOString(),
            duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
          })),
        },
        approvals: { pending: count(pending?.n) },
        webhooks: { dead_lettered: count(dead?.n) },
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
