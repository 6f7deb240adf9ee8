#!/usr/bin/env node
// Discovery throughput of the real control-plane server with 1,000 registered nodes, in each
// format (json, xml, compact), served from the cache and computed every time.
// Run from the repository root:
//   node --import tsx bench/control-plane/discovery.mjs            (embedded PGlite)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/control-plane/discovery.mjs
// Settings: BENCH_NODES (1000), BENCH_DURATION seconds per run (5), BENCH_CONNECTIONS (10),
// BENCH_QUERY (extra query string, e.g. "limit=500" or "tags=text&include_input_schema=true").
// Three runs per format: "uncached" (a server with SWITCHYARD_DISCOVERY_CACHE_TTL=0: every request
// reads the fleet from the database), "cached" (default 30 s TTL, one repeated query: answers come
// from the answer cache) and "varied" (30 s TTL, every request a different query: answers are
// computed from the cached fleet snapshot). The fleet is kept stable while measuring (long
// heartbeat TTL) so presence sweeps do not clear the cache mid-run; a real fleet's status changes
// clear it, by design. With DATABASE_URL a throwaway database is created there and dropped afterwards.
import autocannon from 'autocannon';
import { startServer } from '../../apps/control-plane/src/server.ts';
import { benchStorage, registerFleet, startHealthyAgent } from './fleet.mjs';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const EXTRA_QUERY = process.env.BENCH_QUERY ?? '';
const FORMATS = ['json', 'xml', 'compact'];

const agent = await startHealthyAgent();
const storage = await benchStorage('discovery');
const env = (cacheTtl) => ({
  CONTROL_PLANE_PORT: '0',
  LOG_LEVEL: 'silent',
  SWITCHYARD_DISCOVERY_CACHE_TTL: cacheTtl,
  SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '1h',
  SWITCHYARD_NODE_LIFECYCLE_MAX_TRANSITION_TIME: '1h',
  ...storage.env,
});

/** One node of the fleet: two reasoners and a skill, tags spread over ten groups. */
const describeNode = (id, i) => ({
  id,
  version: '1.0.0',
  base_url: agent.url,
  reasoners: [
    {
      id: 'summarize',
      description: 'Summarizes a text',
      input_schema: { type: 'object', properties: { text: { type: 'string' } } },
      tags: ['text', `group-${i % 10}`],
    },
    { id: 'translate', tags: ['text', 'language'] },
  ],
  skills: [{ id: 'word_count', tags: ['text'] }],
});

async function measure(url, format, varied) {
  const path = `/api/v1/discovery/capabilities?format=${format}${EXTRA_QUERY ? `&${EXTRA_QUERY}` : ''}`;
  const probe = await fetch(`${url}${path}`);
  const bytes = (await probe.arrayBuffer()).byteLength;
  if (probe.status !== 200) throw new Error(`${path} answered ${probe.status}`);
  let next = 0;
  const result = await autocannon({
    url: `${url}${path}`,
    connections: CONNECTIONS,
    duration: DURATION,
    // A different page each time: a new cache key for every request.
    requests: varied
      ? [
          {
            setupRequest: (request) => ({
              ...request,
              path: `${path}&offset=${next % 1000}&limit=${1 + (Math.floor(next++ / 1000) % 100)}`,
            }),
          },
        ]
      : undefined,
  });
  return {
    format,
    bytes,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

async function cacheCounters(url) {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  // The answer cache is bounded by bytes (32 MiB); the health check says how full it ended.
  const { cache } = (await fetch(`${url}/api/v1/health`).then((r) => r.json())).checks;
  return {
    hits: read('service_discovery_cache_hits_total'),
    misses: read('service_discovery_cache_misses_total'),
    entries: cache.entries,
    bytes: cache.bytes,
  };
}

const rows = [];
let registrationMs = 0;
for (const [label, ttl, varied] of [
  ['uncached', '0', false],
  ['cached', '30s', false],
  ['varied', '30s', true],
]) {
  const running = await startServer({ env: env(ttl) });
  try {
    if (label === 'uncached') registrationMs = await registerFleet(running.url, NODES, describeNode);
    for (const format of FORMATS) rows.push({ label, ...(await measure(running.url, format, varied)) });
    const { hits, misses, entries, bytes } = await cacheCounters(running.url);
    const kept = `${entries} answers, ${(bytes / 1024 / 1024).toFixed(1)} MiB in cache`;
    for (const row of rows) if (row.label === label) row.cache = `${hits} hits / ${misses} misses, ${kept}`;
  } finally {
    await running.close();
  }
}

await agent.close();
await storage.remove();

const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
console.log(`
Discovery benchmark: ${NODES} registered nodes, ${database}, ${CONNECTIONS} connections, ${DURATION} s per run
  query: format=<format>${EXTRA_QUERY ? `&${EXTRA_QUERY}` : ''} (default page: limit 100)
  registration: ${NODES} nodes in ${(registrationMs / 1000).toFixed(2)} s
| cache | format | answer bytes | req/s | p50 ms | p99 ms | failures |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.label} | ${r.format} | ${r.bytes} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.failures} |`).join('\n')}
cache counters per server: ${[...new Set(rows.map((r) => `${r.label}: ${r.cache}`))].join('; ')}
`);
if (rows.some((r) => r.failures > 0)) process.exitCode = 1;
