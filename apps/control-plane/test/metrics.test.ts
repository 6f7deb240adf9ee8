import { createServer, type Server } from 'node:http';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { Counter, type Histogram } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../src/platform/metrics/registry.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { expectDocumented } from './helpers/openapi.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  help: Map<string, string>;
  types: Map<string, string>;
  samples: Sample[];
}

/** A strict reader of the text format 0.0.4: throws on any line it does not understand. */
function parseExposition(text: string): Exposition {
  const help = new Map<string, string>();
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  if (!text.endsWith('\n')) throw new Error('exposition must end with a line feed');
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue; // the format ignores empty lines
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      if (help.has(m[1]!)) throw new Error(`duplicate HELP for ${m[1]}`);
      help.set(m[1]!, m[2]!.replace(/\\n/g, '\n').replace(/\\\\/g, '\\'));
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      if (types.has(m[1]!)) throw new Error(`duplicate TYPE for ${m[1]}`);
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparseable line: ${line}`);
    const labels: Record<string, string> = {};
    let rest = m[2] ?? '';
    while (rest.length > 0) {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/.exec(rest);
      if (!label) throw new Error(`bad labels in: ${line}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(label[0].length);
    }
    const raw = m[3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    // Prometheus reads values with Go's ParseFloat, which takes NaN in any case (prom-client writes Nan).
    if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw new Error(`bad value in: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { help, types, samples };
}

function seriesOf(exposition: Exposition, name: string): Sample[] {
  return exposition.samples.filter((s) => s.name === name);
}

let handle: TestDatabase;
let server: Server;
let base: string;
let metrics: MetricsRegistry;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  metrics = createMetricsRegistry();
  server = createServer(createApp({ db: handle.db, metrics, log: silentLogger() }).callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  await handle.close();
});

const SPEC_METRICS: Array<[string, string, string[]]> = [
  ['service_executions_total', 'counter', ['node', 'type', 'status']],
  ['service_execution_duration_seconds', 'histogram', []],
  ['service_memory_operations_total', 'counter', ['type', 'scope']],
  ['service_workflow_dag_depth', 'histogram', []],
  ['service_queue_depth', 'gauge', []],
  ['service_discovery_requests_total', 'counter', ['format', 'status']],
  ['service_discovery_request_duration_seconds', 'histogram', ['format']],
  ['service_discovery_cache_hits_total', 'counter', []],
  ['service_discovery_cache_misses_total', 'counter', []],
  ['service_discovery_filter_usage_total', 'counter', ['filter_type']],
];

const WEBHOOK_METRICS = [
  'service_webhook_attempts_total',
  'service_webhook_deliveries_total',
  'service_webhook_dead_letters',
];

/** Queued executions as the async lane writes them, so the queue-depth gauge has something to read. */
async function queueExecutions(count: number): Promise<string[]> {
  const now = new Date();
  const ids = Array.from({ length: count }, (_, i) => `exec_metrics${String(i).padStart(14, '0')}`);
  await handle.db('executions').insert(
    ids.map((id) => ({
      execution_id: id,
      run_id: 'run_metrics',
      workflow_id: 'run_metrics',
      target: 'agent-a.work',
      node_id: 'agent-a',
      function_name: 'work',
      function_type: 'reasoner',
      lane: 'async',
      status: 'queued',
      input: '{}',
      available_at: now,
      created_at: now,
      updated_at: now,
    })),
  );
  return ids;
}

describe('GET /metrics', () => {
  it('answers the text exposition format 0.0.4 with every documented metric', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    await expectDocumented(base, 'GET', '/metrics', { status: 200, headers: response.headers, body: text });
    const exposition = parseExposition(text);
    for (const [name, type] of SPEC_METRICS) {
      expect(exposition.types.get(name), name).toBe(type);
      expect(exposition.help.get(name), name).toMatch(/\w/);
    }
    // Besides those (content/concepts/metrics.md), only the webhook delivery metrics (documented on the
    // webhooks page).
    const ours = [...exposition.types.keys()].filter((name) => name.startsWith('service_'));
    expect(ours.sort()).toEqual([...SPEC_METRICS.map(([n]) => n), ...WEBHOOK_METRICS].sort());
  });

  it('adds the standard process metrics: memory, heap, event-loop lag, GC and file descriptors', async () => {
    const exposition = parseExposition(await (await fetch(`${base}/metrics`)).text());
    for (const name of [
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_gc_duration_seconds',
    ]) {
      expect(exposition.types.has(name), name).toBe(true);
    }
  });

  it('shows label-free series and known discovery label sets at zero from the start', async () => {
    const fresh = createMetricsRegistry();
    createApp({ db: handle.db, metrics: fresh, log: silentLogger() });
    const exposition = parseExposition(await fresh.metrics());
    for (const name of [
      'service_discovery_cache_hits_total',
      'service_discovery_cache_misses_total',
      'service_queue_depth',
    ]) {
      expect(seriesOf(exposition, name), name).toEqual([{ name, labels: {}, value: 0 }]);
    }
    for (const name of ['service_execution_duration_seconds', 'service_workflow_dag_depth']) {
      expect(seriesOf(exposition, `${name}_count`)).toEqual([
        { name: `${name}_count`, labels: {}, value: 0 },
      ]);
      expect(seriesOf(exposition, `${name}_sum`)).toEqual([{ name: `${name}_sum`, labels: {}, value: 0 }]);
      expect(seriesOf(exposition, `${name}_bucket`).at(-1)).toEqual({
        name: `${name}_bucket`,
        labels: { le: '+Inf' },
        value: 0,
      });
    }
    const requests = seriesOf(exposition, 'service_discovery_requests_total');
    expect(requests.map((s) => `${s.labels.format}/${s.labels.status}`).sort()).toEqual([
      'compact/error',
      'compact/success',
      'json/error',
      'json/success',
      'xml/error',
      'xml/success',
    ]);
    expect(requests.every((s) => s.value === 0)).toBe(true);
    const durations = seriesOf(exposition, 'service_discovery_request_duration_seconds_count');
    expect(durations.map((s) => s.labels.format).sort()).toEqual(['compact', 'json', 'xml']);
    const filters = seriesOf(exposition, 'service_discovery_filter_usage_total');
    expect(filters.map((s) => s.labels.filter_type).sort()).toEqual([
      'agent',
      'health_status',
      'reasoner',
      'skill',
      'tag',
    ]);
    // Execution and memory label values are not known in advance: declared, no series yet.
    expect(seriesOf(exposition, 'service_executions_total')).toEqual([]);
    expect(exposition.types.get('service_memory_operations_total')).toBe('counter');
  });

  it('carries every documented label once a series exists', async () => {
    const metric = <T>(name: string) => metrics.getSingleMetric(name) as T;
    metric<Counter>('service_executions_total').inc({
      node: 'agent-a',
      type: 'reasoner',
      status: 'succeeded',
    });
    metric<Counter>('service_memory_operations_total').inc({ type: 'set', scope: 'global' }, 2);
    metric<Histogram>('service_execution_duration_seconds').observe(0.3);
    metric<Histogram>('service_workflow_dag_depth').observe(3);
    const queued = await queueExecutions(4);
    const exposition = parseExposition(await (await fetch(`${base}/metrics`)).text());
    for (const [name, type, labelNames] of SPEC_METRICS) {
      const sampleName = type === 'histogram' ? `${name}_count` : name;
      const series = seriesOf(exposition, sampleName);
      expect(series.length, name).toBeGreaterThan(0);
      for (const sample of series)
        expect(Object.keys(sample.labels).sort(), name).toEqual([...labelNames].sort());
    }
    expect(seriesOf(exposition, 'service_executions_total')).toEqual([
      {
        name: 'service_executions_total',
        labels: { node: 'agent-a', type: 'reasoner', status: 'succeeded' },
        value: 1,
      },
    ]);
    expect(seriesOf(exposition, 'service_memory_operations_total')[0]!.value).toBe(2);
    // The queue depth is read from the database at scrape time: the queue is every replica's.
    expect(seriesOf(exposition, 'service_queue_depth')[0]!.value).toBe(4);
    await handle.db('executions').whereIn('execution_id', queued).delete();
    const depth = seriesOf(exposition, 'service_workflow_dag_depth_bucket');
    expect(depth.find((s) => s.labels.le === '2')!.value).toBe(0);
    expect(depth.find((s) => s.labels.le === '3')!.value).toBe(1);
  });

  it('needs no API key and is not cached', async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 405 for other methods', async () => {
    const response = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('metrics registry', () => {
  it('renders hostile label values (node ids come from agents) so the format still parses', async () => {
    const registry = createMetricsRegistry();
    const counter = new Counter({
      name: 'test_total',
      help: 'h',
      labelNames: ['node'],
      registers: [registry],
    });
    const hostile = 'a"b\\c\nd}{,e="x"';
    counter.inc({ node: hostile });
    const exposition = parseExposition(await registry.metrics());
    expect(seriesOf(exposition, 'test_total')).toEqual([
      { name: 'test_total', labels: { node: hostile }, value: 1 },
    ]);
  });

  it('keeps apps built side by side apart: each app has its own registry', async () => {
    const a = createMetricsRegistry();
    const b = createMetricsRegistry();
    createApp({ db: handle.db, metrics: a, log: silentLogger() });
    createApp({ db: handle.db, metrics: b, log: silentLogger() });
    (a.getSingleMetric('service_executions_total') as Counter).inc({
      node: 'n',
      type: 'skill',
      status: 'failed',
    });
    expect(seriesOf(parseExposition(await b.metrics()), 'service_executions_total')).toEqual([]);
  });
});
