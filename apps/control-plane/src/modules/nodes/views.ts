import { toIso } from '@switchyard/shared';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { compareStatus, isRoutable } from './lifecycle.ts';
import type { SweepReport } from './presence.ts';
import type {
  ActionAnswerSchema,
  BulkEntrySchema,
  BulkStatusAnswerSchema,
  FleetRefreshSchema,
  HealthViewSchema,
  HeartbeatAnswerSchema,
  InstanceSchema,
  NodeListSchema,
  NodeSchema,
  NodeStatusSchema,
  RegisteredSchema,
  ShutdownAnswerSchema,
} from './responses.ts';
import type { LifecycleStatus, NodeInstanceRecord } from './schemas.ts';
import type { ShutdownOutcome } from './service.ts';

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

/** The bulk status answer: each requested id with its summary, or `not_found`. */
export function bulkStatusView(
  nodeIds: string[],
  found: Map<string, NodeInstanceRecord[]>,
): ResponseBody<typeof BulkStatusAnswerSchema> {
  // Built with fromEntries (own data properties), not `body[id] = ...`: assigning to
  // "__proto__" would set the prototype instead and drop that id from the answer.
  return Object.fromEntries(
    nodeIds.map((id): [string, ResponseBody<typeof BulkStatusAnswerSchema>[string]] => {
      const instances = found.get(id);
      return [
        id,
        instances
          ? bulkEntry(instances)
          : { status: null, version: null, last_heartbeat: null, error: 'not_found' },
      ];
    }),
  );
}

/** The register answer: the instance, and the heartbeat rhythm that keeps it registered. */
export function registeredView(
  instance: NodeInstanceRecord,
  now: number,
  staleThresholdMs: number,
  heartbeatTtlMs: number,
): ResponseBody<typeof RegisteredSchema> {
  return {
    ...instanceView(instance, now, staleThresholdMs),
    // Agents may heartbeat more often than their SDK default; this is the rate that keeps
    // them inside the TTL with two heartbeats to spare.
    heartbeat_ttl_seconds: heartbeatTtlMs / 1000,
    heartbeat_interval_seconds: Math.max(1, Math.floor(heartbeatTtlMs / 3000)),
  };
}

/** The heartbeat answer: the renewed lease. */
export function heartbeatView(
  instance: NodeInstanceRecord,
  heartbeatTtlMs: number,
): ResponseBody<typeof HeartbeatAnswerSchema> {
  return {
    node_id: instance.nodeId,
    version: instance.version,
    status: instance.lifecycleStatus,
    lifecycle_status: instance.lifecycleStatus,
    last_heartbeat: instance.lastHeartbeat,
    lease_expires_at: instance.leaseExpiresAt,
    // The configured floor, then what this heartbeat earned: presence adapts the lease to the
    // node's own rhythm (lifecycle.leaseTtlMs).
    heartbeat_ttl_seconds: heartbeatTtlMs / 1000,
    lease_ttl_seconds:
      instance.leaseExpiresAt && instance.lastHeartbeat
        ? (Date.parse(instance.leaseExpiresAt) - Date.parse(instance.lastHeartbeat)) / 1000
        : null,
    observed_heartbeat_interval_seconds: seconds(instance.observedHeartbeatIntervalMs),
  };
}

/** POST /api/v1/nodes/status/refresh: what the reconciliation did, and the fleet after it. */
export function fleetRefreshView(
  refresh: { sweep: SweepReport; checked: number; instances: NodeInstanceRecord[] },
  now: number,
): ResponseBody<typeof FleetRefreshSchema> {
  const { sweep } = refresh;
  return {
    reconciled_at: toIso(now),
    checked: refresh.checked,
    expired: sweep.expired.map((k) => ({ node_id: k.nodeId, version: k.version, old_status: k.oldStatus })),
    evicted: sweep.evicted.map((k) => ({ node_id: k.nodeId, version: k.version })),
    timed_out: sweep.timedOut.map((k) => ({ node_id: k.nodeId, version: k.version })),
    nodes: Object.fromEntries([...groupByNode(refresh.instances)].map(([id, list]) => [id, bulkEntry(list)])),
  };
}

/** The start and stop answers: the instances acted on, as they now are. */
export function actionView(
  nodeId: string,
  action: 'start' | 'stop',
  instances: NodeInstanceRecord[],
  now: number,
  staleThresholdMs: number,
): ResponseBody<typeof ActionAnswerSchema> {
  return { node_id: nodeId, action, instances: instances.map((i) => instanceView(i, now, staleThresholdMs)) };
}

/** The shutdown answer: how each instance drained and whether its agent took the notice. */
export function shutdownView(
  nodeId: string,
  outcomes: ShutdownOutcome[],
): ResponseBody<typeof ShutdownAnswerSchema> {
  return {
    node_id: nodeId,
    action: 'shutdown',
    instances: outcomes.map(({ record, ...outcome }) => ({
      version: outcome.version,
      drained: outcome.drained,
      active_executions: outcome.active_executions,
      drain_waited_ms: outcome.drain_waited_ms,
      notified: outcome.notified,
      notify_error: outcome.notify_error,
      lifecycle_status: record.lifecycleStatus,
      status_reason: record.statusReason,
      admin_state: record.adminState,
      lease_expires_at: record.leaseExpiresAt,
    })),
  };
}

/** One page of GET /api/ui/v1/nodes: `nodes` as many as fitted, and where the next page starts. */
export function nodeListView(
  nodes: ResponseBody<typeof NodeSchema>[],
  total: number,
  page: { limit: number; offset: number },
): ResponseBody<typeof NodeListSchema> {
  const hasMore = page.offset + nodes.length < total;
  return {
    nodes,
    total,
    pagination: {
      limit: page.limit,
      offset: page.offset,
      has_more: hasMore,
      next_offset: hasMore ? page.offset + nodes.length : null,
    },
  };
}
