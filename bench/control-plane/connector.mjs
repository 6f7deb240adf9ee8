#!/usr/bin/env node
// The connector's lists (GET /connector/reasoners, /connector/groups) over a large fleet: 120 nodes
// of 1,000 functions each, registered through the real API. Run from the repository root:
//   node --import tsx bench/control-plane/connector.mjs            (embedded PGlite)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/control-plane/connector.mjs
// Settings: BENCH_NODES (120), BENCH_FUNCTIONS per node (1000), BENCH_CRAWLERS (6),
// BENCH_DURATION seconds of the cached run (5), BENCH_CONNECTIONS (10).
// It measures: one crawl of each list following next_cursor (limit at its maximum), cold (the
// fleet read from the database) and warm; BENCH_CRAWLERS clients crawling the function list at once
// right after a node change cleared the cache, with the process's peak RSS and the slowest
// GET /api/v1/health answer meanwhile; and a cached page under autocannon. A server without
// paging answers the whole list as one page, so the same script measures it too.
import autocannon from 'autocannon';
import { startServer } from '../../apps/control-plane/src/server.ts';
import { benchStorage, registerFleet, startHealthyAgent } from './fleet.mjs';

const NODES = Number(process.env.BENCH_NODES ?? 120);
const FUNCTIONS = Number(process.env.BENCH_FUNCTIONS ?? 1000);
const CRAWLERS = Number(process.env.BENCH_CRAWLERS ?? 6);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TOKEN = 'bench-connector-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const agent = await startHealthyAgent();
const storage = await benchStorage('connector');

/** One node of the fleet: three reasoners to a skill, each with a short description and a tag. */
const describeNode = (id) => ({
  id,
  version: '1.0.0',
  base_url: agent.url,
  reasoners: Array.from({ length: FUNCTIONS - Math.floor(FUNCTIONS / 4) }, (_, i) => ({
    id: `reasoner_${i}`,
    description: `${id} reasoner ${i}`,
    tags: ['bench'],
  })),
  skills: Array.from({ length: Math.floor(FUNCTIONS / 4) }, (_, i) => ({
    id: `skill_${i}`,
    description: `${id} skill ${i}`,
    tags: ['bench'],
  })),
});

/** Follows next_cursor from the first page; how long it took, the pages, and the largest page. */
async function crawl(url, list, limit) {
  const started = performance.now();
  let cursor = null;
  let pages = 0;
  let entries = 0;
  let bytes = 0;
  let largest = 0;
  do {
    const query = `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const response = await fetch(`${url}/connector/${list}?${query}`, { headers: AUTH });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`${list} answered ${response.status}: ${text.slice(0, 200)}`);
    const body = JSON.parse(text);
    pages += 1;
    entries += body[list].length;
    bytes += Buffer.byteLength(text);
    largest = Math.max(largest, Buffer.byteLength(text));
    cursor = body.next_cursor ?? null;
  } while (cursor !== null);
  return { ms: performance.now() - started, pages, entries, bytes, largest };
}

/** The slowest health answer and the peak RSS while `work` runs. */
async function underLoad(url, work) {
  let slowestHealth = 0;
  let peakRss = process.memoryUsage().rss;
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${url}/api/v1/health`).then((r) => r.arrayBuffer());
      slowestHealth = Math.max(slowestHealth, performance.now() - started);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      await new Promise((done) => setTimeout(done, 100));
    }
  })();
  const started = performance.now();
  try {
    await work();
  } finally {
    running = false;
    await probe;
  }
  return { ms: performance.now() - started, slowestHealth, peakRss };
}

const running = await startServer({
  env: {
    CONTROL_PLANE_PORT: '0',
    LOG_LEVEL: 'silent',
    SERVICE_CONNECTOR_TOKEN: TOKEN,
    // The fleet stays as registered while measuring: the bench agent does not heartbeat.
    SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '1h',
    SWITCHYARD_NODE_LIFECYCLE_MAX_TRANSITION_TIME: '1h',
    ...storage.env,
  },
});
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
try {
  const registrationMs = await registerFleet(running.url, NODES, describeNode);
  const rssBefore = process.memoryUsage().rss;
  // The first page on an empty cache: the fleet is read from the database and indexed.
  const firstStarted = performance.now();
  const first = await fetch(`${running.url}/connector/reasoners?limit=1000`, { headers: AUTH });
  const firstBytes = (await first.arrayBuffer()).byteLength;
  const firstMs = performance.now() - firstStarted;
  await registerFleet(running.url, 1, (id) => ({ ...describeNode(`${id}-clear`), id: `${id}-clear` }));
  const cold = await crawl(running.url, 'reasoners', 1000);
  const warm = await crawl(running.url, 'reasoners', 1000);
  const groups = await crawl(running.url, 'groups', 500);

  // A node change clears the cache; then every crawler starts at once.
  await registerFleet(running.url, 1, (id) => ({ ...describeNode(`${id}-late`), id: `${id}-late` }));
  const load = await underLoad(running.url, () =>
    Promise.all(Array.from({ length: CRAWLERS }, () => crawl(running.url, 'reasoners', 1000))),
  );

  const cached = await autocannon({
    url: `${running.url}/connector/reasoners?limit=100`,
    headers: AUTH,
    connections: CONNECTIONS,
    duration: DURATION,
  });

  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
  console.log(`
Connector lists: ${NODES} nodes × ${FUNCTIONS} functions, ${database}
  registration: ${(registrationMs / 1000).toFixed(1)} s; RSS after it ${mb(rssBefore)} MiB
  first page on an empty cache: ${firstMs.toFixed(0)} ms, ${mb(firstBytes)} MiB
| run | pages | entries | total MiB | largest page MiB | ms |
|---|---|---|---|---|---|
| reasoners, cold (fleet read) | ${cold.pages} | ${cold.entries} | ${mb(cold.bytes)} | ${mb(cold.largest)} | ${cold.ms.toFixed(0)} |
| reasoners, warm (cached) | ${warm.pages} | ${warm.entries} | ${mb(warm.bytes)} | ${mb(warm.largest)} | ${warm.ms.toFixed(0)} |
| groups | ${groups.pages} | ${groups.entries} | ${mb(groups.bytes)} | ${mb(groups.largest)} | ${groups.ms.toFixed(0)} |
  ${CRAWLERS} crawlers at once after a node change: ${load.ms.toFixed(0)} ms, peak RSS ${mb(load.peakRss)} MiB, slowest health answer ${load.slowestHealth.toFixed(0)} ms
  cached page (limit 100) under autocannon, ${CONNECTIONS} connections: ${Math.round(cached.requests.average)} req/s, p50 ${cached.latency.p50} ms, p99 ${cached.latency.p99} ms, failures ${cached.non2xx + cached.errors + cached.timeouts}
`);
  if (cached.non2xx + cached.errors + cached.timeouts > 0) process.exitCode = 1;
} finally {
  await running.close();
  await agent.close();
  await storage.remove();
}
