import type { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { ClearedSchema, DlqPageSchema, RedriveSchema, SettingsSchema, StatusSchema } from './responses.ts';
import { SETTINGS_BODY_LIMIT } from './routes.ts';
import { CollectorSettingsBodySchema, DlqQuerySchema, RedriveBodySchema } from './schemas.ts';

/*
 * The observability API as routes.ts serves it; responses are the shapes views.ts builds. Objects
 * list the members clients rely on and allow more.
 */

const PREFIX = '/api/v1/settings/observability-webhook';

// ---- examples ----

const settings = {
  url: 'https://collector.example.com/switchyard',
  enabled: true,
  secret_set: true,
  header_names: ['Authorization'],
  created_at: '2026-11-23T09:00:00.000Z',
  updated_at: '2026-11-23T09:00:00.000Z',
};
const parked = {
  batch_id: 'obsb_7k2m9q1w7x3v5b8n0r6t2c1d4f',
  event_count: 1,
  attempts: 3,
  last_error: 'the receiver answered 503',
  last_status_code: 503,
  created_at: '2026-11-23T09:10:00.000Z',
  failed_at: '2026-11-23T09:10:03.000Z',
  events: [
    {
      id: '1052-88',
      stream: 'executions',
      event: 'execution.completed',
      timestamp: '2026-11-23T09:10:00.000Z',
      payload: { execution_id: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x', status: 'succeeded', duration_ms: 412 },
    },
  ],
};

const notConfigured: ProblemCase = {
  code: 'not_found',
  when: 'No observability webhook is configured.',
  detail: 'No observability webhook is configured; set one with POST /api/v1/settings/observability-webhook.',
};
const badQuery: ProblemCase = {
  code: 'invalid_request',
  when: 'A query parameter is malformed or unknown.',
  detail: 'The query is invalid: limit: must be a whole number from 1 to 100 (got "0")',
  extensions: { errors: [{ field: 'limit', message: 'must be a whole number from 1 to 100 (got "0")' }] },
};

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

export const observabilityOpenApi: ZodOpenApiPathsObject = {
  [PREFIX]: {
    get: {
      operationId: 'getObservabilityWebhook',
      tags: ['Observability'],
      summary: 'The observability webhook settings',
      description: 'Where events are forwarded. The secret is never shown, nor header values.',
      responses: {
        '200': { description: 'The settings.', ...json(SettingsSchema, settings) },
        ...problemResponses(PREFIX, [notConfigured]),
      },
    },
    post: {
      operationId: 'setObservabilityWebhook',
      tags: ['Observability'],
      summary: 'Set the observability webhook',
      description:
        'Replaces the settings; every replica applies them without a restart. Enabling (from absent or disabled) forwards events from now on, not the history; disabling stops forwarding (events meanwhile are not sent later). The URL, secret and headers obey the rules of execution webhooks.',
      requestBody: {
        content: {
          'application/json': {
            schema: CollectorSettingsBodySchema,
            example: {
              url: 'https://collector.example.com/switchyard',
              secret: 'whsec_collector',
              enabled: true,
              headers: { Authorization: 'Bearer collector-token' },
            },
          },
        },
      },
      responses: {
        '200': { description: 'The settings as stored.', ...json(SettingsSchema, settings) },
        ...problemResponses(
          PREFIX,
          jsonBodyProblems(SETTINGS_BODY_LIMIT, {
            code: 'invalid_request',
            when: 'A member is missing, of the wrong type or unknown, or the URL, secret or headers break the webhook rules (plain http, a private address, a reserved header...). Nothing changes.',
            detail:
              'The observability webhook is refused: webhook.url must use https:// (plain http:// is refused unless execution_queue.webhook_allow_http is on)',
            extensions: {
              errors: [
                {
                  field: 'url',
                  message:
                    'webhook.url must use https:// (plain http:// is refused unless execution_queue.webhook_allow_http is on)',
                },
              ],
            },
          }),
        ),
      },
    },
    delete: {
      operationId: 'deleteObservabilityWebhook',
      tags: ['Observability'],
      summary: 'Remove the observability webhook',
      description: 'Forwarding stops on every replica. Counters and the dead-letter queue stay.',
      responses: {
        '204': { description: 'Removed.' },
        ...problemResponses(PREFIX, [notConfigured]),
      },
    },
  },
  [`${PREFIX}/status`]: {
    get: {
      operationId: 'getObservabilityStatus',
      tags: ['Observability'],
      summary: 'Forwarder statistics',
      description: 'Counters are shared by every replica (kept in the database).',
      responses: {
        '200': {
          description: 'The status.',
          ...json(StatusSchema, {
            configured: true,
            enabled: true,
            forwarded_total: 1520,
            dropped_total: 0,
            last_forward_at: '2026-11-23T09:12:00.000Z',
            last_error: null,
            last_error_at: null,
            queue_depth: 3,
            dlq_batches: 0,
            dlq_events: 0,
            forwarder: {
              replica_id: 'rep_4k9m2q7w1x8v3b6n5r0t2c7d1f',
              lease_expires_at: '2026-11-23T09:12:15.000Z',
            },
            last_snapshot_at: '2026-11-23T09:11:30.000Z',
          }),
        },
      },
    },
  },
  [`${PREFIX}/dlq`]: {
    get: {
      operationId: 'listObservabilityDlq',
      tags: ['Observability'],
      summary: 'Parked batches',
      description:
        'Batches every attempt failed for, oldest first, with their events: at most `limit`, and a page ends early once its batches hold 8 MiB of events (the first batch always comes); `next_cursor` continues.',
      requestParams: { query: DlqQuerySchema },
      responses: {
        '200': {
          description: 'One page of parked batches.',
          ...json(DlqPageSchema, { batches: [parked], next_cursor: null, total_batches: 1, total_events: 1 }),
        },
        ...problemResponses(`${PREFIX}/dlq`, [badQuery]),
      },
    },
    delete: {
      operationId: 'clearObservabilityDlq',
      tags: ['Observability'],
      summary: 'Clear the parked batches',
      description: 'Removes every parked batch; their events count as dropped.',
      responses: {
        '200': {
          description: 'What was cleared.',
          ...json(ClearedSchema, { cleared_batches: 1, cleared_events: 1 }),
        },
      },
    },
  },
  [`${PREFIX}/redrive`]: {
    post: {
      operationId: 'redriveObservabilityDlq',
      tags: ['Observability'],
      summary: 'Replay parked batches',
      description:
        'Posts parked batches again to the current collector, one attempt each, with their batch ids: each one delivered leaves the DLQ, each failure stays with its new error. No body, or `batch_ids`. A redrive claims its batches before it posts any: another redrive at the same time (on any replica) never sends them too, and each answer lists only what its own redrive sent.',
      requestBody: {
        required: false,
        content: {
          'application/json': { schema: RedriveBodySchema, example: { batch_ids: [parked.batch_id] } },
        },
      },
      responses: {
        '200': {
          description: 'What happened to each batch.',
          ...json(RedriveSchema, {
            attempted: 1,
            delivered: 1,
            failed: 0,
            delivered_events: 1,
            remaining: 0,
            results: [
              { batch_id: parked.batch_id, event_count: 1, delivered: true, status_code: 204, error: null },
            ],
          }),
        },
        ...problemResponses(`${PREFIX}/redrive`, [
          ...jsonBodyProblems(SETTINGS_BODY_LIMIT, {
            code: 'invalid_request',
            when: '`batch_ids` is not a list of 1 to 100 ids, or the body has other members.',
            detail: 'The body is invalid: batch_ids: Invalid input: expected array, received string',
            extensions: {
              errors: [{ field: 'batch_ids', message: 'Invalid input: expected array, received string' }],
            },
          }),
          {
            code: 'not_found',
            when: 'A batch id of `batch_ids` is not in the DLQ (nothing is redriven).',
            detail: 'No parked batch has the id "obsb_unknown"; nothing was redriven.',
          },
          {
            code: 'conflict',
            when: 'No webhook is configured, or it is disabled.',
            detail: 'The observability webhook is disabled; enable it before redriving parked batches.',
          },
          {
            code: 'conflict',
            when: 'A batch of `batch_ids` is being redriven by another request now (nothing is redriven).',
            detail:
              'The parked batch "obsb_7k2m9q1w7x3v5b8n0r6t2c1d4f" is being redriven by another request now; nothing was redriven.',
          },
        ]),
      },
    },
  },
};
