import { type components, type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

type Listing = components['schemas']['CapabilityListing'];
type Agent = Listing['capabilities'][number];

/** A function the playground can call: its target and what discovery says about it. */
export interface CallableFunction {
  target: string;
  agentId: string;
  version: string;
  kind: 'reasoner' | 'skill';
  health: Agent['health_status'];
  description: string | undefined;
  tags: string[];
  inputSchema: Record<string, unknown> | undefined;
  examples: unknown[];
}

export const CATALOG_KEY = ['playground', 'functions'] as const;

const PAGE = 100;
/** Pages read at most: 2,000 agent instances, far more than a fleet the playground is for. */
const MAX_PAGES = 20;

/** Healthier first, so the version a function is shown with is one that can take the call. */
const HEALTH_ORDER: Record<Agent['health_status'], number> = {
  active: 0,
  degraded: 1,
  unknown: 2,
  inactive: 3,
};

/**
 * Every function of every registered agent, one entry per target (an agent with several
 * versions lists its functions once, with the healthiest instance's schema), sorted by target.
 */
export async function readCatalog(client: SwitchyardClient): Promise<CallableFunction[]> {
  const agents: Agent[] = [];
  let offset: number | null = 0;
  for (let page = 0; offset !== null && page < MAX_PAGES; page++) {
    const query = {
      format: 'json' as const,
      include_descriptions: true,
      include_input_schema: true,
      include_examples: true,
      limit: PAGE,
      offset,
    };
    // format=json answers the full listing (the compact shape only answers format=compact).
    const listing = (await unwrap(
      client.GET('/api/v1/discovery/capabilities', { params: { query } }),
    )) as Listing;
    agents.push(...listing.capabilities);
    offset = listing.pagination.next_offset;
  }
  agents.sort((a, b) => HEALTH_ORDER[a.health_status] - HEALTH_ORDER[b.health_status]);
  const byTarget = new Map<string, CallableFunction>();
  for (const agent of agents) {
    const add = (kind: CallableFunction['kind'], fn: Agent['reasoners'][number]) => {
      if (byTarget.has(fn.invocation_target)) return;
      byTarget.set(fn.invocation_target, {
        target: fn.invocation_target,
        agentId: agent.agent_id,
        version: agent.version,
        kind,
        health: agent.health_status,
        description: fn.description || undefined,
        tags: fn.tags,
        inputSchema: fn.input_schema,
        examples: fn.examples ?? [],
      });
    };
    for (const fn of agent.reasoners) add('reasoner', fn);
    for (const fn of agent.skills) add('skill', fn);
  }
  return [...byTarget.values()].sort((a, b) => a.target.localeCompare(b.target));
}

export function catalogQuery(client: SwitchyardClient) {
  return queryOptions({ queryKey: CATALOG_KEY, queryFn: () => readCatalog(client) });
}
