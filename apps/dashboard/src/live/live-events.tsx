import { streamEvents } from '@switchyard/client';
import { createContext, type ReactNode, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { isUnauthorized, useConnection } from '../connection/connection.tsx';

/** One event of a UI stream, its JSON data parsed. */
export interface LiveEvent {
  stream: LiveStream;
  event: string;
  data: Record<string, unknown>;
}

export type LiveStream = 'nodes' | 'executions';

const STREAM_PATHS: Record<LiveStream, string> = {
  nodes: '/api/ui/v1/nodes/events',
  executions: '/api/ui/v1/executions/events',
};

type Listener = (event: LiveEvent) => void;

interface Live {
  /** True while every stream is open; false while any is connecting again. */
  connected: boolean;
  subscribe(listener: Listener): () => void;
}

const LiveContext = createContext<Live | null>(null);

function parsed(data: unknown): Record<string, unknown> {
  if (typeof data === 'string') {
    try {
      const value = JSON.parse(data) as unknown;
      return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
}

/**
 * Keeps the node and execution event streams open for the whole app (one connection each, however
 * many pages listen) and hands each event to the pages' listeners. The client's streamEvents
 * reconnects with Last-Event-ID, so no event is lost across a drop; the header shows whether the
 * streams are open.
 */
export function LiveProvider({ children }: { children: ReactNode }) {
  const { baseUrl, apiKey, requireKey } = useConnection();
  const listeners = useRef(new Set<Listener>());
  const [open, setOpen] = useState<Record<LiveStream, boolean>>({ nodes: false, executions: false });

  useEffect(() => {
    const controller = new AbortController();
    for (const stream of Object.keys(STREAM_PATHS) as LiveStream[]) {
      void streamEvents({
        baseUrl,
        apiKey,
        path: STREAM_PATHS[stream],
        signal: controller.signal,
        onEvent: ({ event, data }) => {
          const live: LiveEvent = { stream, event, data: parsed(data) };
          for (const listener of listeners.current) listener(live);
        },
        onState: (state) => setOpen((was) => ({ ...was, [stream]: state === 'open' })),
        onError: (error) => {
          if (isUnauthorized(error)) requireKey();
        },
      }).catch((error: unknown) => {
        if (isUnauthorized(error)) requireKey();
      });
    }
    return () => controller.abort();
  }, [baseUrl, apiKey, requireKey]);

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
