import { type components, unwrap } from '@switchyard/client';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { EmptyState, TutorialLink } from '../components/empty-state.tsx';
import { JsonBlock } from '../components/json-view.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useConnection } from '../connection/connection.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';

type Listing = components['schemas']['CapabilityListing'];
type Agent = Listing['capabilities'][number];
type Capability = Agent['reasoners'][number];

const HEALTH = ['active', 'degraded', 'inactive', 'unknown'] as const;
type Health = (typeof HEALTH)[number];

interface DiscoveryFilters {
  agent: string;
  reasoner: string;
  skill: string;
  tags: string;
  health_status: '' | Health;
}

const NO_FILTERS: DiscoveryFilters = { agent: '', reasoner: '', skill: '', tags: '', health_status: '' };
const DISCOVERY_KEY = ['discovery'] as const;
const PAGE_SIZE = 100;

/** "1 agent", "3 agents". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** The capabilities answer with every function's description and schemas, one page at `offset`. */
function useCapabilities(filters: DiscoveryFilters, offset: number) {
  const { client } = useConnection();
  return useQuery({
    queryKey: [...DISCOVERY_KEY, filters, offset],
    queryFn: async () => {
      const query = {
        ...(filters.agent ? { agent: filters.agent } : {}),
        ...(filters.reasoner ? { reasoner: filters.reasoner } : {}),
        ...(filters.skill ? { skill: filters.skill } : {}),
        ...(filters.tags ? { tags: filters.tags } : {}),
        ...(filters.health_status ? { health_status: filters.health_status } : {}),
        format: 'json' as const,
        include_descriptions: true,
        include_input_schema: true,
        include_output_schema: true,
        include_examples: true,
        limit: PAGE_SIZE,
        offset,
      };
      // format=json answers the full listing (the compact shape only answers format=compact).
      return (await unwrap(client.GET('/api/v1/discovery/capabilities', { params: { query } }))) as Listing;
    },
    placeholderData: keepPreviousData,
  });
}

function FilterForm({ value, onApply }: { value: DiscoveryFilters; onApply(next: DiscoveryFilters): void }) {
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    onApply({
      agent: text('agent'),
      reasoner: text('reasoner'),
      skill: text('skill'),
      tags: text('tags'),
      health_status: text('health_status') as DiscoveryFilters['health_status'],
    });
  }
  return (
    <form className="filters" onSubmit={apply} aria-label="Filter capabilities" key={JSON.stringify(value)}>
      <label>
        Agent
        <input name="agent" defaultValue={value.agent} placeholder="billing* or *-eu" />
      </label>
      <label>
        Reasoner
        <input name="reasoner" defaultValue={value.reasoner} placeholder="*summar*" />
      </label>
      <label>
        Skill
        <input name="skill" defaultValue={value.skill} />
      </label>
      <label>
        Tags
        <input name="tags" defaultValue={value.tags} placeholder="nlp, finance" />
      </label>
      <label>
        Health
        <select name="health_status" defaultValue={value.health_status}>
          <option value="">any</option>
          {HEALTH.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={() => onApply(NO_FILTERS)}>
          Clear
        </button>
      </div>
    </form>
  );
}

function FunctionDetails({ fn, kind }: { fn: Capability; kind: 'reasoner' | 'skill' }) {
  return (
    <details className="card">
      <summary>
        <code>{fn.invocation_target}</code> <span className="muted">{kind}</span>
        {fn.description ? <span className="muted"> — {fn.description}</span> : null}
      </summary>
      {fn.tags.length > 0 ? <p className="muted">Tags: {fn.tags.join(', ')}</p> : null}
      <JsonBlock title={`Input schema of ${fn.invocation_target}`} value={fn.input_schema ?? null} />
      <JsonBlock title={`Output schema of ${fn.invocation_target}`} value={fn.output_schema ?? null} />
      {fn.examples && fn.examples.length > 0 ? (
        <JsonBlock title={`Examples of ${fn.invocation_target}`} value={fn.examples} />
      ) : null}
    </details>
  );
}

function AgentCard({ agent }: { agent: Agent }) {
  return (
    <section className="agent" aria-label={`Agent ${agent.agent_id} ${agent.version}`}>
      <div className="page-head">
        <h2 className="mono">
          <Link to="/nodes/$nodeId" params={{ nodeId: agent.agent_id }}>
            {agent.agent_id}
          </Link>
        </h2>
        <StatusBadge status={agent.health_status} />
      </div>
      <p className="muted">
        Version <code>{agent.version}</code>, {agent.deployment_type.replace('_', ' ')}, at{' '}
        <code>{agent.base_url}</code>; last heartbeat <RelativeTime iso={agent.last_heartbeat} />.
      </p>
      {agent.reasoners.length + agent.skills.length === 0 ? (
        <p className="muted">This agent lists no reasoner or skill.</p>
      ) : null}
      {agent.reasoners.map((fn) => (
        <FunctionDetails key={`r ${fn.id}`} fn={fn} kind="reasoner" />
      ))}
      {agent.skills.map((fn) => (
        <FunctionDetails key={`s ${fn.id}`} fn={fn} kind="skill" />
      ))}
    </section>
  );
}

/**
 * What the fleet can do, as agents discover it (GET /api/v1/discovery/capabilities): every agent
 * instance with its reasoners and skills, their descriptions and schemas, filtered by agent,
 * function, tag and health. Node events refresh it.
 */
export function DiscoveryPage() {
  const queryClient = useQueryClient();
  const [filters, setFilters] = useState<DiscoveryFilters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const listing = useCapabilities(filters, offset);
  useLiveEvents((event) => {
    if (event.stream === 'nodes') refreshOnEvent(queryClient, DISCOVERY_KEY);
  });
  const data = listing.data;
  const filtered = Object.values(filters).some((value) => value !== '');
  return (
    <>
      <div className="page-head">
        <h1>Discovery</h1>
        {data ? (
          <span className="muted">
            {count(data.total_agents, 'agent')}, {count(data.total_reasoners, 'reasoner')},{' '}
            {count(data.total_skills, 'skill')} · discovered <RelativeTime iso={data.discovered_at} />
          </span>
        ) : null}
      </div>
      <FilterForm
        value={filters}
        onApply={(next) => {
          setFilters(next);
          setOffset(0);
        }}
      />
      {listing.error ? (
        <ProblemMessage error={listing.error} context="Could not read the capabilities" />
      ) : null}
      {listing.isPending ? <p className="muted">Loading capabilities…</p> : null}
      {data && data.capabilities.length === 0 ? (
        filtered ? (
          <EmptyState title="No agent matches these filters">
            <p>Patterns take * at the start or end (billing*, *summar*); Clear shows every agent.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No agent has registered yet">
            <p>Agents appear here with their reasoners and skills as soon as they register.</p>
            <p>
              <TutorialLink />
            </p>
          </EmptyState>
        )
      ) : null}
      {data?.capabilities.map((agent) => (
        <AgentCard key={`${agent.agent_id} ${agent.version} ${agent.base_url}`} agent={agent} />
      ))}
      {data && (offset > 0 || data.pagination.has_more) ? (
        <div className="actions">
          {offset > 0 ? (
            <button type="button" onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
              Previous agents
            </button>
          ) : null}
          {data.pagination.next_offset !== null ? (
            <button type="button" onClick={() => setOffset(data.pagination.next_offset ?? 0)}>
              Next agents
            </button>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
