#!/usr/bin/env node
// Executions through the real control-plane server, measured against their performance goals, on
// PostgreSQL and on embedded PGlite in one run:
//   1. sync execute through the control plane against calling the same agent directly: the
//      overhead per call (p50/p99, one call at a time, interleaved) and the throughput ratio at the
//      same concurrency (autocannon);
//   2. async executions per second end to end: N submissions to an agent that answers 202 and then
//      reports through the status callback, as SDK agents do, until every one is terminal;
//   3. queued → running latency (started_at − created_at, and created → the agent's receipt);
//   4. the same again with 100,000 finished executions in the table, as ratios to the empty table.
// Run from the repository root:
//   node --import tsx bench/control-plane/executions.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a scratch database is created
// on that server and dropped afterwards), BENCH_DATABASES (postgres,pglite), BENCH_DURATION seconds
// per throughput run (5), BENCH_CONNECTIONS (10), BENCH_CALLS sequential calls per side (1000),
// BENCH_ASYNC async executions per burst (3000 on PostgreSQL, 500 on PGlite), BENCH_PACED
// executions of the unloaded latency run (200), BENCH_FILL finished rows (100000),
// BENCH_AGENT_WORK_MS (0; how long the sync agent works per call: with real work the throughput
// ratio measures the control plane as a proxy rather than against a no-op), BENCH_PROFILE=1 (also
// print, per measured step, the SQL statements the server ran: count, total and mean ms), and
// BENCH_CPU_PROFILE=<dir> (a CPU profile of the control plane's thread for each sync throughput
// run and async burst, to open in Chrome DevTools).
// The agent is bench-agent.mjs, a child process (plain node:http, no SDK); the load generator runs
// in a worker thread (autocannon `workers: 1`), so neither shares the control plane's event loop.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkBenchAgent, NODE_ID, postgresBackendTicks, registerBenchAgent } from './lane-kit.mjs';

const INPUT = { text: 'hello' };
/** How long the agent's echo function works per call (bench-agent.mjs reads the same setting). */
const WORK_MS = Number(process.env.BENCH_AGENT_WORK_MS ?? 0);

