import {
  type ApiProblem,
  type EventStreamHandle,
  type ReconnectInfo,
  type StreamEvent,
  type StreamEventsOptions,
  type StreamPath,
  type StreamState,
  streamEvents,
} from '../../src/index.ts';

/** A request the stream made, as the server received its headers. */
export interface StreamRequest {
  url: string;
  headers: Headers;
  at: number;
}

/** A stream whose callbacks are recorded, with waits on what arrives. */
export interface RecordedStream<P extends StreamPath> {
  events: Array<StreamEvent<P>>;
  states: StreamState[];
  errors: Array<{ error: ApiProblem; retrying: boolean }>;
  reconnects: ReconnectInfo[];
  requests: StreamRequest[];
  handle: EventStreamHandle;
  /** Makes the stream's next requests wait (as a slow network would) until releaseRequests(). */
  holdRequests(): void;
  releaseRequests(): void;
  /** Resolves once `count` events have arrived. */
  untilEvents(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the stream has entered `state` `times` times in all. */
  untilState(state: StreamState, times?: number, timeoutMs?: number): Promise<void>;
}

/** Polls `check` until it holds, failing with `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts streamEvents with every callback recorded and its fetch calls logged. */
export function recordStream<P extends StreamPath>(
  options: { path: P } & Omit<
    StreamEventsOptions<P>,
    'path' | 'onEvent' | 'onState' | 'onError' | 'onReconnect'
  >,
): RecordedStream<P> {
  const recorded: Pick<RecordedStream<P>, 'events' | 'states' | 'errors' | 'reconnects' | 'requests'> = {
    events: [],
    states: [],
    errors: [],
    reconnects: [],
    requests: [],
  };
  let held: { gate: Promise<void>; release: () => void } | undefined;
  const handle = streamEvents<P>({
    ...options,
    fetch: async (input, init) => {
      await held?.gate;
      recorded.requests.push({ url: String(input), headers: new Headers(init?.headers), at: Date.now() });
      return fetch(input, init);
    },
    onEvent: (event) => recorded.events.push(event),
    onState: (state) => recorded.states.push(state),
    onError: (error, { retrying }) => recorded.errors.push({ error, retrying }),
    onReconnect: (info) => recorded.reconnects.push(info),
  });
  return {
    ...recorded,
    handle,
    holdRequests() {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = { gate, release };
    },
    releaseRequests() {
      held?.release();
      held = undefined;
    },
    untilEvents: (count, timeoutMs) =>
      until(() => recorded.events.length >= count, `${count} events`, timeoutMs),
    untilState: (state, times = 1, timeoutMs) =>
      until(
        () => recorded.states.filter((s) => s === state).length >= times,
        `state ${state} ×${times} (states so far: ${recorded.states.join(', ')})`,
        timeoutMs,
      ),
  };
}
