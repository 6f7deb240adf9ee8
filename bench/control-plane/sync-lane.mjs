#!/usr/bin/env node
// The control plane's sync lane (`POST /api/v1/execute/{target}`) against a bare durable reference,
// measured alternately in one run on PostgreSQL. The reference is the least any durable proxy has
// to do: a plain `node:http` server that inserts the execution's row into the same `executions`
// table, forwards the call to the same agent with undici, updates the row to succeeded with the
// result, and answers it. Both run in this process (one at a time), on the same database and agent.
//   1. throughput: autocannon at BENCH_CONNECTIONS (10) for BENCH_DURATION s against each, the
//      order alternating over BENCH_ROUNDS rounds (so the machine's load drifts over both alike);
//      the ratio is sync req/s ÷ reference req/s per round, and the median of the rounds;
//   2. latency at one connection: the same, with one connection, mean latency of each and the
//      difference.
// Goals: sync ≥ 0.7× the reference's req/s, and mean latency at one connection within 0.5 ms of it.
// Run from the repository root:
//   node --import tsx bench/control-plane/sync-lane.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a throwaway database is created
// on that server and dropped afterwards), BENCH_ROUNDS (4), BENCH_DURATION seconds per run (5),
// BENCH_CONNECTIONS (10), BENCH_LOG_LEVEL (silent: the control plane's log level, e.g. info to
// count its request log; lines go to stdout), BENCH_PROFILE=1 (the SQL statements each side ran
// per call, at one connection), BENCH_SERVER=<path of another checkout's
// apps/control-plane/src/server.ts> (measure that version instead), BENCH_CPU_PROFILE=<file> (a .cpuprofile of this process's
// thread during the first round's sync run at BENCH_CONNECTIONS, to open in Chrome DevTools).
// The agent is bench-agent.mjs, a child process (plain node:http); the load generator runs in a worker thread
// (autocannon `workers: 1`), so neither shares the servers' event loop.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkBenchAgent, NODE_ID, postgresCpuMs, registerBenchAgent } from './lane-kit.mjs';
import { median } from './stats.mjs';

const INPUT = { text: 'hello' };

await main();

