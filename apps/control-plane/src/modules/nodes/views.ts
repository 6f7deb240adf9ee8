import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { compareStatus, isRoutable } from './lifecycle.ts';
import type {
  BulkEntrySchema,
  HealthViewSchema,
  InstanceSchema,
  NodeSchema,
  NodeStatusSchema,
} from './responses.ts';
import type { LifecycleStatus, NodeInstanceRecord } from './schemas.ts';

/**
 * Instances grouped by node id, in the order each node first appears and each group in the given
 * order (list queries already sort, so views keep that order). Linear: one map lookup per row.
 */
export function groupByNode(instances: Iterable<NodeInstanceRecord>): Map<string, NodeInstanceRecord[]> {
  const grouped = new Map<string, NodeInstanceRecord[]>();
  for (const instance of instances) {
    const group = grouped.get(instance.nodeId);
    if (group) group.push(instance);
    else grouped.set(instance.nodeId, [instance]);
  }
  return grouped;
}

/** Milliseconds as seconds with millisecond precision, or null. */
function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms) / 1000;
}

/** Health results of one instance as the API shows them. */
export function healthView(
  instance: NodeInstanceRecord,
  now: number,
  staleThresholdMs: number,
): ResponseBody<typeof HealthViewSchema> {
  const last = instance.lastHeartbeat ? Date.parse(instance.lastHeartbeat) : null;
  return {
    consecutive_failures: instance.health.consecutiveFailures,
    healthy_since: instance.health.healthySince,
    last_check_at: instance.health.lastCheckAt,
    last_check_ok: instance.health.lastCheckOk,
    last_check_status_code: instance.health.lastCheckStatusCode,
    last_check_error: instance.health.lastCheckError,
    last_check_duration_ms: instance.health.lastCheckDurationMs,
    heartbeat_stale: last === null || now - last > staleThresholdMs,
    custom: instance.customHealth,
  };
}

/** The full record of one instance (register answer, GET node, UI list). */
export function instanceView(
  instance: NodeInstanceRecord,
  now: number,
  staleThresholdMs: number,
): ResponseBody<typeof InstanceSchema> {
  return {
    id: instance.nodeId,
    node_id: instance.nodeId,
    version: instance.version,
    base_url: instance.baseUrl,
    public_url: instance.publicUrl,
    deployment_type: instance.deploymentType,
    tags: instance.tags,
    proposed_tags: instance.proposedTags,
    accepts_webhook: instance.acceptsWebhook,
    metadata: instance.metadata,
    reasoners: instance.reasoners,
    skills: instance.skills,
    traffic_weight: instance.trafficWeight,
    lifecycle_status: instance.lifecycleStatus,
    status_reason: instance.statusReason,
    status_changed_at: instance.statusChangedAt,
    reported_status: instance.reportedStatus,
    admin_state: instance.adminState,
    routable: isRoutable(instance),
    last_heartbeat: instance.lastHeartbeat,
    last_seen_at: instance.lastSeenAt,
    observed_heartbeat_interval_seconds: seconds(instance.observedHeartbeatIntervalMs),
    lease_expires_at: instance.leaseExpiresAt,
    registered_at: instance.registeredAt,
    updated_at: instance.updatedAt,
    health: healthView(instance, now, staleThresholdMs),
  };
}

/**
 * The instance that speaks for a node in single-valued fields: the best status first, then the
 * most recent registration.
 */
export function primaryInstance(instances: NodeInstanceRecord[]): NodeInstanceRecord {
  return [...instances].sort(
    (a, b) =>
      compareStatus(a.lifecycleStatus, b.lifecycleStatus) || b.registeredAt.localeCompare(a.registeredAt),
  )[0]!;
}

/** The newest heartbeat among instances, or null. */
export function latestHeartbeat(instances: NodeInstanceRecord[]): string | null {
  let latest: string | null = null;
  for (const i of instances)
    if (i.lastHeartbeat && (!latest || i.lastHeartbeat > latest)) latest = i.lastHeartbeat;
  return latest;
}

/**
 * A node with all its instances (GET /api/v1/nodes/{id}, UI list). The top-level fields are the
 * primary instance's, so clients that know one instance per node (SDKs polling
 * `lifecycle_status`) read the node's best status; `instances` lists every version.
 */
export function nodeView(
  instances: NodeInstanceRecord[],
  now: number,
  staleThresholdMs: number,
): ResponseBody<typeof NodeSchema> {
  const primary = primaryInstance(instances);
  return {
    ...instanceView(primary, now, staleThresholdMs),
    last_heartbeat: latestHeartbeat(instances),
    instances: instances.map((i) => instanceView(i, now, staleThresholdMs)),
  };
}

/** GET /api/v1/nodes/{id}/status: lifecycle status, version, last heartbeat and health, per instance. */
export function statusView(
  instances: NodeInstanceRecord[],
  now: number,
  staleThresholdMs: number,
): ResponseBody<typeof NodeStatusSchema> {
  const primary = primaryInstance(instances);
  return {
    node_id: primary.nodeId,
    status: primary.lifecycleStatus as LifecycleStatus,
    lifecycle_status: primary.lifecycleStatus,
    version: primary.version,
    last_heartbeat: latestHeartbeat(instances),
    routable: instances.some(isRoutable),
    health: healthView(primary, now, staleThresholdMs),
    instances: instances.map((i) => ({
      version: i.version,
      status: i.lifecycleStatus,
      status_reason: i.statusReason,
      status_changed_at: i.statusChangedAt,
      reported_status: i.reportedStatus,
      admin_state: i.adminState,
      routable: isRoutable(i),
      traffic_weight: i.trafficWeight,
      last_heartbeat: i.lastHeartbeat,
      observed_heartbeat_interval_seconds: seconds(i.observedHeartbeatIntervalMs),
      lease_expires_at: i.leaseExpiresAt,
      health: healthView(i, now, staleThresholdMs),
    })),
  };
}

/** One entry of the bulk status answer. */
export function bulkEntry(instances: NodeInstanceRecord[]): ResponseBody<typeof BulkEntrySchema> {
  const primary = primaryInstance(instances);
  return {
    status: primary.lifecycleStatus,
    version: primary.version,
    last_heartbeat: latestHeartbeat(instances),
    instances: instances.map((i) => ({
      version: i.version,
      status: i.lifecycleStatus,
      last_heartbeat: i.lastHeartbeat,
    })),
  };
}
