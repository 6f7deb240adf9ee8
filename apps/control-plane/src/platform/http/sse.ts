import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import { isCursor } from '../events/event-log.ts';
import type { OpenStreams } from './open-streams.ts';

/** A comment line: keeps idle connections (and proxies in between) from timing out. */
export const KEEP_ALIVE_FRAME = ': keep-alive\n\n';

/**
 * How long a stream ended by a shutdown may take to finish (send what it still holds; for a
 * WebSocket, complete the close handshake) before its connection is cut: a client that does not
 * read would otherwise hold the shutdown for its whole grace period.
 */
export const CLOSE_GRACE_MS = 2_000;

export interface EventStreamOptions {
  /** Interval of keep-alive comments; 15 s by default. */
  keepAliveMs?: number;
  /** A client that stops reading is dropped once this much output is queued for it; 1 MiB. */
  maxBufferedBytes?: number;
  /** Where the stream registers so a shutdown can end it. */
  streams?: OpenStreams;
  /** Reconnection delay suggested to clients (`retry:`), in ms. */
  retryMs?: number;
}

/** An open Server-Sent Events response. */
export interface EventStream {
  /** Queues one complete frame (ending in a blank line); ignored once the stream has closed. */
  send(frame: string): void;
  /** Runs `cleanup` once when the stream closes, whoever closes it. */
  onClose(cleanup: () => void): void;
  /** Ends the response once what it holds has been sent. */
  close(): void;
  /**
   * Cuts the connection at once: its client fell too far behind. Ending the response would wait
   * behind everything the client did not read, holding that output as long as the client stays.
   */
  drop(): void;
}

/**
 * Turns a GET into a Server-Sent Events response, the one way every stream of the control plane
 * opens. Koa is told not to respond (`ctx.respond = false`) and frames go straight to the socket:
 * with Nagle off and `X-Accel-Buffering: no` (nginx) every frame reaches the client when it
 * happens. A client that stops reading is disconnected once `maxBufferedBytes` wait for it, so a
 * slow consumer costs bounded memory and never slows the publisher; a shutdown ends every stream
 * and cuts those still sending after {@link CLOSE_GRACE_MS}.
 *
 * A HEAD request gets the same status and headers and an empty body, and no stream: it returns
 * undefined, and the caller must not subscribe to anything.
 */
export function openEventStream(ctx: Context, options: EventStreamOptions = {}): EventStream | undefined {
  const headers = {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
  };
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.set(headers);
    return undefined;
  }
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const { req, res } = ctx;
  ctx.respond = false;
  req.socket.setNoDelay(true);
  req.socket.setTimeout(0);
  req.socket.setKeepAlive(true);
  res.writeHead(200, { ...headers, Connection: 'keep-alive' });
  // The first bytes flush the headers, so a client knows at once that it is subscribed.
  res.write(`retry: ${options.retryMs ?? 3000}\n: connected\n\n`);

  let closed = false;
  const cleanups: Array<() => void> = [];
  // Only an idle connection needs one. Sent while output waits, it would trip the bound on a
  // client still reading a frame larger than it (a memory value near its limit), which no frame
  // of its own does (frame-queue.ts).
  const timer = setInterval(() => {
    if (res.writableLength === 0) stream.send(KEEP_ALIVE_FRAME);
  }, keepAliveMs);
  timer.unref();
  let forget = () => {};
  const stream: EventStream = {
    send(frame) {
      if (closed) return;
      if (res.writableLength > maxBuffered) return stream.drop();
      res.write(frame);
    },
    onClose(cleanup) {
      if (closed) cleanup();
      else cleanups.push(cleanup);
    },
    close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      forget();
      for (const cleanup of cleanups.splice(0)) cleanup();
      if (!res.writableEnded) res.end();
    },
    drop() {
      stream.close();
      if (!res.writableFinished) res.destroy();
    },
  };
  if (options.streams) {
    forget = options.streams.add(() => {
      stream.close();
      setTimeout(stream.drop, CLOSE_GRACE_MS).unref();
    });
  }
  req.on('close', () => stream.close());
  res.on('close', () => stream.close());
  res.on('error', () => stream.close());
  return stream;
}

/** Why a text is not an event id, as every stream's 400 says it. */
export const CURSOR_MESSAGE =
  'not an event id this server sent (expected <tx>-<id>, as in the frames\u2019 id: lines)';

/**
 * Where an SSE client resumes: the Last-Event-ID header (a reconnecting EventSource sends the
 * newest id there, so it wins), else `fromQuery` (`?last_event_id=`, already checked by the
 * route's schema), else undefined: only new events. A malformed header is a 400.
 */
export function resumeAfter(ctx: Context, fromQuery: string | undefined): string | undefined {
  const header = ctx.get('last-event-id').trim();
  if (header === '') return fromQuery;
  if (!isCursor(header)) {
    throw new ProblemError('invalid_request', `The Last-Event-ID header is invalid: ${CURSOR_MESSAGE}.`, {
      extensions: { errors: [{ field: 'Last-Event-ID', message: CURSOR_MESSAGE }] },
    });
  }
  return header;
}
