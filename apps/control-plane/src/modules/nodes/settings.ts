import { durationSetting, integerSetting } from '@switchyard/shared/settings';
import type { ValuesOf } from '../../platform/config/setting.ts';
import { setting } from '../../platform/config/setting.ts';

/** Presence and lifecycle timings (config `node_lifecycle:`), durations in milliseconds. */
export const nodeLifecycleSettings = {
  heartbeatTtlMs: setting({
    key: 'node_lifecycle.heartbeat_ttl',
    env: 'SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL',
    schema: durationSetting(),
    default: '15s',
    fromDatabase: true,
    meaning:
      "A node with no heartbeat for this long is marked offline; the floor of each node's lease, which grows to 3 × its own heartbeat interval.",
  }),
  maxHeartbeatTtlMs: setting({
    key: 'node_lifecycle.max_heartbeat_ttl',
    env: 'SWITCHYARD_NODE_LIFECYCLE_MAX_HEARTBEAT_TTL',
    schema: durationSetting(),
    default: '2m',
    fromDatabase: true,
    meaning:
      'Longest lease a slow heartbeat rhythm earns (3 × the interval, never below heartbeat_ttl); longer gaps count as outages.',
  }),
  assumedHeartbeatIntervalMs: setting({
    key: 'node_lifecycle.assumed_heartbeat_interval',
    env: 'SWITCHYARD_NODE_LIFECYCLE_ASSUMED_HEARTBEAT_INTERVAL',
    schema: durationSetting({ min: 0 }),
    default: '30s',
    fromDatabase: true,
    meaning:
      "Heartbeat interval assumed for a node until its own is observed (the TypeScript SDK's 30 s); 0 assumes none.",
  }),
  sweepIntervalMs: setting({
    key: 'node_lifecycle.sweep_interval',
    env: 'SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '5s',
    fromDatabase: true,
    meaning: 'How often the presence sweeper looks for expired heartbeats.',
  }),
  hardEvictMs: setting({
    key: 'node_lifecycle.hard_evict_ttl',
    env: 'SWITCHYARD_NODE_LIFECYCLE_HARD_EVICT_TTL',
    schema: durationSetting(),
    default: '5m',
    fromDatabase: true,
    meaning:
      'An offline node with no heartbeat for this long is evicted: gone from every answer until a heartbeat from it brings it back.',
  }),
  evictedRetentionMs: setting({
    key: 'node_lifecycle.evicted_retention',
    env: 'SWITCHYARD_NODE_LIFECYCLE_EVICTED_RETENTION',
    schema: durationSetting({ min: 0 }),
    default: '168h',
    fromDatabase: true,
    meaning:
      "How long an evicted node's last registration is kept for a heartbeat to revive it; 0 deletes it at eviction.",
  }),
  statusCacheTtlMs: setting({
    key: 'node_lifecycle.status_cache_ttl',
    env: 'SWITCHYARD_NODE_LIFECYCLE_STATUS_CACHE_TTL',
    schema: durationSetting({ min: 0 }),
    default: '5m',
    fromDatabase: true,
    meaning: 'GET node status reuses health results younger than this; older ones are probed again.',
  }),
  reconcileIntervalMs: setting({
    key: 'node_lifecycle.reconcile_interval',
    env: 'SWITCHYARD_NODE_LIFECYCLE_RECONCILE_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '30s',
    fromDatabase: true,
    meaning: 'How often the presence manager reconciles the fleet (evictions, stuck transitions).',
  }),
  maxTransitionMs: setting({
    key: 'node_lifecycle.max_transition_time',
    env: 'SWITCHYARD_NODE_LIFECYCLE_MAX_TRANSITION_TIME',
    schema: durationSetting(),
    default: '2m',
    fromDatabase: true,
    meaning: 'A node still `starting` after this long (while heartbeating) is marked degraded.',
  }),
};

/** Health monitor settings (config `node_health:`), durations in milliseconds. */
export const nodeHealthSettings = {
  checkIntervalMs: setting({
    key: 'node_health.check_interval',
    env: 'SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '30s',
    fromDatabase: true,
    meaning: "How often the health monitor probes each agent's GET {base_url}/health.",
  }),
  checkTimeoutMs: setting({
    key: 'node_health.check_timeout',
    env: 'SWITCHYARD_NODE_HEALTH_CHECK_TIMEOUT',
    schema: durationSetting(),
    default: '5s',
    fromDatabase: true,
    meaning: 'A health probe that takes longer than this counts as a failure.',
  }),
  consecutiveFailures: setting({
    key: 'node_health.consecutive_failures',
    env: 'SWITCHYARD_NODE_HEALTH_CONSECUTIVE_FAILURES',
    schema: integerSetting(1, 1000),
    default: 3,
    fromDatabase: true,
    meaning: 'Failed probes in a row that turn a ready node degraded.',
  }),
  recoveryDebounceMs: setting({
    key: 'node_health.recovery_debounce',
    env: 'SWITCHYARD_NODE_HEALTH_RECOVERY_DEBOUNCE',
    schema: durationSetting({ min: 0 }),
    default: '60s',
    fromDatabase: true,
    meaning: 'A degraded node must stay healthy this long before it is ready again.',
  }),
  heartbeatStaleThresholdMs: setting({
    key: 'node_health.heartbeat_stale_threshold',
    env: 'SWITCHYARD_NODE_HEALTH_HEARTBEAT_STALE_THRESHOLD',
    schema: durationSetting(),
    default: '60s',
    fromDatabase: true,
    meaning: 'Node status reports `heartbeat_stale: true` when the last heartbeat is older than this.',
  }),
};

export type NodeLifecycleSettings = ValuesOf<typeof nodeLifecycleSettings>;
export type NodeHealthSettings = ValuesOf<typeof nodeHealthSettings>;
