import { fieldPath } from '@switchyard/shared';
import { z } from 'zod';
import { findUnstorable } from '../../platform/json-storable.ts';
import { nullable, nullableWithDefault } from '../../platform/nullable.ts';

/** Lifecycle states of a node instance (content/concepts/node-lifecycle.md). */
export const LIFECYCLE_STATUSES = ['starting', 'ready', 'degraded', 'offline'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

/** Refuses unstorable strings anywhere in a body, naming where, instead of failing in the database. */
function refuseUnstorable(value: unknown, ctx: z.RefinementCtx): void {
  const path = findUnstorable(value);
  if (path)
    ctx.addIssue({
      code: 'custom',
      message:
        'strings may not contain the NUL character (U+0000) or a lone UTF-16 surrogate (U+D800 to U+DFFF)',
      path,
    });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A JSON object (metadata, custom health, function schemas), passed through as parsed instead of
 * rebuilt. zod's record rebuilds the object and silently drops a `"__proto__"` key on the way,
 * before any key check sees it; JSON.parse keeps that key as an ordinary own property, and so do
 * jsonb and JSON.stringify, so passing the object through keeps every key the agent sent.
 */
const JsonObject = z
  .custom<Record<string, unknown>>(isPlainObject, { message: 'Invalid input: expected object' })
  .meta({ type: 'object', additionalProperties: {} });

const TagList = z.array(z.string().max(100)).max(100);

/**
 * Whether a function may be the target of webhook triggers: `"true"`, `"false"` or `"warn"` (the
 * SDKs' default: allowed, but an operator should check). The platform's SDKs send the strings;
 * booleans are accepted too and stored as the same strings, so every record holds one form.
 */
export const AcceptsWebhookSchema = z
  .union([z.enum(['true', 'false', 'warn']), z.boolean()])
  .transform((value) => (typeof value === 'boolean' ? (String(value) as 'true' | 'false') : value));
export type AcceptsWebhook = z.output<typeof AcceptsWebhookSchema>;
const Tags = nullableWithDefault(TagList, () => []);

/** A function id as agents register it: router prefixes arrive already joined as `<prefix>_<name>`. */
const FunctionId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/, 'use letters, digits, "_" and "-"');

/** One reasoner as an agent registers it (as SDKs send it: id, input/output schema, tags, ...). */
export const ReasonerSpecSchema = z.object({
  id: FunctionId,
  description: nullable(z.string().max(4000)),
  input_schema: nullable(JsonObject),
  output_schema: nullable(JsonObject),
  tags: Tags,
  /** Tags the function asks for (SDKs send them for approval); kept and shown, never matched. */
  proposed_tags: nullable(TagList),
  accepts_webhook: nullable(AcceptsWebhookSchema),
  memory_config: nullable(JsonObject),
  examples: nullable(z.array(z.unknown()).max(50)),
});
export type ReasonerSpec = z.infer<typeof ReasonerSpecSchema>;

/** One skill as an agent registers it: a reasoner's members without `memory_config`. */
export const SkillSpecSchema = ReasonerSpecSchema.omit({ memory_config: true });
export type SkillSpec = z.infer<typeof SkillSpecSchema>;

/**
 * Refuses a registration that names one function id twice, as two reasoners, two skills, or a
 * reasoner and a skill: the target `node.id` (or the function listed by discovery) would be
 * ambiguous, and the later one would silently shadow the first.
 */
function refuseDuplicateFunctions(
  registration: { reasoners: ReadonlyArray<{ id: string }>; skills: ReadonlyArray<{ id: string }> },
  ctx: z.RefinementCtx,
): void {
  const first = new Map<string, string>();
  for (const kind of ['reasoners', 'skills'] as const) {
    for (const [index, fn] of registration[kind].entries()) {
      const here = fieldPath([kind, index, 'id']);
      const earlier = first.get(fn.id);
      if (earlier === undefined) first.set(fn.id, here);
      else
        ctx.addIssue({
          code: 'custom',
          message: `function id "${fn.id}" is already used by ${earlier}; each reasoner and skill needs its own id`,
          path: [kind, index, 'id'],
        });
    }
  }
}

/**
 * Where an agent listens: an `http` or `https` origin plus an optional path, nothing else.
 * Agents name their own address (they live on private networks, so any host is allowed), but a
 * query or fragment would end up in front of every path the control plane appends
 * (`/admin?x=1/health`), and credentials would be echoed by status and discovery answers.
 */
const AgentUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .superRefine((value, ctx) => {
    // zod runs refinements even after z.url() has refused the value (a port over 65535, a space
    // in the host, an IPv6 zone id): that issue is already reported, and `new URL` would throw.
    if (!URL.canParse(value)) return;
    const url = new URL(value);
    const refuse = (what: string) =>
      ctx.addIssue({ code: 'custom', message: `use an origin and an optional path only: no ${what}` });
    if (url.username || url.password) refuse('credentials (user:password@)');
    // `?` and `#` with nothing after them leave search and hash empty but still end the path.
    if (url.search || value.includes('?')) refuse('query (?...)');
    if (url.hash || value.includes('#')) refuse('fragment (#...)');
    // The URL API resolves `.` and `..` (also spelled %2e) away, so the path the control plane
    // would call is not the one stored and shown by status and discovery (`/a/%2e%2e/admin` is
    // called as `/admin`); agentUrl refuses such segments for the same reason.
    const path = value.replace(/^[^:]*:[/\\]*[^/\\?#]*/, '');
    if (/(^|[/\\])(\.|%2e){1,2}([/\\?#]|$)/i.test(path)) refuse('"." or ".." path segments');
  });

/** Node ids become the first part of targets (`<node>.<fn>`), so they may not contain dots. */
export const NodeIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'use letters, digits, "_" and "-" (no dots)');

/**
 * The registration body real agents send to POST /api/v1/nodes/register (and POST /api/v1/nodes).
 * Unknown fields are accepted and ignored so newer SDKs keep working.
 */
export const RegistrationSchema = z
  .object({
    id: NodeIdSchema,
    // Some SDKs send an empty version when none is configured.
    version: z
      .string()
      .max(100)
      .optional()
      .transform((v) => v || '0.0.0'),
    base_url: AgentUrl,
    public_url: nullable(AgentUrl),
    deployment_type: z.enum(['long_running', 'serverless']).default('long_running'),
    tags: Tags,
    // The TypeScript SDK sends both; zod used to strip them as unknown members.
    proposed_tags: Tags,
    accepts_webhook: nullableWithDefault(AcceptsWebhookSchema, (): AcceptsWebhook => 'false'),
    metadata: nullableWithDefault(JsonObject, () => ({})),
    reasoners: z.array(ReasonerSpecSchema).max(1000).default([]),
    skills: z.array(SkillSpecSchema).max(1000).default([]),
  })
  .superRefine(refuseUnstorable)
  .superRefine(refuseDuplicateFunctions);
export type Registration = z.infer<typeof RegistrationSchema>;

/**
 * One registered instance of a node: a node id may have several instances with different
 * versions, and traffic is split between the healthy ones by `trafficWeight`.
 */
export interface NodeInstance {
  nodeId: string;
  version: string;
  baseUrl: string;
  publicUrl: string | null;
  deploymentType: 'long_running' | 'serverless';
  tags: string[];
  metadata: Record<string, unknown>;
  reasoners: ReasonerSpec[];
  skills: SkillSpec[];
  lifecycleStatus: LifecycleStatus;
  trafficWeight: number;
  /** ISO time of the last heartbeat, null before the first one. */
  lastHeartbeat: string | null;
  registeredAt: string;
  updatedAt: string;
}

/** Why an instance has its current status; each lifecycle rule sets its own reason. */
export const STATUS_REASONS = [
  'registered',
  'agent_reported',
  'heartbeat_expired',
  'heartbeat_resumed',
  'health_check_failed',
  'health_recovered',
  'health_check_passed',
  'transition_timeout',
  'stopped',
  'started',
  'shutdown',
  'revived',
] as const;
export type StatusReason = (typeof STATUS_REASONS)[number];

/** Operator intent: `stopped` and `shutdown` keep an instance out of routing whatever it reports. */
export type AdminState = 'active' | 'stopped' | 'shutdown';

/** The health monitor's view of one instance (the latest probe of `GET {base_url}/health`). */
export interface HealthCheckState {
  consecutiveFailures: number;
  /** Start of the current run of successful probes; null after a failure. */
  healthySince: string | null;
  lastCheckAt: string | null;
  lastCheckOk: boolean | null;
  lastCheckStatusCode: number | null;
  lastCheckError: string | null;
  lastCheckDurationMs: number | null;
}

/** A node instance with the presence, lifecycle and health state the control plane keeps for it. */
export interface NodeInstanceRecord extends NodeInstance {
  /** Tags the agent proposed for itself at registration (shown, not matched by filters). */
  proposedTags: string[];
  /** Whether the agent said it accepts webhooks. */
  acceptsWebhook: AcceptsWebhook;
  statusReason: StatusReason;
  statusChangedAt: string;
  reportedStatus: LifecycleStatus | null;
  adminState: AdminState;
  lastSeenAt: string;
  /** The instance's heartbeat rhythm as presence has observed it; null until a second heartbeat. */
  observedHeartbeatIntervalMs: number | null;
  leaseExpiresAt: string | null;
  health: HealthCheckState;
  customHealth: Record<string, unknown> | null;
  revision: number;
  /**
   * When the hard-evict rule evicted the instance. Evicted instances are left out of every read
   * but registration and the heartbeat that revives them, so this is null everywhere else.
   */
  evictedAt: string | null;
}

const LifecycleStatusSchema = z.enum(LIFECYCLE_STATUSES);

// The TypeScript SDK sends `version: ''` when none is configured, and registered that instance
// as '0.0.0', so '' must name the same instance. Only an absent version means "the most recently
// registered instance".
const OptionalVersion = z
  .string()
  .max(100)
  .optional()
  .transform((v) => (v === undefined ? undefined : v || '0.0.0'));
const Timestamp = z.union([z.string().max(100), z.number()]).optional();

/**
 * `POST /api/v1/nodes/{id}/heartbeat`. Every member is optional: SDKs send
 * `{ status, version, timestamp }`, a bare `{}` (or no body) is a plain sign of life. Unknown
 * members (MCP server lists and the like) are ignored.
 */
export const HeartbeatSchema = z
  .object({
    status: LifecycleStatusSchema.optional(),
    version: OptionalVersion,
    timestamp: Timestamp,
  })
  .superRefine(refuseUnstorable);
export type Heartbeat = z.infer<typeof HeartbeatSchema>;

/**
 * `PATCH /api/v1/nodes/{id}/status`: a heartbeat that also carries the state (`status`, or `state`
 * as some clients name it) and custom health data, stored as given and shown by GET status.
 */
export const StatusUpdateSchema = z
  .object({
    status: LifecycleStatusSchema.optional(),
    state: LifecycleStatusSchema.optional(),
    version: OptionalVersion,
    timestamp: Timestamp,
    health: JsonObject.optional(),
  })
  .refine((body) => !(body.status && body.state && body.status !== body.state), {
    message: 'status and state disagree; send one of them',
    path: ['state'],
  })
  .superRefine(refuseUnstorable);
export type StatusUpdate = z.infer<typeof StatusUpdateSchema>;

/** `POST /api/v1/nodes/{id}/lifecycle/status`: the agent says which state it is in now. */
export const LifecycleReportSchema = z
  .object({
    status: LifecycleStatusSchema,
    version: OptionalVersion,
    reason: z.string().max(500).optional(),
  })
  .superRefine(refuseUnstorable);
export type LifecycleReport = z.infer<typeof LifecycleReportSchema>;

/** Most node ids one bulk status request may name. */
export const BULK_STATUS_LIMIT = 1000;

/** `POST /api/v1/nodes/status/bulk`. */
export const BulkStatusSchema = z
  .object({
    node_ids: z.array(z.string().min(1).max(200)).min(1).max(BULK_STATUS_LIMIT),
  })
  .superRefine(refuseUnstorable);

/**
 * Body of `start`, `stop` and `shutdown` (all members optional, and so is the body): `version`
 * limits the action to one instance; `reason` is recorded; `drain_timeout_ms` overrides the
 * configured drain wait of a shutdown; `notify` (default true) says whether to POST the agent's
 * `/_internal/shutdown`.
 */
export const NodeActionSchema = z
  .object({
    version: OptionalVersion,
    reason: z.string().max(500).optional(),
    drain_timeout_ms: z.number().int().min(0).max(3_600_000).optional(),
    notify: z.boolean().optional(),
  })
  .superRefine(refuseUnstorable);
export type NodeAction = z.infer<typeof NodeActionSchema>;

/** Page size of `GET /api/ui/v1/nodes`: default, most, and the furthest offset. */
export const NODE_LIST_DEFAULT_LIMIT = 50;
export const NODE_LIST_MAX_LIMIT = 200;
export const NODE_LIST_MAX_OFFSET = 1_000_000;

/** A whole number in a query string, with the value an absent parameter stands for. */
function queryInteger(min: number, max: number, fallback: number, description: string) {
  return z
    .string()
    .meta({ description })
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return fallback;
      const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
      if (n >= min && n <= max) return n;
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number from ${min} to ${max} (got ${JSON.stringify(value.slice(0, 20))})`,
      });
      return z.NEVER;
    });
}

/** A boolean in a query string: true/false, 1/0, yes/no; absent is false. */
const QueryFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .optional()
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** Query of `GET /api/ui/v1/nodes`. */
export const NodeListQuerySchema = z
  .object({
    status: LifecycleStatusSchema.optional(),
    tag: z.string().min(1).max(100).optional(),
    node_id: z.string().min(1).max(200).optional(),
    limit: queryInteger(
      1,
      NODE_LIST_MAX_LIMIT,
      NODE_LIST_DEFAULT_LIMIT,
      `Most nodes in the page (1 to ${NODE_LIST_MAX_LIMIT}, default ${NODE_LIST_DEFAULT_LIMIT}); a page also ends at the answer's byte bound.`,
    ),
    offset: queryInteger(
      0,
      NODE_LIST_MAX_OFFSET,
      0,
      'Nodes to skip, in node id order; continue with `pagination.next_offset`.',
    ),
    include_schemas: QueryFlag.meta({
      description:
        'true: each reasoner and skill as registered (schemas, examples, memory_config). Default: id, description, tags, proposed_tags, accepts_webhook.',
    }),
  })
  .superRefine(refuseUnstorable);

/** Body of the refresh endpoints: optional, and no members are read yet. */
export const RefreshSchema = z.object({});
