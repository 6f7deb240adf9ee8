import Router from '@koa/router';
import { z } from 'zod';
import type { EventBus } from '../events/event-bus.ts';
import { NODES_TOPIC } from '../events/node-events.ts';
import { parseWith } from '../http/json-body.ts';
import type { OpenStreams } from '../http/open-streams.ts';
import { KEEP_ALIVE_FRAME, nodeEventFrame } from '../services/node-events.ts';

export interface NodeEventsRouterDeps {
  events: EventBus;
  /** Interval of keep-alive comments; 15 s by default. */
  keepAliveMs?: number;
  /** A client that stops reading is dropped once this much output is queued for it. */
  maxBufferedBytes?: number;
  /** Where open streams are registered so a shutdown can end them. */
  streams?: OpenStreams;
}

const QuerySchema = z.object({ node_id: z.string().min(1).max(200).optional() });

/**
 * GET /api/ui/v1/nodes/events: node events as Server-Sent Events. Koa is told not to respond
 * (`ctx.respond = false`) and frames go straight to the socket: with Nagle off and
 * `X-Accel-Buffering: no` (nginx) every frame reaches the client when it happens. Keep-alive
 * comments hold idle connections open; a closed connection unsubscribes from the bus.
 */
export function nodeEventsRouter(deps: NodeEventsRouterDeps): Router {
  const router = new Router();
  const keepAliveMs = deps.keepAliveMs ?? 15_000;
  const maxBuffered = deps.maxBufferedBytes ?? 1024 * 1024;

  router.get('/api/ui/v1/nodes/events', (ctx) => {
    const query = parseWith(QuerySchema, ctx.query, 'query');
    const { req, res } = ctx;
    ctx.respond = false;
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    req.socket.setKeepAlive(true);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    // The first bytes flush the headers, so a client knows at once that it is subscribed.
    res.write('retry: 3000\n: connected\n\n');

    let closed = false;
    const send = (text: string) => {
      if (closed) return;
      if (res.writableLength > maxBuffered) return close();
      res.write(text);
    };
    const unsubscribe = deps.events.subscribe(NODES_TOPIC, (event) => {
      const frame = nodeEventFrame(event, query.node_id);
      if (frame) send(frame);
    });
    const timer = setInterval(() => send(KEEP_ALIVE_FRAME), keepAliveMs);
    timer.unref();
    let forget = () => {};
    function close(): void {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      unsubscribe();
      forget();
      if (!res.writableEnded) res.end();
    }
    if (deps.streams) forget = deps.streams.add(close);
    req.on('close', close);
    res.on('close', close);
    res.on('error', close);
  });
  return router;
}
