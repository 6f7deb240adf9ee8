import { type components, unwrap } from '@switchyard/client';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { EmptyState } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';

type DeadLetter = components['schemas']['WebhookDelivery'];

const DEAD_LETTERS_KEY = ['webhooks', 'dead-letters'] as const;
const PAGE_SIZE = 100;

/**
 * Deliveries die after their last retry, which raises no event of its own; the list is read again
 * after every execution event and at this pace in between.
 */
const REFRESH_MS = 10_000;

function useDeadLetters() {
  const { client } = useConnection();
  return useInfiniteQuery({
    queryKey: DEAD_LETTERS_KEY,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        client.GET('/api/ui/v1/webhooks/dead-letters', {
          params: { query: { limit: String(PAGE_SIZE), ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    refetchInterval: REFRESH_MS,
  });
}

type Retried = DeadLetter & { retried_at: string };

function DeadLetterCard({
  letter,
  onRetried,
}: {
  letter: DeadLetter;
  onRetried(delivery: DeadLetter): void;
}) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const retry = useMutation({
    mutationFn: () =>
      unwrap(
        client.POST('/api/ui/v1/executions/{execution_id}/webhook/retry', {
          params: { path: { execution_id: letter.execution_id } },
        }),
      ),
    onSuccess: (delivery) => {
      onRetried(delivery);
      return queryClient.invalidateQueries({ queryKey: DEAD_LETTERS_KEY });
    },
  });
  return (
    <li className="card">
      <div className="page-head">
        <p>
          <span className="badge bad">dead</span> <strong>{letter.event}</strong> of{' '}
          <Link to="/executions/$executionId" params={{ executionId: letter.execution_id }} className="mono">
            {letter.execution_id}
          </Link>
        </p>
        <button
          type="button"
          onClick={() => retry.mutate()}
          disabled={retry.isPending || retry.isSuccess}
          aria-label={`Retry the webhook of ${letter.execution_id}`}
        >
          {retry.isPending ? 'Retrying…' : retry.isSuccess ? 'Retry queued' : 'Retry'}
        </button>
      </div>
      <dl className="facts">
        <div>
          <dt>Receiver</dt>
          <dd>
            <code>{letter.url}</code> {letter.signed ? '(signed)' : '(unsigned)'}
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>
            {letter.attempt_count}
            {letter.manual ? ' (after a manual retry)' : ''}
          </dd>
        </div>
        <div>
          <dt>Last error</dt>
          <dd>
            {letter.last_error ?? (letter.last_status_code ? `answered ${letter.last_status_code}` : '—')}
          </dd>
        </div>
        <div>
          <dt>Dead-lettered</dt>
          <dd>
            <RelativeTime iso={letter.dead_at} />
          </dd>
        </div>
      </dl>
      {retry.error ? <ProblemMessage error={retry.error} context="The retry was refused" /> : null}
    </li>
  );
}

/**
 * The webhook dead-letter queue: deliveries whose every attempt failed, newest first, with their
 * attempts and last error; each can be retried, after which it leaves the list.
 */
export function WebhooksPage() {
  const queryClient = useQueryClient();
  const letters = useDeadLetters();
  useLiveEvents((event) => {
    if (event.stream === 'executions') refreshOnEvent(queryClient, DEAD_LETTERS_KEY);
  });
  const all = letters.data?.pages.flatMap((page) => page.dead_letters) ?? [];
  // Retried deliveries leave the queue at once; this page keeps saying where they went.
  const [retried, setRetried] = useState<Retried[]>([]);
  const onRetried = (delivery: DeadLetter) =>
    setRetried((was) => [{ ...delivery, retried_at: new Date().toISOString() }, ...was]);
  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
        {letters.data ? <span className="muted">{all.length} dead-lettered</span> : null}
      </div>
      <p className="muted">
        Deliveries of execution webhooks whose every attempt failed. Fix the receiver, then retry: the
        delivery is sent again with the same delivery id.
      </p>
      {retried.length > 0 ? (
        <ul className="plain-list" aria-label="Retried from this page">
          {retried.map((delivery) => (
            <li key={`${delivery.delivery_id} ${delivery.retried_at}`} className="card" role="status">
              Retried <RelativeTime iso={delivery.retried_at} />: the {delivery.event} webhook of{' '}
              <Link
                to="/executions/$executionId"
                params={{ executionId: delivery.execution_id }}
                className="mono"
              >
                {delivery.execution_id}
              </Link>{' '}
              is being sent again; its attempts show on the execution's page.
            </li>
          ))}
        </ul>
      ) : null}
      {letters.error ? (
        <ProblemMessage error={letters.error} context="Could not list the dead letters" />
      ) : null}
      {letters.isPending ? <p className="muted">Loading dead letters…</p> : null}
      {letters.data && all.length === 0 ? (
        <EmptyState title="No dead-lettered webhook">
          <p>
            Every webhook was delivered or is still being retried. A delivery lands here after its last failed
            attempt; executions with a webhook show their deliveries on their own page.
          </p>
        </EmptyState>
      ) : null}
      {all.length > 0 ? (
        <ul className="plain-list" aria-label="Dead-lettered webhooks">
          {all.map((letter) => (
            <DeadLetterCard key={letter.delivery_id} letter={letter} onRetried={onRetried} />
          ))}
        </ul>
      ) : null}
      {letters.hasNextPage ? (
        <button
          type="button"
          onClick={() => void letters.fetchNextPage()}
          disabled={letters.isFetchingNextPage}
        >
          {letters.isFetchingNextPage ? 'Loading…' : 'More dead letters'}
        </button>
      ) : null}
    </>
  );
}
