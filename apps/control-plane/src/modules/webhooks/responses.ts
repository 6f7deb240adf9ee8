import { z } from 'zod';

/*
 * What the webhook API answers: the shapes views.ts builds, as the OpenAPI document describes
 * them. Objects list the members clients rely on and allow more.
 */

const Timestamp = z.iso.datetime();

export const DeliverySchema = z
  .looseObject({
    delivery_id: z
      .string()
      .meta({ description: 'Sent as X-Service-Delivery-ID and `delivery_id` with every attempt.' }),
    execution_id: z.string(),
    event: z.enum(['execution.completed', 'execution.failed']),
    url: z.string(),
    signed: z
      .boolean()
      .meta({ description: 'Whether a secret signs the deliveries (the secret is never shown).' }),
    header_names: z
      .array(z.string())
      .meta({ description: 'The custom headers sent (names only: values often hold credentials).' }),
    status: z.enum(['pending', 'delivering', 'delivered', 'dead']).meta({
      description:
        '`pending`: waiting for its next attempt; `delivering`: an attempt is in flight; `delivered`: a 2xx answer; `dead`: every attempt failed (the dead-letter queue).',
    }),
    attempt_count: z.int().min(0).meta({ description: 'Attempts so far (since the last manual retry).' }),
    manual: z.boolean().meta({ description: 'True once an operator re-delivered it.' }),
    next_attempt_at: Timestamp.nullable(),
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    delivered_at: Timestamp.nullable(),
    dead_at: Timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One webhook delivery of an execution.' });

export const AttemptSchema = z
  .looseObject({
    attempt: z.int().min(1),
    manual: z.boolean().meta({ description: 'Made after an operator retried the delivery.' }),
    started_at: Timestamp,
    duration_ms: z.number(),
    status_code: z.int().nullable().meta({ description: "The receiver's status; null when no answer came." }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed; null when it delivered.' }),
    response_body: z.string().nullable().meta({ description: 'At most 16 KB of the answer, as UTF-8.' }),
  })
  .meta({ id: 'WebhookAttempt', description: 'One attempt of a webhook delivery.' });

export const HistorySchema = z
  .object({
    execution_id: z.string(),
    deliveries: z.array(DeliverySchema.extend({ attempts: z.array(AttemptSchema) })),
  })
  .meta({ id: 'WebhookDeliveryHistory' });

export const DeadLetterPageSchema = z
  .object({
    dead_letters: z.array(DeliverySchema),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'WebhookDeadLetters' });
