import { ApiProblem, type components, unwrap } from '@switchyard/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { EmptyState } from '../components/empty-state.tsx';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { useConnection } from '../connection/connection.tsx';

type Batch = components['schemas']['ObservabilityParkedBatch'];
type RedriveResult = components['schemas']['ObservabilityRedriveResult'];

const OBSERVABILITY_KEY = ['observability'] as const;

/** The forwarder raises no event of its own; its counters are read again at this pace. */
const REFRESH_MS = 5_000;

/** Parked batches per page (the server's most). */
const PAGE_SIZE = 100;

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function useForwarder() {
  const { client } = useConnection();
  const status = useQuery({
    queryKey: [...OBSERVABILITY_KEY, 'status'],
    queryFn: () => unwrap(client.GET('/api/v1/settings/observability-webhook/status')),
    refetchInterval: REFRESH_MS,
  });
  const configured = status.data?.configured;
  const settings = useQuery({
    queryKey: [...OBSERVABILITY_KEY, 'settings', configured],
    // Read only once the status says a collector is set (without one the settings answer 404);
    // one removed meanwhile still answers 404, which is a state to show, not an error.
    enabled: configured !== undefined,
    queryFn: async () => {
      if (!configured) return null;
      try {
        return await unwrap(client.GET('/api/v1/settings/observability-webhook'));
      } catch (error) {
        if (error instanceof ApiProblem && error.status === 404) return null;
        throw error;
      }
    },
    refetchInterval: REFRESH_MS,
  });
  const parked = useQuery({
    queryKey: [...OBSERVABILITY_KEY, 'dlq'],
    queryFn: () =>
      unwrap(
        client.GET('/api/v1/settings/observability-webhook/dlq', {
          params: { query: { limit: String(PAGE_SIZE) } },
        }),
      ),
    refetchInterval: REFRESH_MS,
  });
  return { status, settings, parked };
}

function RedriveSummary({ result }: { result: RedriveResult }) {
  return (
    <div className={result.failed > 0 ? 'problem' : 'card'} role="status">
      <p>
        Redrive sent {result.attempted} {result.attempted === 1 ? 'batch' : 'batches'}: {result.delivered}{' '}
        delivered ({result.delivered_events} events), {result.failed} failed; {result.remaining} still parked.
      </p>
      {result.results
        .filter((outcome) => !outcome.delivered)
        .map((outcome) => (
          <p key={outcome.batch_id}>
            <code>{outcome.batch_id}</code>: {outcome.error ?? `answered ${outcome.status_code}`}
          </p>
        ))}
    </div>
  );
}

function BatchCard({ batch, onRedrive, busy }: { batch: Batch; onRedrive(): void; busy: boolean }) {
  return (
    <li className="card">
      <div className="page-head">
        <p>
          <code>{batch.batch_id}</code> · {batch.event_count} events · {batch.attempts} attempts
        </p>
        <button
          type="button"
          onClick={onRedrive}
          disabled={busy}
          aria-label={`Redrive batch ${batch.batch_id}`}
        >
          Redrive
        </button>
      </div>
      <p>
        Last error:{' '}
        {batch.last_error ?? (batch.last_status_code ? `answered ${batch.last_status_code}` : '—')}
      </p>
      <p className="muted">
        Parked <RelativeTime iso={batch.failed_at} />, first sent <RelativeTime iso={batch.created_at} />.
      </p>
      <details>
        <summary>Events of this batch</summary>
        <JsonBlock title={`Events of ${batch.batch_id}`} value={batch.events} />
      </details>
    </li>
  );
}

/**
 * The observability forwarder: where it posts, its counters and last error, and the batches the
 * collector never took (its dead-letter queue), which can be posted again all at once or one by one.
 */
