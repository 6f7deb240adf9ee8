import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import type { ReactNode } from 'react';
import { DataTable } from '../components/data-table.tsx';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { MinuteChart } from './minute-chart.tsx';
import { OVERVIEW_KEY, type Overview, overviewQuery } from './overview-query.ts';

type Failure = Overview['executions']['recent_failures'][number];

const column = createColumnHelper<Failure>();
const failureColumns = [
  column.accessor('execution_id', {
    header: 'Execution',
    cell: (info) => (
      <Link to="/executions/$executionId" params={{ executionId: info.getValue() }} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  column.accessor('target', { header: 'Target', cell: (info) => <code>{info.getValue()}</code> }),
  column.accessor('status', { header: 'Status', cell: (info) => <StatusBadge status={info.getValue()} /> }),
  column.accessor('error_message', { header: 'Error', cell: (info) => info.getValue() ?? '—' }),
  column.accessor('completed_at', { header: 'When', cell: (info) => <RelativeTime iso={info.getValue()} /> }),
];

function Stat({ label, children, hint }: { label: string; children: ReactNode; hint?: ReactNode }) {
  return (
    <div className="stat card">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{children}</div>
      {hint ? <div className="muted stat-hint">{hint}</div> : null}
    </div>
  );
}

function ms(value: number | null): string {
  return value === null ? '—' : value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
}

/** The fleet at a glance: nodes by state, the last hour's executions, queue, failures, approvals, dead letters. */
export function OverviewPage() {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const overview = useQuery(overviewQuery(client));
  useLiveEvents(() => refreshOnEvent(queryClient, OVERVIEW_KEY));
  const data = overview.data;
  return (
    <>
      <div className="page-head">
        <h1>Overview</h1>
        {data ? (
          <span className="muted">
            Updated <RelativeTime iso={data.generated_at} />
          </span>
        ) : null}
      </div>
      {overview.error ? (
        <ProblemMessage error={overview.error} context="Could not load the overview" />
      ) : null}
      {overview.isPending ? <p className="muted">Loading the overview…</p> : null}
      {data ? (
        <>
          {data.nodes.total === 0 ? (
            <EmptyState title="No node has registered yet">
              <p>Start an agent pointed at this control plane; its node and executions show up here.</p>
              <p>
                <TutorialLink />
              </p>
            </EmptyState>
          ) : null}
          <h2>Nodes</h2>
          <div className="stats">
            <Stat label="Nodes" hint={`${data.nodes.instances} instances`}>
              <Link to="/nodes">{data.nodes.total}</Link>
            </Stat>
            {Object.entries(data.nodes.by_state).map(([state, count]) => (
              <Stat key={state} label={`Instances ${state}`}>
                {count}
              </Stat>
            ))}
          </div>
          <h2>Executions, last hour</h2>
          <div className="stats">
            <Stat label="Started">{data.executions.last_hour.started}</Stat>
            <Stat label="Finished" hint={`${data.executions.last_hour.succeeded} succeeded`}>
              {data.executions.last_hour.finished}
            </Stat>
            <Stat label="Failure rate" hint={`${data.executions.last_hour.failed} failed`}>
              {data.executions.last_hour.failure_rate === null
                ? '—'
                : `${(data.executions.last_hour.failure_rate * 100).toFixed(1)}%`}
            </Stat>
            <Stat label="p50 / p95">
              {ms(data.executions.last_hour.p50_ms)} / {ms(data.executions.last_hour.p95_ms)}
            </Stat>
            <Stat
              label="Queue depth"
              hint={`${data.executions.running} running, ${data.executions.waiting} waiting`}
            >
              <Link to="/executions" search={{ status: 'queued' }}>
                {data.executions.queue_depth}
              </Link>
            </Stat>
            <Stat label="Pending approvals">
              <Link to="/approvals">{data.approvals.pending}</Link>
            </Stat>
            <Stat label="Dead-lettered webhooks">
              <Link to="/webhooks">{data.webhooks.dead_lettered}</Link>
            </Stat>
          </div>
          <MinuteChart minutes={data.executions.per_minute} />
          <h2>Recent failures</h2>
          {data.executions.recent_failures.length === 0 ? (
            <p className="muted">No execution failed recently.</p>
          ) : (
            <DataTable
              data={data.executions.recent_failures}
              columns={failureColumns}
              label="Recent failures"
              rowId={(row) => row.execution_id}
            />
          )}
        </>
      ) : null}
    </>
  );
}
