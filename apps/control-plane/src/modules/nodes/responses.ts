import { z } from 'zod';
import { LIFECYCLE_STATUSES, STATUS_REASONS } from './schemas.ts';

/*
 * What the nodes API answers: the shapes views.ts builds, as the OpenAPI document describes them.
 * Response objects list the members clients rely on and allow more, so a member added to a view
 * must be added here too (the views' return types say so); one renamed or removed fails to compile.
 */

const Timestamp = z.iso.datetime();

const LifecycleStatus = z.enum(LIFECYCLE_STATUSES);

const AdminState = z.enum(['active', 'stopped', 'shutdown']).meta({
  description: 'Operator intent: `stopped` and `shutdown` keep an instance out of routing.',
});

/** Registration takes booleans too; records always hold the string. */
const AcceptsWebhookView = z.enum(['true', 'false', 'warn']).meta({
  description:
    'Whether webhook triggers may target it: `"true"`, `"false"` or `"warn"` (allowed, to be checked). Booleans sent at registration are stored as `"true"`/`"false"`.',
});

const FunctionRecordSchema = z
  .looseObject({
    id: z.string(),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()).optional(),
    output_schema: z.record(z.string(), z.unknown()).optional(),
    tags: z.array(z.string()),
    proposed_tags: z.array(z.string()).optional(),
    accepts_webhook: AcceptsWebhookView.optional(),
    memory_config: z.record(z.string(), z.unknown()).optional(),
    examples: z.array(z.unknown()).optional(),
  })
  .meta({
    id: 'RegisteredFunction',
    description:
      'A reasoner or skill as the agent registered it. In GET /api/ui/v1/nodes without include_schemas, only id, description, tags, proposed_tags and accepts_webhook.',
  });

export const HealthViewSchema = z
  .object({
    consecutive_failures: z.int().min(0),
    healthy_since: Timestamp.nullable(),
    last_check_at: Timestamp.nullable(),
    last_check_ok: z.boolean().nullable(),
    last_check_status_code: z.int().nullable(),
    last_check_error: z.string().nullable(),
    last_check_duration_ms: z.number().nullable(),
    heartbeat_stale: z.boolean(),
    custom: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'Custom health data from the last PATCH status.' }),
  })
  .meta({ id: 'NodeHealth', description: "The health monitor's view of one instance." });

export const InstanceSchema = z
  .looseObject({
    id: z.string(),
    node_id: z.string(),
    version: z.string(),
    base_url: z.string(),
    public_url: z.string().nullable(),
    deployment_type: z.enum(['long_running', 'serverless']),
    tags: z.array(z.string()),
    proposed_tags: z.array(z.string()),
    accepts_webhook: AcceptsWebhookView,
    metadata: z.record(z.string(), z.unknown()),
    reasoners: z.array(FunctionRecordSchema),
    skills: z.array(FunctionRecordSchema),
    traffic_weight: z.number(),
    lifecycle_status: LifecycleStatus,
    status_reason: z.enum(STATUS_REASONS),
    status_changed_at: Timestamp,
    reported_status: LifecycleStatus.nullable(),
    admin_state: AdminState,
    routable: z.boolean(),
    last_heartbeat: Timestamp.nullable(),
    last_seen_at: Timestamp,
    observed_heartbeat_interval_seconds: z.number().nullable().meta({
      description: 'The heartbeat rhythm presence has observed; null until a second heartbeat.',
    }),
    lease_expires_at: Timestamp.nullable(),
    registered_at: Timestamp,
    updated_at: Timestamp,
    health: HealthViewSchema,
  })
  .meta({ id: 'NodeInstance', description: 'One registered instance (node id and version) of a node.' });

export const RegisteredSchema = InstanceSchema.extend({
  heartbeat_ttl_seconds: z.number().meta({ description: 'The configured heartbeat TTL.' }),
  heartbeat_interval_seconds: z
    .int()
    .meta({ description: 'A heartbeat interval that stays inside the TTL.' }),
}).meta({ id: 'NodeRegistered' });

export const NodeSchema = InstanceSchema.extend({
  instances: z.array(InstanceSchema).meta({ description: 'Every registered version.' }),
}).meta({
  id: 'Node',
  description: 'A node: the top-level members are those of its best instance; `instances` lists all.',
});

