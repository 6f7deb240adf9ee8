import type { MigrationSet } from '@switchyard/shared/db';
import { createNodeInstances } from './20261122052600_create_node_instances.ts';
import { createConfigs } from './20261122053000_create_configs.ts';
import { addNodeProposedTags } from './20261122130000_add_node_proposed_tags.ts';
import { addNodeHeartbeatInterval } from './20261122130100_add_node_heartbeat_interval.ts';
import { addNodeEvictedAt } from './20261122130200_add_node_evicted_at.ts';
import { createControlPlaneReplicas } from './20261123090000_create_control_plane_replicas.ts';
import { createExecutions } from './20261123090100_create_executions.ts';
import { createEventLog } from './20261123090200_create_event_log.ts';
import { createWebhookDeliveries } from './20261123090300_create_webhook_deliveries.ts';
import { addNodeLastRegisteredAt } from './20261123090400_add_node_last_registered_at.ts';
import { addExecutionDispatchedAt } from './20261123090500_add_execution_dispatched_at.ts';
import { createMemory } from './20261123090600_create_memory.ts';
import { memoryKeysBytewise } from './20261123090700_memory_keys_bytewise.ts';
import { createApprovalRequests } from './20261123090800_create_approval_requests.ts';
import { addConfigVersions } from './20261123090900_add_config_versions.ts';
import { createObservability } from './20261123091000_create_observability.ts';
import { acceptsWebhookStrings } from './20261126090000_accepts_webhook_strings.ts';
import { observabilityDlqClaims } from './20261127090000_observability_dlq_claims.ts';
import { memoryScopeUsage } from './20261127091000_memory_scope_usage.ts';
import { executionsCompletedIndex } from './20261128090000_executions_completed_index.ts';

/** The control plane's schema history, oldest first. Add a file per change; never edit a landed one. */
export const controlPlaneMigrations: MigrationSet = {
  tableName: 'control_plane_migrations',
  migrations: [
    createNodeInstances,
    createConfigs,
    addNodeProposedTags,
    addNodeHeartbeatInterval,
    addNodeEvictedAt,
    createControlPlaneReplicas,
    createExecutions,
    createEventLog,
    createWebhookDeliveries,
    addNodeLastRegisteredAt,
    addExecutionDispatchedAt,
    createMemory,
    memoryKeysBytewise,
    createApprovalRequests,
    addConfigVersions,
    createObservability,
    acceptsWebhookStrings,
    observabilityDlqClaims,
    memoryScopeUsage,
    executionsCompletedIndex,
  ],
};
