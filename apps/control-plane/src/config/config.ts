import { resolve } from 'node:path';
import type { NodeHealthSettings, NodeLifecycleSettings } from '../services/nodes-settings.ts';
import type { ConnectorCapability, SettingValues } from './settings.ts';

/** The control plane's configuration, every value parsed and checked; see the README settings table. */
export interface Config {
  server: { port: number; host: string };
  /** Never read from the database: a stored config must not point the server at another database. */
  storage: { databaseUrl: string | undefined; dataDir: string };
  api: { auth: { apiKey: string | undefined; skipPaths: string[] } };
  nodes: NodeLifecycleSettings;
  nodeHealth: NodeHealthSettings;
  discovery: { cacheTtlMs: number };
  /** Execution queue and webhook delivery (spec §8: webhook settings live in this section). */
  executionQueue: {
    syncTimeoutMs: number;
    queueSize: number;
    webhookMaxAttempts: number;
    webhookInitialBackoffMs: number;
    webhookMaxBackoffMs: number;
    webhookTimeoutMs: number;
    webhookWorkers: number;
    webhookQueueSize: number;
    webhookAllowHttp: boolean;
  };
  /** Never read from the database: a stored config must not grant connector capabilities. */
  connector: { token: string | undefined; capabilities: ConnectorCapability[] };
  configSource: 'file' | 'db';
}

/** Shapes the flat, validated setting values into the nested config the services read. */
export function configFromValues(v: SettingValues): Config {
  return {
    server: { port: v['server.port'], host: v['server.host'] },
    storage: { databaseUrl: v['storage.database_url'], dataDir: resolve(v['storage.data_dir']) },
    api: { auth: { apiKey: v['api.auth.api_key'], skipPaths: v['api.auth.skip_paths'] } },
    nodes: {
      heartbeatTtlMs: v['node_lifecycle.heartbeat_ttl'],
      sweepIntervalMs: v['node_lifecycle.sweep_interval'],
      hardEvictMs: v['node_lifecycle.hard_evict_ttl'],
      statusCacheTtlMs: v['node_lifecycle.status_cache_ttl'],
      reconcileIntervalMs: v['node_lifecycle.reconcile_interval'],
      maxTransitionMs: v['node_lifecycle.max_transition_time'],
    },
    nodeHealth: {
      checkIntervalMs: v['node_health.check_interval'],
      checkTimeoutMs: v['node_health.check_timeout'],
      consecutiveFailures: v['node_health.consecutive_failures'],
      recoveryDebounceMs: v['node_health.recovery_debounce'],
      heartbeatStaleThresholdMs: v['node_health.heartbeat_stale_threshold'],
    },
    discovery: { cacheTtlMs: v['discovery.cache_ttl'] },
    executionQueue: {
      syncTimeoutMs: v['execution_queue.sync_timeout'],
      queueSize: v['execution_queue.queue_size'],
      webhookMaxAttempts: v['execution_queue.webhook_max_attempts'],
      webhookInitialBackoffMs: v['execution_queue.webhook_initial_backoff'],
      webhookMaxBackoffMs: v['execution_queue.webhook_max_backoff'],
      webhookTimeoutMs: v['execution_queue.webhook_timeout'],
      webhookWorkers: v['execution_queue.webhook_workers'],
      webhookQueueSize: v['execution_queue.webhook_queue_size'],
      webhookAllowHttp: v['execution_queue.webhook_allow_http'],
    },
    connector: {
      token: v['connector.token'],
      capabilities: v['connector.capabilities'] as ConnectorCapability[],
    },
    configSource: v.config_source,
  };
}
