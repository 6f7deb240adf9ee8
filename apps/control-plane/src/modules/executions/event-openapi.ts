import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { problemResponses } from '../../platform/openapi/problem.ts';
import { EXECUTION_EVENTS_PATH, ExecutionEventsQuerySchema } from './event-routes.ts';

/*
 * GET /api/ui/v1/executions/events as event-routes.ts serves it. The query is the schema the route
 * parses with; the Last-Event-ID header is checked by the route itself and documented here.
 */

const LastEventIdHeader = z.object({
  'Last-Event-ID': z.string().optional().meta({
    description:
      'The `id:` of the last frame received: the stream starts right after it (on any replica). Browsers send it on reconnect by themselves. Ids older than the retention (24 h) resume at the oldest event kept.',
    example: '7512-4081',
  }),
});

const example = [
  'retry: 3000',
  ': connected',
  '',
  'id: 7512-4081',
  'event: execution.started',
  'data: {"type":"execution.started","execution_id":"exec_3v8b1n6r4t9c2d7f5k0m3q8w1x","target":"hello-agent.summarize","workflow_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","run_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","timestamp":"2026-11-22T06:20:00.140Z","status":"running","agent_node_id":"hello-agent"}',
  '',
  'id: 7513-4082',
  'event: execution.waiting',
  'data: {"type":"execution.waiting","execution_id":"exec_3v8b1n6r4t9c2d7f5k0m3q8w1x","target":"hello-agent.summarize","workflow_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","run_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","timestamp":"2026-11-22T06:20:00.151Z","status":"waiting","waiting_for":"approval","approval_request_id":"post-42"}',
  '',
  'id: 7540-4090',
  'event: execution.approval_resolved',
  'data: {"type":"execution.approval_resolved","execution_id":"exec_3v8b1n6r4t9c2d7f5k0m3q8w1x","target":"hello-agent.summarize","workflow_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","run_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","timestamp":"2026-11-22T06:24:31.220Z","status":"running","approval_request_id":"post-42","decision":"approved"}',
  '',
  'id: 7541-4093',
  'event: execution.completed',
  'data: {"type":"execution.completed","execution_id":"exec_3v8b1n6r4t9c2d7f5k0m3q8w1x","target":"hello-agent.summarize","workflow_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","run_id":"run_5k0m3q8w1x3v8b1n6r4t9c2d7f","timestamp":"2026-11-22T06:24:31.402Z","status":"succeeded","duration_ms":271262}',
  '',
  '',
].join('\n');

/** The execution event stream. */
export const executionEventsOpenApi: ZodOpenApiPathsObject = {
  [EXECUTION_EVENTS_PATH]: {
    get: {
      operationId: 'streamExecutionEvents',
      tags: ['Executions'],
      summary: 'Execution events as Server-Sent Events',
      description:
        "A stream of `execution.started`, `execution.waiting` (`waiting_for`: `approval` with `approval_request_id` when it paused for an approval, `child` with `reason` when its agent awaits a paused child), `execution.approval_resolved` (`approval_request_id`, `decision`: `approved`, `rejected`, `request_changes` or `expired`, and the execution's `status` after it), `execution.resumed` (a parent that awaited a child goes on) and `execution.completed` events in the order they were recorded, each a frame with an `id:` (its position in the event log), an `event:` name and the event as JSON on one `data:` line (`type` repeats the name). Events are kept for 24 hours: reconnect with `Last-Event-ID` (or `?last_event_id=`) to receive exactly the ones missed, on any replica. Without either, the stream starts with the next event. Keep-alive comments every 15 s. HEAD answers the headers without opening a stream. Pass the API key as `?api_key=` where headers cannot be set (EventSource).",
      requestParams: { query: ExecutionEventsQuerySchema, header: LastEventIdHeader },
      responses: {
        '200': {
          description: 'The event stream; it stays open until the client or a server shutdown ends it.',
          content: { 'text/event-stream': { schema: z.string(), example } },
        },
        ...problemResponses(EXECUTION_EVENTS_PATH, [
          {
            code: 'invalid_request',
            when: 'A filter is empty or too long, a parameter is repeated, or the Last-Event-ID header or last_event_id is not an id the server sent.',
            detail:
              'The query is invalid: last_event_id: not an event id this server sent (expected <tx>-<id>, as in the frames\u2019 id: lines)',
            extensions: {
              errors: [
                {
                  field: 'last_event_id',
                  message:
                    'not an event id this server sent (expected <tx>-<id>, as in the frames\u2019 id: lines)',
                },
              ],
            },
          },
        ]),
      },
    },
  },
};
