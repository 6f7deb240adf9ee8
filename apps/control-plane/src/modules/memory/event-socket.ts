import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import { ProblemError } from '@switchyard/shared';
import { type WebSocket, WebSocketServer } from 'ws';
import type { EventLog } from '../../platform/events/event-log.ts';
import { createFrameQueue, type FrameQueue } from '../../platform/http/frame-queue.ts';
import { parseWith } from '../../platform/http/request-body.ts';
import { CLOSE_GRACE_MS, type EventStreamOptions } from '../../platform/http/sse.ts';
import { markSwitched, pendingUpgrade } from '../../platform/http/upgrade.ts';
import type { Logger } from '../../platform/logger.ts';
import {
  followMemoryChanges,
  MEMORY_EVENTS_SSE_PATH,
  MemoryEventsQuerySchema,
  type MemoryEventView,
} from './event-routes.ts';

export interface MemoryEventSocketDeps extends EventStreamOptions {
  eventLog: EventLog;
}

export const MEMORY_EVENTS_WS_PATH = '/api/v1/memory/events/ws';

/** The close code of a shutdown (RFC 6455 §7.4.1: the endpoint is going away). */
export const GOING_AWAY = 1001;

/**
 * Largest message a client may send. The stream is one-way (the server ignores what clients
 * send), so anything big is a mistake or an attack; ws closes such a connection with 1009.
 */
const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;

/**
 * One WebSocket frame: the change with its event id, and `scopeId` besides `scope_id` because an
 * agent SDK reads that spelling.
 */
function socketFrame(event: MemoryEventView): string {
  const { id, type, scope, scope_id, key, action, data, timestamp } = event;
  return JSON.stringify({ id, type, scope, scope_id, scopeId: scope_id, key, action, data, timestamp });
}

/** The 400 for a GET that is not a WebSocket handshake. */
function notAWebSocket(): ProblemError {
  return new ProblemError(
    'invalid_request',
    `${MEMORY_EVENTS_WS_PATH} is a WebSocket endpoint: open it with a WebSocket client (GET with Connection: Upgrade and Upgrade: websocket).`,
    {
      resolution: `Connect with a WebSocket client, or read ${MEMORY_EVENTS_SSE_PATH} (Server-Sent Events) instead.`,
      extensions: { errors: [{ field: 'Upgrade', message: 'must be websocket' }] },
    },
  );
}

/**
 * Keeps an open socket alive and honest: a ping every `intervalMs`, and a peer that has not
 * answered the previous ping with a pong by the next one is cut off (a dead peer or a broken
 * path would otherwise hold its follower forever; the traffic also keeps proxies from timing the
 * connection out). A ping waits behind the frames already sent, so a client reading a backlog so
 * slowly that it falls more than an interval behind is cut off too; the frames the kernel already
 * holds still reach it, and it resumes after the last one with `last_event_id`. Returns the stop
 * function.
 */
function keepAlive(socket: WebSocket, intervalMs: number): () => void {
  let answered = true;
  const onPong = () => {
    answered = true;
  };
  socket.on('pong', onPong);
  const timer = setInterval(() => {
    if (!answered) {
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    socket.off('pong', onPong);
  };
}

/**
 * Writes queued frames to `socket`. ws has no 'drain' event; each send's callback runs once that
 * frame has left the process, which is when the queue may write more.
 */
function socketSink(socket: WebSocket, queue: FrameQueue) {
  const flushed = () => queue.flushed();
  return {
    buffered: () => socket.bufferedAmount,
    write: (frame: string) => socket.send(frame, flushed),
    // No close handshake: its frame would wait behind everything the consumer did not read.
    drop: () => socket.terminate(),
  };
}

/**
 * GET /api/v1/memory/events/ws: memory changes as WebSocket text frames, one JSON change each,
 * with the same filters as the SSE stream and an optional `last_event_id` to resume from. The
 * handshake passes through the whole middleware chain like any request (attachUpgrades in
 * platform/http/upgrade.ts): a missing API key or a bad query is answered with a problem document
 * before anything is upgraded. The follower is registered before the 101 is written, so an open
 * socket means every later change will arrive.
 */
export function memoryEventSocketRouter(deps: MemoryEventSocketDeps): Router {
  const keepAliveMs = deps.keepAliveMs ?? 15_000;
  // noServer: the HTTP server's upgrade events reach this route through Koa, not through ws.
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: MAX_CLIENT_MESSAGE_BYTES,
  });
  // Handshake errors ws finds (key, Upgrade header, subprotocols) come here instead of a bare
  // text/html answer: handleUpgrade reports them synchronously, so the route turns them into a
  // problem document on the ordinary response.
  const refused = new WeakMap<IncomingMessage, Error>();
  wss.on('wsClientError', (error: Error, _socket, req: IncomingMessage) => refused.set(req, error));
  // The 101 carries the request id like every other answer.
  const requestIds = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    const id = requestIds.get(req);
    if (id) headers.push(`X-Request-ID: ${id}`);
  });

  const router = new Router();
  router.get(MEMORY_EVENTS_WS_PATH, async (ctx) => {
    const query = parseWith(MemoryEventsQuerySchema, ctx.query, 'query');
    const upgrade = pendingUpgrade(ctx.req);
    if (!upgrade) throw notAWebSocket();
    const version = ctx.get('sec-websocket-version');
    if (version !== '13' && version !== '8') {
      // RFC 6455 §4.4: name the versions this server speaks, so the client can retry with one.
      throw new ProblemError(
        'invalid_request',
        `Sec-WebSocket-Version ${version ? `"${version.slice(0, 20)}" is not supported` : 'is missing'}: use 13.`,
        {
          headers: { 'Sec-WebSocket-Version': '13, 8' },
          extensions: { errors: [{ field: 'Sec-WebSocket-Version', message: 'must be 13 (or 8)' }] },
        },
      );
    }

    const queue = createFrameQueue({ maxBufferedBytes: deps.maxBufferedBytes, stallMs: deps.keepAliveMs });
    const unfollow = await followMemoryChanges(deps.eventLog, query, query.last_event_id, queue, socketFrame);
    let socket: WebSocket | undefined;
    requestIds.set(ctx.req, ctx.state.requestId);
    wss.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (accepted) => {
      socket = accepted;
    });
    const refusal = refused.get(ctx.req);
    if (!socket) {
      unfollow();
      queue.close();
      if (refusal) {
        throw new ProblemError('invalid_request', `The WebSocket handshake is invalid: ${refusal.message}.`, {
          extensions: { errors: [{ field: '(handshake)', message: refusal.message }] },
        });
      }
      // ws found the connection already half closed and destroyed it: nobody is left to answer.
      ctx.respond = false;
      return;
    }
    ctx.respond = false;
    markSwitched(ctx.res);
    serve(socket, queue, unfollow, ctx.state.log);
  });

  /** Runs one accepted socket until it closes, whoever closes it. */
  function serve(socket: WebSocket, queue: FrameQueue, unfollow: () => void, log: Logger): void {
    const stopKeepAlive = keepAlive(socket, keepAliveMs);
    const forget =
      deps.streams?.add(() => {
        socket.close(GOING_AWAY, 'server shutting down');
        setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
      }) ?? (() => {});
    socket.on('error', (error) => log.debug({ err: error }, 'memory event socket error'));
    socket.once('close', () => {
      stopKeepAlive();
      unfollow();
      queue.close();
      forget();
    });
    queue.open(socketSink(socket, queue));
  }

  return router;
}
