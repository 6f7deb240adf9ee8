import { booleanSetting, durationSetting, integerSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** The execution queue and webhook delivery (config `execution_queue:`; spec §8 puts webhook settings here). */
export const executionQueueSettings = {
  syncTimeoutMs: setting({
    key: 'execution_queue.sync_timeout',
    env: 'SWITCHYARD_EXECUTION_QUEUE_SYNC_TIMEOUT',
    schema: durationSetting(),
    default: '60s',
    fromDatabase: true,
    meaning: 'Longest wait of POST /api/v1/execute/{target} for its result.',
  }),
  queueSize: setting({
    key: 'execution_queue.queue_size',
    env: 'SWITCHYARD_EXECUTION_QUEUE_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 1000,
    fromDatabase: true,
    meaning: 'Queued executions before async submissions are answered 429.',
  }),
  webhookMaxAttempts: setting({
    key: 'execution_queue.webhook_max_attempts',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_ATTEMPTS',
    schema: integerSetting(1, 100),
    default: 3,
    fromDatabase: true,
    meaning: 'Webhook delivery attempts before the delivery is dead-lettered.',
  }),
  webhookInitialBackoffMs: setting({
    key: 'execution_queue.webhook_initial_backoff',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF',
    schema: durationSetting(),
    default: '1s',
    fromDatabase: true,
    meaning: 'First webhook retry delay, doubled after each failure.',
  }),
  webhookMaxBackoffMs: setting({
    key: 'execution_queue.webhook_max_backoff',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_BACKOFF',
    schema: durationSetting(),
    default: '5s',
    fromDatabase: true,
    meaning: 'Longest webhook retry delay.',
  }),
  webhookTimeoutMs: setting({
    key: 'execution_queue.webhook_timeout',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_TIMEOUT',
    schema: durationSetting(),
    default: '10s',
    fromDatabase: true,
    meaning: 'Timeout of one webhook delivery attempt.',
  }),
  webhookWorkers: setting({
    key: 'execution_queue.webhook_workers',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_WORKERS',
    schema: integerSetting(1, 256),
    default: 4,
    fromDatabase: true,
    meaning: 'Webhook delivery workers per replica.',
  }),
  webhookQueueSize: setting({
    key: 'execution_queue.webhook_queue_size',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 256,
    fromDatabase: true,
    meaning: 'In-memory webhook delivery queue per replica (the rest wait in the database).',
  }),
  webhookAllowHttp: setting({
    key: 'execution_queue.webhook_allow_http',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP',
    schema: booleanSetting(),
    default: false,
    fromDatabase: true,
    meaning: 'Development only: accept plain http:// webhook and observability URLs.',
  }),
};
