import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';
import { nullable } from '../../platform/nullable.ts';

/**
 * The body of POST /api/v1/settings/observability-webhook. Types and members are checked here;
 * the URL, secret and headers then go through the execution webhooks' own check (checkWebhook),
 * so a collector obeys exactly the rules a webhook does.
 */
export const CollectorSettingsBodySchema = z
  .strictObject({
    url: z.string().meta({
      description:
        'Where batches are POSTed: https:// (http:// only with `execution_queue.webhook_allow_http`), at most 2048 characters, no credentials, and a public address unless `execution_queue.webhook_allow_private_networks` is on.',
      example: 'https://collector.example.com/switchyard',
    }),
    secret: nullable(z.string()).meta({
      description:
        'HMAC-SHA256 key of `X-Service-Signature`, at most 512 characters. Absent, null or empty: batches are sent unsigned.',
    }),
    enabled: nullable(z.boolean()).meta({
      description: 'Whether events are forwarded; true when absent or null.',
    }),
    // Checked by checkWebhook, not here: a record schema would drop a "__proto__" header silently.
    headers: nullable(z.unknown()).meta({
      description:
        'Custom headers sent with every batch: at most 20, names and values at most 512 characters; the headers the forwarder sets itself are refused.',
      example: { Authorization: 'Bearer collector-token' },
    }),
  })
  .meta({ id: 'ObservabilityWebhookSettingsBody' });

export type CollectorSettingsBody = z.infer<typeof CollectorSettingsBodySchema>;

export const DLQ_DEFAULT_LIMIT = 20;
export const DLQ_MAX_LIMIT = 100;

/** The query of GET .../dlq. */
export const DlqQuerySchema = z.strictObject({
  limit: pageLimitQuery({ max: DLQ_MAX_LIMIT, fallback: DLQ_DEFAULT_LIMIT, items: 'batches' }),
  cursor: pageCursorQuery((value) => (/^[1-9]\d{0,17}$/.test(value) ? Number(value) : undefined)),
});

export const MAX_REDRIVE_BATCHES = 100;

/** The optional body of POST .../redrive. */
export const RedriveBodySchema = z
  .strictObject({
    // Batch ids are printable ASCII (`obsb_...`); anything else is no batch, and a NUL could not
    // even be looked up.
    batch_ids: nullable(
      z
        .array(
          z
            .string()
            .min(1)
            .max(64)
            .regex(/^[\x21-\x7e]+$/, 'not a batch id'),
        )
        .min(1)
        .max(MAX_REDRIVE_BATCHES),
    ).meta({
      description: `Redrive only these parked batches (at most ${MAX_REDRIVE_BATCHES}); absent or null: the oldest ${MAX_REDRIVE_BATCHES}.`,
    }),
  })
  .meta({ id: 'ObservabilityRedriveBody' });
