import { z } from 'zod';
import { MAX_TRAFFIC_WEIGHT } from '../nodes/index.ts';

/*
 * What the connector API answers: the shapes views.ts builds, as the OpenAPI document describes
 * them. Objects list the members clients rely on and allow more.
 */

const Timestamp = z.iso.datetime();

const Status = z.enum(['starting', 'ready', 'degraded', 'offline']);

const AdminState = z.enum(['active', 'stopped', 'shutdown']);

const FunctionType = z.enum(['reasoner', 'skill']);

const Weight = z.int().min(0).max(MAX_TRAFFIC_WEIGHT);

const Share = z.number().min(0).max(1).meta({
  description:
    'The share of new executions this version gets now (0 to 1): its weight over the weights of the routable versions in scope; 0 when it is not routable.',
});

export const ReasonerSummarySchema = z
  .looseObject({
    id: z
      .string()
      .meta({ description: 'The execution target: `<node_id>.<name>` or `<node_id>.skill:<name>`.' }),
    type: FunctionType,
    name: z.string(),
    node_id: z.string(),
    group_id: z.string().meta({ description: 'The group: the node id.' }),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    status: Status.meta({ description: 'The best status among the versions serving it.' }),
    routable: z.boolean().meta({ description: 'Whether a new execution of it would be routed now.' }),
    versions: z.array(z.string()).meta({ description: 'The versions whose registration lists it.' }),
    total_weight: z.int().min(0),
    routable_weight: z.int().min(0),
  })
  .meta({
    id: 'ConnectorReasonerSummary',
    description: 'A reasoner or skill of a node (lists leave out schemas).',
  });

export const ReasonerSchema = ReasonerSummarySchema.extend({
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  output_schema: z.record(z.string(), z.unknown()).nullable(),
  examples: z.array(z.unknown()),
  described_by_version: z.string().meta({
    description:
      'The version whose registration the description and schemas come from (best status, then newest).',
  }),
}).meta({ id: 'ConnectorReasoner', description: 'A reasoner or skill with its schemas.' });

const HealthSchema = z.looseObject({
  consecutive_failures: z.int().min(0),
  healthy_since: Timestamp.nullable(),
  last_check_at: Timestamp.nullable(),
  last_check_ok: z.boolean().nullable(),
  last_check_status_code: z.int().nullable(),
  last_check_error: z.string().nullable(),
  last_check_duration_ms: z.number().nullable(),
  heartbeat_stale: z.boolean(),
  custom: z.record(z.string(), z.unknown()).nullable(),
});

export const VersionSchema = z
  .looseObject({
    node_id: z.string(),
    version: z.string(),
    traffic_weight: Weight,
    traffic_share: Share,
    routable: z.boolean(),
    status: Status,
    status_reason: z.string(),
    status_changed_at: Timestamp,
    admin_state: AdminState,
    base_url: z.string(),
    last_heartbeat: Timestamp.nullable(),
    registered_at: Timestamp,
    updated_at: Timestamp,
    functions: z.array(z.string()).meta({ description: 'Ids of the functions this version registered.' }),
    health: HealthSchema,
  })
  .meta({ id: 'ConnectorVersion', description: 'One version (instance) of a node.' });

export const VersionListSchema = z
  .looseObject({
    id: z.string().meta({ description: 'The `:id` of the path, canonical: a node id or a function target.' }),
    type: z.enum(['node', 'reasoner', 'skill']),
    node_id: z.string(),
    total_weight: z.int().min(0),
    routable_weight: z.int().min(0),
    versions: z.array(VersionSchema),
  })
  .meta({ id: 'ConnectorVersions' });

export const GroupSchema = z
  .looseObject({
    id: z.string(),
    node_id: z.string(),
    status: Status,
    routable: z.boolean(),
    total_weight: z.int().min(0),
    routable_weight: z.int().min(0),
    functions: z.array(z.string()),
    versions: z.array(
      z.looseObject({
        version: z.string(),
        status: Status,
        admin_state: AdminState,
        routable: z.boolean(),
        traffic_weight: Weight,
        traffic_share: Share,
        last_heartbeat: Timestamp.nullable(),
        functions: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'ConnectorGroup', description: 'A group: one node id with all its versions.' });

export const ManifestSchema = z
  .looseObject({
    service: z.string(),
    version: z.string(),
    api_version: z.literal('v1'),
    base_path: z.string(),
    capabilities: z.array(z.string()).meta({ description: 'What the token may do on this deployment.' }),
    endpoints: z.array(
      z.looseObject({
        method: z.string(),
        path: z.string(),
        capability: z.string().nullable(),
        enabled: z.boolean(),
      }),
    ),
  })
  .meta({ id: 'ConnectorManifest' });

export const RestartSchema = z
  .looseObject({
    node_id: z.string(),
    version: z.string(),
    accepted: z.literal(true),
    agent_status: z
      .int()
      .meta({ description: "The agent's 2xx answer to POST {base_url}/_internal/restart." }),
    status: Status,
    status_reason: z.string(),
    admin_state: AdminState,
  })
  .meta({ id: 'ConnectorRestart' });

const NextCursor = z.string().nullable().meta({
  description: 'Pass as `cursor` for the next page; null on the last.',
});

/** One page of GET /reasoners (listings.ts writes it as JSON text). */
export const ReasonerPageSchema = z.object({
  total: z.int().min(0).meta({ description: 'Functions in the whole list.' }),
  reasoners: z.array(ReasonerSummarySchema),
  next_cursor: NextCursor,
});

/** One page of GET /groups (listings.ts writes it as JSON text). */
export const GroupPageSchema = z.object({
  total: z.int().min(0).meta({ description: 'Groups in the whole list.' }),
  groups: z.array(GroupSchema),
  next_cursor: NextCursor,
});
