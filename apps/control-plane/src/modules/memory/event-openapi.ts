import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { TIME_RANGE } from '../../platform/http/timestamps.ts';
import { type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import {
  HISTORY_MAX_LIMIT,
  MEMORY_EVENTS_HISTORY_PATH,
  MEMORY_EVENTS_SSE_PATH,
  MemoryEventsQuerySchema,
  MemoryHistoryQuerySchema,
} from './event-routes.ts';
import { MEMORY_EVENTS_WS_PATH } from './event-socket.ts';
import { MEMORY_CHANGE } from './events.ts';
import { MemoryHistorySchema } from './responses.ts';

/*
 * The memory event streams as event-routes.ts and event-socket.ts serve them. The queries are the
 * schemas the routes parse with; the Last-Event-ID header and the WebSocket handshake headers are
 * checked by the routes themselves and documented here.
 */

const cursorMessage =
  'not an event id this server sent (expected <tx>-<id>, as in the frames\u2019 id: lines)';

const LastEventIdHeader = z.object({
  'Last-Event-ID': z.string().optional().meta({
    description:
      'The `id:` of the last frame received: the stream starts right after it (on any replica). Browsers send it on reconnect by themselves. Ids older than the retention (24 h) resume at the oldest event kept.',
    example: '7512-4081',
  }),
});

const WebSocketHeaders = z.object({
  Upgrade: z.literal('websocket'),
  Connection: z.literal('Upgrade'),
  'Sec-WebSocket-Key': z.string().meta({ description: 'RFC 6455: 16 random bytes, base64.' }),
  'Sec-WebSocket-Version': z.literal('13'),
});

const change = {
  scope: 'workflow',
  scope_id: 'wf_9',
  key: 'user.42.prefs',
  action: 'set',
  data: { theme: 'dark' },
  timestamp: '2026-11-22T06:20:00.140Z',
} as const;
const removal = { ...change, action: 'delete', timestamp: '2026-11-22T06:21:03.002Z' } as const;

const sseExample = [
  'retry: 3000',
  ': connected',
  '',
  'id: 7512-4081',
  `event: ${MEMORY_CHANGE}`,
  `data: ${JSON.stringify({ type: MEMORY_CHANGE, ...change })}`,
  '',
  'id: 7519-4090',
  `event: ${MEMORY_CHANGE}`,
  `data: ${JSON.stringify({ type: MEMORY_CHANGE, ...removal })}`,
  '',
  '',
].join('\n');

/** The query refusals of one endpoint; `cursor` names its resume parameter. */
const filterProblem = (cursor: string, more: string): ProblemCase => ({
  code: 'invalid_request',
  when: `A filter is empty, too long or not one of its values, a parameter is repeated${more}.`,
  detail: `The query is invalid: ${cursor}: ${cursorMessage}`,
  extensions: { errors: [{ field: cursor, message: cursorMessage }] },
});

const filtersDescription =
  'Filters combine: `scope`, `scope_id`, and `key` as a pattern in which `*` matches any run of characters (`draft*`, `*draft`, `user.*.prefs`).';

/** The three memory event endpoints. */
export const memoryEventsOpenApi: ZodOpenApiPathsObject = {
  [MEMORY_EVENTS_SSE_PATH]: {
    get: {
      operationId: 'streamMemoryEvents',
      tags: ['Memory'],
      summary: 'Memory changes as Server-Sent Events',
      description: `Every set and delete of key-value memory, in the order they were applied, as frames with an \`id:\` (the change's position in the event log), \`event: ${MEMORY_CHANGE}\` and the change as JSON on one \`data:\` line. ${filtersDescription} Changes are kept for 24 hours: reconnect with \`Last-Event-ID\` (or \`?last_event_id=\`) to receive exactly the ones missed, on any replica; without either the stream starts with the next change. Keep-alive comments every 15 s; a client more than 1 MiB behind on live changes, or that reads nothing for 15 s while changes wait for it, is disconnected (it resumes with its last id). HEAD answers the headers without opening a stream. Pass the API key as \`?api_key=\` where headers cannot be set (EventSource).`,
      requestParams: { query: MemoryEventsQuerySchema, header: LastEventIdHeader },
      responses: {
        '200': {
          description: 'The event stream; it stays open until the client or a server shutdown ends it.',
          content: { 'text/event-stream': { schema: z.string(), example: sseExample } },
        },
        ...problemResponses(MEMORY_EVENTS_SSE_PATH, [
          filterProblem(
            'last_event_id',
            ', or the Last-Event-ID header or last_event_id is not an id the server sent',
          ),
        ]),
      },
    },
  },
  [MEMORY_EVENTS_WS_PATH]: {
    get: {
      operationId: 'openMemoryEventSocket',
      tags: ['Memory'],
      summary: 'Memory changes over a WebSocket',
      description: `A WebSocket (RFC 6455) on which the server sends one JSON text frame per set or delete of key-value memory, in the order they were applied: \`{ id, type: "${MEMORY_CHANGE}", scope, scope_id, scopeId, key, action, data, timestamp }\` (\`scopeId\` repeats \`scope_id\` for SDKs that read that spelling). ${filtersDescription} \`last_event_id\` resumes after a change received earlier (kept 24 hours, on any replica). The server pings every 15 s and closes a connection that did not answer the previous ping; a client more than 1 MiB behind on live changes, or that reads nothing for 15 s while changes wait for it, is disconnected; a shutdown closes with 1001. Messages from the client are ignored (at most 64 KiB each). The handshake is an ordinary request first: authenticate with \`X-API-Key\`, a bearer token or \`?api_key=\`; a refused handshake is answered with a problem document and the connection closes. For example \`${MEMORY_EVENTS_WS_PATH}?scope=workflow&key=user.*.prefs&api_key=…\` receives \`${JSON.stringify({ id: '7512-4081', type: MEMORY_CHANGE, scope: change.scope, scope_id: change.scope_id, scopeId: change.scope_id, key: change.key, action: change.action, data: change.data, timestamp: change.timestamp })}\`.`,
      requestParams: { query: MemoryEventsQuerySchema, header: WebSocketHeaders },
      responses: {
        '101': {
          description:
            'Switching Protocols: the WebSocket is open and subscribed; every later change arrives on it.',
          headers: z.object({
            Upgrade: z.literal('websocket'),
            Connection: z.literal('Upgrade'),
            'Sec-WebSocket-Accept': z
              .string()
              .meta({ description: 'RFC 6455: proof the server read the key.' }),
          }),
        },
        ...problemResponses(MEMORY_EVENTS_WS_PATH, [
          {
            code: 'invalid_request',
            when: 'The request is not a WebSocket handshake (a plain GET): open it with a WebSocket client, or use the SSE stream.',
            detail: `${MEMORY_EVENTS_WS_PATH} is a WebSocket endpoint: open it with a WebSocket client (GET with Connection: Upgrade and Upgrade: websocket).`,
            extensions: { errors: [{ field: 'Upgrade', message: 'must be websocket' }] },
          },
          {
            code: 'invalid_request',
            when: 'The handshake is malformed (Sec-WebSocket-Key, Sec-WebSocket-Version, which then comes back listing the versions spoken, or Sec-WebSocket-Protocol).',
            detail: 'Sec-WebSocket-Version "7" is not supported: use 13.',
            extensions: { errors: [{ field: 'Sec-WebSocket-Version', message: 'must be 13 (or 8)' }] },
          },
          filterProblem('last_event_id', ', or last_event_id is not an id the server sent'),
        ]),
      },
    },
  },
  [MEMORY_EVENTS_HISTORY_PATH]: {
    get: {
      operationId: 'listMemoryEvents',
      tags: ['Memory'],
      summary: 'Past memory changes, for replay',
      description: `The changes the live streams sent, as pages of JSON, oldest first, from the oldest kept (24 hours), from \`since\` (inclusive) or after \`after\` (exclusive), up to \`limit\` (1 to ${HISTORY_MAX_LIMIT}, 100 by default). ${filtersDescription} Page on with \`after=next_cursor\` (the \`Link\` header gives the next page's URL while \`has_more\`); a change that commits late is never skipped, because only changes older than every write still in flight are listed. Event ids are the same as the streams', so a client can read history and then resume a stream after its last id.`,
      requestParams: { query: MemoryHistoryQuerySchema },
      responses: {
        '200': {
          description: 'One page of changes.',
          content: {
            'application/json': {
              schema: MemoryHistorySchema,
              example: {
                events: [
                  { id: '7512-4081', type: MEMORY_CHANGE, ...change },
                  { id: '7519-4090', type: MEMORY_CHANGE, ...removal },
                ],
                has_more: true,
                next_cursor: '7519-4090',
              },
            },
          },
        },
        ...problemResponses(MEMORY_EVENTS_HISTORY_PATH, [
          filterProblem(
            'after',
            `, \`after\` is not an id the server sent, \`since\` is not an ISO 8601 time with an offset ${TIME_RANGE}, or \`limit\` is not 1 to ${HISTORY_MAX_LIMIT}`,
          ),
        ]),
      },
    },
  },
};
