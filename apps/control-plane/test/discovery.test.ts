import { createServer, type Server } from 'node:http';
import { isProblem } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { buildCapabilityListing, wildcardMatcher } from '../src/modules/discovery/catalog.ts';
import { createDiscoveryMetrics } from '../src/modules/discovery/metrics.ts';
import { renderListing } from '../src/modules/discovery/render.ts';
import { DiscoveryQuerySchema } from '../src/modules/discovery/schemas.ts';
import { createDiscoveryService } from '../src/modules/discovery/service.ts';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import { findInstance, updateInstanceIfRevision } from '../src/modules/nodes/repository.ts';
import type { LifecycleStatus, NodeInstance } from '../src/modules/nodes/schemas.ts';
import { createInProcessEventBus, type EventBus } from '../src/platform/events/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../src/platform/metrics/registry.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { metricValue } from './helpers/metrics.ts';

// ---------------------------------------------------------------------------------------------
// The XML oracle: fast-xml-parser checks that an answer is well formed (the validator runs before
// the parse and throws on the first error), then readDiscoveryXml checks the shape documented for
// the xml format (content/api/discovery.md) and returns it as plain objects.

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  attributesGroupName: '@',
  ignoreDeclaration: true,
  // Keep every value as the text it is: '1.0' is a version, not a number.
  parseTagValue: false,
  parseAttributeValue: false,
  // Decodes character references (&#10;) besides the five XML entities.
  htmlEntities: true,
  isArray: (name) => ['agent', 'reasoner', 'skill', 'tag'].includes(name),
});

type XmlAttributes = Record<string, string>;
interface ParsedFunction {
  '@': XmlAttributes;
  description?: string;
  tags: { tag: string[] } | '';
  input_schema?: string;
  output_schema?: string;
  examples?: string;
}
interface ParsedAgent {
  '@': XmlAttributes;
  reasoner?: ParsedFunction[];
  skill?: ParsedFunction[];
}

/** One reasoner or skill of an xml answer. */
interface XmlFunction {
  id: string;
  target: string;
  description?: string;
  tags: string[];
  input_schema?: string;
  output_schema?: string;
  examples?: string;
}
interface XmlAgent {
  attributes: XmlAttributes;
  reasoners: XmlFunction[];
  skills: XmlFunction[];
}
interface XmlDiscovery {
  attributes: XmlAttributes;
  summary: XmlAttributes;
  agents: XmlAgent[];
}

const FUNCTION_CHILDREN = ['@', 'description', 'tags', 'input_schema', 'output_schema', 'examples'];
const AGENT_ATTRIBUTES = ['id', 'base_url', 'version', 'health_status', 'deployment_type', 'last_heartbeat'];

function readFunction(fn: ParsedFunction): XmlFunction {
  expect(Object.keys(fn['@']).sort()).toEqual(['id', 'target']);
  for (const name of Object.keys(fn)) expect(FUNCTION_CHILDREN).toContain(name);
  expect(fn.tags === '' || Object.keys(fn.tags).join() === 'tag').toBe(true);
  const { '@': attributes, tags, ...children } = fn;
  return { id: attributes.id!, target: attributes.target!, tags: tags === '' ? [] : tags.tag, ...children };
}

/** Parses an xml discovery answer and checks its shape: fails the test when either is wrong. */
function readDiscoveryXml(text: string): XmlDiscovery {
  expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
  const document = xmlParser.parse(text, true) as Record<string, unknown>;
  expect(Object.keys(document)).toEqual(['discovery']);
  const root = document.discovery as {
    '@': XmlAttributes;
    summary: { '@': XmlAttributes };
    capabilities: { agent: ParsedAgent[] } | '';
  };
  expect(Object.keys(root).sort()).toEqual(['@', 'capabilities', 'summary']);
  expect(Object.keys(root['@'])).toEqual(['discovered_at']);
  expect(Object.keys(root.summary)).toEqual(['@']);
  const agents = root.capabilities === '' ? [] : root.capabilities.agent;
  return {
    attributes: root['@'],
    summary: root.summary['@'],
    agents: agents.map((agent) => {
      for (const name of Object.keys(agent)) expect(['@', 'reasoner', 'skill']).toContain(name);
      for (const name of Object.keys(agent['@'])) expect(AGENT_ATTRIBUTES).toContain(name);
      expect(agent['@']).toMatchObject({
        id: expect.any(String),
        base_url: expect.any(String),
        version: expect.any(String),
        health_status: expect.any(String),
        deployment_type: expect.any(String),
      });
      return {
        attributes: agent['@'],
        reasoners: (agent.reasoner ?? []).map(readFunction),
        skills: (agent.skill ?? []).map(readFunction),
      };
    }),
  };
}

const T0 = Date.parse('2026-11-22T06:00:00.000Z');
let now = T0;
const clock = { now: () => now };

let handle: TestDatabase;
let server: Server;
let base: string;
let metrics: MetricsRegistry;
let events: EventBus;

const HOSTILE_DESCRIPTION = 'Totals <b>&amp;</b> "quotes" \'apos\' \u0001bell ]]> done';

const DEEP_RESEARCH = {
  id: 'deep_research',
  description: 'Researches a question in depth',
  tags: ['research', 'ML'],
  input_schema: { type: 'object', properties: { query: { type: 'string' } } },
  output_schema: { type: 'object', properties: { answer: { type: 'string' } } },
  examples: [{ input: { query: 'why' }, output: { answer: 'because' } }],
};