await main();

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
  const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
  const PACED = Number(process.env.BENCH_PACED ?? 200);
  const FILL = Number(process.env.BENCH_FILL ?? 100_000);
  const PROFILE = process.env.BENCH_PROFILE === '1';
  const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
  const inspector = CPU_PROFILE_DIR ? new (await import('node:inspector/promises')).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    mkdirSync(CPU_PROFILE_DIR, { recursive: true });
  }
  /** Runs `work` under the CPU profiler when BENCH_CPU_PROFILE is set (this thread only). */
  async function cpuProfiled(name, work) {
    if (!inspector) return work();
    await inspector.post('Profiler.start');
    try {
      return await work();
    } finally {
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(join(CPU_PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    }
  }
  const asyncCount = (kind) => Number(process.env.BENCH_ASYNC ?? (kind === 'postgres' ? 3000 : 500));
  const started = performance.now();
  const loadBefore = loadavg()[0];

  // The agent, and a request/answer helper over its IPC channel.
  const { child: agentProcess, url: agentUrl } = await forkBenchAgent();
  const waiting = new Map();
  agentProcess.on('message', (message) => {
    const wake = waiting.get(message.event);
    waiting.delete(message.event);
    wake?.(message);
  });
  const nextMessage = (event) => new Promise((resolve) => waiting.set(event, resolve));
  const ask = (command, event) => {
    const answer = nextMessage(event);
    agentProcess.send(command);
    return answer;
  };
  const client = new Agent({ connections: 4, keepAliveTimeout: 30_000 });

  /** One POST through undici; resolves with the status after reading the body. */
  async function call(url, body) {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher: client,
    });
    await response.body.text();
    return response.statusCode;
  }

  /** Nearest-rank percentile of an ascending array. */
  const pct = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const ascending = (values) => Float64Array.from(values).sort();

  /**
   * Where the CPU went during a measured step: the control plane's thread (event-loop active
   * time), the PostgreSQL backends of its database, and the agent process.
   */
  async function cpuMeter(databaseName) {
    const agentCpu = async () => (await ask({ cmd: 'cpu' }, 'cpu')).ms;
    const loop = performance.eventLoopUtilization();
    const pg = postgresBackendTicks(databaseName);
    const agent = await agentCpu();
    const wallAt = performance.now();
    return async () => {
      const busy = performance.eventLoopUtilization(loop);
      const pgAfter = postgresBackendTicks(databaseName);
      let pgTicks = 0;
      for (const [pid, ticks] of pgAfter) pgTicks += ticks - (pg.get(pid) ?? 0);
      return {
        wallMs: performance.now() - wallAt,
        elu: busy.utilization,
        controlPlaneMs: busy.active,
        postgresMs: databaseName ? pgTicks * 10 : Number.NaN,
        agentMs: (await agentCpu()) - agent,
      };
    };
  }

  /**
   * Per-call overhead: the same call through the control plane and directly, one at a time and
   * alternating (so the machine's load drifts over both alike), timed in microseconds.
   */
  async function overhead(cpUrl) {
    const directUrl = `${agentUrl}/reasoners/echo`;
    const viaUrl = `${cpUrl}/api/v1/execute/${NODE_ID}.echo`;
    const directBody = JSON.stringify(INPUT);
    const viaBody = JSON.stringify({ input: INPUT });
    for (let i = 0; i < 100; i++) {
      await call(directUrl, directBody);
      await call(viaUrl, viaBody);
    }
    const direct = [];
    const via = [];
    let failures = 0;
    for (let i = 0; i < CALLS; i++) {
      let t = performance.now();
      if ((await call(directUrl, directBody)) !== 200) failures += 1;
      direct.push(performance.now() - t);
      t = performance.now();
      if ((await call(viaUrl, viaBody)) !== 200) failures += 1;
      via.push(performance.now() - t);
    }
    const d = ascending(direct);
    const v = ascending(via);
    return {
      directP50: pct(d, 0.5),
      directP99: pct(d, 0.99),
      viaP50: pct(v, 0.5),
      viaP99: pct(v, 0.99),
      overheadP50: pct(v, 0.5) - pct(d, 0.5),
      overheadP99: pct(v, 0.99) - pct(d, 0.99),
      failures,
    };
  }

  /** autocannon in a worker thread. */
  function cannon(options) {
    return autocannon({ workers: 1, connections: CONNECTIONS, ...options });
  }

  /** Sync throughput: direct, then through the control plane, same concurrency and duration. */
  async function throughput(cpUrl, label, databaseName) {
    const direct = await cannon({
      url: `${agentUrl}/reasoners/echo`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(INPUT),
      duration: DURATION,
    });
    const meter = await cpuMeter(databaseName);
    const via = await cpuProfiled(`${label}-sync`, () =>
      cannon({
        url: `${cpUrl}/api/v1/execute/${NODE_ID}.echo`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: INPUT }),
        duration: DURATION,
      }),
    );
    const summary = (r) => ({
      total: r.requests.total,
      rps: r.requests.total / (r.duration || DURATION),
      p50: r.latency.p50,
      p99: r.latency.p99,
      failures: r.non2xx + r.errors + r.timeouts,
    });
    // How busy the control plane's event loop was (near 1: its JavaScript is the bottleneck), and
    // the CPU each call cost it, the database and the agent.
    const cpu = await meter();
    return { direct: summary(direct), via: { ...summary(via), cpu, elu: cpu.elu } };
  }

  /**
   * `count` async executions, submitted by autocannon (`connections` at once), until the agent has
   * had every status callback answered 2xx; then the timings read back from the table.
   */
  async function asyncRun(running, count, connections) {
    const { db } = running;
    await ask({ cmd: 'expect', count }, 'expecting');
    const since = new Date(Date.now() - 1);
    const done = nextMessage('done');
    const t0 = performance.timeOrigin + performance.now();
    const meter = await cpuMeter(running.databaseName);
    const submitted = await cannon({
      url: `${running.url}/api/v1/execute/async/${NODE_ID}.work`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: INPUT }),
      amount: count,
      connections,
      sampleInt: 10, // the last answer is noticed at the next sample tick: 10 ms, not 1 s
    });
    const submittedAt = performance.timeOrigin + performance.now();
    const failures = submitted.non2xx + submitted.errors + submitted.timeouts;
    // A refused submission or a lost callback never counts: without a bound the wait would not end
    // (such executions then show as failures below).
    const bound = failures ? 30_000 : 120_000;
    let timer;
    const finished = await Promise.race([
      done,
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), bound);
      }),
    ]);
    clearTimeout(timer);
    const endAt = finished?.at ?? performance.timeOrigin + performance.now();
    const cpu = await meter();
    const { receipts, failedCallbacks } = await ask({ cmd: 'receipts' }, 'receipts');
    const rows = (
      await db.raw(
        `select execution_id, status,
                extract(epoch from created_at) * 1000 as created_ms,
                extract(epoch from (started_at - created_at)) * 1000 as queued_ms
           from executions where lane = 'async' and created_at >= ? and target = ?`,
        [since, `${NODE_ID}.work`],
      )
    ).rows;
    const byStatus = {};
    for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
    const created = new Map(rows.map((row) => [row.execution_id, Number(row.created_ms)]));
    const toRunning = ascending(rows.filter((r) => r.queued_ms !== null).map((r) => Number(r.queued_ms)));
    const toAgent = ascending(
      receipts.filter(([id]) => created.has(id)).map(([id, at]) => at - created.get(id)),
    );
    return {
      count,
      elu: cpu.elu,
      cpu,
      perSecond: (byStatus.succeeded ?? 0) / ((endAt - t0) / 1000),
      submitPerSecond: count / ((submittedAt - t0) / 1000),
      seconds: (endAt - t0) / 1000,
      byStatus,
      failures: failures + (count - (byStatus.succeeded ?? 0)),
      failedCallbacks,
      queuedP50: pct(toRunning, 0.5),
      queuedP99: pct(toRunning, 0.99),
      agentP50: pct(toAgent, 0.5),
      agentP99: pct(toAgent, 0.99),
    };
  }

  /** `FILL` finished executions (succeeded, a few failed), older than anything the bench writes. */
  async function fill(db) {
    const t = performance.now();
    for (let from = 1; from <= FILL; from += 25_000) {
      const to = Math.min(FILL, from + 24_999);
      await db.raw(
        `insert into executions (execution_id, run_id, workflow_id, target, node_id, function_name,
            function_type, lane, status, input, result, error, progress, routed_version, agent_base_url,
            webhook_registered, depth, available_at, dispatched_by, dispatch_count, accepted_at,
            created_at, started_at, completed_at, duration_ms, updated_at)
         select 'exec_fill_' || g, 'run_fill_' || (g / 10), 'run_fill_' || (g / 10), ?, ?, 'work',
            'reasoner', case when g % 3 = 0 then 'sync' else 'async' end,
            case when g % 50 = 0 then 'failed' else 'succeeded' end,
            '{"text":"hello"}'::jsonb, '{"ok":true,"words":1}'::jsonb,
            case when g % 50 = 0 then 'the agent reported a failure' end, 100, '1.0.0', ?,
            false, 1, t, 'bench-fill', 1, t, t, t, t + interval '40 ms', 40, t + interval '40 ms'
           from generate_series(?::int, ?::int) as g,
                lateral (select now() - interval '1 day' + g * interval '500 ms') as at(t)`,
        [`${NODE_ID}.work`, NODE_ID, agentUrl, from, to],
      );
    }
    return (performance.now() - t) / 1000;
  }

  async function registerAgent(cpUrl) {
    await ask({ cmd: 'configure', controlPlaneUrl: cpUrl }, 'configured');
    const post = async (path, body, expected) => {
      const status = await call(`${cpUrl}${path}`, JSON.stringify(body));
      if (status !== expected) throw new Error(`${path} answered ${status}`);
    };
    await registerBenchAgent(post, agentUrl);
  }

  /**
   * With BENCH_PROFILE=1: times every statement the server runs between start() and report(), from
   * the moment it is sent on a connection to its answer (pool waits excluded). On PostgreSQL the
   * `pg` client itself is timed, so BEGIN, COMMIT and the event bus's NOTIFYs count too; on PGlite
   * knex's query events (transaction statements are not among them).
   */
  let pgPatched = false;
  const stats = new Map();
  let profiling = false;
  const record = (sql, ms) => {
    if (!profiling) return;
    const key = String(sql).replace(/\s+/g, ' ').slice(0, 100);
    const s = stats.get(key) ?? { n: 0, ms: 0 };
    s.n += 1;
    s.ms += ms;
    stats.set(key, s);
  };
  async function sqlProfiler(kind, db) {
    if (kind === 'postgres' && !pgPatched) {
      pgPatched = true;
      const { default: pg } = await import('pg');
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function timedQuery(config, values, callback) {
        const at = performance.now();
        const sql = typeof config === 'string' ? config : config?.text;
        const done = () => record(sql, performance.now() - at);
        const args = [config, values, callback];
        const last = args.findLastIndex((a) => typeof a === 'function');
        if (last >= 0) {
          const original = args[last];
          args[last] = (...answer) => {
            done();
            return original(...answer);
          };
          return query.apply(this, args.slice(0, last + 1));
        }
        const answer = query.apply(this, args.slice(0, values === undefined ? 1 : 2));
        answer?.then?.(done, done);
        return answer;
      };
    } else if (kind !== 'postgres') {
      const open = new Map();
      db.on('query', (q) => open.set(q.__knexQueryUid, { at: performance.now(), sql: q.sql }));
      const end = (_answer, q) => {
        const entry = open.get(q.__knexQueryUid);
        open.delete(q.__knexQueryUid);
        if (entry) record(entry.sql, performance.now() - entry.at);
      };
      db.on('query-response', end);
      db.on('query-error', end);
    }
    return {
      start() {
        stats.clear();
        profiling = true;
      },
      /** Prints the statements by total time; `per` names what `units` counts (calls, executions). */
      report(label, units, per) {
        profiling = false;
        const rows = [...stats].sort((a, b) => b[1].ms - a[1].ms);
        const total = rows.reduce((sum, [, s]) => sum + s.ms, 0);
        const count = rows.reduce((n, [, s]) => n + s.n, 0);
        console.error(
          `  SQL during ${label}: ${total.toFixed(0)} ms in ${count} statements, ${(total / units).toFixed(2)} ms and ${(count / units).toFixed(1)} statements per ${per}`,
        );
        for (const [sql, s] of rows.slice(0, 14)) {
          console.error(
            `    ${String(s.n).padStart(6)} × ${(s.ms / s.n).toFixed(2).padStart(6)} ms = ${s.ms.toFixed(0).padStart(6)} ms  (${(s.n / units).toFixed(2)}/${per})  ${sql}`,
          );
        }
      },
    };
  }

  /** Everything for one database: empty table, then with FILL finished executions. */
  async function benchDatabase(kind) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-executions-'));
    const scratch = kind === 'postgres' ? await createScratchDatabase(DATABASE_URL, 'sy_bench') : null;
    const running = await startServer({
      env: {
        CONTROL_PLANE_PORT: '0',
        LOG_LEVEL: 'silent',
        SWITCHYARD_DATA_DIR: dataDir,
        ...(scratch ? { DATABASE_URL: scratch.url } : {}),
      },
    });
    running.databaseName = scratch ? new URL(scratch.url).pathname.slice(1) : undefined;
    const out = { kind };
    const profiler = PROFILE ? await sqlProfiler(kind, running.db) : undefined;
    const step = (label) =>
      console.error(`[${kind}] ${label} (${Math.round(performance.now() - started) / 1000} s)`);
    try {
      await registerAgent(running.url);
      const count = asyncCount(kind);
      // Warm-up (JIT, connection pools, the agent's keep-alive sockets), so the empty-table
      // figures are not those of a cold process; its few hundred rows stay in the table.
      step('warm-up');
      await cannon({
        url: `${running.url}/api/v1/execute/${NODE_ID}.echo`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: INPUT }),
        duration: 1,
      });
      await asyncRun(running, Math.min(200, count), CONNECTIONS);
      for (const phase of ['empty', 'filled']) {
        if (phase === 'filled') {
          step(`inserting ${FILL} finished executions`);
          out.fillSeconds = await fill(running.db);
        }
        step(`${phase}: per-call overhead`);
        profiler?.start();
        const o = await overhead(running.url);
        profiler?.report('sequential calls (direct and via)', CALLS + 100, 'sync call');
        step(`${phase}: sync throughput`);
        const t = await throughput(running.url, `${kind}-${phase}`, running.databaseName);
        step(`${phase}: async burst of ${count}`);
        profiler?.start();
        const a = await cpuProfiled(`${kind}-${phase}-async`, () => asyncRun(running, count, CONNECTIONS));
        profiler?.report('the async burst', count, 'execution');
        step(`${phase}: paced async (${PACED}, one at a time)`);
        profiler?.start();
        const p = await asyncRun(running, PACED, 1);
        profiler?.report('the paced run', PACED, 'execution');
        const rows = Number((await running.db('executions').count({ n: '*' }).first()).n);
        out[phase] = { overhead: o, throughput: t, burst: a, paced: p, rows };
      }
    } finally {
      await running.close();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    return out;
  }

  const results = [];
  for (const kind of DATABASES) results.push(await benchDatabase(kind));
  agentProcess.send({ cmd: 'stop' });
  await client.close();

  // ── The report ──────────────────────────────────────────────────────────────────────────────
  const f = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
  const r0 = (n) => (Number.isFinite(n) ? String(Math.round(n)) : '–');
  const name = (kind) => (kind === 'postgres' ? 'PostgreSQL' : 'PGlite');
  const cpuPer = (cpu, units) =>
    [cpu.controlPlaneMs, cpu.postgresMs, cpu.agentMs].map((ms) => f(ms / units)).join(' / ');
  const failuresOf = (x) =>
    x.overhead.failures +
    x.throughput.direct.failures +
    x.throughput.via.failures +
    x.burst.failures +
    x.paced.failures;
  const measures = [
    [
      'sync: direct p50 / p99 ms (1 at a time)',
      (x) => `${f(x.overhead.directP50)} / ${f(x.overhead.directP99)}`,
    ],
    ['sync: via control plane p50 / p99 ms', (x) => `${f(x.overhead.viaP50)} / ${f(x.overhead.viaP99)}`],
    ['sync: overhead p50 / p99 ms', (x) => `${f(x.overhead.overheadP50)} / ${f(x.overhead.overheadP99)}`],
    [
      `sync: direct req/s (${CONNECTIONS} conns)`,
      (x) =>
        `${r0(x.throughput.direct.rps)} (p50 ${x.throughput.direct.p50} / p99 ${x.throughput.direct.p99} ms)`,
    ],
    [
      `sync: via control plane req/s`,
      (x) => `${r0(x.throughput.via.rps)} (p50 ${x.throughput.via.p50} / p99 ${x.throughput.via.p99} ms)`,
    ],
    ['sync: throughput ratio (via ÷ direct)', (x) => f(x.throughput.via.rps / x.throughput.direct.rps)],
    [
      'async: executions/s end to end',
      (x) => `${r0(x.burst.perSecond)} (${x.burst.count} in ${f(x.burst.seconds)} s)`,
    ],
    ['async: submissions/s (202s)', (x) => r0(x.burst.submitPerSecond)],
    [
      'CPU per sync call (10 conns): control plane / PostgreSQL / agent ms',
      (x) => cpuPer(x.throughput.via.cpu, x.throughput.via.total),
    ],
    [
      'CPU per async execution (burst): control plane / PostgreSQL / agent ms',
      (x) => cpuPer(x.burst.cpu, x.burst.count),
    ],
    [
      'control plane event loop busy: sync run, async burst',
      (x) => `${r0(x.throughput.via.elu * 100)} %, ${r0(x.burst.elu * 100)} %`,
    ],
    [
      'async burst: queued → running p50 / p99 ms',
      (x) => `${f(x.burst.queuedP50, 1)} / ${f(x.burst.queuedP99, 1)}`,
    ],
    [
      'paced: queued → running p50 / p99 ms',
      (x) => `${f(x.paced.queuedP50, 1)} / ${f(x.paced.queuedP99, 1)}`,
    ],
    [
      'paced: created → agent received p50 / p99 ms',
      (x) => `${f(x.paced.agentP50, 1)} / ${f(x.paced.agentP99, 1)}`,
    ],
    ['failures (non-2xx, errors, not succeeded)', (x) => String(failuresOf(x))],
    ['rows in executions afterwards', (x) => String(x.rows)],
  ];
  const columns = results.flatMap((r) => [
    { title: `${name(r.kind)}, empty`, data: r.empty },
    { title: `${name(r.kind)}, +${FILL / 1000}k`, data: r.filled, base: r.empty },
  ]);
  const ratio = (a, b) => a / b;
  const lines = [
    `| measure | ${columns.map((c) => c.title).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    ...measures.map(
      ([label, get]) => `| ${label} | ${columns.map((c) => (c.data ? get(c.data) : '–')).join(' | ')} |`,
    ),
    `| ratio to empty: sync req/s, async exec/s | ${columns
      .map((c) =>
        c.base
          ? `${f(ratio(c.data.throughput.via.rps, c.base.throughput.via.rps))}, ${f(ratio(c.data.burst.perSecond, c.base.burst.perSecond))}`
          : '1, 1',
      )
      .join(' | ')} |`,
  ];

  // The performance goals of the execution lanes. "No slowdown": the filled table keeps ≥ 0.9 of the
  // empty table's throughput.
  const goals = [];
  const goal = (label, value, pass) => goals.push(`  ${pass ? 'PASS' : 'MISS'}  ${label}: ${value}`);
  for (const r of results) {
    const n = name(r.kind);
    for (const phase of ['empty', 'filled']) {
      const x = r[phase];
      const at = phase === 'empty' ? 'empty table' : `${FILL / 1000}k finished rows`;
      goal(
        `${n}, ${at}: sync overhead p50 < 2 ms`,
        `${f(x.overhead.overheadP50)} ms`,
        x.overhead.overheadP50 < 2,
      );
      const tr = x.throughput.via.rps / x.throughput.direct.rps;
      goal(`${n}, ${at}: sync throughput ≥ 0.5× direct`, `${f(tr)}×`, tr >= 0.5);
      goal(
        `${n}, ${at}: queued → running p50 < 5 ms (paced)`,
        `${f(x.paced.queuedP50, 1)} ms`,
        x.paced.queuedP50 < 5,
      );
      if (r.kind === 'postgres') {
        goal(
          `${n}, ${at}: async ≥ 1,000 executions/s end to end`,
          `${r0(x.burst.perSecond)}/s`,
          x.burst.perSecond >= 1000,
        );
      }
    }
    const syncRatio = r.filled.throughput.via.rps / r.empty.throughput.via.rps;
    const asyncRatio = r.filled.burst.perSecond / r.empty.burst.perSecond;
    goal(
      `${n}: no slowdown with ${FILL / 1000}k rows (sync req/s ratio ≥ 0.9)`,
      `${f(syncRatio)}`,
      syncRatio >= 0.9,
    );
    goal(
      `${n}: no slowdown with ${FILL / 1000}k rows (async exec/s ratio ≥ 0.9)`,
      `${f(asyncRatio)}`,
      asyncRatio >= 0.9,
    );
  }

  console.log(`
Execution benchmark: ${results.map((r) => name(r.kind)).join(' and ')}, ${CONNECTIONS} connections, ${DURATION} s per throughput run, sync agent works ${WORK_MS} ms per call,
${CALLS} sequential calls per side, async bursts of ${results.map((r) => `${asyncCount(r.kind)} (${name(r.kind)})`).join(', ')}, paced runs of ${PACED}
load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after; ${results.map((r) => `${FILL} rows inserted in ${f(r.fillSeconds, 1)} s on ${name(r.kind)}`).join(', ')}
${lines.join('\n')}

Goals:
${goals.join('\n')}
total ${f((performance.now() - started) / 1000, 0)} s
`);
  if (results.some((r) => failuresOf(r.empty) + failuresOf(r.filled) > 0)) process.exitCode = 1;
}
