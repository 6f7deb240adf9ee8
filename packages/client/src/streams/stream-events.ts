import { createParser } from 'eventsource-parser';
import { ApiProblem } from '../problem.ts';
import type { paths } from '../schema.d.ts';
import type { ExecutionEventPayloads, MemoryEventPayloads, NodeEventPayloads } from './event-types.ts';
import { type ReconnectDelayOptions, reconnectDelay } from './reconnect-delay.ts';

/** The control plane's Server-Sent Events streams, each with the payload of every event it sends. */
export interface StreamPayloads {
  /** Execution lifecycle events; kept in the event log, so a reconnection resumes without loss. */
  '/api/ui/v1/executions/events': ExecutionEventPayloads;
  /** Node registrations, status changes and evictions; live only: nothing is replayed. */
  '/api/ui/v1/nodes/events': NodeEventPayloads;
  /** Memory changes; kept in the event log, so a reconnection resumes without loss. */
  '/api/v1/memory/events/sse': MemoryEventPayloads;
}

export type StreamPath = keyof StreamPayloads;

/** One event as `onEvent` receives it: narrow on `event` to get its payload's type. */
export type StreamEvent<P extends StreamPath> = P extends StreamPath
  ? {
      [E in keyof StreamPayloads[P]]: {
        /** The frame's `id:` (its place in the server's event log); undefined on live-only streams. */
        id: string | undefined;
        event: E;
        data: StreamPayloads[P][E];
      };
    }[keyof StreamPayloads[P]]
  : never;

/** The filters a stream takes, typed from the OpenAPI document. The resume cursor is the helper's. */
export type StreamQuery<P extends StreamPath> = Omit<
  NonNullable<paths[P]['get']['parameters']['query']>,
  'last_event_id'
>;

/**
 * `connecting`: the first request is on its way; `live`: subscribed (every later event will
 * arrive); `reconnecting`: the connection ended or failed and another attempt is waiting or under
 * way; `closed`: for good (aborted, or an error that retrying cannot fix).
 */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** What `onReconnect` is told when a connection after the first one goes live. */
export interface ReconnectInfo {
  /**
   * True when the server was asked to resume after the last event seen (`Last-Event-ID`): on a
   * stream kept in the event log nothing was missed. False when there was nothing to resume from
   * (a live-only stream such as node events, or no event seen yet): events sent while the
   * connection was down are lost, so refetch the state the stream keeps current.
   */
  resumed: boolean;
  /** The id the stream resumed after, when it did. */
  lastEventId: string | undefined;
}

export interface StreamEventsOptions<P extends StreamPath> {
  /** Where the control plane listens, as for createSwitchyardClient. */
  baseUrl: string;
  path: P;
  /** Filters (execution_id, node_id, scope, key, ...), as the stream's OpenAPI operation names them. */
  query?: StreamQuery<P>;
  /** Sent as `X-API-Key` (a header, so the key stays out of URLs and access logs). */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
  /** Start after this event id (one a previous stream handed out) instead of with the next event. */
  lastEventId?: string;
  /** Each event, once, in the server's order. A throw ends the stream (`done` rejects with it). */
  onEvent: (event: StreamEvent<P>) => void;
  onState?: (state: StreamState) => void;
  /**
   * A failure. `retrying` true: a dropped connection, a network error or a 5xx/429, and the stream
   * will connect again. `retrying` false: an answer retrying cannot fix (401 wrong key, 403, 400
   * bad filter, 404), and the stream is closed.
   */
  onError?: (error: ApiProblem, context: { retrying: boolean }) => void;
  /** A connection after the first went live; see {@link ReconnectInfo} for what to refetch. */
  onReconnect?: (info: ReconnectInfo) => void;
  /** Reconnection timing; the server's `retry:` field replaces `initialDelayMs` once it arrives. */
  reconnect?: ReconnectDelayOptions;
  /**
   * A connection from which nothing (not even the keep-alive comment the server sends every
   * 15 s) arrives for this long is taken as dead and replaced; 45 s, 0 turns the watchdog off.
   */
  idleTimeoutMs?: number;
}

export interface EventStreamHandle {
  /** Settles once the stream is closed: resolves on abort or a final error, rejects if onEvent threw. */
  readonly done: Promise<void>;
  /** The id of the last event delivered, to resume from later. */
  readonly lastEventId: string | undefined;
  /** Ends the stream (like aborting `signal`). */
  close(): void;
}

/** Why the loop stops: the stream was aborted, or an answer said retrying is pointless. */
class StreamClosed extends Error {}

/**
 * Follows one of the control plane's event streams. It uses fetch rather than EventSource so the
 * API key travels in a header and the answer's status and problem document can be read; frames
 * are parsed with eventsource-parser. When the connection drops or the server answers 5xx, it
 * connects again after the server's `retry:` delay (doubling while attempts fail) and sends
 * `Last-Event-ID`, so a stream kept in the server's event log resumes exactly after the last
 * event delivered: none lost, none twice.
 */
