#!/usr/bin/env node
// The control plane's async execution lane against the same path built on graphile-worker, on one
// PostgreSQL database, in one run. Per round, each side gets a burst of N submissions at
// BENCH_CONNECTIONS connections (autocannon in a worker thread), timed from the first submission
// until every execution of the burst is terminal:
//   - switchyard, 202 + callback: POST /api/v1/execute/async/bench-agent.work; the dispatcher calls
//     the agent, which answers 202 and then posts the status callback `succeeded`;
//   - switchyard, 200: POST /api/v1/execute/async/bench-agent.echo; the agent answers the call
//     with its result (200), which ends the execution;
//   - graphile-worker: a plain node:http server whose POST does `addJob` and answers 202; a
//     graphile-worker runner in the same process runs the task, which calls the same agent's
//     `echo` function (answers 200) with undici and completes.
// The sides alternate within every round, so the machine's load drifts over all of them alike.
// Run from the repository root:
//   node --import tsx bench/control-plane/async-lane.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a scratch database is created
// on that server and dropped afterwards), BENCH_ASYNC executions per burst (3000), BENCH_ROUNDS
// (3), BENCH_CONNECTIONS (10), BENCH_GW_CONCURRENCY (the control plane's dispatch_concurrency, 64),
// BENCH_GW_POOL (graphile-worker's connections, 10: the control plane's pool size),
// BENCH_GW_LOCAL_QUEUE (0: graphile-worker's defaults; n > 0 turns on its local queue of n jobs
// and batched completion), BENCH_PROFILE=1 (per side, the SQL statements per execution),
// BENCH_CPU_PROFILE=<dir> (a .cpuprofile of this process's thread per burst).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkBenchAgent, machineCpuMs, NODE_ID, postgresCpuMs, registerBenchAgent } from './lane-kit.mjs';
import { median } from './stats.mjs';

const INPUT = { text: 'hello' };

await main();

