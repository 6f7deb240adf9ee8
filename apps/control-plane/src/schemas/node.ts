import { z } from 'zod';

/** Lifecycle states of a node instance (spec §3). */
export const LIFECYCLE_STATUSES = ['starting', 'ready', 'degraded', 'offline'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

const JsonObject = z.record(z.string(), z.unknown());

/** A function id as agents register it: router prefixes arrive already joined as `<prefix>_<name>`. */
const FunctionId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/, 'use letters, digits, "_" and "-"');

/** One reasoner as an agent registers it (wire notes: id, input/output schema, tags, ...). */
export const ReasonerSpecSchema = z.object({
  id: FunctionId,
  description: z.string().max(4000).optional(),
  input_schema: JsonObject.optional(),
  output_schema: JsonObject.optional(),
  tags: z.array(z.string().max(100)).max(100).default([]),
  memory_config: JsonObject.optional(),
  examples: z.array(z.unknown()).max(50).optional(),
});
export type ReasonerSpec = z.infer<typeof ReasonerSpecSchema>;

/** One skill as an agent registers it. */
export const SkillSpecSchema = z.object({
  id: FunctionId,
  description: z.string().max(4000).optional(),
  input_schema: JsonObject.optional(),
  output_schema: JsonObject.optional(),
  tags: z.array(z.string().max(100)).max(100).default([]),
  examples: z.array(z.unknown()).max(50).optional(),
});
export type SkillSpec = z.infer<typeof SkillSpecSchema>;

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
export const RegistrationSchema = z.object({
  id: NodeIdSchema,
  version: z.string().min(1).max(100).default('0.0.0'),
  base_url: z.url({ protocol: /^https?$/ }).max(2000),
  public_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
  deployment_type: z.enum(['long_running', 'serverless']).default('long_running'),
  tags: z.array(z.string().max(100)).max(100).default([]),
  metadata: JsonObject.default({}),
  reasoners: z.array(ReasonerSpecSchema).max(1000).default([]),
  skills: z.array(SkillSpecSchema).max(1000).default([]),
});
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
