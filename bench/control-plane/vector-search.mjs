#!/usr/bin/env node
import { mkdtempSync, rmSync } from 'node:fs';
// Vector search through the real control plane, against its latency goals: POST
// /api/v1/memory/vector/search latency, one request at a time over HTTP, with 10,000 and then
// 100,000 stored 384-dimension vectors, for
//   - pgvector HNSW on embedded PGlite (memory.vector_search auto, ef_search 100 by default),
//   - exact search on PGlite (memory.vector_search exact: every vector scored in SQL), the reference
//     the HNSW figures are printed against as ratios,
//   - exact search on PostgreSQL (no pgvector there), when DATABASE_URL is set or BENCH_DATABASES
//     names postgres;
// and recall@10 of HNSW against the true top 10 (computed in JS, with the same float4 numbers the
// database holds; the tests hold both engines to that oracle).
// The data is synthetic and clustered: unit vectors drawn as Gaussian clouds around a few hundred
// random unit centroids, queries drawn the same way (nearest neighbours then mostly share the
// query's cluster, as with real embeddings of related texts). Uniform random vectors would be a
// much harder case for any graph index (every point is about equally far from every other).
// Vectors are loaded in bulk through the repository's encoding (insertVectors, 1,000 per
// statement); the HNSW index is built after loading (as a server builds it when the first vector
// of a dimension arrives, but in one go), and its build time is printed.
// Run from the repository root:
//   node --import tsx bench/control-plane/vector-search.mjs
// Settings: BENCH_SIZES (10000,100000), BENCH_DIMS (384), BENCH_CLUSTERS (300), BENCH_QUERIES
// HNSW queries per size (300), BENCH_EXACT_QUERIES exact queries per size and database (20 at
// 10k, 5 at 100k: exact search on PGlite takes seconds per query), BENCH_TOP_K (10),
// BENCH_EF_SEARCH (memory.vector_ef_search, 100), BENCH_DATABASES (pglite, plus postgres when
// DATABASE_URL is set), DATABASE_URL (a scratch database is created there and dropped after).
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const { Agent, request } = await import('undici');
const { openDatabase, migrateLatest, createScratchDatabase, hasPgvector } = await import(
  '@switchyard/shared/db'
);
const { createApp } = await import('../../apps/control-plane/src/app.ts');
const { defaultConfig } = await import('../../apps/control-plane/src/config.ts');
const { controlPlaneMigrations } = await import('../../apps/control-plane/src/migrations/index.ts');
const { silentLogger } = await import('../../apps/control-plane/src/platform/logger.ts');
const { encodeEmbedding, insertVectors, createHnswIndex } = await import(
  '../../apps/control-plane/src/modules/memory/vector-repository.ts'
);

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const DIMS = Number(process.env.BENCH_DIMS ?? 384);
const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 300);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const TOP_K = Number(process.env.BENCH_TOP_K ?? 10);
const EF_SEARCH = Number(process.env.BENCH_EF_SEARCH ?? 100);
const DATABASE_URL = process.env.DATABASE_URL;
const DATABASES = (process.env.BENCH_DATABASES ?? (DATABASE_URL ? 'pglite,postgres' : 'pglite'))
  .split(',')
  .map((s) => s.trim());
const exactQueries = (size) => Number(process.env.BENCH_EXACT_QUERIES ?? (size >= 50_000 ? 5 : 20));
const GOAL_P99_MS = 20;
const GOAL_RECALL = 0.95;

const started = performance.now();
const loadBefore = loadavg()[0];
const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
const say = (line) => console.log(`[${seconds()} s] ${line}`);

// ── Data ────────────────────────────────────────────────────────────────────────────────────────
/** mulberry32: a deterministic source, so every run measures the same vectors. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussianInto(next, out) {
  for (let i = 0; i < out.length; i++) {
    const u = Math.max(next(), 1e-12);
    out[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  }
  return out;
}

function normalise(v) {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

const next = random(384_100_000);
const centroids = Array.from({ length: CLUSTERS }, () =>
  normalise(gaussianInto(next, new Float64Array(DIMS))),
);
/** Spread around a centroid: the noise's norm is about 0.6 against the centroid's 1. */
const SPREAD = 0.6 / Math.sqrt(DIMS);

