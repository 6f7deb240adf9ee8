#!/usr/bin/env node
// Key-value memory through the real control-plane server, on PostgreSQL and on embedded PGlite in
// one run:
//   1. get latency one request at a time (p50/p99), interleaved with two references: a bare
//      node:http server answering the same JSON (the HTTP floor of this machine) and
//      GET /api/v1/health (the same Koa stack and one database round trip, `select 1`);
//   2. gets/s and sets/s at N connections (autocannon), keys spread over a few workflows, against
//      the same two references' req/s;
//   3. sets to ONE hot key (its advisory lock serialises them) against sets to distinct keys;
//   4. afterwards, every acknowledged (2xx) set must be in the event log (stream 'memory').
// Run from the repository root:
//   node --import tsx bench/control-plane/memory.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a scratch database is created
// on that server and dropped afterwards), BENCH_DATABASES (postgres,pglite), BENCH_DURATION seconds
// per throughput run (5), BENCH_CONNECTIONS (10), BENCH_CALLS sequential requests per side (2000),
// BENCH_KEYS (1000), BENCH_WORKFLOWS the keys are spread over (4), BENCH_VALUE_BYTES (200).
// The reference server is a child process; the load generator runs in a worker thread (autocannon
// `workers: 1`), so neither shares the control plane's event loop. Worker threads load functions
// from files only, so the key rotation is written as a small CommonJS module into a temp dir.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresBackendTicks } from './lane-kit.mjs';

if (process.argv[2] === '--reference') runReference();
else await main();

// ── The reference server (child process) ────────────────────────────────────────────────────────
// Answers every request with 200 and the JSON it was given over IPC (a real get answer), with the
// headers a memory answer has that matter to the client: the HTTP floor, no framework, no database.
function runReference() {
  let answer = '{}';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(answer);
    });
  });
  process.on('message', (message) => {
    if (message.cmd === 'answer') {
      answer = message.body;
      process.send({ event: 'answering' });
    } else if (message.cmd === 'stop') {
      server.close();
      process.disconnect();
    }
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => {
    process.send({ event: 'listening', url: `http://127.0.0.1:${server.address().port}` });
  });
}

/**
 * The autocannon `setupRequest` of the rotating runs, written into a module for the worker thread:
 * request n reads or writes key `k{n mod keys}` in workflow `wf_{n mod workflows}` (the headers
 * choose the scope). The counter is shared by all connections, so the keys in flight at one time
 * are consecutive and distinct: no two concurrent sets wait for the same key's lock.
 */
function keyRotation({ kind, keys, workflows, data }) {
  let next = 0;
  return function setupRequest(request) {
    const i = next++ % keys;
    const body = kind === 'set' ? JSON.stringify({ key: `k${i}`, data }) : JSON.stringify({ key: `k${i}` });
    return { ...request, body, headers: { ...request.headers, 'x-workflow-id': `wf_${i % workflows}` } };
  };
}