const REGISTRATIONS = [
  {
    id: 'research-agent',
    version: '1.0.0',
    base_url: 'http://127.0.0.1:9101',
    reasoners: [DEEP_RESEARCH, { id: 'summarize_text', tags: ['nlp'] }],
    skills: [{ id: 'web_search', description: 'Searches the web', tags: ['web', 'research'] }],
  },
  {
    id: 'research-agent',
    version: '2.0.0',
    base_url: 'http://127.0.0.1:9102',
    tags: ['experimental'],
    reasoners: [{ id: 'deep_research', tags: ['research'] }],
  },
  {
    id: 'billing-bot',
    version: '1.0.0',
    base_url: 'http://127.0.0.1:9103',
    deployment_type: 'serverless',
    // Agent tags (not function tags): the TypeScript SDK's discover() expects tags to match them.
    tags: ['payments', 'Team-Billing'],
    reasoners: [
      { id: 'invoice_total', description: HOSTILE_DESCRIPTION, tags: ['finance', '<tag & "more">'] },
    ],
    skills: [{ id: 'send_email', tags: ['email', 'Notify'] }],
  },
  { id: 'empty-agent', version: '0.1.0', base_url: 'http://127.0.0.1:9104' },
];

const STATUSES: Array<[string, string, LifecycleStatus]> = [
  ['research-agent', '1.0.0', 'ready'],
  ['research-agent', '2.0.0', 'degraded'],
  ['billing-bot', '1.0.0', 'offline'],
  // empty-agent stays `starting`, as registered.
];