const InstanceStatusSchema = z.looseObject({
  version: z.string(),
  status: LifecycleStatus,
  status_reason: z.enum(STATUS_REASONS),
  status_changed_at: Timestamp,
  reported_status: LifecycleStatus.nullable(),
  admin_state: AdminState,
  routable: z.boolean(),
  traffic_weight: z.number(),
  last_heartbeat: Timestamp.nullable(),
  observed_heartbeat_interval_seconds: z.number().nullable(),
  lease_expires_at: Timestamp.nullable(),
  health: HealthViewSchema,
});

export const NodeStatusSchema = z
  .looseObject({
    node_id: z.string(),
    status: LifecycleStatus,
    lifecycle_status: LifecycleStatus,
    version: z.string(),
    last_heartbeat: Timestamp.nullable(),
    routable: z.boolean(),
    health: HealthViewSchema,
    instances: z.array(InstanceStatusSchema),
  })
  .meta({ id: 'NodeStatus' });

export const BulkEntrySchema = z
  .looseObject({
    status: LifecycleStatus,
    version: z.string(),
    last_heartbeat: Timestamp.nullable(),
    instances: z.array(
      z.looseObject({ version: z.string(), status: LifecycleStatus, last_heartbeat: Timestamp.nullable() }),
    ),
  })
  .meta({ id: 'NodeStatusSummary' });

const BulkMissingSchema = z.object({
  status: z.null(),
  version: z.null(),
  last_heartbeat: z.null(),
  error: z.literal('not_found'),
});

export const HeartbeatAnswerSchema = z
  .looseObject({
    node_id: z.string(),
    version: z.string(),
    status: LifecycleStatus,
    lifecycle_status: LifecycleStatus,
    last_heartbeat: Timestamp.nullable(),
    lease_expires_at: Timestamp.nullable(),
    heartbeat_ttl_seconds: z.number().meta({ description: 'The configured TTL: the floor of every lease.' }),
    lease_ttl_seconds: z.number().nullable().meta({
      description:
        'How long this heartbeat keeps the instance online: 3 x its observed interval, at least the TTL, at most node_lifecycle.max_heartbeat_ttl.',
    }),
    observed_heartbeat_interval_seconds: z.number().nullable(),
  })
  .meta({ id: 'HeartbeatAnswer' });

const NodeKey = z.object({ node_id: z.string(), version: z.string() });

export const FleetRefreshSchema = z
  .looseObject({
    reconciled_at: Timestamp,
    checked: z.int().min(0).meta({ description: 'Health probes run.' }),
    expired: z.array(NodeKey.extend({ old_status: LifecycleStatus })),
    evicted: z.array(NodeKey),
    timed_out: z.array(NodeKey),
    nodes: z.record(z.string(), BulkEntrySchema),
  })
  .meta({ id: 'FleetRefresh' });

export const ActionAnswerSchema = z.looseObject({
  node_id: z.string(),
  action: z.enum(['start', 'stop']),
  instances: z.array(InstanceSchema),
});

export const ShutdownAnswerSchema = z.looseObject({
  node_id: z.string(),
  action: z.literal('shutdown'),
  instances: z.array(
    z.looseObject({
      version: z.string(),
      drained: z.boolean(),
      active_executions: z.int().min(0),
      drain_waited_ms: z.number().min(0),
      notified: z.boolean(),
      notify_error: z.string().nullable(),
      lifecycle_status: LifecycleStatus,
      status_reason: z.enum(STATUS_REASONS),
      admin_state: AdminState,
      lease_expires_at: Timestamp.nullable(),
    }),
  ),
});

export const NodeListSchema = z.looseObject({
  nodes: z.array(NodeSchema),
  total: z.int().min(0).meta({ description: 'Nodes matching the filters, on every page.' }),
  pagination: z.object({
    limit: z.int(),
    offset: z.int(),
    has_more: z.boolean(),
    next_offset: z.int().nullable().meta({ description: 'The offset of the next page; null on the last.' }),
  }),
});

/** The bulk status answer: by node id, its summary or `not_found`. */
export const BulkStatusAnswerSchema = z.record(z.string(), z.union([BulkEntrySchema, BulkMissingSchema]));
