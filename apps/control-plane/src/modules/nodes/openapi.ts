import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import {
  ActionAnswerSchema,
  BulkStatusAnswerSchema,
  FleetRefreshSchema,
  HeartbeatAnswerSchema,
  InstanceSchema,
  NodeListSchema,
  NodeSchema,
  NodeStatusSchema,
  RegisteredSchema,
  ShutdownAnswerSchema,
} from './responses.ts';
import {
  BulkStatusSchema,
  HeartbeatSchema,
  LifecycleReportSchema,
  NodeActionSchema,
  NodeIdSchema,
  NodeListQuerySchema,
  RefreshSchema,
  RegistrationSchema,
  StatusUpdateSchema,
} from './schemas.ts';

/*
 * The node API as routes.ts and event-routes.ts serve it: requests are the schemas the routes
 * parse with; the answers' schemas, the shapes views.ts builds, are in responses.ts.
 */

/** The path parameter of every /api/v1/nodes/{node_id}/... route. */
const NodePath = z.object({
  node_id: NodeIdSchema.meta({
    description: 'The node id. An id that could never be registered (a dot, 201 characters) answers 404.',
    example: 'hello-agent',
  }),
});

/** The query of GET /api/ui/v1/nodes/events (event-routes.ts keeps its schema to itself). */
const NodeEventsQuery = z.object({
  node_id: z.string().min(1).max(200).optional().meta({ description: "Only this node's events." }),
});

// ---- examples: what the server answers for hello-agent ----

const T0 = '2026-11-22T10:15:00.000Z';
const health = {
  consecutive_failures: 0,
  healthy_since: null,
  last_check_at: null,
  last_check_ok: null,
  last_check_status_code: null,
  last_check_error: null,
  last_check_duration_ms: null,
  heartbeat_stale: true,
  custom: null,
};
const registrationExample = {
  id: 'hello-agent',
  version: '1.0.0',
  base_url: 'http://127.0.0.1:9001',
  deployment_type: 'long_running',
  tags: ['demo'],
  metadata: { team: 'docs' },
  reasoners: [
    {
      id: 'summarize',
      description: 'Summarises text',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      tags: ['nlp'],
    },
  ],
  skills: [{ id: 'word_count', tags: ['text'] }],
};
const instance = {
  id: 'hello-agent',
  node_id: 'hello-agent',
  version: '1.0.0',
  base_url: 'http://127.0.0.1:9001',
  public_url: null,
  deployment_type: 'long_running',
  tags: ['demo'],
  proposed_tags: [],
  accepts_webhook: 'false',
  metadata: { team: 'docs' },
  reasoners: registrationExample.reasoners,
  skills: registrationExample.skills,
  traffic_weight: 100,
  lifecycle_status: 'starting',
  status_reason: 'registered',
  status_changed_at: T0,
  reported_status: null,
  admin_state: 'active',
  routable: false,
  last_heartbeat: null,
  last_seen_at: T0,
  observed_heartbeat_interval_seconds: null,
  lease_expires_at: '2026-11-22T10:16:30.000Z',
  registered_at: T0,
  updated_at: T0,
  health,
};
/** A node in the UI list: functions summarised unless include_schemas=true. */
const listedInstance = {
  ...instance,
  reasoners: [{ id: 'summarize', description: 'Summarises text', tags: ['nlp'] }],
};
const statusExample = {
  node_id: 'hello-agent',
  status: 'ready',
  lifecycle_status: 'ready',
  version: '1.0.0',
  last_heartbeat: '2026-11-22T10:15:05.000Z',
  routable: true,
  health: { ...health, heartbeat_stale: false },
  instances: [
    {
      version: '1.0.0',
      status: 'ready',
      status_reason: 'agent_reported',
      status_changed_at: '2026-11-22T10:15:05.000Z',
      reported_status: 'ready',
      admin_state: 'active',
      routable: true,
      traffic_weight: 100,
      last_heartbeat: '2026-11-22T10:15:05.000Z',
      observed_heartbeat_interval_seconds: null,
      lease_expires_at: '2026-11-22T10:16:35.000Z',
      health: { ...health, heartbeat_stale: false },
    },
  ],
};
const summaryExample = {
  status: 'ready',
  version: '1.0.0',
  last_heartbeat: '2026-11-22T10:15:05.000Z',
  instances: [{ version: '1.0.0', status: 'ready', last_heartbeat: '2026-11-22T10:15:05.000Z' }],
};

// ---- problems ----

const REGISTRATION_LIMIT = 1024 * 1024;
const HEARTBEAT_LIMIT = 64 * 1024;
const STATUS_LIMIT = 256 * 1024;
const BULK_LIMIT = 512 * 1024;
const ACTION_LIMIT = 16 * 1024;