// ── The benchmark (parent process) ──────────────────────────────────────────────────────────────
async function main() {
  const { default: autocannon } = await import('autocannon');
  const { Agent, request } = await import('undici');
  const { startServer } = await import('../../apps/control-plane/src/server.ts');
  const { createScratchDatabase } = await import('@switchyard/shared/db');

  const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const DATABASES = (process.env.BENCH_DATABASES ?? 'postgres,pglite').split(',').map((s) => s.trim());
  const DURATION = Number(process.env.BENCH_DURATION ?? 5);
  const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
  const KEYS = Number(process.env.BENCH_KEYS ?? 1000);
  const WORKFLOWS = Number(process.env.BENCH_WORKFLOWS ?? 4);
  const VALUE_BYTES = Number(process.env.BENCH_VALUE_BYTES ?? 200);
  /** The value every set writes: an object whose JSON is about VALUE_BYTES long. */
  const DATA = { step: 3, done: false, draft: 'x'.repeat(Math.max(0, VALUE_BYTES - 40)) };
  const started = performance.now();
  const loadBefore = loadavg()[0];

  const scratchDir = mkdtempSync(join(tmpdir(), 'sy-bench-memory-'));
  const rotation = {};
  for (const kind of ['get', 'set']) {
    rotation[kind] = join(scratchDir, `${kind}-rotation.cjs`);
    const config = { kind, keys: KEYS, workflows: WORKFLOWS, data: DATA };
    writeFileSync(rotation[kind], `module.exports = (${keyRotation})(${JSON.stringify(config)});\n`);
  }

  // The reference server, and a request/answer helper over its IPC channel.
  const referenceProcess = fork(fileURLToPath(import.meta.url), ['--reference'], { execArgv: [] });
  const waiting = new Map();
  referenceProcess.on('message', (message) => {
    const wake = waiting.get(message.event);
    waiting.delete(message.event);
    wake?.(message);
  });
  const nextMessage = (event) => new Promise((resolve) => waiting.set(event, resolve));
  const referenceUrl = (await nextMessage('listening')).url;
  const client = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 30_000 });

  /** One request through undici; resolves with the status and the body text. */
  async function send(url, { method = 'POST', body, workflow } = {}) {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    if (workflow !== undefined) headers['x-workflow-id'] = workflow;
    const response = await request(url, { method, headers, body, dispatcher: client });
    return { status: response.statusCode, text: await response.body.text() };
  }

  const keyOf = (i) => ({ key: `k${i % KEYS}`, workflow: `wf_${(i % KEYS) % WORKFLOWS}` });
  const setBody = (key) => JSON.stringify({ key, data: DATA });

  /** Nearest-rank percentile of an ascending array. */
  const pct = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const ascending = (values) => Float64Array.from(values).sort();

  /** The control plane's thread (event-loop active time) and its PostgreSQL backends, over a step. */
  function cpuMeter(databaseName) {
    const loop = performance.eventLoopUtilization();
    const pg = postgresBackendTicks(databaseName);
    return () => {
      const busy = performance.eventLoopUtilization(loop);
      let pgTicks = 0;
      for (const [pid, ticks] of postgresBackendTicks(databaseName)) pgTicks += ticks - (pg.get(pid) ?? 0);
      return {
        elu: busy.utilization,
        controlPlaneMs: busy.active,
        postgresMs: databaseName ? pgTicks * 10 : Number.NaN,
      };
    };
  }

  /**
   * Times the SQL statements the server runs (knex query events: from the moment a statement is
   * sent on a connection to its answer), sorted into the memory get's `select` and the health
   * check's `select 1`.
   */
  function sqlTimer(db) {
    const open = new Map();
    const times = { get: [], probe: [] };
    let on = false;
    db.on('query', (q) => {
      if (on) open.set(q.__knexQueryUid, { at: performance.now(), sql: q.sql });
    });
    const end = (_answer, q) => {
      const entry = open.get(q.__knexQueryUid);
      open.delete(q.__knexQueryUid);
      if (!entry) return;
      const ms = performance.now() - entry.at;
      if (entry.sql.includes('from memory_entries')) times.get.push(ms);
      else if (/^\s*select 1\s*$/.test(entry.sql)) times.probe.push(ms);
    };
    db.on('query-response', end);
    db.on('query-error', end);
    return {
      start() {
        times.get = [];
        times.probe = [];
        on = true;
      },
      stop() {
        on = false;
        const get = ascending(times.get);
        const probe = ascending(times.probe);
        return { getP50: pct(get, 0.5), probeP50: pct(probe, 0.5), gets: get.length };
      },
    };
  }

  /** Writes every key once, CONNECTIONS at a time; resolves with the 2xx count. */
  async function seed(cpUrl) {
    let next = 0;
    let ok = 0;
    let failures = 0;
    const lane = async () => {
      while (next < KEYS) {
        const { key, workflow } = keyOf(next++);
        const { status } = await send(`${cpUrl}/api/v1/memory/set`, { body: setBody(key), workflow });
        if (status >= 200 && status < 300) ok += 1;
        else failures += 1;
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, lane));
    return { ok, failures };
  }

  /**
   * Latency one request at a time: the bare reference, the health check and a memory get of an
   * existing key, in turn (so the machine's load drifts over all three alike), after 100 of each
   * to warm up. Every answer must be 200.
   */
  async function latency(cpUrl, timer) {
    const sides = {
      bare: (i) => send(`${referenceUrl}/api/v1/memory/get`, { body: JSON.stringify({ key: keyOf(i).key }) }),
      health: () => send(`${cpUrl}/api/v1/health`, { method: 'GET' }),
      get: (i) => {
        const { key, workflow } = keyOf(i);
        return send(`${cpUrl}/api/v1/memory/get`, { body: JSON.stringify({ key }), workflow });
      },
    };
    const times = { bare: [], health: [], get: [] };
    let failures = 0;
    for (let i = 0; i < CALLS + 100; i++) {
      if (i === 100) timer.start();
      for (const [side, run] of Object.entries(sides)) {
        const t = performance.now();
        const { status } = await run(i * 7919); // a stride, so consecutive gets hit other keys
        const ms = performance.now() - t;
        if (status !== 200) failures += 1;
        if (i >= 100) times[side].push(ms);
      }
    }
    const sql = timer.stop();
    const out = { failures, sql };
    for (const [side, list] of Object.entries(times)) {
      const sorted = ascending(list);
      out[side] = { p50: pct(sorted, 0.5), p99: pct(sorted, 0.99) };
    }
    return out;
  }

  /**
   * On PostgreSQL, samples pg_stat_activity every 20 ms on a connection of its own while a run
   * goes: how many of the database's backends were running a statement, and how many of those
   * were waiting for an advisory lock (a memory key's). Undefined on PGlite: one connection, so
   * no statement ever waits for another's lock.
   */
  async function lockSampler(scratchUrl) {
    if (!scratchUrl) return undefined;
    const { default: pg } = await import('pg');
    const probe = new pg.Client({ connectionString: scratchUrl });
    await probe.connect();
    let samples = 0;
    let active = 0;
    let waiting = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const { rows } = await probe.query(
          `select count(*) filter (where state = 'active')::int as active,
                  count(*) filter (where wait_event_type = 'Lock' and wait_event = 'advisory')::int as waiting
             from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
        );
        samples += 1;
        active += rows[0].active;
        waiting += rows[0].waiting;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
      await probe.end();
      return { active: active / samples, waiting: waiting / samples };
    };
  }

  /** autocannon in a worker thread, measured: req/s, latency, failures and CPU per request. */
  async function cannon(options, databaseName, scratchUrl) {
    const meter = cpuMeter(databaseName);
    const locks = await lockSampler(scratchUrl);
    const r = await autocannon({ workers: 1, connections: CONNECTIONS, duration: DURATION, ...options });
    const cpu = meter();
    const backends = await locks?.();
    const total = r.requests.total;
    return {
      total,
      ok: r['2xx'],
      rps: total / (r.duration || DURATION),
      p50: r.latency.p50,
      p99: r.latency.p99,
      failures: r.non2xx + r.errors + r.timeouts,
      elu: cpu.elu,
      cpMs: cpu.controlPlaneMs / total,
      pgMs: cpu.postgresMs / total,
      backends,
    };
  }

  const json = { 'content-type': 'application/json' };
  const runs = {
    bare: () => ({
      url: `${referenceUrl}/api/v1/memory/get`,
      method: 'POST',
      headers: json,
      body: '{"key":"k1"}',
    }),
    health: (cpUrl) => ({ url: `${cpUrl}/api/v1/health` }),
    get: (cpUrl) => ({
      url: `${cpUrl}/api/v1/memory/get`,
      requests: [{ method: 'POST', headers: json, setupRequest: rotation.get }],
    }),
    set: (cpUrl) => ({
      url: `${cpUrl}/api/v1/memory/set`,
      requests: [{ method: 'POST', headers: json, setupRequest: rotation.set }],
    }),
    hot: (cpUrl) => ({
      url: `${cpUrl}/api/v1/memory/set`,
      method: 'POST',
      headers: { ...json, 'x-workflow-id': 'wf_0' },
      body: setBody('hot'),
    }),
  };

  /** Everything for one database. */
  async function benchDatabase(kind) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-memory-data-'));
    const scratch = kind === 'postgres' ? await createScratchDatabase(DATABASE_URL, 'sy_bench') : null;
    const running = await startServer({
      env: {
        CONTROL_PLANE_PORT: '0',
        LOG_LEVEL: 'silent',
        SWITCHYARD_DATA_DIR: dataDir,
        ...(scratch ? { DATABASE_URL: scratch.url } : {}),
      },
    });
    const databaseName = scratch ? new URL(scratch.url).pathname.slice(1) : undefined;
    const cpUrl = running.url;
    const timer = sqlTimer(running.db);
    const step = (label) =>
      console.error(`[${kind}] ${label} (${Math.round(performance.now() - started) / 1000} s)`);
    const out = { kind };
    let acknowledged = 0;
    let failures = 0;
    try {
      step(`seeding ${KEYS} keys over ${WORKFLOWS} workflows`);
      const seeded = await seed(cpUrl);
      acknowledged += seeded.ok;
      failures += seeded.failures;
      // The reference answers exactly what a get of an existing key answers.
      const sample = await send(`${cpUrl}/api/v1/memory/get`, {
        body: '{"key":"k1"}',
        workflow: keyOf(1).workflow,
      });
      if (sample.status !== 200) throw new Error(`get of a seeded key answered ${sample.status}`);
      out.answerBytes = Buffer.byteLength(sample.text);
      const answering = nextMessage('answering');
      referenceProcess.send({ cmd: 'answer', body: sample.text });
      await answering;

      // Warm-up (JIT, connection pools), 1 s of gets and 1 s of sets; its sets count as written.
      step('warm-up');
      const warmGets = await cannon({ ...runs.get(cpUrl), duration: 1 });
      const warmSets = await cannon({ ...runs.set(cpUrl), duration: 1 });
      acknowledged += warmSets.ok;
      failures += warmGets.failures + warmSets.failures;

      step(`get latency, ${CALLS} requests per side one at a time`);
      out.latency = await latency(cpUrl, timer);
      failures += out.latency.failures;

      out.runs = {};
      for (const name of ['bare', 'health', 'get', 'set', 'hot']) {
        step(`${name}: ${CONNECTIONS} connections for ${DURATION} s`);
        const sampled = name === 'set' || name === 'hot' ? scratch?.url : undefined;
        const r = await cannon(runs[name](cpUrl), databaseName, sampled);
        out.runs[name] = r;
        failures += r.failures;
        if (name === 'set' || name === 'hot') acknowledged += r.ok;
      }

      // Sets still in flight when autocannon stopped may have committed without being counted: the
      // log may hold more than was acknowledged, never less.
      step('checking the event log');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const logged = await running.db('event_log').where({ stream: 'memory' }).count({ n: '*' }).first();
      const entries = await running.db('memory_entries').count({ n: '*' }).first();
      out.log = { acknowledged, logged: Number(logged.n), entries: Number(entries.n) };
      out.failures = failures;
    } finally {
      await running.close();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    return out;
  }

  const results = [];
  try {
    for (const kind of DATABASES) results.push(await benchDatabase(kind));
  } finally {
    referenceProcess.send({ cmd: 'stop' });
    await client.close();
    rmSync(scratchDir, { recursive: true, force: true });
  }

  // ── The report ──────────────────────────────────────────────────────────────────────────────
  const f = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
  const r0 = (n) => (Number.isFinite(n) ? String(Math.round(n)) : '–');
  const name = (kind) => (kind === 'postgres' ? 'PostgreSQL 15' : 'PGlite (embedded, on disk)');
  const rate = (r) => `${r0(r.rps)} (p50 ${r.p50} / p99 ${r.p99} ms)`;
  const cpu = (r) => `${f(r.cpMs)} / ${f(r.pgMs)}`;
  const backendsOf = (r) => (r.backends ? `${f(r.backends.active, 1)} / ${f(r.backends.waiting, 1)}` : '–');
  /** Sets in flight when a timed set run (warm-up, distinct keys, hot key) stopped: logged, never acknowledged. */
  const inFlight = CONNECTIONS * 3;
  const measures = [
    ['get answer, bytes', (x) => String(x.answerBytes)],
    [
      '1 at a time: bare node:http p50 / p99 ms',
      (x) => `${f(x.latency.bare.p50)} / ${f(x.latency.bare.p99)}`,
    ],
    ['1 at a time: health p50 / p99 ms', (x) => `${f(x.latency.health.p50)} / ${f(x.latency.health.p99)}`],
    ['1 at a time: memory get p50 / p99 ms', (x) => `${f(x.latency.get.p50)} / ${f(x.latency.get.p99)}`],
    [
      '1 at a time: get p50 ÷ health p50, ÷ bare p50',
      (x) => `${f(x.latency.get.p50 / x.latency.health.p50)}, ${f(x.latency.get.p50 / x.latency.bare.p50)}`,
    ],
    [
      '1 at a time: SQL p50 ms, get select / health select 1',
      (x) => `${f(x.latency.sql.getP50)} / ${f(x.latency.sql.probeP50)}`,
    ],
    [`${CONNECTIONS} conns: bare node:http req/s`, (x) => rate(x.runs.bare)],
    [`${CONNECTIONS} conns: health req/s`, (x) => rate(x.runs.health)],
    [`${CONNECTIONS} conns: gets/s`, (x) => rate(x.runs.get)],
    [`${CONNECTIONS} conns: sets/s, distinct keys`, (x) => rate(x.runs.set)],
    [`${CONNECTIONS} conns: sets/s, one hot key`, (x) => rate(x.runs.hot)],
    [
      'ratio gets/s ÷ health, sets/s ÷ health',
      (x) => `${f(x.runs.get.rps / x.runs.health.rps)}, ${f(x.runs.set.rps / x.runs.health.rps)}`,
    ],
    ['ratio hot key ÷ distinct keys (sets/s)', (x) => f(x.runs.hot.rps / x.runs.set.rps)],
    [
      'backends running a statement / waiting for a key lock (mean): distinct, hot',
      (x) => ['set', 'hot'].map((k) => backendsOf(x.runs[k])).join(', '),
    ],
    ['CPU ms per request, control plane / PostgreSQL: health', (x) => cpu(x.runs.health)],
    ['CPU ms per request, control plane / PostgreSQL: get', (x) => cpu(x.runs.get)],
    ['CPU ms per request, control plane / PostgreSQL: set', (x) => cpu(x.runs.set)],
    ['CPU ms per request, control plane / PostgreSQL: hot set', (x) => cpu(x.runs.hot)],
    [
      'control plane event loop busy: health, get, set, hot',
      (x) => ['health', 'get', 'set', 'hot'].map((k) => `${r0(x.runs[k].elu * 100)} %`).join(', '),
    ],
    [
      'event log: memory events / acknowledged sets',
      (x) => `${x.log.logged} / ${x.log.acknowledged} (+${x.log.logged - x.log.acknowledged})`,
    ],
    ['memory entries afterwards', (x) => String(x.log.entries)],
    ['failures (non-2xx, errors, timeouts)', (x) => String(x.failures)],
  ];
  const lines = [
    `| measure | ${results.map((r) => name(r.kind)).join(' | ')} |`,
    `|---|${results.map(() => '---').join('|')}|`,
    ...measures.map(([label, get]) => `| ${label} | ${results.map((r) => get(r)).join(' | ')} |`),
  ];

  const goals = [];
  const goal = (label, value, pass) => goals.push(`  ${pass ? 'PASS' : 'MISS'}  ${label}: ${value}`);
  for (const r of results) {
    const n = name(r.kind);
    goal(`${n}: memory get p50 < 2 ms (one at a time)`, `${f(r.latency.get.p50)} ms`, r.latency.get.p50 < 2);
    const extra = r.log.logged - r.log.acknowledged;
    goal(
      `${n}: every acknowledged set is in the event log, once`,
      `${r.log.logged} events for ${r.log.acknowledged} acknowledged sets (+${extra}, at most ${inFlight} in flight at the ends of the timed set runs)`,
      extra >= 0 && extra <= inFlight,
    );
  }

  console.log(`
Memory benchmark: ${results.map((r) => name(r.kind)).join(' and ')}, ${CONNECTIONS} connections, ${DURATION} s per throughput run,
${CALLS} sequential requests per side, ${KEYS} keys over ${WORKFLOWS} workflows, values of ${JSON.stringify(DATA).length} bytes
load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after
${lines.join('\n')}

Goals:
${goals.join('\n')}
total ${f((performance.now() - started) / 1000, 0)} s
`);
  const failed = results.some((r) => r.failures > 0 || r.log.logged < r.log.acknowledged);
  if (failed) process.exitCode = 1;
}