// ── The benchmark (parent process) ──────────────────────────────────────────────────────────────
async function main() {
  const { default: autocannon } = await import('autocannon');
  const { Agent, request } = await import('undici');
  const { default: pg } = await import('pg');
  // BENCH_SERVER measures another checkout's control plane (its src/server.ts) against the same
  // reference: the way to compare two versions on a machine whose load changes from run to run.
  const { startServer } = await import(process.env.BENCH_SERVER ?? '../../apps/control-plane/src/server.ts');
  const { createScratchDatabase } = await import('@switchyard/shared/db');
  const { newId } = await import('@switchyard/shared');

  const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
  const DURATION = Number(process.env.BENCH_DURATION ?? 5);
  const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'silent';
  const PROFILE = process.env.BENCH_PROFILE === '1';
  const CPU_PROFILE = process.env.BENCH_CPU_PROFILE;
  const inspector = CPU_PROFILE ? new (await import('node:inspector/promises')).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
  }
  const started = performance.now();
  const loadBefore = loadavg()[0];
  const step = (label) => console.error(`${label} (${Math.round(performance.now() - started) / 1000} s)`);

  const { child: agentProcess, url: agentUrl } = await forkBenchAgent();

  const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-sync-lane-'));
  const scratch = await createScratchDatabase(DATABASE_URL, 'sy_bench');
  const running = await startServer({
    env: {
      CONTROL_PLANE_PORT: '0',
      LOG_LEVEL,
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: scratch.url,
    },
  });

  // The bare durable reference: same database (its own pool, as large as the control plane's),
  // same agent, same table; one insert before the call, one update after it.
  const pool = new pg.Pool({ connectionString: scratch.url, max: 10 });
  const agentDispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });
  const INSERT = `insert into executions (execution_id, run_id, workflow_id, target, node_id, function_name,
       function_type, lane, status, input, routed_version, agent_base_url, webhook_registered, depth,
       available_at, dispatched_by, dispatch_count, created_at, started_at, dispatched_at, updated_at)
     values ($1, $2, $2, $3, $4, 'echo', 'reasoner', 'sync', 'running', $5, '1.0.0', $6, false, 1,
       $7, 'bench-reference', 1, $7, $7, $7, $7)`;
  const UPDATE = `update executions set status = 'succeeded', result = $2, completed_at = $3, updated_at = $3,
       duration_ms = $4, progress = 100 where execution_id = $1`;
  const reference = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const target = decodeURIComponent(req.url.slice('/api/v1/execute/'.length));
        const id = newId('exec');
        const runId = newId('run');
        const startedAt = new Date();
        const input = JSON.stringify(body.input);
        await pool.query(INSERT, [id, runId, target, NODE_ID, input, agentUrl, startedAt]);
        const answer = await request(`${agentUrl}/reasoners/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-execution-id': id, 'x-run-id': runId },
          body: input,
          dispatcher: agentDispatcher,
        });
        const text = await answer.body.text();
        const result = JSON.parse(text);
        const completedAt = new Date();
        await pool.query(UPDATE, [id, text, completedAt, completedAt - startedAt]);
        const out = JSON.stringify({
          execution_id: id,
          run_id: runId,
          workflow_id: runId,
          status: 'succeeded',
          result,
          duration_ms: completedAt - startedAt,
          finished_at: completedAt.toISOString(),
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      }
    });
  });
  reference.keepAliveTimeout = 30_000;
  const referenceUrl = await new Promise((resolve) =>
    reference.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${reference.address().port}`)),
  );

  // With BENCH_PROFILE=1, every statement either side sends through `pg` is counted (BEGIN,
  // COMMIT and NOTIFY included), from its sending to its answer.
  const stats = new Map();
  let profiling = false;
  if (PROFILE) {
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function timedQuery(...args) {
      if (!profiling) return query.apply(this, args);
      const at = performance.now();
      const config = args[0];
      const sql = String(typeof config === 'string' ? config : config?.text)
        .replace(/\s+/g, ' ')
        .slice(0, 110);
      const done = () => {
        const s = stats.get(sql) ?? { n: 0, ms: 0 };
        s.n += 1;
        s.ms += performance.now() - at;
        stats.set(sql, s);
      };
      const last = args.findLastIndex((a) => typeof a === 'function');
      if (last >= 0) {
        const original = args[last];
        args[last] = (...answer) => {
          done();
          return original(...answer);
        };
        return query.apply(this, args);
      }
      const answer = query.apply(this, args);
      answer?.then?.(done, done);
      return answer;
    };
  }
  function reportSql(label, calls) {
    const rows = [...stats].sort((a, b) => b[1].n - a[1].n);
    const count = rows.reduce((n, [, s]) => n + s.n, 0);
    console.error(`  SQL per call, ${label}: ${(count / calls).toFixed(2)} statements`);
    for (const [sql, s] of rows.slice(0, 10)) {
      console.error(`    ${(s.n / calls).toFixed(2)} × ${(s.ms / s.n).toFixed(2)} ms  ${sql}`);
    }
    stats.clear();
  }

  async function post(path, body, expected) {
    const response = await request(`${running.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.body.text();
    if (response.statusCode !== expected) throw new Error(`${path} answered ${response.statusCode}`);
  }

  const sides = {
    sync: `${running.url}/api/v1/execute/${NODE_ID}.echo`,
    reference: `${referenceUrl}/api/v1/execute/${NODE_ID}.echo`,
  };
  const cannon = (url, connections, duration) =>
    autocannon({
      workers: 1,
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: INPUT }),
      connections,
      duration,
    });
  const databaseName = new URL(scratch.url).pathname.slice(1);
  /**
   * CPU time of this process's main thread (where both servers run; autocannon has its own), in
   * ms: unlike event-loop time it leaves out the time other processes of a busy machine took.
   */
  function serverThreadCpuMs() {
    try {
      const fields = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return Number.NaN;
    }
  }
  /** Runs autocannon and reads the CPU the servers' thread and PostgreSQL spent per request. */
  async function measured(url, connections, duration) {
    const serverBefore = serverThreadCpuMs();
    const pgBefore = postgresCpuMs(databaseName);
    const r = await cannon(url, connections, duration);
    const serverMs = serverThreadCpuMs() - serverBefore;
    // Backends that ended during the run took their ticks with them: a lower bound then.
    const pgMs = postgresCpuMs(databaseName) - pgBefore;
    return { ...r, serverCpu: serverMs / r.requests.total, pgCpu: pgMs / r.requests.total };
  }
  const summary = (r) => ({
    serverCpu: r.serverCpu,
    pgCpu: r.pgCpu,
    rps: r.requests.total / (r.duration || DURATION),
    mean: r.latency.mean,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failures: r.non2xx + r.errors + r.timeouts,
  });

  const rounds = [];
  let heartbeat;
  try {
    await registerBenchAgent(post, agentUrl, ['echo']);
    const beat = (status) =>
      post(
        `/api/v1/nodes/${NODE_ID}/heartbeat`,
        { status, version: '1.0.0', timestamp: new Date().toISOString() },
        200,
      );
    heartbeat = setInterval(() => void beat('ready').catch(() => {}), 2_000);

    step('warm-up');
    for (const url of Object.values(sides)) await cannon(url, CONNECTIONS, 1);
    if (PROFILE) {
      for (const [side, url] of Object.entries(sides)) {
        profiling = true;
        const r = await cannon(url, 1, 1);
        profiling = false;
        reportSql(side, r.requests.total);
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which side goes first, so neither always follows the other's leftovers.
      const order = round % 2 === 0 ? ['reference', 'sync'] : ['sync', 'reference'];
      const out = {};
      for (const connections of [CONNECTIONS, 1]) {
        for (const side of order) {
          step(`round ${round + 1}/${ROUNDS}: ${side}, ${connections} connection(s)`);
          const profiled = inspector && round === 0 && side === 'sync' && connections === CONNECTIONS;
          if (profiled) await inspector.post('Profiler.start');
          out[`${side}${connections === 1 ? '1' : ''}`] = summary(
            await measured(sides[side], connections, DURATION),
          );
          if (profiled) {
            const { profile } = await inspector.post('Profiler.stop');
            writeFileSync(CPU_PROFILE, JSON.stringify(profile));
          }
        }
      }
      rounds.push(out);
    }
  } finally {
    clearInterval(heartbeat);
    await new Promise((resolve) => reference.close(resolve));
    await agentDispatcher.close();
    await pool.end();
    await running.close();
    await scratch.drop();
    rmSync(dataDir, { recursive: true, force: true });
    agentProcess.send({ cmd: 'stop' });
  }

  // ── The report ──────────────────────────────────────────────────────────────────────────────
  const f = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
  const lines = [
    `| round | reference req/s | sync req/s | ratio | reference mean ms (1 conn) | sync mean ms (1 conn) | difference ms |`,
    '|---|---|---|---|---|---|---|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${Math.round(r.reference.rps)} | ${Math.round(r.sync.rps)} | ${f(r.sync.rps / r.reference.rps)} | ${f(r.reference1.mean)} | ${f(r.sync1.mean)} | ${f(r.sync1.mean - r.reference1.mean)} |`,
    ),
  ];
  const ratio = median(rounds.map((r) => r.sync.rps / r.reference.rps));
  const difference = median(rounds.map((r) => r.sync1.mean - r.reference1.mean));
  const failures = rounds.reduce(
    (n, r) => n + r.sync.failures + r.reference.failures + r.sync1.failures + r.reference1.failures,
    0,
  );
  console.log(`
Sync lane against a bare durable reference: PostgreSQL, ${CONNECTIONS} connections and 1, ${DURATION} s per run, ${ROUNDS} alternating rounds, log level ${LOG_LEVEL}
load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after
${lines.join('\n')}
| median | ${Math.round(median(rounds.map((r) => r.reference.rps)))} | ${Math.round(median(rounds.map((r) => r.sync.rps)))} | ${f(ratio)} | ${f(median(rounds.map((r) => r.reference1.mean)))} | ${f(median(rounds.map((r) => r.sync1.mean)))} | ${f(difference)} |
CPU per request at ${CONNECTIONS} connections (median of rounds), server thread / PostgreSQL backends ms: reference ${f(median(rounds.map((r) => r.reference.serverCpu)), 3)} / ${f(median(rounds.map((r) => r.reference.pgCpu)), 3)}, sync ${f(median(rounds.map((r) => r.sync.serverCpu)), 3)} / ${f(median(rounds.map((r) => r.sync.pgCpu)), 3)}
CPU per request, sync ÷ reference (server thread + PostgreSQL, median of rounds; steadier than req/s on a busy machine): ${f(median(rounds.map((r) => (r.sync.serverCpu + r.sync.pgCpu) / (r.reference.serverCpu + r.reference.pgCpu))))}
sync p50 / p99 ms at ${CONNECTIONS} connections (median of rounds): ${median(rounds.map((r) => r.sync.p50))} / ${median(rounds.map((r) => r.sync.p99))}; reference ${median(rounds.map((r) => r.reference.p50))} / ${median(rounds.map((r) => r.reference.p99))}
failures (non-2xx, errors, timeouts): ${failures}

Goals:
  ${ratio >= 0.7 ? 'PASS' : 'MISS'}  sync ≥ 0.7× the reference's req/s at ${CONNECTIONS} connections: ${f(ratio)}× (median of ${ROUNDS} rounds)
  ${difference <= 0.5 ? 'PASS' : 'MISS'}  mean latency at 1 connection within 0.5 ms of the reference: +${f(difference)} ms (median of ${ROUNDS} rounds)
total ${f((performance.now() - started) / 1000, 0)} s
`);
  if (failures > 0) process.exitCode = 1;
}