const unknownNode: ProblemCase = {
  code: 'not_found',
  when: 'The node is not registered (or has no instance with the version the body names).',
  detail: 'Node "hello-agent" is not registered. Register it with POST /api/v1/nodes/register.',
};

function invalidField(field: string, message: string): ProblemCase {
  return {
    code: 'invalid_request',
    when: 'A member of the body is invalid; `errors` names each one.',
    detail: `The body is invalid: ${field}: ${message}`,
    extensions: { errors: [{ field, message }] },
  };
}

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

/** An operation on one node: its path parameter and its 404. */
function onNode(
  path: string,
  operation: ZodOpenApiOperationObject,
  problems: ProblemCase[] = [],
): ZodOpenApiOperationObject {
  return {
    tags: ['Nodes'],
    ...operation,
    requestParams: { ...operation.requestParams, path: NodePath },
    responses: {
      ...operation.responses,
      ...problemResponses(path.replace('{node_id}', 'hello-agent'), [...problems, unknownNode]),
    },
  };
}

function actionOperation(action: 'start' | 'stop' | 'shutdown'): ZodOpenApiOperationObject {
  const path = `/api/v1/nodes/{node_id}/${action}`;
  const what = {
    start: 'Undoes stop or shutdown: the instance goes back to `starting` and is routed again once ready.',
    stop: 'Takes the instance out of routing (admin state `stopped`) until `start`.',
    shutdown:
      'Stops routing at once, waits for active executions to drain, POSTs `{base_url}/_internal/shutdown` to the agent (best effort), marks the instance offline and releases its lease.',
  }[action];
  return onNode(
    path,
    {
      operationId: `${action}Node`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} a node`,
      description: `${what} Applies to every instance, or to the one \`version\` names.`,
      requestBody: {
        required: false,
        content: { 'application/json': { schema: NodeActionSchema, example: { reason: 'maintenance' } } },
      },
      responses: {
        '200': {
          description: 'The instances acted on.',
          ...(action === 'shutdown'
            ? json(ShutdownAnswerSchema, {
                node_id: 'hello-agent',
                action: 'shutdown',
                instances: [
                  {
                    version: '1.0.0',
                    drained: true,
                    active_executions: 0,
                    drain_waited_ms: 0,
                    notified: true,
                    notify_error: null,
                    lifecycle_status: 'offline',
                    status_reason: 'shutdown',
                    admin_state: 'shutdown',
                    lease_expires_at: null,
                  },
                ],
              })
            : json(ActionAnswerSchema, {
                node_id: 'hello-agent',
                action,
                instances: [
                  {
                    ...instance,
                    admin_state: action === 'stop' ? 'stopped' : 'active',
                    status_reason: action === 'stop' ? 'stopped' : 'started',
                  },
                ],
              })),
        },
      },
    },
    jsonBodyProblems(
      ACTION_LIMIT,
      invalidField('drain_timeout_ms', 'Too big: expected number to be <=3600000'),
    ),
  );
}

const registerOperation = (operationId: string): ZodOpenApiOperationObject => ({
  operationId,
  tags: ['Nodes'],
  summary: 'Register a node',
  description:
    'Registers (or re-registers) one instance of a node: its id, version, base URL and functions. Unknown members are ignored; `null` for an optional member counts as absent. The first registration answers 201, a re-registration of the same id and version 200.',
  requestBody: {
    required: true,
    content: { 'application/json': { schema: RegistrationSchema, example: registrationExample } },
  },
  responses: {
    '201': {
      description: 'Registered: a new instance, in `starting`.',
      headers: z.object({ Location: z.string().meta({ description: '`/api/v1/nodes/{node_id}`' }) }),
      ...json(RegisteredSchema, { ...instance, heartbeat_ttl_seconds: 15, heartbeat_interval_seconds: 5 }),
    },
    '200': {
      description: 'Registered again: the instance was known and is updated.',
      headers: z.object({ Location: z.string() }),
      ...json(RegisteredSchema, { ...instance, heartbeat_ttl_seconds: 15, heartbeat_interval_seconds: 5 }),
    },
    ...problemResponses(
      '/api/v1/nodes/register',
      jsonBodyProblems(
        REGISTRATION_LIMIT,
        invalidField('reasoners[0].id', 'use letters, digits, "_" and "-"'),
      ),
    ),
  },
});

