import { unwrap } from '@switchyard/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { RunAgainLink } from '../playground/run-again.tsx';
import {
  EXECUTIONS_KEY,
  executionInputQuery,
  executionLogsQuery,
  executionQuery,
  webhookDeliveriesQuery,
} from './execution-queries.ts';

const FINISHED = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** How often the logs are read again while the execution runs: log lines raise no event. */
const LOG_POLL_MS = 2_000;

function Logs({ executionId, running }: { executionId: string; running: boolean }) {
  const { client } = useConnection();
  const logs = useQuery({
    ...executionLogsQuery(client, executionId),
    refetchInterval: running ? LOG_POLL_MS : false,
  });
  return (
    <section>
      <h2>Logs and notes</h2>
      {logs.error ? <ProblemMessage error={logs.error} context="Could not read the logs" /> : null}
      {logs.data && logs.data.length === 0 ? (
        <p className="muted">The agent has sent no log lines or notes for this execution.</p>
      ) : null}
      {logs.data && logs.data.length > 0 ? (
        <ul className="logs card">
          {logs.data.map((line) => {
            const entry = line.entry as Record<string, unknown>;
            const message = typeof entry.message === 'string' ? entry.message : JSON.stringify(entry);
            return (
              <li key={line.id}>
                <RelativeTime iso={line.received_at} />{' '}
                {entry.type === 'note' ? <span className="badge info">note</span> : null}{' '}
                {typeof entry.level === 'string' ? <span className="muted">{entry.level} </span> : null}
                {message}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}

function Deliveries({ executionId }: { executionId: string }) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const deliveries = useQuery(webhookDeliveriesQuery(client, executionId));
  const retry = useMutation({
    mutationFn: () =>
      unwrap(
        client.POST('/api/ui/v1/executions/{execution_id}/webhook/retry', {
          params: { path: { execution_id: executionId } },
        }),
      ),
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: [...EXECUTIONS_KEY, 'deliveries', executionId] }),
  });
  const list = deliveries.data?.deliveries ?? [];
  if (deliveries.data && list.length === 0) return null;
  const latest = list[list.length - 1];
  return (
    <section>
      <div className="page-head">
        <h2>Webhook deliveries</h2>
        {latest?.status === 'dead' ? (
          <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending}>
            {retry.isPending ? 'Retrying…' : 'Retry delivery'}
          </button>
        ) : null}
      </div>
      {deliveries.error ? (
        <ProblemMessage error={deliveries.error} context="Could not read the webhook deliveries" />
      ) : null}
      {retry.error ? <ProblemMessage error={retry.error} context="The retry was refused" /> : null}
      {list.map((delivery) => (
        <div className="card" key={delivery.delivery_id}>
          <p>
            <StatusBadge status={delivery.status} />{' '}
            <strong>{delivery.status === 'dead' ? 'dead-lettered' : delivery.status}</strong> {delivery.event}{' '}
            to <code>{delivery.url}</code> {delivery.signed ? '(signed)' : '(unsigned)'}
            {delivery.manual ? ' — manual retry' : ''}
          </p>
          <ul className="logs">
            {delivery.attempts.map((attempt) => (
              <li key={attempt.attempt}>
                Attempt {attempt.attempt}: <RelativeTime iso={attempt.started_at} />,{' '}
                {attempt.status_code ? `answered ${attempt.status_code}` : `no answer: ${attempt.error}`}
                {attempt.duration_ms !== null ? ` in ${attempt.duration_ms} ms` : ''}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

/**
 * One execution: status, timings, progress, input/result/error, logs and notes, webhook
 * deliveries; cancel while it is not finished. Its events refresh everything on the page.
 */
export function ExecutionPage() {
  const { executionId } = useParams({ from: '/executions/$executionId' });
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const execution = useQuery(executionQuery(client, executionId));
  const input = useQuery(executionInputQuery(client, executionId));

  useLiveEvents((event) => {
    if (event.stream === 'executions' && event.data.execution_id === executionId) {
      refreshOnEvent(queryClient, [...EXECUTIONS_KEY, 'one', executionId]);
      refreshOnEvent(queryClient, [...EXECUTIONS_KEY, 'logs', executionId]);
      refreshOnEvent(queryClient, [...EXECUTIONS_KEY, 'deliveries', executionId]);
    }
  });

  const cancel = useMutation({
    mutationFn: () =>
      unwrap(
        client.POST('/api/v1/executions/{execution_id}/cancel', {
          params: { path: { execution_id: executionId } },
        }),
      ),
    onSuccess: (record) => {
      queryClient.setQueryData(executionQuery(client, executionId).queryKey, (was) =>
        was ? { ...was, ...record } : was,
      );
    },
  });

  const record = execution.data;
  return (
    <>
      <p>
        <Link to="/executions">← Executions</Link>
      </p>
      <div className="page-head">
        <h1 className="mono">{executionId}</h1>
        <div className="actions">
          {record ? <StatusBadge status={record.status} /> : null}
          {input.data ? <RunAgainLink target={input.data.target} input={input.data.input} /> : null}
          {record && !FINISHED.has(record.status) ? (
            <button
              type="button"
              className="danger"
              onClick={() => cancel.mutate()}
              disabled={cancel.isPending}
            >
              {cancel.isPending ? 'Cancelling…' : 'Cancel execution'}
            </button>
          ) : null}
        </div>
      </div>
      {execution.error ? (
        <ProblemMessage error={execution.error} context={`Could not load execution ${executionId}`} />
      ) : null}
      {cancel.error ? <ProblemMessage error={cancel.error} context="The cancel was refused" /> : null}
      {execution.isPending ? <p className="muted">Loading execution…</p> : null}
      {record ? (
        <>
          <dl className="facts card">
            <Fact label="Target">
              <code>{record.target}</code>
            </Fact>
            <Fact label="Node">
              <Link to="/nodes/$nodeId" params={{ nodeId: record.node_id }} className="mono">
                {record.node_id}
              </Link>
            </Fact>
            <Fact label="Workflow">
              <Link to="/workflows/$workflowId" params={{ workflowId: record.workflow_id }} className="mono">
                {record.workflow_id}
              </Link>
            </Fact>
            {record.parent_execution_id ? (
              <Fact label="Parent">
                <Link
                  to="/executions/$executionId"
                  params={{ executionId: record.parent_execution_id }}
                  className="mono"
                >
                  {record.parent_execution_id}
                </Link>
              </Fact>
            ) : null}
            <Fact label="Created">
              <RelativeTime iso={record.created_at} />
            </Fact>
            <Fact label="Started">
              <RelativeTime iso={record.started_at} />
            </Fact>
            <Fact label="Completed">
              <RelativeTime iso={record.completed_at} />
            </Fact>
            <Fact label="Duration">{record.duration_ms !== null ? `${record.duration_ms} ms` : '—'}</Fact>
            <Fact label="Version">{record.routed_version ?? '—'}</Fact>
            <Fact label="Progress">
              {record.progress !== null ? (
                <progress className="progress" max={100} value={record.progress}>
                  {record.progress}%
                </progress>
              ) : (
                '—'
              )}
            </Fact>
          </dl>
          {record.error ? (
            <div className="problem" role="status">
              <p>
                <strong>Error:</strong> {record.error}
              </p>
            </div>
          ) : null}
          {input.error ? <ProblemMessage error={input.error} context="Could not read the input" /> : null}
          {input.data ? <JsonBlock title="Input" value={input.data.input} /> : null}
          <JsonBlock title="Result" value={record.result} />
          {record.error_details !== null ? (
            <JsonBlock title="Error details" value={record.error_details} />
          ) : null}
          <Logs executionId={executionId} running={!FINISHED.has(record.status)} />
          <Deliveries executionId={executionId} />
        </>
      ) : null}
    </>
  );
}