// ── The benchmark (parent process) ──────────────────────────────────────────────────────────────
async function main() {
  const { default: autocannon } = await import('autocannon');
  const { Agent, request } = await import('undici');
  const { default: pg } = await import('pg');
  const { run: runGraphileWorker, Logger } = await import('graphile-worker');
  const { startServer } = await import('../../apps/control-plane/src/server.ts');
  const { createScratchDatabase } = await import('@switchyard/shared/db');

  const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const COUNT = Number(process.env.BENCH_ASYNC ?? 3000);
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
  const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const GW_CONCURRENCY = Number(process.env.BENCH_GW_CONCURRENCY ?? 64);
  const GW_POOL = Number(process.env.BENCH_GW_POOL ?? 10);
  const GW_LOCAL_QUEUE = Number(process.env.BENCH_GW_LOCAL_QUEUE ?? 0);
  const PROFILE = process.env.BENCH_PROFILE === '1';
  const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
  const inspector = CPU_PROFILE_DIR ? new (await import('node:inspector/promises')).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    mkdirSync(CPU_PROFILE_DIR, { recursive: true });
  }
  const started = performance.now();
  const loadBefore = loadavg();

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
  const agentCpuMs = async () => (await ask({ cmd: 'cpu' }, 'cpu')).ms;

  // One throwaway database holds both queues: the control plane's tables and graphile_worker's.
  const scratch = await createScratchDatabase(DATABASE_URL, 'sy_bench_async');
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-async-'));
  const databaseName = new URL(scratch.url).pathname.slice(1);

  // With BENCH_PROFILE=1 every statement a `pg` client runs is timed and counted (BEGIN, COMMIT
  // and NOTIFY included); each side's statements are told apart by the pool they came from.
  const stats = new Map();
  let profiling;
  const graphileClients = new WeakSet();
  if (PROFILE) {
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function timedQuery(config, values, callback) {
      const side = graphileClients.has(this) ? 'graphile' : 'switchyard';
      const sql = typeof config === 'string' ? config : config?.text;
      const at = performance.now();
      const done = () => {
        if (profiling !== side) return;
        const key = String(sql).replace(/\s+/g, ' ').slice(0, 110);
        const s = stats.get(key) ?? { n: 0, ms: 0 };
        s.n += 1;
        s.ms += performance.now() - at;
        stats.set(key, s);
      };
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
  }
  function reportProfile(label, units) {
    const rows = [...stats].sort((a, b) => b[1].n - a[1].n);
    const count = rows.reduce((n, [, s]) => n + s.n, 0);
    const ms = rows.reduce((n, [, s]) => n + s.ms, 0);
    console.error(
      `  SQL, ${label}: ${(count / units).toFixed(2)} statements and ${(ms / units).toFixed(2)} ms of round trips per execution`,
    );
    for (const [sql, s] of rows.slice(0, 12)) {
      console.error(
        `    ${(s.n / units).toFixed(3).padStart(7)}/exec × ${(s.ms / s.n).toFixed(2).padStart(6)} ms  ${sql}`,
      );
    }
    stats.clear();
  }

  // ── Switchyard ──
  const running = await startServer({
    env: {
      CONTROL_PLANE_PORT: '0',
      LOG_LEVEL: 'silent',
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: scratch.url,
    },
  });
  const client = new Agent({ connections: 4, keepAliveTimeout: 30_000 });
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
  await ask({ cmd: 'configure', controlPlaneUrl: running.url }, 'configured');
  const post = async (path, body, expected) => {
    const status = await call(`${running.url}${path}`, JSON.stringify(body));
    if (status !== expected) throw new Error(`${path} answered ${status}`);
  };
  await registerBenchAgent(post, agentUrl);

  // ── graphile-worker: its own pool on the same database, a task calling the agent's echo ──
  // As many connections as the control plane's pool (10): the server's max_connections is shared.
  const gwPool = new pg.Pool({ connectionString: scratch.url, max: GW_POOL });
  gwPool.on('connect', (c) => graphileClients.add(c));
  gwPool.on('error', (error) => console.error('graphile-worker pool:', error.message));
  const agentCalls = new Agent({ connections: 256, keepAliveTimeout: 10_000 });
  const taskList = {
    async call_agent(payload) {
      const response = await request(`${agentUrl}/reasoners/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-execution-id': String(payload.id) },
        body: JSON.stringify(payload.input),
        dispatcher: agentCalls,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`the agent answered ${response.statusCode}`);
      return JSON.parse(text);
    },
  };
  const runner = await runGraphileWorker({
    pgPool: gwPool,
    concurrency: GW_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList,
    logger: new Logger(() => () => {}),
    ...(GW_LOCAL_QUEUE > 0
      ? {
          preset: {
            worker: { localQueue: { size: GW_LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
          },
        }
      : {}),
  });
  let jobSeq = 0;
  const gwServer = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        jobSeq += 1;
        const job = await runner.addJob('call_agent', { id: `job_${jobSeq}`, input: body.input });
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ job_id: job.id, status: 'queued' }));
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(error) }));
      }
    });
  });
  gwServer.keepAliveTimeout = 30_000;
  await new Promise((resolve) => gwServer.listen(0, '127.0.0.1', resolve));
  const gwUrl = `http://127.0.0.1:${gwServer.address().port}`;

  // A connection of its own to watch the bursts end (every 10 ms, one cheap count).
  const watcher = new pg.Client({ connectionString: scratch.url });
  await watcher.connect();

  /** Waits until `left()` is 0; resolves with the moment it was seen (bounded, 120 s). */
  async function until(left) {
    const deadline = performance.now() + 120_000;
    let shown = performance.now();
    while (performance.now() < deadline) {
      const n = await left();
      if (n === 0) return performance.now();
      if (performance.now() - shown > 10_000) {
        shown = performance.now();
        console.error(`  still ${n} to go`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return null;
  }

  const sides = {
    'switchyard, 202 + callback': {
      url: `${running.url}/api/v1/execute/async/${NODE_ID}.work`,
      target: 'work',
    },
    'switchyard, 200': { url: `${running.url}/api/v1/execute/async/${NODE_ID}.echo`, target: 'echo' },
    'graphile-worker, 200': { url: gwUrl, graphile: true },
  };

  /** One burst: `COUNT` submissions at CONNECTIONS, until every one is terminal. */
  async function burst(name, count) {
    const side = sides[name];
    const since = new Date(Date.now() - 1);
    const loop = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const pgCpu = postgresCpuMs(databaseName);
    const agentCpu = await agentCpuMs();
    const machine = machineCpuMs();
    if (inspector) await inspector.post('Profiler.start');
    profiling = side.graphile ? 'graphile' : 'switchyard';
    const t0 = performance.now();
    const submitted = await autocannon({
      workers: 1,
      url: side.url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: INPUT }),
      amount: count,
      connections: CONNECTIONS,
      // autocannon notices the last answer only at its next sample tick (1 s by default), so the
      // burst's submissions would seem to end on a whole second after the worker started.
      sampleInt: 10,
    });
    const submittedAt = performance.now();
    const failures = submitted.non2xx + submitted.errors + submitted.timeouts;
    const left = side.graphile
      ? async () => Number((await watcher.query('select count(*) as n from graphile_worker.jobs')).rows[0].n)
      : async () =>
          Number(
            (
              await watcher.query(
                `select count(*) as n from executions
                  where created_at >= $1 and target = $2 and status in ('queued', 'running', 'waiting')`,
                [since, `${NODE_ID}.${side.target}`],
              )
            ).rows[0].n,
          );
    const endAt = await until(left);
    const machineAfter = machineCpuMs();
    profiling = undefined;
    const elu = performance.eventLoopUtilization(loop);
    const used = process.cpuUsage(cpu);
    const pgUsed = postgresCpuMs(databaseName) - pgCpu;
    const agentUsed = (await agentCpuMs()) - agentCpu;
    if (inspector) {
      const { profile } = await inspector.post('Profiler.stop');
      const file = `${name.replace(/[^a-z0-9]+/gi, '-')}-${count}-${Date.now()}.cpuprofile`;
      writeFileSync(join(CPU_PROFILE_DIR, file), JSON.stringify(profile));
    }
    let succeeded = count - failures;
    if (!side.graphile) {
      const rows = await watcher.query(
        `select status, count(*) as n from executions where created_at >= $1 and target = $2 group by status`,
        [since, `${NODE_ID}.${side.target}`],
      );
      succeeded = Number(rows.rows.find((r) => r.status === 'succeeded')?.n ?? 0);
    } else {
      const failedJobs = await watcher.query(
        'select count(*) as n from graphile_worker.jobs where attempts > 0 and last_error is not null',
      );
      succeeded -= Number(failedJobs.rows[0].n);
    }
    const seconds = ((endAt ?? performance.now()) - t0) / 1000;
    return {
      perSecond: succeeded / seconds,
      submitPerSecond: count / ((submittedAt - t0) / 1000),
      seconds,
      failures: failures + (count - succeeded) + (endAt === null ? 1 : 0),
      elu: elu.utilization,
      cpuMsPerExecution: (used.user + used.system) / 1000 / count,
      postgresMsPerExecution: pgUsed / count,
      agentMsPerExecution: agentUsed / count,
      machineMsPerExecution: machine ? (machineAfter.busy - machine.busy) / count : Number.NaN,
      machineBusy: machine
        ? (machineAfter.busy - machine.busy) / (machineAfter.all - machine.all)
        : Number.NaN,
    };
  }

  const names = Object.keys(sides);
  const results = Object.fromEntries(names.map((n) => [n, []]));
  let failedCallbacks = 0;
  let deadlocks = 0;
  const step = (label) => console.error(`${label} (${Math.round(performance.now() - started) / 1000} s)`);
  try {
    step('warm-up: 300 executions per side');
    for (const name of names) await burst(name, 300);
    stats.clear();
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which side goes first, so neither always follows the other.
      const order = round % 2 === 1 ? names : [...names].reverse();
      for (const name of order) {
        step(`round ${round}: ${name}, burst of ${COUNT}`);
        const result = await burst(name, COUNT);
        results[name].push(result);
        console.error(
          `  ${result.perSecond.toFixed(0)} executions/s (${result.seconds.toFixed(2)} s; submissions ${result.submitPerSecond.toFixed(0)}/s; event loop ${(result.elu * 100).toFixed(0)} %; failures ${result.failures})`,
        );
        if (PROFILE) reportProfile(name, COUNT);
      }
    }
    failedCallbacks = (await ask({ cmd: 'failed-callbacks' }, 'failed-callbacks')).count;
    // A deadlock costs its statements `deadlock_timeout` (a second) before PostgreSQL ends one.
    // Backends report their counts within a second of going idle.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    deadlocks = Number(
      (await watcher.query('select deadlocks from pg_stat_database where datname = $1', [databaseName]))
        .rows[0].deadlocks,
    );
  } finally {
    await watcher.end();
    await runner.stop();
    await gwPool.end();
    await new Promise((resolve) => gwServer.close(resolve));
    await agentCalls.close();
    agentProcess.send({ cmd: 'stop' });
    await running.close();
    await client.close();
    await scratch.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  // ── The report ──
  const r0 = (n) => String(Math.round(n));
  const lines = [
    `| side | ${Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`).join(' | ')} | median | CPU ms/exec: this process, PostgreSQL, agent; whole machine | machine busy | event loop busy |`,
    `|---|${Array.from({ length: ROUNDS + 4 }, () => '---').join('|')}|`,
    ...names.map((name) => {
      const runs = results[name];
      const ms = (key) => median(runs.map((x) => x[key])).toFixed(2);
      return `| ${name} | ${runs.map((x) => r0(x.perSecond)).join(' | ')} | ${r0(median(runs.map((x) => x.perSecond)))} | ${ms('cpuMsPerExecution')}, ${ms('postgresMsPerExecution')}, ${ms('agentMsPerExecution')}; ${ms('machineMsPerExecution')} | ${r0(median(runs.map((x) => x.machineBusy)) * 100)} % | ${r0(median(runs.map((x) => x.elu)) * 100)} % |`;
    }),
  ];
  // What the machine could do at most: every core busy, each execution costing what it did here
  // (the control plane, PostgreSQL, the agent, the load generator and whatever else ran).
  const cores = availableParallelism();
  const ceiling = (runs) => (cores * 1000) / median(runs.map((x) => x.machineMsPerExecution));
  const reference = results['graphile-worker, 200'];
  const goals = [];
  for (const name of names.filter((n) => n.startsWith('switchyard'))) {
    const runs = results[name];
    const ratios = runs.map((x, i) => x.perSecond / reference[i].perSecond);
    const ratio = median(ratios);
    const rate = median(runs.map((x) => x.perSecond));
    goals.push(
      `  ${ratio >= 1.5 ? 'PASS' : 'MISS'}  ${name}: ≥ 1.5× graphile-worker: ${ratio.toFixed(2)}× (per round ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
      `  ${rate >= 1000 ? 'PASS' : 'MISS'}  ${name}: ≥ 1,000 executions/s end to end: ${r0(rate)}/s (this machine's ceiling at that CPU per execution: ${r0(ceiling(runs))}/s on ${cores} cores)`,
    );
  }
  console.log(`
Async lane against graphile-worker ${(await import('graphile-worker/package.json', { with: { type: 'json' } })).default.version} on PostgreSQL (database ${databaseName}), bursts of ${COUNT} at ${CONNECTIONS} connections, ${ROUNDS} rounds
graphile-worker: concurrency ${GW_CONCURRENCY}, pool of ${GW_POOL}, ${GW_LOCAL_QUEUE > 0 ? `local queue of ${GW_LOCAL_QUEUE}, batched completion` : 'default settings otherwise'}
load average ${loadBefore.map((x) => x.toFixed(1)).join(' ')} before, ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} after
${lines.join('\n')}

Goals (median of the per-round ratios):
${goals.join('\n')}
failed status callbacks (retried): ${failedCallbacks}
deadlocks in the bench's database, whole run (both lanes and graphile-worker): ${deadlocks}
total ${((performance.now() - started) / 1000).toFixed(0)} s
`);
  const failures = names.flatMap((n) => results[n]).reduce((n, x) => n + x.failures, 0);
  if (failures > 0) {
    console.error(`${failures} submissions or executions failed`);
    process.exitCode = 1;
  }
}