/** The node feature's routes: registration, presence, status, lifecycle actions, the UI list and events. */
export const nodesOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/nodes/register': { post: registerOperation('registerNode') },
  '/api/v1/nodes': {
    post: { ...registerOperation('registerNodeAlias'), summary: 'Register a node (alias)' },
  },
  '/api/v1/nodes/status/bulk': {
    post: {
      operationId: 'bulkNodeStatus',
      tags: ['Nodes'],
      summary: 'Status of several nodes',
      description: 'One entry per requested id; an id that is not registered gets `error: "not_found"`.',
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: BulkStatusSchema, example: { node_ids: ['hello-agent', 'missing'] } },
        },
      },
      responses: {
        '200': {
          description: 'By node id.',
          ...json(BulkStatusAnswerSchema, {
            'hello-agent': summaryExample,
            missing: { status: null, version: null, last_heartbeat: null, error: 'not_found' },
          }),
        },
        ...problemResponses(
          '/api/v1/nodes/status/bulk',
          jsonBodyProblems(
            BULK_LIMIT,
            invalidField('node_ids', 'Too small: expected array to have >=1 items'),
          ),
        ),
      },
    },
  },
  '/api/v1/nodes/status/refresh': {
    post: {
      operationId: 'refreshFleet',
      tags: ['Nodes'],
      summary: 'Reconcile the whole fleet now',
      description:
        "Expires, evicts and probes as the background loops would, then answers every node's status.",
      requestBody: {
        required: false,
        content: { 'application/json': { schema: RefreshSchema, example: {} } },
      },
      responses: {
        '200': {
          description: 'What the reconciliation did, and the fleet after it.',
          ...json(FleetRefreshSchema, {
            reconciled_at: T0,
            checked: 1,
            expired: [],
            evicted: [],
            timed_out: [],
            nodes: { 'hello-agent': summaryExample },
          }),
        },
        ...problemResponses(
          '/api/v1/nodes/status/refresh',
          jsonBodyProblems(
            ACTION_LIMIT,
            invalidField('(body)', 'Invalid input: expected object, received array'),
          ),
        ),
      },
    },
  },
  '/api/v1/nodes/{node_id}': {
    get: onNode('/api/v1/nodes/{node_id}', {
      operationId: 'getNode',
      summary: 'A node with all its instances',
      responses: {
        '200': { description: 'The node.', ...json(NodeSchema, { ...instance, instances: [instance] }) },
      },
    }),
  },
  '/api/v1/nodes/{node_id}/heartbeat': {
    post: onNode(
      '/api/v1/nodes/{node_id}/heartbeat',
      {
        operationId: 'heartbeatNode',
        summary: 'Heartbeat',
        description:
          'Renews the lease. Every member is optional: an empty body, or none, is a plain sign of life. Unknown members are ignored.',
        requestBody: {
          required: false,
          content: {
            'application/json': {
              schema: HeartbeatSchema,
              example: { status: 'ready', version: '1.0.0', timestamp: '2026-11-22T10:15:05.000Z' },
            },
          },
        },
        responses: {
          '200': {
            description: 'The renewed lease.',
            ...json(HeartbeatAnswerSchema, {
              node_id: 'hello-agent',
              version: '1.0.0',
              status: 'ready',
              lifecycle_status: 'ready',
              last_heartbeat: '2026-11-22T10:15:05.000Z',
              lease_expires_at: '2026-11-22T10:16:35.000Z',
              heartbeat_ttl_seconds: 15,
              lease_ttl_seconds: 90,
              observed_heartbeat_interval_seconds: null,
            }),
          },
        },
      },
      jsonBodyProblems(
        HEARTBEAT_LIMIT,
        invalidField('status', 'Invalid option: expected one of "starting"|"ready"|"degraded"|"offline"'),
      ),
    ),
  },
  '/api/v1/nodes/{node_id}/status': {
    get: onNode('/api/v1/nodes/{node_id}/status', {
      operationId: 'getNodeStatus',
      summary: 'Lifecycle state, version, last heartbeat and health',
      description:
        'Reuses health results younger than `node_lifecycle.status_cache_ttl`; older ones are probed again.',
      responses: { '200': { description: "The node's status.", ...json(NodeStatusSchema, statusExample) } },
    }),
    patch: onNode(
      '/api/v1/nodes/{node_id}/status',
      {
        operationId: 'updateNodeStatus',
        summary: 'Heartbeat with a state and custom health data',
        description:
          'A heartbeat that also carries the state (`status`, or `state`) and custom health data, shown by GET status.',
        requestBody: {
          required: false,
          content: {
            'application/json': {
              schema: StatusUpdateSchema,
              example: { state: 'ready', version: '1.0.0', health: { queue: 0 } },
            },
          },
        },
        responses: {
          '200': {
            description: "The node's status after the update.",
            ...json(NodeStatusSchema, {
              ...statusExample,
              health: { ...statusExample.health, custom: { queue: 0 } },
            }),
          },
        },
      },
      jsonBodyProblems(STATUS_LIMIT, invalidField('state', 'status and state disagree; send one of them')),
    ),
  },
  '/api/v1/nodes/{node_id}/status/refresh': {
    post: onNode(
      '/api/v1/nodes/{node_id}/status/refresh',
      {
        operationId: 'refreshNodeStatus',
        summary: 'Reconcile one node now',
        description: "Probes the node's health at once, bypassing the status cache.",
        requestBody: {
          required: false,
          content: { 'application/json': { schema: RefreshSchema, example: {} } },
        },
        responses: { '200': { description: "The node's status.", ...json(NodeStatusSchema, statusExample) } },
      },
      jsonBodyProblems(
        ACTION_LIMIT,
        invalidField('(body)', 'Invalid input: expected object, received array'),
      ),
    ),
  },
  '/api/v1/nodes/{node_id}/lifecycle/status': {
    post: onNode(
      '/api/v1/nodes/{node_id}/lifecycle/status',
      {
        operationId: 'reportNodeLifecycle',
        summary: 'The agent reports its lifecycle state',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: LifecycleReportSchema,
              example: { status: 'ready', version: '1.0.0', reason: 'initialised' },
            },
          },
        },
        responses: {
          '200': {
            description: 'The instance after the report.',
            ...json(InstanceSchema, {
              ...instance,
              lifecycle_status: 'ready',
              reported_status: 'ready',
              status_reason: 'agent_reported',
              routable: true,
            }),
          },
        },
      },
      jsonBodyProblems(
        HEARTBEAT_LIMIT,
        invalidField('status', 'Invalid option: expected one of "starting"|"ready"|"degraded"|"offline"'),
      ),
    ),
  },
  '/api/v1/nodes/{node_id}/start': { post: actionOperation('start') },
  '/api/v1/nodes/{node_id}/stop': { post: actionOperation('stop') },
  '/api/v1/nodes/{node_id}/shutdown': { post: actionOperation('shutdown') },
  '/api/ui/v1/nodes': {
    get: {
      operationId: 'listNodes',
      tags: ['Nodes'],
      summary: "List registered nodes (the UI's data API)",
      requestParams: { query: NodeListQuerySchema },
      responses: {
        '200': {
          description:
            'One page of matching nodes, in node id order, with their instances: at most `limit` nodes and about 4 MiB (a larger node comes alone); continue with `pagination.next_offset`.',
          ...json(NodeListSchema, {
            nodes: [{ ...listedInstance, instances: [listedInstance] }],
            total: 1,
            pagination: { limit: 50, offset: 0, has_more: false, next_offset: null },
          }),
        },
        ...problemResponses('/api/ui/v1/nodes', [
          {
            code: 'invalid_request',
            when: 'A query parameter is invalid.',
            detail:
              'The query is invalid: status: Invalid option: expected one of "starting"|"ready"|"degraded"|"offline"',
            extensions: {
              errors: [
                {
                  field: 'status',
                  message: 'Invalid option: expected one of "starting"|"ready"|"degraded"|"offline"',
                },
              ],
            },
          },
        ]),
      },
    },
  },
  '/api/ui/v1/nodes/events': {
    get: {
      operationId: 'streamNodeEvents',
      tags: ['Nodes'],
      summary: 'Node events as Server-Sent Events',
      description:
        'A stream of `node.registered`, `node.status_changed` and `node.removed` events, each a frame with an `event:` name and the event as JSON on one `data:` line; keep-alive comments every 15 s. HEAD answers the headers without opening a stream.',
      requestParams: { query: NodeEventsQuery },
      responses: {
        '200': {
          description: 'The event stream; it stays open until the client or a server shutdown ends it.',
          content: {
            'text/event-stream': {
              schema: z.string(),
              example:
                'retry: 3000\n: connected\n\nevent: node.registered\ndata: {"type":"node.registered","node_id":"hello-agent","version":"1.0.0","timestamp":"2026-11-22T10:15:00.000Z"}\n\n',
            },
          },
        },
        ...problemResponses('/api/ui/v1/nodes/events', [
          {
            code: 'invalid_request',
            when: 'node_id is empty or over 200 characters.',
            detail: 'The query is invalid: node_id: Too small: expected string to have >=1 characters',
            extensions: {
              errors: [{ field: 'node_id', message: 'Too small: expected string to have >=1 characters' }],
            },
          },
        ]),
      },
    },
  },
};
