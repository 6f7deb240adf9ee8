import { booleanSetting, durationSetting, integerSetting } from '@switchyard/shared/settings';
import { setting, type ValuesOf } from '../../platform/config/setting.ts';

/**
 * Webhook delivery. The configuration file keeps these in its execution queue section
 * (content/reference/settings.md), so the keys stay `execution_queue.webhook_*`; config.ts merges
 * them into that section.
 */
export const webhookSettings = {
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
  webhookAllowPrivateNetworks: setting({
    key: 'execution_queue.webhook_allow_private_networks',
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    schema: booleanSetting(),
    default: false,
    fromDatabase: true,
    meaning:
      'Development and tests only: let webhook URLs reach loopback, private, link-local and other non-public addresses.',
  }),
};

/** The webhook settings as the typed config holds them (durations in milliseconds). */
export type WebhookSettings = ValuesOf<typeof webhookSettings>;
