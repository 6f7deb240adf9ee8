import type { ServerResponse } from 'node:http';
import Router from '@koa/router';
import { z } from 'zod';
import { type EventLog, type EventLogEntry, isCursor } from '../../platform/events/event-log.ts';
import { parseWith } from '../../platform/http/request-body.ts';
import {
  CURSOR_MESSAGE,
  type EventStream,
  type EventStreamOptions,
  openEventStream,
  resumeAfter,
} from '../../platform/http/sse.ts';
import { EXECUTIONS_STREAM, isExecutionEventName } from './events.ts';

export interface ExecutionEventsRouterDeps extends EventStreamOptions {
  eventLog: EventLog;
}

export const EXECUTION_EVENTS_PATH = '/api/ui/v1/executions/events';

/** The query of GET /api/ui/v1/executions/events; event-openapi.ts documents this schema. */
export const ExecutionEventsQuerySchema = z.object({
  execution_id: z.string().min(1).max(200).optional().meta({ description: "Only this execution's events." }),
  workflow_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Only events of executions in this workflow.' }),
  target: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .meta({ description: 'Only events of executions of this target (`agent.function`).' }),
  last_event_id: z.string().refine(isCursor, CURSOR_MESSAGE).optional().meta({
    description:
      'Resume after this event id, for clients that cannot set the `Last-Event-ID` header; the header wins when both are sent (a reconnecting EventSource sends the newer id in the header).',
    example: '7512-4081',
  }),
});
type ExecutionEventsQuery = z.infer<typeof ExecutionEventsQuerySchema>;

const FILTERS = ['execution_id', 'workflow_id', 'target'] as const;

/**
 * One frame for an entry of the executions stream, or null when the filters exclude it or it is
 * not one of the streamed events. The id is the entry's log cursor, so a client's Last-Event-ID
 * resumes right after it on any replica. The JSON goes on one `data:` line (JSON.stringify never
 * emits a raw newline), and the event name is one of a fixed list, so nothing inside an event can
 * break the framing.
 */
export function executionEventFrame(
  entry: EventLogEntry,
  filters: Partial<ExecutionEventsQuery> = {},
): string | null {
  if (!isExecutionEventName(entry.event)) return null;
  for (const key of FILTERS) {
    if (filters[key] !== undefined && entry.payload[key] !== filters[key]) return null;
  }
  const data = JSON.stringify({ type: entry.event, ...entry.payload });
  return `id: ${entry.id}\nevent: ${entry.event}\ndata: ${data}\n\n`;
}

/**
 * Resolves when the socket has room again (or is gone). Catching up from an old id reads the log
 * batch by batch at this pace, so a client on a slow link is not dropped by the stream's buffer
 * limit merely for having been away.
 */
function roomFor(res: ServerResponse, highWater: number): Promise<void> {
  if (res.writableLength <= highWater || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * GET /api/ui/v1/executions/events: execution events as Server-Sent Events, read from the durable
 * event log. The follower is registered before the stream opens, so the `: connected` comment
 * means every later event will arrive, and an unreadable log answers a problem instead of an
 * empty stream. A closed connection unfollows.
 */
export function executionEventsRouter(deps: ExecutionEventsRouterDeps): Router {
  const router = new Router();
  const highWater = (deps.maxBufferedBytes ?? 1024 * 1024) / 4;
  router.get(EXECUTION_EVENTS_PATH, async (ctx) => {
    const query = parseWith(ExecutionEventsQuerySchema, ctx.query, 'query');
    const after = resumeAfter(ctx, query.last_event_id);
    if (ctx.method === 'HEAD') {
      openEventStream(ctx, deps);
      return;
    }
    let stream: EventStream | undefined;
    const early: EventLogEntry[] = [];
    const send = (entry: EventLogEntry) => {
      const frame = executionEventFrame(entry, query);
      if (frame) stream?.send(frame);
    };
    const unfollow = await deps.eventLog.follow(
      EXECUTIONS_STREAM,
      after,
      (entry) => (stream ? send(entry) : early.push(entry)),
      { pace: () => roomFor(ctx.res, highWater) },
    );
    if (ctx.req.destroyed || ctx.res.destroyed) {
      // The client left while the follower was being registered: there is no one to stream to.
      unfollow();
      ctx.respond = false;
      return;
    }
    stream = openEventStream(ctx, deps);
    if (!stream) return unfollow();
    stream.onClose(unfollow);
    for (const entry of early.splice(0)) send(entry);
  });
  return router;
}
