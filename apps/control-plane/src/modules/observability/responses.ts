import { z } from 'zod';

/*
 * What the observability webhook settings API answers: the shapes views.ts builds, as the OpenAPI
 * document describes them.
 */

const Timestamp = z.iso.datetime();

export const SettingsSchema = z
  .looseObject({
    url: z.string(),
    enabled: z.boolean(),
    secret_set: z.boolean().meta({ description: 'Whether batches are signed (the secret is never shown).' }),
    header_names: z
      .array(z.string())
      .meta({ description: 'The custom headers sent (names only: values often hold credentials).' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ObservabilityWebhookSettings', description: 'Where the forwarder posts events.' });

export const StatusSchema = z
  .looseObject({
    configured: z.boolean(),
    enabled: z.boolean(),
    forwarded_total: z
      .int()
      .min(0)
      .meta({ description: 'Events the collector took (2xx), redrives included.' }),
    dropped_total: z.int().min(0).meta({ description: 'Events given up: removed from the DLQ by a clear.' }),
    last_forward_at: Timestamp.nullable(),
    last_error: z.string().nullable(),
    last_error_at: Timestamp.nullable(),
    queue_depth: z.int().min(0).meta({ description: 'Events the forwarding replica holds read ahead.' }),
    dlq_batches: z.int().min(0),
    dlq_events: z.int().min(0),
    forwarder: z
      .object({ replica_id: z.string(), lease_expires_at: Timestamp })
      .nullable()
      .meta({ description: 'The replica that forwards now; null when none does.' }),
    last_snapshot_at: Timestamp.nullable(),
  })
  .meta({ id: 'ObservabilityStatus' });

const EventSchema = z.looseObject({
  id: z.string(),
  stream: z.enum(['executions', 'nodes', 'memory', 'system']),
  event: z.string(),
  timestamp: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

export const ParkedSchema = z
  .looseObject({
    batch_id: z.string(),
    event_count: z.int().min(1),
    attempts: z.int().min(1),
    last_error: z.string().nullable(),
    last_status_code: z.int().nullable(),
    created_at: Timestamp,
    failed_at: Timestamp,
    events: z.array(EventSchema),
  })
  .meta({ id: 'ObservabilityParkedBatch', description: 'A batch every attempt failed for.' });

export const DlqPageSchema = z
  .object({
    batches: z.array(ParkedSchema),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
    total_batches: z.int().min(0),
    total_events: z.int().min(0),
  })
  .meta({ id: 'ObservabilityDlqPage' });

export const ClearedSchema = z
  .object({ cleared_batches: z.int().min(0), cleared_events: z.int().min(0) })
  .meta({ id: 'ObservabilityDlqCleared' });

export const RedriveSchema = z
  .object({
    attempted: z.int().min(0),
    delivered: z.int().min(0),
    failed: z.int().min(0),
    delivered_events: z.int().min(0),
    remaining: z.int().min(0).meta({ description: 'Batches still in the DLQ afterwards.' }),
    results: z.array(
      z.object({
        batch_id: z.string(),
        event_count: z.int().min(1),
        delivered: z.boolean(),
        status_code: z.int().nullable(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'ObservabilityRedriveResult' });
