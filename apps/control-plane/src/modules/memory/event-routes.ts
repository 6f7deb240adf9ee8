import type { ServerResponse } from 'node:http';
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { type EventLog, type EventLogEntry, isCursor } from '../../platform/events/event-log.ts';
import { createFrameQueue, type FrameQueue, type FrameSink } from '../../platform/http/frame-queue.ts';
import { parseWith } from '../../platform/http/request-body.ts';
import {
  CURSOR_MESSAGE,
  type EventStream,
  type EventStreamOptions,
  openEventStream,
  resumeAfter,
} from '../../platform/http/sse.ts';
import { TIME_RANGE, timeQuery } from '../../platform/http/timestamps.ts';
import {
  type CompiledMemoryFilters,
  compileMemoryFilters,
  MemoryEventFilterFields,
} from './event-filters.ts';
import { MEMORY_CHANGE, MEMORY_STREAM, type MemoryChange } from './events.ts';

export interface MemoryEventsRouterDeps extends EventStreamOptions {
  eventLog: EventLog;
}

export const MEMORY_EVENTS_SSE_PATH = '/api/v1/memory/events/sse';
export const MEMORY_EVENTS_HISTORY_PATH = '/api/v1/memory/events/history';

/** History page sizes: the default and the most one page holds. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

const CursorSchema = z.string().refine(isCursor, CURSOR_MESSAGE);

/** The query of the live streams (SSE and WebSocket); event-openapi.ts documents this schema. */
export const MemoryEventsQuerySchema = z.object({
  ...MemoryEventFilterFields,
  last_event_id: CursorSchema.optional().meta({
    description:
      'Resume after this event id (an `id` the server sent). On SSE the `Last-Event-ID` header wins when both are sent (a reconnecting EventSource sends the newer id in the header).',
    example: '7512-4081',
  }),
});
export type MemoryEventsQuery = z.infer<typeof MemoryEventsQuerySchema>;

