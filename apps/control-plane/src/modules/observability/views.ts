import { toIso, toIsoOrNull } from '@switchyard/shared';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { CollectorSettings, ParkedBatch } from './repository.ts';
import type { ParkedSchema, RedriveSchema, SettingsSchema, StatusSchema } from './responses.ts';
import type { ForwarderStatus, RedriveOutcome } from './service.ts';

/** The settings as answered: the secret is never shown, nor header values (they often hold credentials). */
export function settingsView(settings: CollectorSettings): ResponseBody<typeof SettingsSchema> {
  return {
    url: settings.url,
    enabled: settings.enabled,
    secret_set: settings.secret !== null,
    header_names: Object.keys(settings.headers),
    created_at: toIso(settings.createdAt),
    updated_at: toIso(settings.updatedAt),
  };
}

export function statusView(status: ForwarderStatus, now: number): ResponseBody<typeof StatusSchema> {
  const { settings, state, parked } = status;
  const leased = state?.leasedBy && state.leaseExpiresAt && state.leaseExpiresAt.getTime() > now;
  return {
    configured: settings !== undefined,
    enabled: settings?.enabled ?? false,
    forwarded_total: state?.forwardedTotal ?? 0,
    dropped_total: state?.droppedTotal ?? 0,
    last_forward_at: toIsoOrNull(state?.lastForwardAt),
    last_error: state?.lastError ?? null,
    last_error_at: toIsoOrNull(state?.lastErrorAt),
    queue_depth: leased ? (state?.queueDepth ?? 0) : 0,
    dlq_batches: parked.batches,
    dlq_events: parked.events,
    forwarder: leased
      ? { replica_id: state?.leasedBy as string, lease_expires_at: toIso(state?.leaseExpiresAt as Date) }
      : null,
    last_snapshot_at: toIsoOrNull(state?.lastSnapshotAt),
  };
}

export function parkedView(batch: ParkedBatch): ResponseBody<typeof ParkedSchema> {
  return {
    batch_id: batch.batchId,
    event_count: batch.eventCount,
    attempts: batch.attempts,
    last_error: batch.lastError,
    last_status_code: batch.lastStatusCode,
    created_at: toIso(batch.createdAt),
    failed_at: toIso(batch.failedAt),
    events: batch.events,
  };
}

export function redriveView(result: {
  outcomes: RedriveOutcome[];
  remaining: number;
}): ResponseBody<typeof RedriveSchema> {
  const delivered = result.outcomes.filter((outcome) => outcome.delivered);
  return {
    attempted: result.outcomes.length,
    delivered: delivered.length,
    failed: result.outcomes.length - delivered.length,
    delivered_events: delivered.reduce((sum, outcome) => sum + outcome.events, 0),
    remaining: result.remaining,
    results: result.outcomes.map((outcome) => ({
      batch_id: outcome.batchId,
      event_count: outcome.events,
      delivered: outcome.delivered,
      status_code: outcome.statusCode,
      error: outcome.error,
    })),
  };
}
