import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { DeadLetterPageSchema, DeliverySchema, HistorySchema } from './responses.ts';
import { DEAD_LETTER_MAX_LIMIT, DeadLetterQuerySchema, ExecutionIdSchema, encodeCursor } from './schemas.ts';

/*
 * The webhook API as routes.ts serves it: operations, examples and problem cases. The answers'
 * schemas are in responses.ts.
 */

const ExecutionPath = z.object({
  execution_id: ExecutionIdSchema.meta({
    description: 'The execution id. An id that could never exist (a space, 129 characters) answers 404.',
    example: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
  }),
});

// ---- examples ----

const EXEC = 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x';
const dead = {
  delivery_id: 'whd_7k2m9q1w7x3v5b8n0r6t2c1d4f',
  execution_id: EXEC,
  event: 'execution.completed',
  url: 'https://hooks.example.com/switchyard',
  signed: true,
  header_names: ['X-Tenant'],
  status: 'dead',
  attempt_count: 3,
  manual: false,
  next_attempt_at: null,
  last_status_code: 503,
  last_error: 'the receiver answered 503',
  created_at: '2026-11-22T06:20:01.114Z',
  updated_at: '2026-11-22T06:20:04.305Z',
  delivered_at: null,
  dead_at: '2026-11-22T06:20:04.305Z',
};
const failedAttempt = (attempt: number, startedAt: string) => ({
  attempt,
  manual: false,
  started_at: startedAt,
  duration_ms: 41.7,
  status_code: 503,
  error: 'the receiver answered 503',
  response_body: '{"error":"maintenance"}',
});

const unknownExecution: ProblemCase = {
  code: 'not_found',
  when: 'No execution has this id (or the id could never be one).',
  detail: `Execution "${EXEC}" does not exist.`,
};

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

export const webhooksOpenApi: ZodOpenApiPathsObject = {
  '/api/ui/v1/executions/{execution_id}/webhook/retry': {
    post: {
      operationId: 'retryExecutionWebhook',
      tags: ['Webhooks'],
      summary: "Re-deliver an execution's webhook",
      description:
        'Makes the newest delivery of the execution due again at once, delivered or dead-lettered: same delivery id, attempts counted from 0 again and recorded as `manual`. No body is read.',
      requestParams: { path: ExecutionPath },
      responses: {
        '202': {
          description: 'The delivery, pending again; the attempts follow in the background.',
          ...json(DeliverySchema, {
            ...dead,
            status: 'pending',
            attempt_count: 0,
            manual: true,
            next_attempt_at: '2026-11-22T07:00:00.000Z',
            updated_at: '2026-11-22T07:00:00.000Z',
            dead_at: null,
          }),
        },
        ...problemResponses(`/api/ui/v1/executions/${EXEC}/webhook/retry`, [
          unknownExecution,
          {
            code: 'not_found',
            when: 'The execution has no webhook delivery (no webhook registered, or not finished).',
            detail: `Execution "${EXEC}" has no webhook delivery: it registered no webhook, or has not finished yet.`,
          },
          {
            code: 'conflict',
            when: 'The delivery is still pending or in flight.',
            detail: `The webhook delivery whd_7k2m9q1w7x3v5b8n0r6t2c1d4f of execution "${EXEC}" is still pending; retry once it is delivered or dead-lettered.`,
          },
        ]),
      },
    },
  },
  '/api/ui/v1/executions/{execution_id}/webhook/deliveries': {
    get: {
      operationId: 'listExecutionWebhookDeliveries',
      tags: ['Webhooks'],
      summary: "An execution's webhook deliveries and their attempts",
      description:
        'Newest delivery first; attempts in the order they were made, with status codes, errors, durations and up to 16 KB of each answer. An execution without a webhook has an empty list.',
      requestParams: { path: ExecutionPath },
      responses: {
        '200': {
          description: 'The delivery history.',
          ...json(HistorySchema, {
            execution_id: EXEC,
            deliveries: [
              {
                ...dead,
                attempts: [
                  failedAttempt(1, '2026-11-22T06:20:01.114Z'),
                  failedAttempt(2, '2026-11-22T06:20:02.201Z'),
                  failedAttempt(3, '2026-11-22T06:20:04.263Z'),
                ],
              },
            ],
          }),
        },
        ...problemResponses(`/api/ui/v1/executions/${EXEC}/webhook/deliveries`, [unknownExecution]),
      },
    },
  },
  '/api/ui/v1/webhooks/dead-letters': {
    get: {
      operationId: 'listWebhookDeadLetters',
      tags: ['Webhooks'],
      summary: 'The dead-letter queue of webhook deliveries',
      description:
        'Deliveries whose every attempt failed, newest first. Each leaves the list when it is retried (POST .../webhook/retry).',
      requestParams: { query: DeadLetterQuerySchema },
      responses: {
        '200': {
          description: 'One page of dead letters.',
          ...json(DeadLetterPageSchema, {
            dead_letters: [dead],
            next_cursor: encodeCursor({ deadAt: dead.dead_at, deliveryId: dead.delivery_id }),
          }),
        },
        ...problemResponses('/api/ui/v1/webhooks/dead-letters', [
          {
            code: 'invalid_request',
            when: `limit is not a whole number from 1 to ${DEAD_LETTER_MAX_LIMIT}, or cursor is not one this endpoint gave out.`,
            detail: `The query is invalid: limit: must be a whole number from 1 to ${DEAD_LETTER_MAX_LIMIT} (got "0")`,
            extensions: {
              errors: [
                {
                  field: 'limit',
                  message: `must be a whole number from 1 to ${DEAD_LETTER_MAX_LIMIT} (got "0")`,
                },
              ],
            },
          },
        ]),
      },
    },
  },
};
