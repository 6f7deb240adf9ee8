import Router from '@koa/router';
import { z } from 'zod';
import type { EventBus } from '../../platform/events/event-bus.ts';
import { parseWith } from '../../platform/http/request-body.ts';
import { type EventStreamOptions, openEventStream } from '../../platform/http/sse.ts';
import { nodeEventFrame } from './event-frames.ts';
import { NODES_TOPIC } from './events.ts';

export interface NodeEventsRouterDeps extends EventStreamOptions {
  events: EventBus;
}

const QuerySchema = z.object({ node_id: z.string().min(1).max(200).optional() });

/**
 * GET /api/ui/v1/nodes/events: node events as Server-Sent Events, optionally for one node. A
 * closed connection unsubscribes from the bus.
 */
export function nodeEventsRouter(deps: NodeEventsRouterDeps): Router {
  const router = new Router();
  router.get('/api/ui/v1/nodes/events', (ctx) => {
    const query = parseWith(QuerySchema, ctx.query, 'query');
    const stream = openEventStream(ctx, deps);
    if (!stream) return;
    const unsubscribe = deps.events.subscribe(NODES_TOPIC, (event) => {
      const frame = nodeEventFrame(event, query.node_id);
      if (frame) stream.send(frame);
    });
    stream.onClose(unsubscribe);
  });
  return router;
}
