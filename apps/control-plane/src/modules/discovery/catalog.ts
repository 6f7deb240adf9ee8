import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { LifecycleStatus, NodeInstance, ReasonerSpec, SkillSpec } from '../nodes/index.ts';
import type {
  AgentCapabilitySchema,
  CapabilityListingSchema,
  FunctionCapabilitySchema,
  PaginationSchema,
} from './responses.ts';
import type { DiscoveryHealthStatus, DiscoveryQuery } from './schemas.ts';

/** Discovery's health word for each lifecycle state (schemas.ts maps the synonyms callers use). */
export const HEALTH_BY_LIFECYCLE: Record<LifecycleStatus, DiscoveryHealthStatus> = {
  ready: 'active',
  offline: 'inactive',
  degraded: 'degraded',
  starting: 'unknown',
};

/** One reasoner or skill as discovery lists it; optional members follow the include_* flags. */
export type FunctionCapability = ResponseBody<typeof FunctionCapabilitySchema>;

/** One registered node instance as discovery lists it; last_heartbeat is null until its first. */
export type AgentCapability = ResponseBody<typeof AgentCapabilitySchema>;

/**
 * Where a page sits in the filtered result, and where the next one starts: `limit` is the limit
 * asked for (a page may hold fewer entries, see the answer byte bound in render.ts); `next_offset`
 * is null on the last page, and the one safe way to continue.
 */
export type Pagination = ResponseBody<typeof PaginationSchema>;

/** The pagination of a page of `shown` entries from `offset` out of `total`. */
export function paginationOf(limit: number, offset: number, shown: number, total: number): Pagination {
  const hasMore = offset + shown < total;
  return { limit, offset, has_more: hasMore, next_offset: hasMore ? offset + shown : null };
}

/** The full (json) discovery answer: every agent with its reasoners and skills (content/api/discovery.md). */
export type CapabilityListing = ResponseBody<typeof CapabilityListingSchema>;

/** A case-insensitive wildcard test: `*abc*` contains, `abc*` starts with, `*abc` ends with, else exact. */
export function wildcardMatcher(pattern: string): (value: string) => boolean {
  const p = pattern.toLowerCase();
  const leading = p.startsWith('*');
  const trailing = p.length > 1 && p.endsWith('*');
  const core = p.slice(leading ? 1 : 0, trailing ? -1 : undefined);
  if (leading && trailing) return (value) => value.toLowerCase().includes(core);
  if (leading) return (value) => value.toLowerCase().endsWith(core);
  if (trailing) return (value) => value.toLowerCase().startsWith(core);
  return (value) => value.toLowerCase() === core;
}

function anyOf(patterns: string[]): ((value: string) => boolean) | undefined {
  if (patterns.length === 0) return undefined;
  const matchers = patterns.map(wildcardMatcher);
  return (value) => matchers.some((match) => match(value));
}

function describe(
  spec: ReasonerSpec | SkillSpec,
  target: string,
  include: DiscoveryQuery['include'],
): FunctionCapability {
  const capability: FunctionCapability = { id: spec.id, tags: spec.tags ?? [], invocation_target: target };
  if (include.descriptions && spec.description !== undefined) capability.description = spec.description;
  if (include.inputSchema && spec.input_schema !== undefined) capability.input_schema = spec.input_schema;
  if (include.outputSchema && spec.output_schema !== undefined) capability.output_schema = spec.output_schema;
  if (include.examples && spec.examples !== undefined) capability.examples = spec.examples;
  return capability;
}

function byIdentity(a: NodeInstance, b: NodeInstance): number {
  if (a.nodeId !== b.nodeId) return a.nodeId < b.nodeId ? -1 : 1;
  return a.version.localeCompare(b.version, 'en', { numeric: true });
}

/**
 * Applies a discovery query to the registered instances. Filters combine with AND:
 * - agent patterns (any of them) select instances by node id; health_status by lifecycle state;
 * - `reasoner` and `skill` each select functions of their kind; when only one of them is given,
 *   the other kind is left out (a skill never matches a reasoner filter);
 * - tag patterns keep functions carrying at least one matching tag, and every function of an
 *   instance whose own (agent) tags match;
 * - with any function filter, instances left without functions drop out.
 * Every instance (node id + version) is its own entry, sorted by node id then version; totals
 * count the whole filtered result, the page is `limit` entries from `offset` (the renderer may
 * end it earlier to keep the answer within its byte bound, see render.ts).
 */
export function buildCapabilityListing(
  instances: readonly NodeInstance[],
  query: DiscoveryQuery,
  discoveredAt: string,
): CapabilityListing {
  const agentMatch = anyOf(query.agents);
  const reasonerMatch = query.reasoner === undefined ? undefined : wildcardMatcher(query.reasoner);
  const skillMatch = query.skill === undefined ? undefined : wildcardMatcher(query.skill);
  const tagMatch = anyOf(query.tags);
  const functionFiltered = Boolean(reasonerMatch || skillMatch || tagMatch);
  const keep = (
    spec: ReasonerSpec | SkillSpec,
    idMatch: ((id: string) => boolean) | undefined,
    excluded: boolean,
    agentTagged: boolean,
  ) =>
    !excluded &&
    (!idMatch || idMatch(spec.id)) &&
    (!tagMatch || agentTagged || (spec.tags ?? []).some(tagMatch));

  // Filtering keeps references to the registered specs; only the page is turned into answer
  // objects, so a large fleet costs a pass over its specs, not a copy of them.
  const matching: Array<{
    instance: NodeInstance;
    health: DiscoveryHealthStatus;
    reasoners: ReasonerSpec[];
    skills: SkillSpec[];
  }> = [];
  let totalReasoners = 0;
  let totalSkills = 0;
  for (const instance of [...instances].sort(byIdentity)) {
    if (agentMatch && !agentMatch(instance.nodeId)) continue;
    const health = HEALTH_BY_LIFECYCLE[instance.lifecycleStatus];
    if (query.healthStatus && health !== query.healthStatus) continue;
    // An agent's own tags describe every function it serves (SDKs tag the agent, not each
    // function), so a tag matching the agent's tags lets all of its functions through.
    const agentTagged = Boolean(tagMatch && instance.tags.some(tagMatch));
    const reasoners = functionFiltered
      ? instance.reasoners.filter((r) =>
          keep(r, reasonerMatch, Boolean(skillMatch && !reasonerMatch), agentTagged),
        )
      : instance.reasoners;
    const skills = functionFiltered
      ? instance.skills.filter((s) => keep(s, skillMatch, Boolean(reasonerMatch && !skillMatch), agentTagged))
      : instance.skills;
    if (functionFiltered && reasoners.length === 0 && skills.length === 0) continue;
    totalReasoners += reasoners.length;
    totalSkills += skills.length;
    matching.push({ instance, health, reasoners, skills });
  }
  const page = matching
    .slice(query.offset, query.offset + query.limit)
    .map(({ instance, health, reasoners, skills }) => ({
      agent_id: instance.nodeId,
      base_url: instance.baseUrl,
      version: instance.version,
      health_status: health,
      deployment_type: instance.deploymentType,
      last_heartbeat: instance.lastHeartbeat,
      reasoners: reasoners.map((r) => describe(r, `${instance.nodeId}.${r.id}`, query.include)),
      skills: skills.map((s) => describe(s, `${instance.nodeId}.skill:${s.id}`, query.include)),
    }));
  return {
    discovered_at: discoveredAt,
    total_agents: matching.length,
    total_reasoners: totalReasoners,
    total_skills: totalSkills,
    pagination: paginationOf(query.limit, query.offset, page.length, matching.length),
    capabilities: page,
  };
}
