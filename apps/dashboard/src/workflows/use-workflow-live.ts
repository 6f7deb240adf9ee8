import { streamEvents } from '@switchyard/client';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { isUnauthorized, useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { dagQueryKey } from './workflow-queries.ts';

/** A burst of events (a parent fanning out) refetches once, this long after its last event… */
const DEBOUNCE_MS = 250;
/** …but no later than this after its first, so a steady stream of events still shows progress. */
const MAX_WAIT_MS = 1_000;
/** Longest workflow id the event stream's filter takes; longer ids filter the shared stream here. */
const STREAM_FILTER_MAX = 200;

/**
 * Calls `refetch` after a burst of events. One refetch at a time: events that arrive while one
 * runs queue exactly one more, so the last state is always read (an event after a fetch started
 * is not answered by that fetch).
 */
function debouncedRefetch(refetch: () => Promise<unknown>) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let firstAt = 0;
  let running = false;
  let again = false;
  async function flush() {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await refetch();
      } while (again);
    } finally {
      running = false;
    }
  }
  return {
    poke() {
      const now = Date.now();
      if (timer === undefined) firstAt = now;
      else clearTimeout(timer);
      const wait = Math.min(DEBOUNCE_MS, Math.max(0, firstAt + MAX_WAIT_MS - now));
      timer = setTimeout(() => void flush(), wait);
    },
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * While `active` (some execution of the workflow is not terminal), follows the execution events of
 * this workflow and refetches its DAG after them. The stream is filtered to the workflow on the
 * server, so a busy fleet sends this page only its own events; it resumes with Last-Event-ID, and
 * a reconnection that could not resume refetches in case something was missed.
 */
export function useWorkflowLive(workflowId: string, active: boolean): void {
  const { baseUrl, apiKey, requireKey } = useConnection();
  const queryClient = useQueryClient();
  const filterOnServer = workflowId.length <= STREAM_FILTER_MAX;

  useEffect(() => {
    if (!active || !filterOnServer) return;
    // Restarts a fetch some other trigger (focus, mount) began before the event: its answer could
    // predate the event. The debouncer's own fetches never overlap, so it never cancels its own.
    const refetch = debouncedRefetch(() =>
      queryClient.refetchQueries({ queryKey: dagQueryKey(workflowId), exact: true }, { cancelRefetch: true }),
    );
    const controller = new AbortController();
    let subscribed = false;
    const stream = streamEvents({
      baseUrl,
      apiKey,
      path: '/api/ui/v1/executions/events',
      query: { workflow_id: workflowId },
      signal: controller.signal,
      onEvent: () => refetch.poke(),
      // Once subscribed, whatever changed between the DAG's read and now is read again.
      onState: (state) => {
        if (state === 'live' && !subscribed) {
          subscribed = true;
          refetch.poke();
        }
      },
      onReconnect: ({ resumed }) => {
        if (!resumed) refetch.poke();
      },
      onError: (error) => {
        if (isUnauthorized(error)) requireKey();
      },
    });
    stream.done.catch((error: unknown) => console.error(error));
    return () => {
      controller.abort();
      refetch.cancel();
    };
  }, [active, filterOnServer, workflowId, baseUrl, apiKey, requireKey, queryClient]);

  // A workflow id too long for the stream's filter: the app's shared stream, filtered here.
  useLiveEvents((event) => {
    if (active && !filterOnServer && event.stream === 'executions' && event.data.workflow_id === workflowId)
      void queryClient.invalidateQueries(
        { queryKey: dagQueryKey(workflowId), exact: true },
        { cancelRefetch: false },
      );
  });
}
