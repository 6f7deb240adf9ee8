import {
  booleanSetting,
  choiceSetting,
  durationSetting,
  integerSetting,
  listSetting,
  optionalTextSetting,
  textSetting,
} from '@switchyard/shared/settings';
import type { z } from 'zod';

/** Capabilities a connector token may be granted (spec §5 item 7). */
export const CONNECTOR_CAPABILITIES = [
  'reasoners:read',
  'reasoners:write',
  'versions:read',
  'versions:write',
  'restart',
  'config_management',
] as const;
export type ConnectorCapability = (typeof CONNECTOR_CAPABILITIES)[number];

/** Why a skip-path pattern is unusable, or undefined when it is fine. */
function skipPathProblem(pattern: string): string | undefined {
  if (!pattern.startsWith('/')) return 'must start with "/"';
  const star = pattern.indexOf('*');
  if (star !== -1 && (star !== pattern.length - 1 || !pattern.endsWith('/*'))) {
    return 'may use "*" only as a final "/*" (e.g. /api/v1/public/*)';
  }
  if (/[\s?#]/.test(pattern)) return 'must be a bare path (no spaces, "?" or "#")';
  return undefined;
}

function databaseUrlSetting() {
  return optionalTextSetting().refine(
    (value) => value === undefined || /^postgres(ql)?:\/\//.test(value),
    'is not a PostgreSQL URL (postgres://user@host:5432/database)',
  );
}

interface SettingInit<S extends z.ZodType> {
  /** The environment variable that overrides every other source. */
  env: string;
  schema: S;
  /** The default, written as a user would write it in the file (it goes through `schema`). */
  default: unknown;
  /** False for the storage and connector sections: a database must never redirect or unlock them. */
  fromDatabase: boolean;
  /** One sentence for the settings table of the README and the docs. */
  meaning: string;
}

function setting<S extends z.ZodType>(init: SettingInit<S>) {
  return init;
}

/**
 * Every setting of the control plane, keyed by its dotted key in the YAML file. The environment
 * variable, default, and whether the database may set it live next to the key so the loader, the
 * README table and the tests all read one list.
 */
export const SETTINGS = {
  'server.port': setting({
    env: 'CONTROL_PLANE_PORT',
    schema: integerSetting(0, 65535),
    default: 8080,
    fromDatabase: true,
    meaning: 'TCP port the HTTP server listens on (0 picks a free port).',
  }),
  'server.host': setting({
    env: 'CONTROL_PLANE_HOST',
    schema: textSetting(),
    default: '127.0.0.1',
    fromDatabase: true,
    meaning: 'Interface to listen on; use 0.0.0.0 to accept connections from other machines.',
  }),
  'storage.database_url': setting({
    env: 'DATABASE_URL',
    schema: databaseUrlSetting(),
    default: undefined,
    fromDatabase: false,
    meaning: 'PostgreSQL connection string; unset means the embedded database under storage.data_dir.',
  }),
  'storage.data_dir': setting({
    env: 'SWITCHYARD_DATA_DIR',
    schema: textSetting(),
    default: './.data',
    fromDatabase: false,
    meaning:
      'Directory of the embedded database (kept in `<data_dir>/control-plane`), relative to the working directory.',
  }),
  'api.auth.api_key': setting({
    env: 'SERVICE_API_KEY',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: true,
    meaning: 'API key every request must carry; unset or empty turns API-key authentication off.',
  }),
  'api.auth.skip_paths': setting({
    env: 'SWITCHYARD_API_AUTH_SKIP_PATHS',
    schema: listSetting(skipPathProblem),
    default: [],
    fromDatabase: true,
    meaning:
      'Extra paths that need no API key: exact paths, or `prefix/*` for a path and everything under it.',
  }),
  'node_lifecycle.heartbeat_ttl': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL',
    schema: durationSetting(),
    default: '15s',
    fromDatabase: true,
    meaning: 'A node with no heartbeat for this long is marked offline.',
  }),
  'node_lifecycle.sweep_interval': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '5s',
    fromDatabase: true,
    meaning: 'How often the presence sweeper looks for expired heartbeats.',
  }),
  'node_lifecycle.hard_evict_ttl': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_HARD_EVICT_TTL',
    schema: durationSetting(),
    default: '5m',
    fromDatabase: true,
    meaning: 'An offline node with no heartbeat for this long is unregistered.',
  }),
  'node_lifecycle.status_cache_ttl': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_STATUS_CACHE_TTL',
    schema: durationSetting({ min: 0 }),
    default: '5m',
    fromDatabase: true,
    meaning: 'GET node status reuses health results younger than this; older ones are probed again.',
  }),
  'node_lifecycle.reconcile_interval': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_RECONCILE_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '30s',
    fromDatabase: true,
    meaning: 'How often the presence manager reconciles the fleet (evictions, stuck transitions).',
  }),
  'node_lifecycle.max_transition_time': setting({
    env: 'SWITCHYARD_NODE_LIFECYCLE_MAX_TRANSITION_TIME',
    schema: durationSetting(),
    default: '2m',
    fromDatabase: true,
    meaning: 'A node still `starting` after this long (while heartbeating) is marked degraded.',
  }),
  'node_health.check_interval': setting({
    env: 'SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '30s',
    fromDatabase: true,
    meaning: "How often the health monitor probes each agent's GET {base_url}/health.",
  }),
  'node_health.check_timeout': setting({
    env: 'SWITCHYARD_NODE_HEALTH_CHECK_TIMEOUT',
    schema: durationSetting(),
    default: '5s',
    fromDatabase: true,
    meaning: 'A health probe that takes longer than this counts as a failure.',
  }),
  'node_health.consecutive_failures': setting({
    env: 'SWITCHYARD_NODE_HEALTH_CONSECUTIVE_FAILURES',
    schema: integerSetting(1, 1000),
    default: 3,
    fromDatabase: true,
    meaning: 'Failed probes in a row that turn a ready node degraded.',
  }),
  'node_health.recovery_debounce': setting({
    env: 'SWITCHYARD_NODE_HEALTH_RECOVERY_DEBOUNCE',
    schema: durationSetting({ min: 0 }),
    default: '60s',
    fromDatabase: true,
    meaning: 'A degraded node must stay healthy this long before it is ready again.',
  }),
  'node_health.heartbeat_stale_threshold': setting({
    env: 'SWITCHYARD_NODE_HEALTH_HEARTBEAT_STALE_THRESHOLD',
    schema: durationSetting(),
    default: '60s',
    fromDatabase: true,
    meaning: 'Node status reports `heartbeat_stale: true` when the last heartbeat is older than this.',
  }),
  'discovery.cache_ttl': setting({
    env: 'SWITCHYARD_DISCOVERY_CACHE_TTL',
    schema: durationSetting({ min: 0 }),
    default: '30s',
    fromDatabase: true,
    meaning: 'How long a discovery answer is served from cache (any node change clears it; 0 disables).',
  }),
  'execution_queue.sync_timeout': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_SYNC_TIMEOUT',
    schema: durationSetting(),
    default: '60s',
    fromDatabase: true,
    meaning: 'Longest wait of POST /api/v1/execute/{target} for its result.',
  }),
  'execution_queue.queue_size': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 1000,
    fromDatabase: true,
    meaning: 'Queued executions before async submissions are answered 429.',
  }),
  'execution_queue.webhook_max_attempts': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_ATTEMPTS',
    schema: integerSetting(1, 100),
    default: 3,
    fromDatabase: true,
    meaning: 'Webhook delivery attempts before the delivery is dead-lettered.',
  }),
  'execution_queue.webhook_initial_backoff': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF',
    schema: durationSetting(),
    default: '1s',
    fromDatabase: true,
    meaning: 'First webhook retry delay, doubled after each failure.',
  }),
  'execution_queue.webhook_max_backoff': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_BACKOFF',
    schema: durationSetting(),
    default: '5s',
    fromDatabase: true,
    meaning: 'Longest webhook retry delay.',
  }),
  'execution_queue.webhook_timeout': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_TIMEOUT',
    schema: durationSetting(),
    default: '10s',
    fromDatabase: true,
    meaning: 'Timeout of one webhook delivery attempt.',
  }),
  'execution_queue.webhook_workers': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_WORKERS',
    schema: integerSetting(1, 256),
    default: 4,
    fromDatabase: true,
    meaning: 'Webhook delivery workers per replica.',
  }),
  'execution_queue.webhook_queue_size': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 256,
    fromDatabase: true,
    meaning: 'In-memory webhook delivery queue per replica (the rest wait in the database).',
  }),
  'execution_queue.webhook_allow_http': setting({
    env: 'SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP',
    schema: booleanSetting(),
    default: false,
    fromDatabase: true,
    meaning: 'Development only: accept plain http:// webhook and observability URLs.',
  }),
  'connector.token': setting({
    env: 'SERVICE_CONNECTOR_TOKEN',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: false,
    meaning: 'Bearer token of the connector API (/connector/*); unset disables the connector API.',
  }),
  'connector.capabilities': setting({
    env: 'SWITCHYARD_CONNECTOR_CAPABILITIES',
    schema: listSetting((item) =>
      (CONNECTOR_CAPABILITIES as readonly string[]).includes(item)
        ? undefined
        : `is not a capability (${CONNECTOR_CAPABILITIES.join(', ')})`,
    ),
    default: ['reasoners:read', 'versions:read', 'versions:write', 'restart'],
    fromDatabase: false,
    meaning: 'What the connector token may do; config_management must be listed to manage stored configs.',
  }),
  config_source: setting({
    env: 'SERVICE_CONFIG_SOURCE',
    schema: choiceSetting(['file', 'db'] as const),
    default: 'file',
    fromDatabase: false,
    meaning:
      'Where settings come from besides the environment: `file` (the YAML file) or `db` (the stored config named control-plane, over the file).',
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;

/** The parsed value of every setting, keyed by its file key. */
export type SettingValues = { [K in SettingKey]: z.output<(typeof SETTINGS)[K]['schema']> };

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];
