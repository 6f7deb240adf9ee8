import { type ApiProblem, type ReconnectInfo, streamEvents } from '@switchyard/client';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { isUnauthorized, useConnection } from '../connection/connection.tsx';

/** One event of a UI stream, its JSON data parsed. */
export interface LiveEvent {
  stream: LiveStream;
  event: string;
  data: Record<string, unknown>;
}

export type LiveStream = 'nodes' | 'executions';

const STREAM_PATHS = {
  nodes: '/api/ui/v1/nodes/events',
  executions: '/api/ui/v1/executions/events',
} as const;

type Listener = (event: LiveEvent) => void;

interface Live {
  /** True while every stream is open; false while any is connecting again. */
  connected: boolean;
  subscribe(listener: Listener): () => void;
}

const LiveContext = createContext<Live | null>(null);

/**
 * Keeps the node and execution event streams open for the whole app (one connection each, however
 * many pages listen) and hands each event to the pages' listeners. The client's streamEvents
 * reconnects with Last-Event-ID, so no event is lost across a drop; the header shows whether the
 * streams are open.
 */
export function LiveProvider({ children }: { children: ReactNode }) {
  const { baseUrl, apiKey, requireKey } = useConnection();
  const queryClient = useQueryClient();
  const listeners = useRef(new Set<Listener>());
  const [open, setOpen] = useState<Record<LiveStream, boolean>>({ nodes: false, executions: false });

  useEffect(() => {
    const controller = new AbortController();
    // A page's listener that throws must not end the stream for every other page (the client
    // closes a stream whose onEvent throws): the error is reported and the next listener runs.
    const dispatch = (event: LiveEvent) => {
      for (const listener of listeners.current) {
        try {
          listener(event);
        } catch (error) {
          console.error(error);
        }
      }
    };
    // After a reconnection that could not resume (the node stream keeps no log), events were
    // missed: everything on screen is read again.
    const onReconnect = (info: ReconnectInfo) => {
      if (!info.resumed) void queryClient.invalidateQueries();
    };
    const onError = (error: ApiProblem) => {
      if (isUnauthorized(error)) requireKey();
    };
    const handles = [
      streamEvents({
        baseUrl,
        apiKey,
        path: STREAM_PATHS.nodes,
        signal: controller.signal,
        onEvent: ({ event, data }) => dispatch({ stream: 'nodes', event, data: { ...data } }),
        onState: (state) => setOpen((was) => ({ ...was, nodes: state === 'live' })),
        onError,
        onReconnect,
      }),
      streamEvents({
        baseUrl,
        apiKey,
        path: STREAM_PATHS.executions,
        signal: controller.signal,
        onEvent: ({ event, data }) => dispatch({ stream: 'executions', event, data: { ...data } }),
        onState: (state) => setOpen((was) => ({ ...was, executions: state === 'live' })),
        onError,
        onReconnect,
      }),
    ];
    // A listener that throws would end a stream (done rejects); keep the others going and say why.
    for (const handle of handles) handle.done.catch((error: unknown) => console.error(error));
    return () => controller.abort();
  }, [baseUrl, apiKey, requireKey, queryClient]);

  const value = useMemo<Live>(
    () => ({
      connected: open.nodes && open.executions,
      subscribe(listener) {
        listeners.current.add(listener);
        return () => {
          listeners.current.delete(listener);
        };
      },
    }),
    [open],
  );
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

function useLive(): Live {
  const live = useContext(LiveContext);
  if (!live) throw new Error('useLive outside LiveProvider');
  return live;
}

export function useLiveConnected(): boolean {
  return useLive().connected;
}

/** Calls `listener` for every live event while the component is mounted (the latest listener wins). */
export function useLiveEvents(listener: Listener): void {
  const { subscribe } = useLive();
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => subscribe((event) => latest.current(event)), [subscribe]);
}