/** The query of GET /api/v1/memory/events/history. */
export const MemoryHistoryQuerySchema = z.object({
  ...MemoryEventFilterFields,
  after: CursorSchema.optional().meta({
    description:
      'Start after this event id (exclusive): `next_cursor` of the previous page, or a frame’s id.',
    example: '7512-4081',
  }),
  since: timeQuery()
    .optional()
    .meta({
      description: `Only events recorded at or after this time (ISO 8601 with \`Z\` or an offset, ${TIME_RANGE}); combines with \`after\`.`,
      example: '2026-11-22T06:00:00Z',
    }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(HISTORY_MAX_LIMIT)
    .default(HISTORY_DEFAULT_LIMIT)
    .meta({ description: `Events per page, 1 to ${HISTORY_MAX_LIMIT}.` }),
});

/** A memory change as the streams and the history spell it (content/api/memory.md), with its event id. */
export interface MemoryEventView {
  id: string;
  type: typeof MEMORY_CHANGE;
  scope: MemoryChange['scope'];
  scope_id: string;
  key: string;
  action: MemoryChange['action'];
  data: unknown;
  timestamp: string;
}

/**
 * The change an entry of the memory stream records, or null when the filters exclude it or it is
 * not a memory change. Fields are copied one by one, in the order clients see them.
 */
export function memoryEventOf(entry: EventLogEntry, filters?: CompiledMemoryFilters): MemoryEventView | null {
  if (entry.event !== MEMORY_CHANGE) return null;
  const change = entry.payload as unknown as MemoryChange;
  if (filters && !filters.matches(change)) return null;
  return {
    id: entry.id,
    type: MEMORY_CHANGE,
    scope: change.scope,
    scope_id: change.scope_id,
    key: change.key,
    action: change.action,
    data: change.data ?? null,
    timestamp: change.timestamp,
  };
}

/**
 * One SSE frame: the id is the entry's log cursor, so Last-Event-ID resumes right after it on any
 * replica; the JSON goes on one `data:` line (JSON.stringify never emits a raw newline).
 */
function sseFrame(event: MemoryEventView): string {
  const { id, ...data } = event;
  return `id: ${id}\nevent: ${MEMORY_CHANGE}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Follows the memory stream for one subscriber, frames in `queue`: frames read while catching up
 * are paced by the queue's room, later ones are live. The follower is registered when this
 * resolves, so whatever the caller answers next (the SSE `: connected`, the 101) means every
 * later change will arrive.
 */
export function followMemoryChanges(
  eventLog: EventLog,
  query: MemoryEventsQuery,
  after: string | undefined,
  queue: FrameQueue,
  frame: (event: MemoryEventView) => string,
): Promise<() => void> {
  const filters = compileMemoryFilters(query);
  return eventLog.follow(
    MEMORY_STREAM,
    after,
    (entry) => {
      const event = memoryEventOf(entry, filters);
      if (event) queue.push(frame(event));
    },
    { pace: () => queue.room(), onLive: () => queue.live() },
  );
}

/** The URL of the page after `cursor`: this request's query with `after` replaced. */
function nextPage(ctx: Context, cursor: string): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('after', cursor);
  return `${ctx.path}?${params.toString()}`;
}

/** A frame sink on an SSE response; the route wakes the queue on the response's 'drain'. */
function sseSink(res: ServerResponse, stream: EventStream): FrameSink {
  return { buffered: () => res.writableLength, write: stream.send, drop: stream.drop };
}

/**
 * GET /api/v1/memory/events/sse (memory changes as Server-Sent Events, filtered per frame and
 * resumable with Last-Event-ID on any replica) and GET /api/v1/memory/events/history (the same
 * changes as pages of JSON). Both read the durable event log the memory writes append to.
 */
export function memoryEventsRouter(deps: MemoryEventsRouterDeps): Router {
  const router = new Router();

  router.get(MEMORY_EVENTS_SSE_PATH, async (ctx) => {
    const query = parseWith(MemoryEventsQuerySchema, ctx.query, 'query');
    const after = resumeAfter(ctx, query.last_event_id);
    if (ctx.method === 'HEAD') {
      openEventStream(ctx, deps);
      return;
    }
    const queue = createFrameQueue({ maxBufferedBytes: deps.maxBufferedBytes, stallMs: deps.keepAliveMs });
    const unfollow = await followMemoryChanges(deps.eventLog, query, after, queue, sseFrame);
    if (ctx.req.destroyed || ctx.res.destroyed) {
      // The client left while the follower was being registered: there is no one to stream to.
      unfollow();
      queue.close();
      ctx.respond = false;
      return;
    }
    const stream = openEventStream(ctx, deps);
    if (!stream) {
      unfollow();
      queue.close();
      return;
    }
    const flushed = () => queue.flushed();
    ctx.res.on('drain', flushed);
    stream.onClose(() => {
      unfollow();
      queue.close();
      ctx.res.off('drain', flushed);
    });
    queue.open(sseSink(ctx.res, stream));
  });

  router.get(MEMORY_EVENTS_HISTORY_PATH, async (ctx) => {
    const query = parseWith(MemoryHistoryQuerySchema, ctx.query, 'query');
    const filters = compileMemoryFilters(query);
    const page = await deps.eventLog.page(MEMORY_STREAM, {
      after: query.after,
      since: query.since,
      limit: query.limit,
      payloadEquals: filters.payloadEquals,
      payloadLike: filters.payloadLike,
    });
    ctx.set('Cache-Control', 'no-store');
    if (page.hasMore && page.nextCursor) ctx.set('Link', `<${nextPage(ctx, page.nextCursor)}>; rel="next"`);
    ctx.body = {
      events: page.entries.flatMap((entry) => memoryEventOf(entry) ?? []),
      has_more: page.hasMore,
      next_cursor: page.nextCursor,
    };
  });

  return router;
}