/** One clustered unit vector as float4 numbers (what the database keeps), and its cluster. */
function draw(source) {
  const cluster = Math.floor(source() * CLUSTERS);
  const noise = gaussianInto(source, new Float64Array(DIMS));
  const centroid = centroids[cluster];
  const v = new Float64Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = centroid[i] + SPREAD * noise[i];
  return { cluster, vector: Float32Array.from(normalise(v)) };
}

const maxSize = Math.max(...SIZES);
say(`drawing ${maxSize} vectors of ${DIMS} dimensions around ${CLUSTERS} centroids`);
const dataSource = random(7);
const data = Array.from({ length: maxSize }, () => draw(dataSource));
const querySource = random(11);
const queries = Array.from({ length: QUERIES }, () => draw(querySource));
const keyOf = (i) => `doc-${String(i).padStart(6, '0')}`;

/**
 * The true top k of a query among the first `size` vectors (those the filter accepts, when there
 * is one): cosine similarity from the float4 numbers, as the server scores.
 */
function trueTopK(query, size, filter) {
  const q = query.vector;
  let qn = 0;
  for (const x of q) qn += x * x;
  qn = Math.sqrt(qn);
  const best = [];
  for (let n = 0; n < size; n++) {
    if (filter && !filter.accepts(data[n].cluster)) continue;
    const v = data[n].vector;
    let dot = 0;
    let vn = 0;
    for (let i = 0; i < DIMS; i++) {
      dot += q[i] * v[i];
      vn += v[i] * v[i];
    }
    const score = dot / (Math.sqrt(vn) * qn);
    if (best.length < TOP_K || score > best[best.length - 1].score) {
      best.push({ key: keyOf(n), score });
      best.sort((a, b) => b.score - a.score);
      if (best.length > TOP_K) best.pop();
    }
  }
  return best.map((b) => b.key);
}

// ── Servers and requests ────────────────────────────────────────────────────────────────────────
const client = new Agent({ connections: 2, keepAliveTimeout: 60_000 });