export function ObservabilityPage() {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const { status, settings, parked } = useForwarder();
  const redrive = useMutation({
    mutationFn: (batchIds: string[] | undefined) =>
      unwrap(
        client.POST('/api/v1/settings/observability-webhook/redrive', {
          body: batchIds ? { batch_ids: batchIds } : {},
        }),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: OBSERVABILITY_KEY }),
  });
  const state = status.data;
  const batches = parked.data?.batches ?? [];
  return (
    <>
      <div className="page-head">
        <h1>Observability forwarder</h1>
        {state ? (
          <span className={`badge ${!state.configured ? 'idle' : state.enabled ? 'ok' : 'warn'}`}>
            {!state.configured ? 'not configured' : state.enabled ? 'forwarding' : 'paused'}
          </span>
        ) : null}
      </div>
      {status.error ? (
        <ProblemMessage error={status.error} context="Could not read the forwarder's status" />
      ) : null}
      {settings.error ? (
        <ProblemMessage error={settings.error} context="Could not read the forwarder's settings" />
      ) : null}
      {status.isPending ? <p className="muted">Loading the forwarder's status…</p> : null}
      {settings.data === null ? (
        <EmptyState title="No collector is configured">
          <p>
            The forwarder posts every execution, node and memory event to a collector you choose. Set one with
            POST /api/v1/settings/observability-webhook and a body such as{' '}
            {'{"url": "https://collector.example.com"}'}.
          </p>
        </EmptyState>
      ) : null}
      {state ? (
        <dl className="facts card ops-facts" aria-label="Forwarder status">
          {settings.data ? (
            <Fact label="Collector">
              <code>{settings.data.url}</code> {settings.data.secret_set ? '(signed)' : '(unsigned)'}
            </Fact>
          ) : null}
          <Fact label="Forwarded">{state.forwarded_total} events</Fact>
          <Fact label="Dropped">{state.dropped_total} events</Fact>
          <Fact label="Last forward">
            <RelativeTime iso={state.last_forward_at} />
          </Fact>
          <Fact label="Read ahead">{state.queue_depth} events</Fact>
          <Fact label="Parked">
            {state.dlq_batches} batches, {state.dlq_events} events
          </Fact>
          <Fact label="Forwarding replica">
            {state.forwarder ? (
              <code>{state.forwarder.replica_id}</code>
            ) : (
              <span className="muted">none</span>
            )}
          </Fact>
          <Fact label="Last snapshot">
            <RelativeTime iso={state.last_snapshot_at} />
          </Fact>
          <Fact label="Last error">
            {state.last_error ? (
              <>
                {state.last_error} (<RelativeTime iso={state.last_error_at} />)
              </>
            ) : (
              <span className="muted">none</span>
            )}
          </Fact>
        </dl>
      ) : null}
      <div className="page-head">
        <h2>Parked batches</h2>
        {batches.length > 0 ? (
          <button
            type="button"
            className="primary"
            onClick={() => redrive.mutate(undefined)}
            disabled={redrive.isPending}
          >
            {redrive.isPending ? 'Redriving…' : 'Redrive all'}
          </button>
        ) : null}
      </div>
      {parked.error ? (
        <ProblemMessage error={parked.error} context="Could not list the parked batches" />
      ) : null}
      {redrive.error ? <ProblemMessage error={redrive.error} context="The redrive was refused" /> : null}
      {redrive.data ? <RedriveSummary result={redrive.data} /> : null}
      {parked.data && batches.length === 0 ? (
        <p className="muted">
          No parked batch: every batch reached the collector or is still being retried. A batch is parked here
          after its last failed attempt.
        </p>
      ) : null}
      {batches.length > 0 ? (
        <>
          {parked.data && parked.data.total_batches > batches.length ? (
            <p className="muted">
              Showing the oldest {batches.length} of {parked.data.total_batches} parked batches.
            </p>
          ) : null}
          <ul className="plain-list" aria-label="Parked batches">
            {batches.map((batch) => (
              <BatchCard
                key={batch.batch_id}
                batch={batch}
                busy={redrive.isPending}
                onRedrive={() => redrive.mutate([batch.batch_id])}
              />
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