async function register(body: object): Promise<void> {
  const response = await fetch(`${base}/api/v1/nodes/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
}

async function setStatus(nodeId: string, version: string, status: LifecycleStatus): Promise<void> {
  const record = await findInstance(handle.db, { nodeId, version });
  const updated = await updateInstanceIfRevision(
    handle.db,
    { nodeId, version },
    record!.revision,
    { lifecycleStatus: status },
    new Date(now),
  );
  expect(updated?.lifecycleStatus).toBe(status);
  // The node service announces its own changes; this test edits rows directly, so it announces.
  await events.publish(NODES_TOPIC, {
    type: 'node.status_changed',
    node_id: nodeId,
    version,
    old_status: record!.lifecycleStatus,
    new_status: status,
    timestamp: new Date(now).toISOString(),
  });
}

async function discover(query = '', init?: RequestInit) {
  const response = await fetch(`${base}/api/v1/discovery/capabilities${query ? `?${query}` : ''}`, init);
  return response;
}

async function discoverJson(query = ''): Promise<any> {
  const response = await discover(query);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  metrics = createMetricsRegistry();
  events = createInProcessEventBus();
  const config = defaultConfig();
  server = createServer(
    createApp({ db: handle.db, config, metrics, events, clock, log: silentLogger() }).callback(),
  );
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  for (const registration of REGISTRATIONS) await register(registration);
  for (const [nodeId, version, status] of STATUSES) await setStatus(nodeId, version, status);
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  await events.close();
  await handle.close();
});

beforeEach(() => {
  now += 60_000; // past the cache TTL: each test starts from fresh answers
});

describe('GET /api/v1/discovery/capabilities (json)', () => {
  it('lists every instance with the full shape, sorted by node id then version', async () => {
    const response = await discover();
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as any;
    expect(new Date(body.discovered_at).toISOString()).toBe(body.discovered_at);
    expect(body).toMatchObject({
      total_agents: 4,
      total_reasoners: 4,
      total_skills: 2,
      pagination: { limit: 100, offset: 0, has_more: false },
    });
    expect(
      body.capabilities.map((c: { agent_id: string; version: string }) => `${c.agent_id}@${c.version}`),
    ).toEqual(['billing-bot@1.0.0', 'empty-agent@0.1.0', 'research-agent@1.0.0', 'research-agent@2.0.0']);
    const research = body.capabilities[2];
    expect(Object.keys(research).sort()).toEqual(
      [
        'agent_id',
        'base_url',
        'version',
        'health_status',
        'deployment_type',
        'last_heartbeat',
        'reasoners',
        'skills',
      ].sort(),
    );
    expect(research).toMatchObject({
      agent_id: 'research-agent',
      base_url: 'http://127.0.0.1:9101',
      health_status: 'active',
      deployment_type: 'long_running',
    });
    expect(research.last_heartbeat === null || typeof research.last_heartbeat === 'string').toBe(true);
    expect(research.reasoners).toEqual([
      { id: 'deep_research', tags: ['research', 'ML'], invocation_target: 'research-agent.deep_research' },
      { id: 'summarize_text', tags: ['nlp'], invocation_target: 'research-agent.summarize_text' },
    ]);
    expect(research.skills).toEqual([
      { id: 'web_search', tags: ['web', 'research'], invocation_target: 'research-agent.skill:web_search' },
    ]);
    expect(body.capabilities[0].deployment_type).toBe('serverless');
  });

  it('maps lifecycle states to health_status: ready→active, degraded, offline→inactive, starting→unknown', async () => {
    const body = await discoverJson();
    const health = Object.fromEntries(
      body.capabilities.map((c: { agent_id: string; version: string; health_status: string }) => [
        `${c.agent_id}@${c.version}`,
        c.health_status,
      ]),
    );
    expect(health).toEqual({
      'billing-bot@1.0.0': 'inactive',
      'empty-agent@0.1.0': 'unknown',
      'research-agent@1.0.0': 'active',
      'research-agent@2.0.0': 'degraded',
    });
  });

  it('adds description, schemas and examples only when their include flag is true', async () => {
    const all = await discoverJson(
      'agent=research-agent&include_descriptions=true&include_input_schema=1&include_output_schema=yes&include_examples=TRUE',
    );
    const deep = all.capabilities[0].reasoners[0];
    expect(deep.description).toBe('Researches a question in depth');
    expect(deep.input_schema).toEqual(DEEP_RESEARCH.input_schema);
    expect(deep.output_schema).toEqual(DEEP_RESEARCH.output_schema);
    expect(deep.examples).toEqual(DEEP_RESEARCH.examples);
    // Absent in the registration: absent in the answer, even with the flag.
    expect('description' in all.capabilities[0].reasoners[1]).toBe(false);
    expect(all.capabilities[0].skills[0].description).toBe('Searches the web');

    for (const flag of [
      'include_descriptions',
      'include_input_schema',
      'include_output_schema',
      'include_examples',
    ]) {
      const one = await discoverJson(`agent=research-agent&${flag}=true`);
      const keys = Object.keys(one.capabilities[0].reasoners[0]).sort();
      const field = flag.replace('include_', '').replace('descriptions', 'description');
      expect(keys).toEqual(['id', 'invocation_target', 'tags', field].sort());
      const off = await discoverJson(`agent=research-agent&${flag}=false`);
      expect(Object.keys(off.capabilities[0].reasoners[0]).sort()).toEqual([
        'id',
        'invocation_target',
        'tags',
      ]);
    }
  });
});

describe('discovery filters', () => {
  const ids = (body: { capabilities: Array<{ agent_id: string; version: string }> }) =>
    body.capabilities.map((c) => `${c.agent_id}@${c.version}`);
  const functions = (body: {
    capabilities: Array<{
      agent_id: string;
      reasoners: Array<{ id: string }>;
      skills: Array<{ id: string }>;
    }>;
  }) =>
    body.capabilities.flatMap((c) => [
      ...c.reasoners.map((r) => r.id),
      ...c.skills.map((s) => `skill:${s.id}`),
    ]);

  it('filters by agent id, exactly or with a wildcard, ignoring case', async () => {
    expect(ids(await discoverJson('agent=billing-bot'))).toEqual(['billing-bot@1.0.0']);
    expect(ids(await discoverJson('agent=BILLING-BOT'))).toEqual(['billing-bot@1.0.0']);
    expect(ids(await discoverJson('agent=billing'))).toEqual([]);
    expect(ids(await discoverJson('agent=research*'))).toEqual([
      'research-agent@1.0.0',
      'research-agent@2.0.0',
    ]);
    expect(ids(await discoverJson('agent=*-agent'))).toEqual([
      'empty-agent@0.1.0',
      'research-agent@1.0.0',
      'research-agent@2.0.0',
    ]);
    expect(ids(await discoverJson('agent=*ll*'))).toEqual(['billing-bot@1.0.0']);
  });

  it('merges agent, node_id, agent_ids and node_ids into one any-of filter', async () => {
    expect(ids(await discoverJson('node_id=empty-agent'))).toEqual(['empty-agent@0.1.0']);
    expect(ids(await discoverJson('agent_ids=empty-agent,%20billing-bot%20'))).toEqual([
      'billing-bot@1.0.0',
      'empty-agent@0.1.0',
    ]);
    expect(ids(await discoverJson('agent=empty-agent&node_ids=billing-bot'))).toEqual([
      'billing-bot@1.0.0',
      'empty-agent@0.1.0',
    ]);
  });

  it('filters reasoners with every wildcard form and leaves skills out', async () => {
    const contains = await discoverJson('reasoner=*research*');
    expect(ids(contains)).toEqual(['research-agent@1.0.0', 'research-agent@2.0.0']);
    expect(functions(contains)).toEqual(['deep_research', 'deep_research']);
    expect(contains.total_reasoners).toBe(2);
    expect(contains.total_skills).toBe(0);
    expect(functions(await discoverJson('reasoner=summ*'))).toEqual(['summarize_text']);
    expect(functions(await discoverJson('reasoner=*_TOTAL'))).toEqual(['invoice_total']);
    expect(functions(await discoverJson('reasoner=deep_research&agent=research-agent'))).toEqual([
      'deep_research',
      'deep_research',
    ]);
    expect(functions(await discoverJson('reasoner=deep'))).toEqual([]);
    expect(functions(await discoverJson('reasoner=*'))).toEqual([
      'invoice_total',
      'deep_research',
      'summarize_text',
      'deep_research',
    ]);
  });

  it('filters skills and leaves reasoners out; both together select each kind', async () => {
    const skills = await discoverJson('skill=*e*');
    expect(functions(skills)).toEqual(['skill:send_email', 'skill:web_search']);
    expect(skills.total_reasoners).toBe(0);
    expect(functions(await discoverJson('skill=web_*'))).toEqual(['skill:web_search']);
    expect(functions(await discoverJson('reasoner=invoice*&skill=*search'))).toEqual([
      'invoice_total',
      'skill:web_search',
    ]);
  });

  it('filters by tags: comma-separated, any of them, with wildcards, ignoring case', async () => {
    expect(functions(await discoverJson('tags=research'))).toEqual([
      'deep_research',
      'skill:web_search',
      'deep_research',
    ]);
    expect(functions(await discoverJson('tags=ml'))).toEqual(['deep_research']);
    expect(functions(await discoverJson('tags=finance,nlp'))).toEqual(['invoice_total', 'summarize_text']);
    expect(functions(await discoverJson('tags=noti*'))).toEqual(['skill:send_email']);
    expect(functions(await discoverJson('tags=*%26*'))).toEqual(['invoice_total']);
    expect(ids(await discoverJson('tags=nothing-has-this'))).toEqual([]);
  });

  it("tags also match the agent's own tags, keeping each function of the agent", async () => {
    expect(functions(await discoverJson('tags=payments'))).toEqual(['invoice_total', 'skill:send_email']);
    expect(functions(await discoverJson('tags=*BILLING'))).toEqual(['invoice_total', 'skill:send_email']);
    expect(functions(await discoverJson('tags=experimental'))).toEqual(['deep_research']);
    // Any of the patterns, on either the agent or the function.
    expect(functions(await discoverJson('tags=payments,nlp'))).toEqual([
      'invoice_total',
      'skill:send_email',
      'summarize_text',
    ]);
    // The other function filters still apply to an agent whose tags match.
    expect(functions(await discoverJson('tags=payments&reasoner=invoice*'))).toEqual(['invoice_total']);
    expect(functions(await discoverJson('tags=payments&skill=*'))).toEqual(['skill:send_email']);
    // Function tags are listed as registered: the agent's tags are not copied into them.
    const billing = await discoverJson('tags=payments');
    expect(billing.capabilities[0].reasoners[0].tags).toEqual(['finance', '<tag & "more">']);
    expect(billing.total_reasoners).toBe(1);
    expect(billing.total_skills).toBe(1);
  });

  it('filters by each health_status', async () => {
    expect(ids(await discoverJson('health_status=active'))).toEqual(['research-agent@1.0.0']);
    expect(ids(await discoverJson('health_status=degraded'))).toEqual(['research-agent@2.0.0']);
    expect(ids(await discoverJson('health_status=inactive'))).toEqual(['billing-bot@1.0.0']);
    expect(ids(await discoverJson('health_status=unknown'))).toEqual(['empty-agent@0.1.0']);
    expect(ids(await discoverJson('health_status=ACTIVE'))).toEqual(['research-agent@1.0.0']);
  });

  it('health_status=healthy means active, as SDK callers write it', async () => {
    expect(ids(await discoverJson('health_status=healthy'))).toEqual(['research-agent@1.0.0']);
    expect(ids(await discoverJson('health_status=Healthy'))).toEqual(['research-agent@1.0.0']);
    // A synonym is normalized before the cache key is made: one answer serves both spellings.
    expect((await discover('agent=research*&health_status=active')).headers.get('x-discovery-cache')).toBe(
      'miss',
    );
    expect((await discover('agent=research*&health_status=healthy')).headers.get('x-discovery-cache')).toBe(
      'hit',
    );
  });

  it('accepts the lifecycle words ready, offline and starting for the states they map to', async () => {
    expect(ids(await discoverJson('health_status=ready'))).toEqual(['research-agent@1.0.0']);
    expect(ids(await discoverJson('health_status=offline'))).toEqual(['billing-bot@1.0.0']);
    expect(ids(await discoverJson('health_status=starting'))).toEqual(['empty-agent@0.1.0']);
  });

  it('refuses health_status=unhealthy as ambiguous, naming the two states it could mean', async () => {
    const response = await discover('health_status=unhealthy');
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.code).toBe('invalid_request');
    expect(body.errors[0].field).toBe('health_status');
    expect(body.errors[0].message).toMatch(/degraded.*inactive|inactive.*degraded/);
  });

  it('combines filters with AND and drops instances left without functions', async () => {
    const both = await discoverJson('agent=research-agent&tags=research&health_status=active');
    expect(ids(both)).toEqual(['research-agent@1.0.0']);
    expect(functions(both)).toEqual(['deep_research', 'skill:web_search']);
    expect(ids(await discoverJson('reasoner=deep_research&health_status=inactive'))).toEqual([]);
    // Without a function filter, an instance with no functions is still listed.
    expect(ids(await discoverJson('health_status=unknown'))).toEqual(['empty-agent@0.1.0']);
    expect(ids(await discoverJson('tags=*&agent=empty-agent'))).toEqual([]);
  });

  it('pages over instances with limit and offset; totals count the whole result', async () => {
    const first = await discoverJson('limit=3');
    expect(ids(first)).toEqual(['billing-bot@1.0.0', 'empty-agent@0.1.0', 'research-agent@1.0.0']);
    expect(first.pagination).toEqual({ limit: 3, offset: 0, has_more: true, next_offset: 3 });
    expect(first.total_agents).toBe(4);
    const second = await discoverJson('limit=3&offset=3');
    expect(ids(second)).toEqual(['research-agent@2.0.0']);
    expect(second.pagination).toEqual({ limit: 3, offset: 3, has_more: false, next_offset: null });
    const beyond = await discoverJson('offset=50');
    expect(beyond.capabilities).toEqual([]);
    expect(beyond.pagination).toMatchObject({ has_more: false, next_offset: null });
    expect(beyond.total_agents).toBe(4);
  });
});

describe('discovery formats', () => {
  it('answers compact: discovered_at and flat reasoners and skills with id, agent_id, target, tags', async () => {
    const response = await discover('format=compact&include_descriptions=true');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as any;
    expect(Object.keys(body).sort()).toEqual(['discovered_at', 'pagination', 'reasoners', 'skills']);
    expect(body.reasoners).toContainEqual({
      id: 'deep_research',
      agent_id: 'research-agent',
      target: 'research-agent.deep_research',
      tags: ['research', 'ML'],
    });
    expect(body.skills).toEqual([
      {
        id: 'send_email',
        agent_id: 'billing-bot',
        target: 'billing-bot.skill:send_email',
        tags: ['email', 'Notify'],
      },
      {
        id: 'web_search',
        agent_id: 'research-agent',
        target: 'research-agent.skill:web_search',
        tags: ['web', 'research'],
      },
    ]);
    expect(body.reasoners).toHaveLength(4);
  });

  it('answers xml: a discovery root, a summary with totals, agents holding reasoners and skills', async () => {
    const response = await discover('format=xml&include_descriptions=true');
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const text = await response.text();
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const xml = readDiscoveryXml(text);
    expect(new Date(xml.attributes.discovered_at!).toISOString()).toBe(xml.attributes.discovered_at);
    expect(xml.summary).toEqual({
      total_agents: '4',
      total_reasoners: '4',
      total_skills: '2',
      limit: '100',
      offset: '0',
      has_more: 'false',
    });
    expect(xml.agents.map((a) => `${a.attributes.id}@${a.attributes.version}`)).toEqual([
      'billing-bot@1.0.0',
      'empty-agent@0.1.0',
      'research-agent@1.0.0',
      'research-agent@2.0.0',
    ]);
    const research = xml.agents[2]!;
    expect(research.attributes).toMatchObject({ base_url: 'http://127.0.0.1:9101', health_status: 'active' });
    expect(research.reasoners.map((r) => `${r.id}:${r.target}`)).toEqual([
      'deep_research:research-agent.deep_research',
      'summarize_text:research-agent.summarize_text',
    ]);
    expect(research.skills.map((s) => `${s.id}:${s.target}`)).toEqual([
      'web_search:research-agent.skill:web_search',
    ]);
    expect(research.reasoners[0]).toEqual({
      id: 'deep_research',
      target: 'research-agent.deep_research',
      description: 'Researches a question in depth',
      tags: ['research', 'ML'],
    });
    // An agent without functions is an empty element; a function without tags has an empty <tags/>.
    expect(xml.agents[1]).toMatchObject({ reasoners: [], skills: [] });
  });

  it('escapes hostile text in xml and replaces characters XML cannot carry', async () => {
    const text = await (await discover('format=xml&agent=billing-bot&include_descriptions=true')).text();
    const invoice = readDiscoveryXml(text).agents[0]!.reasoners[0]!;
    expect(invoice.description).toBe(HOSTILE_DESCRIPTION.replace('\u0001', '\uFFFD'));
    expect(invoice.tags).toEqual(['finance', '<tag & "more">']);
  });

  it('carries schemas and examples in xml as JSON text when asked', async () => {
    const text = await (
      await discover(
        'format=xml&reasoner=deep_research&agent=research-agent&include_input_schema=true&include_examples=true',
      )
    ).text();
    const deep = readDiscoveryXml(text).agents[0]!.reasoners[0]!;
    expect(JSON.parse(deep.input_schema!)).toEqual(DEEP_RESEARCH.input_schema);
    expect(JSON.parse(deep.examples!)).toEqual(DEEP_RESEARCH.examples);
    expect(deep).not.toHaveProperty('output_schema');
    expect(deep).not.toHaveProperty('description');
  });

  // Every parameter in every format: the three formats must list the same functions.
  const QUERIES = [
    '',
    'agent=research-agent',
    'node_id=billing-bot',
    'agent_ids=billing-bot,empty-agent',
    'node_ids=research*',
    'reasoner=*research*',
    'reasoner=summ*',
    'skill=*search',
    'tags=research,finance',
    'tags=payments,nlp',
    'health_status=healthy',
    'health_status=active',
    'health_status=inactive',
    'health_status=degraded',
    'health_status=unknown',
    'include_descriptions=true&include_input_schema=true&include_output_schema=true&include_examples=true',
    'limit=1&offset=1',
    'limit=2',
    'agent=research*&tags=*&health_status=degraded',
  ];
  for (const query of QUERIES) {
    it(`lists the same functions in json, compact and xml for "${query || '(no parameters)'}"`, async () => {
      const json = await discoverJson(query);
      const fromJson = json.capabilities.flatMap(
        (c: {
          reasoners: Array<{ invocation_target: string }>;
          skills: Array<{ invocation_target: string }>;
        }) => [...c.reasoners.map((r) => r.invocation_target), ...c.skills.map((s) => s.invocation_target)],
      );
      const compact = await discoverJson(`${query}&format=compact`);
      const fromCompact = [
        ...compact.reasoners.map((r: { target: string }) => r.target),
        ...compact.skills.map((s: { target: string }) => s.target),
      ];
      expect(compact.pagination).toEqual(json.pagination);
      const xml = readDiscoveryXml(await (await discover(`${query}&format=xml`)).text());
      const fromXml = xml.agents.flatMap((agent) =>
        [...agent.reasoners, ...agent.skills].map((fn) => fn.target),
      );
      expect(xml.summary).toEqual({
        total_agents: String(json.total_agents),
        total_reasoners: String(json.total_reasoners),
        total_skills: String(json.total_skills),
        limit: String(json.pagination.limit),
        offset: String(json.pagination.offset),
        has_more: String(json.pagination.has_more),
        // An attribute is left out rather than given a null value.
        ...(json.pagination.next_offset === null ? {} : { next_offset: String(json.pagination.next_offset) }),
      });
      expect(xml.agents.map((a) => `${a.attributes.id}@${a.attributes.version}`)).toEqual(
        json.capabilities.map((c: { agent_id: string; version: string }) => `${c.agent_id}@${c.version}`),
      );
      expect([...fromCompact].sort()).toEqual([...fromJson].sort());
      expect([...fromXml].sort()).toEqual([...fromJson].sort());
    });
  }
});

describe('discovery input errors', () => {
  const BAD: Array<[string, string]> = [
    ['format=yaml', 'format'],
    ['health_status=broken', 'health_status'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=99999999999999999999', 'offset'],
    ['include_descriptions=maybe', 'include_descriptions'],
    ['include_input_schema=2', 'include_input_schema'],
    ['include_output_schema=on', 'include_output_schema'],
    ['include_examples=perhaps', 'include_examples'],
    ['reasoner=de*ep', 'reasoner'],
    ['skill=a*b*', 'skill'],
    [`agent=${'a'.repeat(201)}`, 'agent'],
    [`tags=${Array.from({ length: 51 }, (_, i) => `t${i}`).join(',')}`, 'tags'],
    ['format=json&format=xml', 'format'],
    ['agent=a&agent=b', 'agent'],
  ];
  for (const [query, parameter] of BAD) {
    it(`answers 400 invalid_request naming ${parameter} for "${query.slice(0, 60)}"`, async () => {
      const response = await discover(query);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      const body = (await response.json()) as any;
      expect(isProblem(body)).toBe(true);
      expect(body.code).toBe('invalid_request');
      expect(body.detail).toContain(`${parameter}:`);
      expect(body.errors.map((e: { field: string }) => e.field)).toContain(parameter);
    });
  }

  it('reads an empty parameter as absent', async () => {
    const body = await discoverJson('agent=&reasoner=&include_descriptions=&format=&limit=');
    expect(body.total_agents).toBe(4);
    expect(body.pagination.limit).toBe(100);
    expect('description' in body.capabilities[2].reasoners[0]).toBe(false);
  });

  it('ignores unknown parameters such as api_key and cache busters', async () => {
    const body = await discoverJson('api_key=whatever&_=12345&agent=billing-bot');
    expect(body.total_agents).toBe(1);
  });

  it('answers 405 for other methods', async () => {
    const response = await discover('', { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('discovery cache and metrics', () => {
  it('serves a repeated query from cache and counts hits and misses', async () => {
    const hits = await metricValue(metrics, 'service_discovery_cache_hits_total');
    const misses = await metricValue(metrics, 'service_discovery_cache_misses_total');
    const first = await discover('agent=research*&format=compact');
    expect(first.headers.get('x-discovery-cache')).toBe('miss');
    const firstBody = await first.text();
    now += 29_000;
    const second = await discover('format=compact&agent=RESEARCH*');
    expect(second.headers.get('x-discovery-cache')).toBe('hit');
    expect(await second.text()).toBe(firstBody);
    expect(await metricValue(metrics, 'service_discovery_cache_hits_total')).toBe(hits + 1);
    expect(await metricValue(metrics, 'service_discovery_cache_misses_total')).toBe(misses + 1);
  });

  it('keys the cache by the whole normalized query', async () => {
    expect((await discover('tags=b,a')).headers.get('x-discovery-cache')).toBe('miss');
    expect((await discover('tags=a,b,a')).headers.get('x-discovery-cache')).toBe('hit');
    expect((await discover('tags=a,b&format=xml')).headers.get('x-discovery-cache')).toBe('miss');
    expect((await discover('tags=a,b&limit=5')).headers.get('x-discovery-cache')).toBe('miss');
  });

  it('expires an answer after the TTL (30 s)', async () => {
    expect((await discover('agent=empty-agent')).headers.get('x-discovery-cache')).toBe('miss');
    now += 30_000;
    expect((await discover('agent=empty-agent')).headers.get('x-discovery-cache')).toBe('miss');
  });

  it('is cleared by a registration, so a new agent shows at once', async () => {
    expect((await discoverJson('agent=late-agent')).total_agents).toBe(0);
    await register({ id: 'late-agent', version: '1.0.0', base_url: 'http://127.0.0.1:9105' });
    const response = await discover('agent=late-agent');
    expect(response.headers.get('x-discovery-cache')).toBe('miss');
    expect(((await response.json()) as any).total_agents).toBe(1);
  });

  it('is cleared by a status change event on the nodes topic', async () => {
    expect((await discoverJson('agent=empty-agent')).capabilities[0].health_status).toBe('unknown');
    await setStatus('empty-agent', '0.1.0', 'ready');
    const response = await discover('agent=empty-agent');
    expect(response.headers.get('x-discovery-cache')).toBe('miss');
    expect(((await response.json()) as any).capabilities[0].health_status).toBe('active');
    await setStatus('empty-agent', '0.1.0', 'starting');
  });

  it('counts requests per format and status, durations per format, and filter usage', async () => {
    const before = {
      xmlOk: await metricValue(metrics, 'service_discovery_requests_total', {
        format: 'xml',
        status: 'success',
      }),
      compactErr: await metricValue(metrics, 'service_discovery_requests_total', {
        format: 'compact',
        status: 'error',
      }),
      jsonErr: await metricValue(metrics, 'service_discovery_requests_total', {
        format: 'json',
        status: 'error',
      }),
      xmlTimed: await metricValue(metrics, 'service_discovery_request_duration_seconds_count', {
        format: 'xml',
      }),
      tag: await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'tag' }),
      reasoner: await metricValue(metrics, 'service_discovery_filter_usage_total', {
        filter_type: 'reasoner',
      }),
      agent: await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'agent' }),
      skill: await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'skill' }),
      health: await metricValue(metrics, 'service_discovery_filter_usage_total', {
        filter_type: 'health_status',
      }),
    };
    await discover('format=xml&tags=web&reasoner=x*');
    await discover('format=xml&tags=web&reasoner=x*'); // cached: still a request, still filter usage
    await discover('format=compact&limit=0');
    await discover('format=nonsense');
    await discover('agent=a&skill=b&health_status=active');
    expect(
      await metricValue(metrics, 'service_discovery_requests_total', { format: 'xml', status: 'success' }),
    ).toBe(before.xmlOk + 2);
    expect(
      await metricValue(metrics, 'service_discovery_requests_total', { format: 'compact', status: 'error' }),
    ).toBe(before.compactErr + 1);
    expect(
      await metricValue(metrics, 'service_discovery_requests_total', { format: 'json', status: 'error' }),
    ).toBe(before.jsonErr + 1);
    expect(
      await metricValue(metrics, 'service_discovery_request_duration_seconds_count', { format: 'xml' }),
    ).toBe(before.xmlTimed + 2);
    expect(await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'tag' })).toBe(
      before.tag + 2,
    );
    expect(
      await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'reasoner' }),
    ).toBe(before.reasoner + 2);
    expect(await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'agent' })).toBe(
      before.agent + 1,
    );
    expect(await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'skill' })).toBe(
      before.skill + 1,
    );
    expect(
      await metricValue(metrics, 'service_discovery_filter_usage_total', { filter_type: 'health_status' }),
    ).toBe(before.health + 1);
    const exposition = await (await fetch(`${base}/metrics`)).text();
    expect(exposition).toMatch(
      /^service_discovery_requests_total\{format="xml",status="success"\} [1-9]\d*$/m,
    );
    expect(exposition).not.toContain('nonsense');
  });

  it('reports the cache in the health check with entries and age', async () => {
    await discover('agent=billing-bot');
    now += 12_000;
    const body = (await (await fetch(`${base}/api/v1/health`)).json()) as any;
    expect(body.checks.storage.status).toBe('healthy');
    expect(body.checks.cache).toMatchObject({ status: 'healthy', entries: expect.any(Number) });
    expect(body.checks.cache.entries).toBeGreaterThanOrEqual(1);
    expect(body.checks.cache.oldest_age_seconds).toBeGreaterThanOrEqual(12);
    expect(body.checks.cache.bytes).toBeGreaterThan(0);
    expect(body.checks.cache.max_bytes).toBe(32 * 1024 * 1024);
    expect(body.checks.cache.message).toMatch(
      /discovery cache: \d+ entr(y|ies), \d+\.\d (KiB|MiB) of 32\.0 MiB, oldest \d+\.\d s old \(ttl 30 s\)/,
    );
    expect(typeof body.checks.cache.response_time).toBe('number');
    now += 60_000;
    const emptied = (await (await fetch(`${base}/api/v1/health`)).json()) as any;
    expect(emptied.checks.cache).toMatchObject({ entries: 0, bytes: 0, oldest_age_seconds: null });
  });
});

/** A registered instance as the node repository hands it to discovery. */
function instance(overrides: Partial<NodeInstance>): NodeInstance {
  return {
    nodeId: 'a',
    version: '1',
    baseUrl: 'http://127.0.0.1:1',
    publicUrl: null,
    deploymentType: 'long_running',
    tags: [],
    metadata: {},
    reasoners: [],
    skills: [],
    lifecycleStatus: 'ready',
    trafficWeight: 100,
    lastHeartbeat: null,
    registeredAt: '2026-11-22T00:00:00.000Z',
    updatedAt: '2026-11-22T00:00:00.000Z',
    ...overrides,
  };
}

describe('discovery with a fleet of large registrations', () => {
  const MiB = 1024 * 1024;

  /**
   * An instance registered with a body just under the 1 MiB limit: 230 reasoners with
   * 4,000-character descriptions. Listed with include_descriptions, it renders to about 0.95 MB
   * of json and 4.6 MB of xml.
   */
  function largeInstance(nodeId: string): NodeInstance {
    return instance({
      nodeId,
      tags: ['big'],
      reasoners: Array.from({ length: 230 }, (_, i) => ({
        id: `reasoner_${i}`,
        // "&" is one byte in JSON and five in XML (&amp;): the xml answer is five times larger.
        description: `${nodeId} reasoner ${i} `.padEnd(4000, '&'),
        tags: ['bulk'],
      })),
    });
  }

  const fleet = Array.from({ length: 10 }, (_, i) => largeInstance(`big-${i}`));

  /** The real service (cache, catalog, renderer) over the fleet, with its defaults. */
  function bigService() {
    const service = createDiscoveryService({
      listInstances: async () => fleet,
      metrics: createDiscoveryMetrics(createMetricsRegistry()),
      cacheTtlMs: 30_000,
      clock,
    });
    const cacheCheck = async () => {
      const outcome = await service.cacheProbe()();
      if (typeof outcome === 'string') throw new Error('the cache probe reports details');
      return outcome.details as { entries: number; bytes: number; max_bytes: number };
    };
    return { service, cacheCheck };
  }

  const query = (raw: Record<string, string>) => DiscoveryQuerySchema.parse(raw);

  it('bounds the answer cache by the bytes of the answers, evicting the oldest first', async () => {
    const { service, cacheCheck } = bigService();
    // Sixteen different queries of about 2.9 MB each: 45 MB of answers for a 32 MiB budget.
    const queries = Array.from({ length: 16 }, (_, i) =>
      query({ include_descriptions: 'true', limit: '3', agent_ids: `big-*,absent-${i}` }),
    );
    for (const each of queries) {
      const answer = await service.discover(each);
      expect(answer.cached).toBe(false);
      expect(Buffer.byteLength(answer.body)).toBeGreaterThan(2.5 * MiB);
      const cache = await cacheCheck();
      expect(cache.bytes).toBeLessThanOrEqual(32 * MiB);
      expect(cache.max_bytes).toBe(32 * MiB);
    }
    const cache = await cacheCheck();
    expect(cache.entries).toBeLessThan(queries.length);
    // Eviction makes just enough room: the budget stays nearly full, not emptied.
    expect(cache.bytes).toBeGreaterThan(28 * MiB);
    expect((await service.discover(queries.at(-1)!)).cached).toBe(true);
    expect((await service.discover(queries[0]!)).cached).toBe(false);
  });

  it('keeps every answer within 8 MiB whatever the include flags, continuing at next_offset', async () => {
    const { service } = bigService();
    const all = fleet.map((i) => i.nodeId);
    for (const format of ['json', 'xml', 'compact'] as const) {
      const listed: string[] = [];
      const pageSizes: number[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const answer = await service.discover(
          query({
            format,
            limit: '500',
            offset: String(offset),
            include_descriptions: 'true',
            include_input_schema: 'true',
            include_output_schema: 'true',
            include_examples: 'true',
          }),
        );
        expect(answer.body.byteLength).toBeLessThanOrEqual(8 * MiB);
        let ids: string[];
        let pagination: { limit: number; offset: number; has_more: boolean; next_offset: number | null };
        if (format === 'xml') {
          const xml = readDiscoveryXml(answer.body.toString());
          ids = xml.agents.map((agent) => agent.attributes.id!);
          pagination = {
            limit: Number(xml.summary.limit),
            offset: Number(xml.summary.offset),
            has_more: xml.summary.has_more === 'true',
            next_offset: xml.summary.next_offset === undefined ? null : Number(xml.summary.next_offset),
          };
        } else {
          const body = JSON.parse(answer.body.toString());
          ids =
            format === 'json'
              ? body.capabilities.map((c: { agent_id: string }) => c.agent_id)
              : [...new Set<string>(body.reasoners.map((r: { agent_id: string }) => r.agent_id))];
          pagination = body.pagination;
        }
        expect(pagination.limit).toBe(500);
        expect(pagination.offset).toBe(offset);
        expect(ids.length).toBeGreaterThan(0);
        expect(pagination.has_more).toBe(offset + ids.length < all.length);
        expect(pagination.next_offset).toBe(pagination.has_more ? offset + ids.length : null);
        listed.push(...ids);
        pageSizes.push(ids.length);
        offset = pagination.next_offset;
      }
      // Every instance exactly once, in order, however the pages were cut.
      expect(listed, format).toEqual(all);
      // json (0.95 MB an instance) ends its first page early; xml (4.6 MB) holds one a page;
      // compact carries no descriptions or schemas and fits in one page.
      expect(pageSizes, format).toEqual({ json: [8, 2], xml: Array(10).fill(1), compact: [10] }[format]);
    }
  });

  it('puts at least one entry on a page, even one larger than the bound', () => {
    const listing = buildCapabilityListing(fleet, query({ include_descriptions: 'true' }), 'now');
    const rendered = JSON.parse(renderListing(listing, 'json', 1000).body.toString());
    expect(rendered.capabilities.map((c: { agent_id: string }) => c.agent_id)).toEqual(['big-0']);
    expect(rendered.pagination).toEqual({ limit: 100, offset: 0, has_more: true, next_offset: 1 });
  });

  it('does not cache an answer over 4 MiB, and keeps the smaller ones', async () => {
    const { service, cacheCheck } = bigService();
    const small = query({ include_descriptions: 'true', limit: '1' });
    await service.discover(small);
    const before = await cacheCheck();
    expect(before.entries).toBe(1);
    const large = query({ include_descriptions: 'true', limit: '6' });
    const first = await service.discover(large);
    expect(Buffer.byteLength(first.body)).toBeGreaterThan(4 * MiB);
    expect((await service.discover(large)).cached).toBe(false);
    expect(await cacheCheck()).toMatchObject({ entries: 1, bytes: before.bytes });
    expect((await service.discover(small)).cached).toBe(true);
  });
});

describe('discovery service', () => {
  it('does not cache an answer read before an invalidation that arrived meanwhile', async () => {
    let release: () => void = () => {};
    let calls = 0;
    const service = createDiscoveryService({
      listInstances: async () => {
        calls += 1;
        if (calls === 1) await new Promise<void>((done) => (release = done));
        return [instance({})];
      },
      metrics: createDiscoveryMetrics(createMetricsRegistry()),
      cacheTtlMs: 30_000,
      clock,
    });
    const query = DiscoveryQuerySchema.parse({});
    const pending = service.discover(query);
    await new Promise((done) => setImmediate(done));
    service.invalidate();
    release();
    expect((await pending).cached).toBe(false);
    expect((await service.discover(query)).cached).toBe(false);
    expect((await service.discover(query)).cached).toBe(true);
    expect(calls).toBe(2);
  });

  it('reads the fleet once per TTL for different queries, and again after an invalidation', async () => {
    let calls = 0;
    const service = createDiscoveryService({
      listInstances: async () => {
        calls += 1;
        return [instance({ reasoners: [{ id: 'r', tags: ['x'] }] })];
      },
      metrics: createDiscoveryMetrics(createMetricsRegistry()),
      cacheTtlMs: 30_000,
      clock,
    });
    const readAt = new Date(now).toISOString();
    const first = await service.discover(DiscoveryQuerySchema.parse({ format: 'compact' }));
    now += 10_000;
    const second = await service.discover(DiscoveryQuerySchema.parse({ format: 'xml', tags: 'x' }));
    expect(second.cached).toBe(false);
    expect(calls).toBe(1);
    // Both answers come from one read, and say when that read happened.
    expect(JSON.parse(first.body.toString()).discovered_at).toBe(readAt);
    expect(second.body.toString()).toContain(`discovered_at="${readAt}"`);
    service.invalidate();
    await service.discover(DiscoveryQuerySchema.parse({ format: 'xml', tags: 'x' }));
    expect(calls).toBe(2);
    now += 30_000;
    await service.discover(DiscoveryQuerySchema.parse({ format: 'json' }));
    expect(calls).toBe(3);
  });

  it('never caches with a TTL of 0', async () => {
    let calls = 0;
    const service = createDiscoveryService({
      listInstances: async () => {
        calls += 1;
        return [];
      },
      metrics: createDiscoveryMetrics(createMetricsRegistry()),
      cacheTtlMs: 0,
      clock,
    });
    const query = DiscoveryQuerySchema.parse({ format: 'xml' });
    await service.discover(query);
    expect((await service.discover(query)).cached).toBe(false);
    expect(calls).toBe(2);
  });

  it('orders versions numerically and keeps a listing of any size within the page', () => {
    const instances = ['10.0.0', '9.1.0', '9.0.0'].map((version) => instance({ version }));
    const listing = buildCapabilityListing(instances, DiscoveryQuerySchema.parse({ limit: '2' }), 'now');
    expect(listing.capabilities.map((c) => c.version)).toEqual(['9.0.0', '9.1.0']);
    expect(listing.pagination.has_more).toBe(true);
  });

  it('matches wildcards: contains, prefix, suffix, exact, and * alone', () => {
    expect(wildcardMatcher('*ear*')('deep_research')).toBe(true);
    expect(wildcardMatcher('deep*')('deep_research')).toBe(true);
    expect(wildcardMatcher('*search')('deep_research')).toBe(true);
    expect(wildcardMatcher('deep_research')('Deep_Research')).toBe(true);
    expect(wildcardMatcher('deep')('deep_research')).toBe(false);
    expect(wildcardMatcher('*')('anything')).toBe(true);
    expect(wildcardMatcher('**')('')).toBe(true);
  });
});