async function listen(db, vectorSearch) {
  const config = defaultConfig();
  config.memory.vectorSearch = vectorSearch;
  config.memory.vectorEfSearch = EF_SEARCH;
  const server = createServer(createApp({ db, config, log: silentLogger() }).callback());
  // Kept open across the seconds the oracle and the loading take between measurements.
  server.keepAliveTimeout = 600_000;
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${server.address().port}`, server };
}

/**
 * What is searched: every vector (`all`); half of them (`half`: a metadata filter on the parity
 * of the cluster, the query's own half, too broad to compare every match); only the query's own
 * cluster (`own cluster`: a filter matching 1/CLUSTERS of the vectors, nearest ones included); or
 * another cluster (`other cluster`: no match near the query). Filters are `metadata @>` objects.
 */
const VARIANTS = {
  all: () => undefined,
  half: (query) => ({
    filters: { even: query.cluster % 2 === 0 },
    accepts: (cluster) => cluster % 2 === query.cluster % 2,
  }),
  'own cluster': (query) => ({ filters: { cluster: query.cluster }, accepts: (c) => c === query.cluster }),
  'other cluster': (query) => {
    const other = (query.cluster + 1) % CLUSTERS;
    return { filters: { cluster: other }, accepts: (c) => c === other };
  },
};

/** Request bodies, written before timing so the client's work stays out of the figures. */
const bodies = Object.fromEntries(
  Object.entries(VARIANTS).map(([variant, filterOf]) => [
    variant,
    queries.map((query) => {
      const filter = filterOf(query);
      return JSON.stringify({
        query_embedding: Array.from(query.vector),
        top_k: TOP_K,
        ...(filter ? { filters: filter.filters } : {}),
      });
    }),
  ]),
);

async function searchOnce(base, body) {
  const response = await request(`${base}/api/v1/memory/vector/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher: client,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200)
    throw new Error(`search answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text).results.map((r) => r.key);
}

const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
const pct = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;

/**
 * Latency of `count` searches one at a time (after `warm` untimed ones), and their recall@k
 * against the true top k of the first `size` vectors.
 */
async function measure(base, variant, count, warm, size) {
  const list = bodies[variant];
  for (let i = 0; i < warm; i++) await searchOnce(base, list[(QUERIES - 1 - i) % QUERIES]);
  const times = [];
  let found = 0;
  let expected = 0;
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const keys = await searchOnce(base, list[i % QUERIES]);
    times.push(performance.now() - t);
    const want = new Set(truthFor(size, variant)[i % QUERIES]);
    found += keys.filter((k) => want.has(k)).length;
    expected += want.size;
  }
  const sorted = Float64Array.from(times).sort();
  return { variant, count, p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), recall: found / expected };
}

/** Loads vectors [from, to) into global through the repository's bulk insert. */
async function load(db, from, to) {
  const at = new Date();
  const ref = { scope: 'global', scopeId: 'global' };
  for (let start = from; start < to; start += 1000) {
    const rows = [];
    for (let n = start; n < Math.min(to, start + 1000); n++) {
      rows.push({
        ref,
        key: keyOf(n),
        embedding: encodeEmbedding(Array.from(data[n].vector)),
        metadata: JSON.stringify({ cluster: data[n].cluster, even: data[n].cluster % 2 === 0 }),
      });
    }
    await insertVectors(db, rows, at);
  }
}

// ── Runs ────────────────────────────────────────────────────────────────────────────────────────
const rows = [];
const truth = new Map();
function truthFor(size, variant) {
  const key = `${size} ${variant}`;
  if (!truth.has(key)) {
    const t = performance.now();
    truth.set(
      key,
      queries.map((q) => trueTopK(q, size, VARIANTS[variant](q))),
    );
    const took = ((performance.now() - t) / 1000).toFixed(1);
    say(`true top ${TOP_K} of ${QUERIES} queries at ${size} (${variant}): ${took} s in JS`);
  }
  return truth.get(key);
}

async function runPglite() {
  const dir = mkdtempSync(join(tmpdir(), 'sy-vector-bench-'));
  const db = await openDatabase({ dataDir: dir });
  try {
    await migrateLatest(db, controlPlaneMigrations);
    if (!(await hasPgvector(db))) throw new Error('PGlite without pgvector?');
    const auto = await listen(db, 'auto');
    const exact = await listen(db, 'exact');
    let loaded = 0;
    for (const size of SIZES) {
      // The index is dropped while loading and built again after: one build is far faster than
      // inserting 90,000 vectors into an existing graph one by one.
      await db.raw(`drop index if exists memory_vectors_hnsw_${DIMS}`);
      let t = performance.now();
      await load(db, loaded, size);
      loaded = size;
      const loadS = (performance.now() - t) / 1000;
      say(`PGlite: ${size} vectors loaded (${loadS.toFixed(1)} s)`);
      t = performance.now();
      // The build keeps the graph in maintenance_work_mem when it fits (64 MB by default: too
      // small for 100,000 × 384 floats); beyond, it builds on disk, much slower. No parallel
      // build: PGlite has no worker processes, and asking for one maps shared memory it lacks.
      await db.raw(`set maintenance_work_mem = '1GB'`);
      await db.raw('set max_parallel_maintenance_workers = 0');
      await createHnswIndex(db, DIMS);
      await db.raw('reset maintenance_work_mem');
      await db.raw('reset max_parallel_maintenance_workers');
      const buildS = (performance.now() - t) / 1000;
      say(`PGlite: HNSW index on ${size} vectors built (${buildS.toFixed(1)} s)`);
      // Before timing: the oracle blocks this thread (the server's too) for seconds.
      for (const variant of Object.keys(VARIANTS)) truthFor(size, variant);
      const runs = [
        ['auto (pgvector)', await measure(auto.url, 'all', QUERIES, 20, size)],
        ['auto (pgvector)', await measure(auto.url, 'half', Math.min(QUERIES, 100), 5, size)],
        ['auto (pgvector)', await measure(auto.url, 'own cluster', Math.min(QUERIES, 100), 5, size)],
        ['auto (pgvector)', await measure(auto.url, 'other cluster', 10, 1, size)],
        ['exact', await measure(exact.url, 'all', exactQueries(size), 1, size)],
      ];
      for (const [engine, run] of runs) {
        say(
          `PGlite ${engine} at ${size} (${run.variant}): p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, recall ${run.recall.toFixed(3)}`,
        );
        rows.push({
          database: 'PGlite',
          size,
          engine,
          ...run,
          loadS,
          buildS: engine === 'exact' ? undefined : buildS,
        });
      }
    }
    for (const s of [auto, exact]) s.server.close();
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runPostgres() {
  const scratch = await createScratchDatabase(
    DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    'sy_bench',
  );
  const db = await openDatabase({ url: scratch.url });
  try {
    await migrateLatest(db, controlPlaneMigrations);
    const pgvector = await hasPgvector(db);
    const auto = await listen(db, 'auto');
    let loaded = 0;
    for (const size of SIZES) {
      const t = performance.now();
      await load(db, loaded, size);
      loaded = size;
      await db.raw('analyze memory_vectors');
      const loadS = (performance.now() - t) / 1000;
      say(
        `PostgreSQL: ${size} vectors loaded (${loadS.toFixed(1)} s); pgvector ${pgvector ? 'present' : 'absent'}`,
      );
      const run = await measure(auto.url, 'all', exactQueries(size), 1, size);
      say(
        `PostgreSQL at ${size}: p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, recall ${run.recall.toFixed(3)}`,
      );
      rows.push({
        database: 'PostgreSQL 15',
        size,
        engine: pgvector ? 'auto' : 'exact (no pgvector)',
        ...run,
        loadS,
      });
    }
    auto.server.close();
  } finally {
    await db.destroy();
    await scratch.drop();
  }
}

if (DATABASES.includes('pglite')) await runPglite();
if (DATABASES.includes('postgres')) await runPostgres();
await client.close();

// ── Report ──────────────────────────────────────────────────────────────────────────────────────
console.log(
  `\nVector search, ${DIMS} dimensions, ${CLUSTERS} clusters, top ${TOP_K}, ef_search ${EF_SEARCH}, one request at a time over HTTP`,
);
console.log(
  `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after; ${seconds()} s in all\n`,
);
console.log(
  '| database | vectors | engine | searched | queries | p50 ms | p99 ms | recall@10 | p50, p99 ÷ PGlite exact | load s | index build s |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const ref = rows.find((x) => x.database === 'PGlite' && x.engine === 'exact' && x.size === r.size);
  const ratio = ref ? `${(r.p50 / ref.p50).toFixed(4)}, ${(r.p99 / ref.p99).toFixed(4)}` : '–';
  console.log(
    `| ${r.database} | ${r.size} | ${r.engine} | ${r.variant} | ${r.count} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.recall.toFixed(3)} | ${ratio} | ${r.loadS.toFixed(1)} | ${r.buildS?.toFixed(1) ?? '–'} |`,
  );
}
let misses = 0;
for (const r of rows.filter(
  (x) => x.engine === 'auto (pgvector)' && x.variant === 'all' && x.size >= 100_000,
)) {
  const p99 = r.p99 < GOAL_P99_MS;
  const recall = r.recall >= GOAL_RECALL;
  if (!p99 || !recall) misses += 1;
  console.log(
    `\nGoal at ${r.size} × ${DIMS}: p99 < ${GOAL_P99_MS} ms: ${p99 ? 'PASS' : 'MISS'} (${ms(r.p99)} ms); recall@10 ≥ ${GOAL_RECALL}: ${recall ? 'PASS' : 'MISS'} (${r.recall.toFixed(3)})`,
  );
}
if (!rows.some((x) => x.engine === 'auto (pgvector)' && x.size >= 100_000))
  console.log('\nGoal not measured: no 100,000-vector HNSW run.');
process.exitCode = misses > 0 ? 2 : 0;