export function streamEvents<P extends StreamPath>(options: StreamEventsOptions<P>): EventStreamHandle {
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (options.signal?.aborted) abort();
  else options.signal?.addEventListener('abort', abort, { once: true });
  const doFetch = options.fetch ?? globalThis.fetch;
  const delay = reconnectDelay(options.reconnect);
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const url = streamUrl(options.baseUrl, options.path, options.query);
  let lastEventId = options.lastEventId;
  let state: StreamState | undefined;
  const setState = (next: StreamState) => {
    if (next === state) return;
    state = next;
    options.onState?.(next);
  };

  /** One connection: resolves when it ends (to reconnect), throws StreamClosed to stop. */
  async function connect(reconnecting: boolean): Promise<void> {
    const resumeFrom = lastEventId;
    const headers = new Headers({ Accept: 'text/event-stream', 'Cache-Control': 'no-cache' });
    if (options.apiKey) headers.set('X-API-Key', options.apiKey);
    if (resumeFrom !== undefined) headers.set('Last-Event-ID', resumeFrom);
    // This connection's own abort: the stream's, or the idle watchdog's.
    const connection = new AbortController();
    const stopConnection = () => connection.abort();
    controller.signal.addEventListener('abort', stopConnection, { once: true });
    // A connection can die without a word (a sleeping laptop, a proxy dropping state): the
    // server sends a keep-alive comment every 15 s, so a long silence means it is gone.
    let idle: ReturnType<typeof setTimeout> | undefined;
    let silent = false;
    const watch = () => {
      clearTimeout(idle);
      if (idleTimeoutMs > 0) {
        idle = setTimeout(() => {
          silent = true;
          connection.abort();
        }, idleTimeoutMs);
      }
    };
    const failure = (error: unknown) =>
      silent
        ? new ApiProblem({
            status: 0,
            title: 'Stream silent',
            detail: `Nothing arrived from the server for ${idleTimeoutMs / 1000} s; connecting again.`,
            code: 'network_error',
            instance: options.path,
          })
        : ApiProblem.fromNetworkError(url, error);
    let handlerError: { error: unknown } | undefined;
    try {
      watch();
      let response: Response;
      try {
        response = await doFetch(url, { headers, signal: connection.signal });
      } catch (error) {
        if (controller.signal.aborted) throw new StreamClosed();
        options.onError?.(failure(error), { retrying: true });
        return;
      }
      const contentType = response.headers.get('content-type') ?? '';
      if (!response.ok || !contentType.startsWith('text/event-stream') || !response.body) {
        const problem = ApiProblem.fromResponse(response, await readBody(response));
        const retrying = response.status >= 500 || response.status === 429;
        options.onError?.(problem, { retrying });
        if (!retrying) throw new StreamClosed();
        return;
      }
      setState('live');
      delay.reset();
      if (reconnecting) options.onReconnect?.({ resumed: resumeFrom !== undefined, lastEventId: resumeFrom });
      const parser = createParser({
        onRetry: (ms) => delay.setBase(ms),
        onEvent: ({ id, event, data }) => {
          // The cursor moves before delivery: should the connection drop in onEvent, the server
          // resumes after this event rather than sending it again.
          if (id !== undefined) lastEventId = id;
          try {
            options.onEvent({ id, event: event ?? 'message', data: parseData(data) } as StreamEvent<P>);
          } catch (error) {
            handlerError = { error };
            throw error;
          }
        },
      });
      try {
        // A reader loop rather than `for await`: ReadableStream's async iteration is missing from
        // some TypeScript DOM libs and browsers this package is bundled for.
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          watch();
          parser.feed(chunk.value);
        }
      } catch (error) {
        if (handlerError) {
          connection.abort();
          throw handlerError.error;
        }
        if (controller.signal.aborted) throw new StreamClosed();
        // A connection cut mid-frame: the partial frame is dropped and will come again on resume.
        options.onError?.(failure(error), { retrying: true });
        return;
      }
      if (controller.signal.aborted) throw new StreamClosed();
      options.onError?.(
        new ApiProblem({
          status: response.status,
          title: 'Stream ended',
          detail: 'The server ended the event stream (a restart or shutdown); connecting again.',
          code: 'stream_ended',
          instance: options.path,
        }),
        { retrying: true },
      );
    } finally {
      clearTimeout(idle);
      controller.signal.removeEventListener('abort', stopConnection);
    }
  }

  async function run(): Promise<void> {
    setState('connecting');
    let reconnecting = false;
    try {
      for (;;) {
        await connect(reconnecting);
        reconnecting = true;
        setState('reconnecting');
        await sleep(delay.next(), controller.signal);
      }
    } catch (error) {
      if (!(error instanceof StreamClosed)) {
        controller.abort();
        throw error;
      }
    } finally {
      options.signal?.removeEventListener('abort', abort);
      setState('closed');
    }
  }

  const done = run();
  return {
    done,
    get lastEventId() {
      return lastEventId;
    },
    close: abort,
  };
}

/** The stream's URL with its filters; undefined filters are left out. */
function streamUrl(baseUrl: string, path: string, query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  const search = params.size > 0 ? `?${params}` : '';
  return `${baseUrl.replace(/\/+$/, '')}${path}${search}`;
}

/** Every stream of the control plane sends JSON; anything else is handed over as its text. */
function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** The body of an answer that is not a stream: the problem document, or its text. */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Waits, or stops waiting with StreamClosed when the stream is aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new StreamClosed());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new StreamClosed());
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
