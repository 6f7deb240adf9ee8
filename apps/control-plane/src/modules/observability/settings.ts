import { durationSetting, integerSetting } from '@switchyard/shared/settings';
import { setting, type ValuesOf } from '../../platform/config/setting.ts';

/**
 * The observability forwarder (config `observability:`); content/reference/settings.md lists the defaults. Where events
 * go (url, secret, headers) is not a setting but data, set through /api/v1/settings/observability-webhook.
 */
export const observabilitySettings = {
  batchSize: setting({
    key: 'observability.batch_size',
    env: 'SWITCHYARD_OBSERVABILITY_BATCH_SIZE',
    schema: integerSetting(1, 1000),
    default: 10,
    fromDatabase: true,
    meaning: 'Events per batch posted to the collector.',
  }),
  batchTimeoutMs: setting({
    key: 'observability.batch_timeout',
    env: 'SWITCHYARD_OBSERVABILITY_BATCH_TIMEOUT',
    schema: durationSetting({ min: 10 }),
    default: '1s',
    fromDatabase: true,
    meaning: 'Longest an event waits for its batch to fill before the batch is sent anyway.',
  }),
  httpTimeoutMs: setting({
    key: 'observability.http_timeout',
    env: 'SWITCHYARD_OBSERVABILITY_HTTP_TIMEOUT',
    schema: durationSetting({ min: 100 }),
    default: '10s',
    fromDatabase: true,
    meaning: 'Timeout of one POST to the collector.',
  }),
  maxAttempts: setting({
    key: 'observability.max_attempts',
    env: 'SWITCHYARD_OBSERVABILITY_MAX_ATTEMPTS',
    schema: integerSetting(1, 100),
    default: 3,
    fromDatabase: true,
    meaning: 'Attempts per batch before it is parked in the dead-letter queue.',
  }),
  initialBackoffMs: setting({
    key: 'observability.initial_backoff',
    env: 'SWITCHYARD_OBSERVABILITY_INITIAL_BACKOFF',
    schema: durationSetting(),
    default: '1s',
    fromDatabase: true,
    meaning: 'First retry delay of a batch, doubled after each failure.',
  }),
  maxBackoffMs: setting({
    key: 'observability.max_backoff',
    env: 'SWITCHYARD_OBSERVABILITY_MAX_BACKOFF',
    schema: durationSetting(),
    default: '30s',
    fromDatabase: true,
    meaning: 'Longest retry delay of a batch.',
  }),
  workers: setting({
    key: 'observability.workers',
    env: 'SWITCHYARD_OBSERVABILITY_WORKERS',
    schema: integerSetting(1, 64),
    default: 2,
    fromDatabase: true,
    meaning: 'Batches posted at once.',
  }),
  queueSize: setting({
    key: 'observability.queue_size',
    env: 'SWITCHYARD_OBSERVABILITY_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 1000,
    fromDatabase: true,
    meaning: 'Events read ahead of the collector; the rest wait in the event log until there is room.',
  }),
  snapshotIntervalMs: setting({
    key: 'observability.snapshot_interval',
    env: 'SWITCHYARD_OBSERVABILITY_SNAPSHOT_INTERVAL',
    schema: durationSetting({ min: 0 }),
    default: '60s',
    fromDatabase: true,
    meaning: 'How often a system snapshot (nodes, executions, queue) is forwarded; 0 disables snapshots.',
  }),
};

export type ObservabilitySettings = ValuesOf<typeof observabilitySettings>;
