#!/usr/bin/env node
// Fleet simulation: simulated agents heartbeating against two control-plane replicas
// (the build, as real processes) on one PostgreSQL database, in growing steps until it breaks.
// Run from the repository root, after `npm run build -w @switchyard/control-plane`:
//   node --import tsx bench/control-plane/fleet-sim.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test: a scratch database is created
// on that server and dropped afterwards), BENCH_STEPS (1000,2500,5000,10000,20000),
// BENCH_INTERVAL heartbeat interval in seconds (5, what the control plane tells agents),
// BENCH_MEASURE seconds measured per step (20), BENCH_WORKERS simulator threads (1),
// BENCH_SOCKETS keep-alive connections per replica per simulator thread (1000),
// BENCH_BUDGET seconds after which no further step starts (540), BENCH_KEEP_GOING=1 (run every
// step even after one broke). Exits 1 if a step could not be measured at all.
import diagnosticsChannel from 'node:diagnostics_channel';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across threads. */
const wallNow = () => performance.timeOrigin + performance.now();

/** Spreads agent `index` over the interval: golden-ratio steps stay even for any fleet size. */
const phaseOf = (index, intervalMs) => ((index * 0.6180339887498949) % 1) * intervalMs;

const agentId = (index) => `fleet-agent-${index}`;

if (isMainThread) await runBenchmark();
else runSimulator();

// ── The simulator (worker thread) ───────────────────────────────────────────────────────────────
// Owns the agents whose index ≡ its number (mod the thread count). Every agent heartbeats at its
// own phase of the interval, open loop as an SDK's timer does: a beat goes out when it is due
// even if the previous one has not been answered, so a slow server shows as latency and as beats
// falling behind, not as a quietly lower offered rate.

function runSimulator() {
  const { replicaUrls, intervalMs, sockets, epoch, agentUrl } = workerData;
  const SLOT_MS = 5; // the timing wheel's resolution: a beat leaves at most about 5 ms late
  const slots = Math.ceil(intervalMs / SLOT_MS);
  const wheel = Array.from({ length: slots }, () => []);
  const agents = new Map();
  // undici pools keep connections alive between beats; every simulated agent of a thread shares
  // the thread's connections to its replica, as agents behind one proxy would.
  const pools = replicaUrls.map(
    (url) => new Pool(url, { connections: sockets, keepAliveTimeout: 30_000, headersTimeout: 120_000 }),
  );
  const registrationPool = replicaUrls.map((url) => new Pool(url, { connections: 25 }));
  let stats = freshStats();
  let loop = performance.eventLoopUtilization();
  // A beat's latency includes any wait for one of the pool's connections; the server's own share
  // runs from writing the request on a connection to its answer's headers, which undici
  // publishes on these diagnostics channels.
  const writtenAt = new WeakMap();
  diagnosticsChannel.subscribe('undici:client:sendHeaders', ({ request }) => {
    if (request.path.endsWith('/heartbeat')) writtenAt.set(request, wallNow());
  });
  diagnosticsChannel.subscribe('undici:request:headers', ({ request }) => {
    const at = writtenAt.get(request);
    if (at !== undefined) stats.service.push(wallNow() - at);
  });
  let processed = Math.floor((wallNow() - epoch) / SLOT_MS);

  function freshStats() {
    return {
      sent: 0,
      ok: 0,
      failed: 0,
      statuses: {},
      errors: {},
      overlapped: 0,
      skipped: 0,
      latency: [],
      lag: [],
      service: [],
    };
  }

  function send(agent, due) {
    const sentAt = wallNow();
    stats.sent += 1;
    stats.lag.push(sentAt - due);
    if (agent.inFlight > 0) stats.overlapped += 1;
    agent.inFlight += 1;
    const status = agent.beats++ === 0 ? 'starting' : 'ready';
    pools[agent.replica]
      .request({
        path: `/api/v1/nodes/${agent.id}/heartbeat`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status, version: '1.0.0', timestamp: new Date().toISOString() }),
      })
      .then(async ({ statusCode, body }) => {
        await body.dump();
        stats.latency.push(wallNow() - sentAt);
        if (statusCode === 200) stats.ok += 1;
        else {
          stats.failed += 1;
          stats.statuses[statusCode] = (stats.statuses[statusCode] ?? 0) + 1;
        }
      })
      .catch((error) => {
        stats.failed += 1;
        const key = error.code ?? error.message;
        stats.errors[key] = (stats.errors[key] ?? 0) + 1;
      })
      .finally(() => {
        agent.inFlight -= 1;
      });
  }

  setInterval(() => {
    const target = Math.floor((wallNow() - epoch) / SLOT_MS);
    if (target - processed > slots) {
      // More than a whole interval behind: those beats can no longer be sent on time.
      stats.skipped += (target - processed - slots) * (agents.size / slots);
      processed = target - slots;
    }
    for (let slot = processed + 1; slot <= target; slot++) {
      for (const agent of wheel[((slot % slots) + slots) % slots])
        if (agent.active) send(agent, epoch + slot * SLOT_MS);
    }
    processed = target;
  }, SLOT_MS);

  async function register(indexes) {
    const started = wallNow();
    let next = 0;
    const failures = [];
    async function lane() {
      while (next < indexes.length) {
        const index = indexes[next++];
        const id = agentId(index);
        const replica = index % replicaUrls.length;
        try {
          const { statusCode, body } = await registrationPool[replica].request({
            path: '/api/v1/nodes/register',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              id,
              version: '1.0.0',
              base_url: agentUrl,
              reasoners: [{ id: 'summarize', input_schema: { type: 'object' }, tags: ['text'] }],
              skills: [{ id: 'word_count', tags: ['text'] }],
            }),
          });
          const text = await body.text();
          if (statusCode !== 201) {
            failures.push(`${id}: ${statusCode} ${text.slice(0, 200)}`);
            continue;
          }
        } catch (error) {
          failures.push(`${id}: ${error.code ?? error.message}`);
          continue;
        }
        // An SDK starts heartbeating as soon as its registration is answered.
        const agent = { id, index, replica, active: true, inFlight: 0, beats: 0 };
        agents.set(index, agent);
        wheel[Math.floor(phaseOf(index, intervalMs) / SLOT_MS) % slots].push(agent);
      }
    }
    await Promise.all(Array.from({ length: 50 }, lane));
    return { ms: wallNow() - started, registered: indexes.length - failures.length, failures };
  }

  parentPort.on('message', async (message) => {
    if (message.cmd === 'register') {
      parentPort.postMessage({ reply: 'register', ...(await register(message.indexes)) });
    } else if (message.cmd === 'window') {
      // Hands over what the window since the last call measured, and starts a new one.
      const busy = performance.eventLoopUtilization(loop);
      loop = performance.eventLoopUtilization();
      const inFlight = [...agents.values()].reduce((sum, agent) => sum + agent.inFlight, 0);
      const latency = Float64Array.from(stats.latency);
      const lag = Float64Array.from(stats.lag);
      const service = Float64Array.from(stats.service);
      parentPort.postMessage(
        { reply: 'window', ...stats, latency, lag, service, inFlight, utilization: busy.utilization },
        [latency.buffer, lag.buffer, service.buffer],
      );
      stats = freshStats();
    } else if (message.cmd === 'status') {
      const inFlight = [...agents.values()].reduce((sum, agent) => sum + agent.inFlight, 0);
      parentPort.postMessage({ reply: 'status', inFlight });
    } else if (message.cmd === 'pause' || message.cmd === 'resume') {
      for (const index of message.indexes) {
        const agent = agents.get(index);
        if (agent) agent.active = message.cmd === 'resume';
      }
      parentPort.postMessage({ reply: message.cmd });
    } else if (message.cmd === 'close') {
      await Promise.all([...pools, ...registrationPool].map((pool) => pool.close()));
      parentPort.postMessage({ reply: 'close' });
      process.exit(0);
    }
  });
}

// ── The benchmark (main thread) ─────────────────────────────────────────────────────────────────

async function runBenchmark() {
  const { default: pg } = await import('pg');
  const { benchStorage } = await import('./fleet.mjs');
  const { startControlPlaneProcess } = await import('../../tests/support/control-plane-process.ts');

  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
  const STEPS = (process.env.BENCH_STEPS ?? '1000,2500,5000,10000,20000').split(',').map(Number);
  const INTERVAL_MS = Number(process.env.BENCH_INTERVAL ?? 5) * 1000;
  const MEASURE_MS = Number(process.env.BENCH_MEASURE ?? 20) * 1000;
  const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
  // Real agents each hold a connection of their own; a pool this large keeps a slow server's beats
  // queueing in the server (as they would) rather than in the simulator, within the fd limit.
  const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
  const BUDGET_MS = Number(process.env.BENCH_BUDGET ?? 540) * 1000;
  const KEEP_GOING = process.env.BENCH_KEEP_GOING === '1';
  const STOP_EVERY = 10; // the sweep is measured by stopping every 10th agent (10 %)
  const CLOCK_TICKS = 100; // /proc/<pid>/stat counts CPU time in 1/100 s on Linux

  const benchStarted = Date.now();
  const load0 = loadavg()[0];
  const pct = (sorted, q) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const ascending = (values) => Float64Array.from(values).sort();
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const round = (value, digits = 0) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : '–');

  // The agent every node points at: the health monitor of each replica probes GET /health of
  // every ready node (every 30 s), which is part of what a fleet costs; it counts the probes.
  // fleet.mjs's startHealthyAgent answers the same but does not count.
  let probes = 0;
  const agentServer = createServer((req, res) => {
    if (req.url === '/health') probes += 1;
    res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  });
  await new Promise((done) => agentServer.listen(0, '127.0.0.1', done));
  const agentUrl = `http://127.0.0.1:${agentServer.address().port}`;

  const storage = await benchStorage('fleet-sim');
  const databaseUrl = storage.env.DATABASE_URL;
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  const replicaDirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'sy-fleet-replica-')));
  const replicas = [];
  const workers = [];
  let sampler;
  const steps = [];
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.log(`${signal}: stopping the replicas and dropping the scratch database`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    // One after the other, so the second finds the schema migrated rather than waiting on the lock.
    // The replicas are told the fleet's interval, as an operator of such a fleet would configure
    // them: until a node's own rhythm is observed its lease assumes the TypeScript SDK's 30 s
    // (a 90 s lease, settling to 3 × the interval about 80 s after registration), which would
    // make every step wait minutes for its stopped agents' leases rather than for the sweep.
    const env = { SWITCHYARD_NODE_LIFECYCLE_ASSUMED_HEARTBEAT_INTERVAL: `${INTERVAL_MS}ms` };
    for (const dir of replicaDirs) replicas.push(await startControlPlaneProcess({ dir, databaseUrl, env }));
    const urls = replicas.map((replica) => replica.url);

    sampler = new pg.Client({ connectionString: databaseUrl });
    await sampler.connect();
    const samplerPid = (await sampler.query('select pg_backend_pid() as pid')).rows[0].pid;

    // Reference: a bare `select 1` round trip from this process to the same database.
    const selectOne = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await sampler.query('select 1');
      selectOne.push(performance.now() - t);
    }
    const selectOneSorted = ascending(selectOne);
    const reference = { p50: pct(selectOneSorted, 0.5), p99: pct(selectOneSorted, 0.99) };

    const epoch = Math.ceil(wallNow() / 1000) * 1000;
    const replies = new Map();
    for (let w = 0; w < WORKERS; w++) {
      const worker = new Worker(new URL(import.meta.url), {
        workerData: { replicaUrls: urls, intervalMs: INTERVAL_MS, sockets: SOCKETS, epoch, agentUrl },
      });
      worker.on('message', (message) => replies.get(worker)?.resolve(message));
      // A failed simulator thread fails the run (and its cleanup runs) instead of leaving it waiting.
      worker.on('error', (error) => replies.get(worker)?.reject(error));
      workers.push(worker);
    }
    /** Sends `message` to every simulator thread (or the ones `pick` builds one for) and awaits their replies. */
    const ask = (build) =>
      Promise.all(
        workers.map(
          (worker, w) =>
            new Promise((resolve, reject) => {
              replies.set(worker, { resolve, reject });
              worker.postMessage(build(w));
            }),
        ),
      );
    const ownedBy = (indexes, w) => indexes.filter((index) => index % WORKERS === w);

    // ── Load meters ──
    const procCpu = (pid) => {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime + stime
      } catch {
        return 0;
      }
    };
    // PostgreSQL backends serving the scratch database (their command line names it), except
    // this script's own sampling connection. Backends that exit between two reads lose their
    // share, so the figure is a lower bound; the replicas' pools keep theirs open.
    const pgBackends = () => {
      const cpu = new Map();
      for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
        if (Number(pid) === samplerPid) continue;
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          if (cmdline.startsWith('postgres: ') && cmdline.includes(` ${databaseName} `))
            cpu.set(pid, procCpu(pid));
        } catch {}
      }
      return cpu;
    };
    const machine = () => {
      const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
      const values = fields.map(Number);
      const total = values.reduce((a, b) => a + b, 0);
      return { total, idle: values[3] + values[4] };
    };
    const dbCounters = async () =>
      (
        await sampler.query(
          `select xact_commit::float8, xact_rollback::float8, tup_updated::float8, tup_inserted::float8,
                  tup_deleted::float8, blks_read::float8, blks_hit::float8
             from pg_stat_database where datname = current_database()`,
        )
      ).rows[0];
    const metricSum = async (url, name) => {
      const text = await fetch(`${url}/metrics`).then((r) => r.text());
      let sum = 0;
      for (const line of text.split('\n')) {
        if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.split(' ').pop());
      }
      return sum;
    };
    const lastEventId = async () =>
      Number((await sampler.query(`select coalesce(max(id), 0)::float8 as id from event_log`)).rows[0].id);

    let registered = 0;
    for (const size of STEPS) {
      if (Date.now() - benchStarted > BUDGET_MS) {
        console.log(`(budget of ${BUDGET_MS / 1000} s spent: ${size} agents not run)`);
        break;
      }
      const step = { size };
      steps.push(step);
      const stepFirstEvent = await lastEventId();

      // 1. Register the step's new agents (they start heartbeating as each is answered).
      const fresh = Array.from({ length: size - registered }, (_, k) => registered + k);
      const registrations = await ask((w) => ({ cmd: 'register', indexes: ownedBy(fresh, w) }));
      const failures = registrations.flatMap((r) => r.failures);
      step.registrationPerSecond = fresh.length / (Math.max(...registrations.map((r) => r.ms)) / 1000);
      step.registrationFailures = failures.length;
      if (failures.length > 0)
        console.log(`registration failures (first 5):\n  ${failures.slice(0, 5).join('\n  ')}`);
      registered = size;

      // 2. Warm up: two intervals, so every agent has sent `starting` and then `ready` and has a
      //    lease fitted to its own rhythm; then until the backlog that registering left behind
      //    has drained (beats in flight under a quarter of a second's worth: a mean latency under
      //    250 ms, by Little's law), at most 60 s more, so the window measures the steady state.
      const warmupStarted = Date.now();
      await sleep(2 * INTERVAL_MS + 500);
      const offered = size / (INTERVAL_MS / 1000);
      for (;;) {
        const inFlight = (await ask(() => ({ cmd: 'status' }))).reduce((a, r) => a + r.inFlight, 0);
        step.drained = inFlight < offered / 4;
        if (step.drained || Date.now() - warmupStarted > 2 * INTERVAL_MS + 60_000) break;
        await sleep(1000);
      }
      step.warmupSeconds = (Date.now() - warmupStarted) / 1000;

      // 3. Measure.
      await ask(() => ({ cmd: 'window' }));
      const cpu0 = {
        replicas: replicas.map((r) => procCpu(r.pid)),
        pg: pgBackends(),
        sim: process.cpuUsage(),
        machine: machine(),
      };
      const db0 = await dbCounters();
      const hits0 = await Promise.all(urls.map((u) => metricSum(u, 'service_discovery_cache_hits_total')));
      const misses0 = await Promise.all(
        urls.map((u) => metricSum(u, 'service_discovery_cache_misses_total')),
      );
      const probes0 = probes;
      const mainLoop = performance.eventLoopUtilization();
      const started = performance.now();
      const discovery = [];
      const discoveryFailures = [];
      const connections = [];
      const measureUntil = started + MEASURE_MS;
      await Promise.all([
        (async () => {
          // Discovery as a caller sees it while the fleet heartbeats: one request at a time,
          // alternating replicas, the default page (100 instances) of the whole fleet.
          for (let i = 0; performance.now() < measureUntil; i++) {
            const t = performance.now();
            const response = await fetch(`${urls[i % urls.length]}/api/v1/discovery/capabilities`);
            await response.arrayBuffer();
            discovery.push(performance.now() - t);
            if (response.status !== 200) discoveryFailures.push(response.status);
            await sleep(100);
          }
        })(),
        (async () => {
          while (performance.now() < measureUntil) {
            const { rows } = await sampler.query(
              `select count(*)::int as total, count(*) filter (where state = 'active')::int as active
                 from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
            );
            connections.push(rows[0]);
            await sleep(500);
          }
        })(),
      ]);
      const windows = await ask(() => ({ cmd: 'window' }));
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = {
        replicas: replicas.map((r) => procCpu(r.pid)),
        pg: pgBackends(),
        sim: process.cpuUsage(cpu0.sim),
        machine: machine(),
      };
      const db1 = await dbCounters();
      const hits1 = await Promise.all(urls.map((u) => metricSum(u, 'service_discovery_cache_hits_total')));
      const misses1 = await Promise.all(
        urls.map((u) => metricSum(u, 'service_discovery_cache_misses_total')),
      );
      const lagP99 = await Promise.all(urls.map((u) => metricSum(u, 'nodejs_eventloop_lag_p99_seconds')));

      const sum = (key) => windows.reduce((total, w) => total + w[key], 0);
      const latency = ascending(windows.flatMap((w) => [...w.latency]));
      const lag = ascending(windows.flatMap((w) => [...w.lag]));
      const service = ascending(windows.flatMap((w) => [...w.service]));
      const statuses = {};
      const errors = {};
      for (const w of windows) {
        for (const [k, v] of Object.entries(w.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
        for (const [k, v] of Object.entries(w.errors)) errors[k] = (errors[k] ?? 0) + v;
      }
      let pgCpu = 0;
      for (const [pid, after] of cpu1.pg) pgCpu += after - (cpu0.pg.get(pid) ?? after);
      const discoverySorted = ascending(discovery);
      Object.assign(step, {
        seconds,
        offered: size / (INTERVAL_MS / 1000),
        sentPerSecond: sum('sent') / seconds,
        okPerSecond: sum('ok') / seconds,
        failed: sum('failed'),
        statuses,
        errors,
        overlapped: sum('overlapped'),
        skipped: Math.round(sum('skipped')),
        inFlightAtEnd: sum('inFlight'),
        p50: pct(latency, 0.5),
        p99: pct(latency, 0.99),
        max: latency[latency.length - 1],
        lagP99: pct(lag, 0.99),
        serviceP50: pct(service, 0.5),
        serviceP99: pct(service, 0.99),
        simulatorBusy: Math.max(...windows.map((w) => w.utilization)),
        discoveryP50: pct(discoverySorted, 0.5),
        discoveryP99: pct(discoverySorted, 0.99),
        discoveryCount: discovery.length,
        discoveryFailures: discoveryFailures.length,
        discoveryMisses: misses1.reduce((a, b) => a + b, 0) - misses0.reduce((a, b) => a + b, 0),
        discoveryHits: hits1.reduce((a, b) => a + b, 0) - hits0.reduce((a, b) => a + b, 0),
        replicaCpu: cpu1.replicas.map((after, i) => (after - cpu0.replicas[i]) / seconds),
        replicaLoopLagP99: lagP99.map((s) => s * 1000),
        pgCpu: pgCpu / seconds,
        simulatorCpu: (cpu1.sim.user + cpu1.sim.system) / 1e6 / seconds,
        mainThreadBusy: performance.eventLoopUtilization(mainLoop).utilization,
        machineBusy: 1 - (cpu1.machine.idle - cpu0.machine.idle) / (cpu1.machine.total - cpu0.machine.total),
        probesPerSecond: (probes - probes0) / seconds,
        commitsPerSecond: (db1.xact_commit - db0.xact_commit) / seconds,
        updatedPerSecond: (db1.tup_updated - db0.tup_updated) / seconds,
        insertedPerSecond: (db1.tup_inserted - db0.tup_inserted) / seconds,
        blocksReadPerSecond: (db1.blks_read - db0.blks_read) / seconds,
        blocksHitPerSecond: (db1.blks_hit - db0.blks_hit) / seconds,
        connectionsMean: connections.reduce((a, c) => a + c.total, 0) / connections.length,
        activeMean: connections.reduce((a, c) => a + c.active, 0) / connections.length,
        activeMax: Math.max(...connections.map((c) => c.active)),
      });

      // 4. Sweep: stop every 10th agent and time how the replicas take them offline. Each step
      //    stops a different tenth, agents never stopped before: one that comes back after an
      //    outage has a long observed interval (the gap) and so a long lease for a while.
      const stopped = Array.from({ length: size }, (_, i) => i).filter(
        (i) => i % STOP_EVERY === steps.length - 1,
      );
      const stoppedIds = stopped.map(agentId);
      const sweepFirstEvent = await lastEventId();
      const stoppedAt = Date.now();
      await ask((w) => ({ cmd: 'pause', indexes: ownedBy(stopped, w) }));
      // The lease is 3 × the interval (15 s at least) after the last beat, the sweep runs every
      // 5 s; a minute beyond that means the sweep is not keeping up at all.
      const sweepDeadline = stoppedAt + Math.max(15_000, 3 * INTERVAL_MS) + 60_000;
      let offline = 0;
      while (Date.now() < sweepDeadline) {
        const { rows } = await sampler.query(
          `select count(*)::int as offline from node_instances
            where node_id = any($1) and lifecycle_status = 'offline'`,
          [stoppedIds],
        );
        offline = rows[0].offline;
        if (offline === stoppedIds.length) step.sweepAllOfflineSeconds ??= (Date.now() - stoppedAt) / 1000;
        // A pass marks its instances offline in one UPDATE and then appends their events one by
        // one: it has ended when every stopped agent's event is in the log.
        const { rows: logged } = await sampler.query(
          `select count(*)::int as n from event_log
            where id > $1 and stream = 'nodes' and event = 'node.status_changed'
              and payload->>'reason' = 'heartbeat_expired' and payload->>'node_id' = any($2)`,
          [sweepFirstEvent, stoppedIds],
        );
        if (offline === stoppedIds.length && logged[0].n >= stoppedIds.length) break;
        await sleep(250);
      }
      step.sweepAllOfflineSeconds ??= Number.NaN;
      step.sweepAllLoggedSeconds = (Date.now() - stoppedAt) / 1000;
      step.sweepOffline = offline;
      const stoppedReasons = await sampler.query(
        `select status_reason as reason, count(*)::int as n from node_instances
          where node_id = any($1) group by 1`,
        [stoppedIds],
      );
      step.stoppedReasons = Object.fromEntries(stoppedReasons.rows.map((r) => [r.reason, r.n]));
      step.sweepStopped = stoppedIds.length;
      const lags = await sampler.query(
        `select extract(epoch from status_changed_at - lease_expires_at)::float8 * 1000 as after_lease,
                extract(epoch from status_changed_at - last_heartbeat)::float8 * 1000 as after_beat
           from node_instances where node_id = any($1) and lifecycle_status = 'offline'`,
        [stoppedIds],
      );
      const afterLease = ascending(lags.rows.map((r) => r.after_lease));
      const afterBeat = ascending(lags.rows.map((r) => r.after_beat));
      step.offlineAfterLeaseP50 = pct(afterLease, 0.5);
      step.offlineAfterLeaseMax = afterLease[afterLease.length - 1];
      step.offlineAfterBeatMax = afterBeat[afterBeat.length - 1];
      // One sweep pass stamps every instance it expires with the pass's start and then appends a
      // node.status_changed event per instance; the last append of a pass is when it ended.
      const passes = await sampler.query(
        `select payload->>'timestamp' as pass, count(*)::int as expired,
                extract(epoch from max(created_at) - (payload->>'timestamp')::timestamptz)::float8 * 1000 as ms
           from event_log
          where id > $1 and stream = 'nodes' and event = 'node.status_changed'
            and payload->>'reason' = 'heartbeat_expired' and payload->>'node_id' = any($2)
          group by 1 order by 1`,
        [sweepFirstEvent, stoppedIds],
      );
      step.sweepPasses = passes.rows.length;
      step.sweepPassMaxMs = Math.max(...passes.rows.map((r) => r.ms));
      step.sweepPassMaxExpired = Math.max(...passes.rows.map((r) => r.expired));
      step.sweepMsPerInstance = Math.max(...passes.rows.map((r) => r.ms / r.expired));

      // 5. Bring the stopped agents back, and count healthy agents the replicas took offline
      //    (a lease that ran out while the agent kept beating) during the whole step.
      await ask((w) => ({ cmd: 'resume', indexes: ownedBy(stopped, w) }));
      const flaps = await sampler.query(
        `select count(*)::int as n from event_log
          where id > $1 and stream = 'nodes' and event = 'node.status_changed'
            and payload->>'reason' = 'heartbeat_expired' and not (payload->>'node_id' = any($2))`,
        [stepFirstEvent, stoppedIds],
      );
      step.flaps = flaps.rows[0].n;
      const states = await sampler.query(
        `select lifecycle_status as status, count(*)::int as n from node_instances group by 1 order by 1`,
      );
      step.states = Object.fromEntries(states.rows.map((r) => [r.status, r.n]));
      const checks = await sampler.query(
        `select count(last_check_at)::int as probed, count(*) filter (where last_check_ok)::int as ok,
                count(*) filter (where next_check_at < now() - interval '10 seconds')::int as overdue
           from node_instances where lifecycle_status <> 'offline'`,
      );
      step.healthChecks = checks.rows[0];

      // Where it breaks: beats falling behind, p99 beyond the interval, failures, or healthy
      // agents taken offline. A busy simulator is named so its limit is not read as the server's.
      const reasons = [];
      if (!step.drained) reasons.push('the backlog left by registering did not drain within 60 s');
      if (step.okPerSecond < 0.95 * step.offered)
        reasons.push(`achieved ${round(step.okPerSecond / step.offered, 2)}× offered`);
      if (step.p99 > INTERVAL_MS) reasons.push(`p99 ${round(step.p99)} ms > interval`);
      if (step.failed > 0) reasons.push(`${step.failed} failed heartbeats`);
      if (step.flaps > 0) reasons.push(`${step.flaps} healthy agents taken offline`);
      if (step.registrationFailures > 0) reasons.push(`${step.registrationFailures} failed registrations`);
      step.broke = reasons;
      // A saturated simulator thread is its own limit; late timers on an idle thread are the
      // machine's CPU, shared with the servers, and are reported as send lag instead.
      step.simulatorLimited = step.simulatorBusy > 0.9;
      printStep(step);
      if (reasons.length > 0 && !KEEP_GOING) break;
      // Let the resumed agents settle before the next step registers more.
      await sleep(INTERVAL_MS);
    }

    printSummary(reference);
  } finally {
    await cleanUp();
  }

  /** Stops what the run started and drops its database; also on Ctrl-C, so nothing outlives it. */
  async function cleanUp() {
    if (cleanUp.done) return;
    cleanUp.done = true;
    if (workers.length > 0) {
      await Promise.race([
        Promise.all(
          workers.map(
            (worker) =>
              new Promise((done) => {
                worker.once('exit', done);
                worker.postMessage({ cmd: 'close' });
              }),
          ),
        ),
        sleep(5_000),
      ]);
      for (const worker of workers) await worker.terminate();
    }
    await sampler?.end();
    for (const replica of replicas) {
      const status = await replica.stop();
      if (status.code !== 0 && status.code !== null)
        console.log(`replica exited with ${status.code}:\n${replica.output().slice(-2000)}`);
    }
    for (const replica of replicas) {
      const warnings = replica.output().trim();
      if (warnings)
        console.log(`replica ${replica.url} logged (last 1,500 characters):\n${warnings.slice(-1500)}`);
    }
    await new Promise((done) => agentServer.close(done));
    await storage.remove();
    for (const dir of replicaDirs) rmSync(dir, { recursive: true, force: true });
  }

  function printStep(s) {
    console.log(
      `\n${s.size} agents (offered ${round(s.offered)} beats/s): ${round(s.okPerSecond)} ok/s, p50 ${round(s.p50, 1)} ms, ` +
        `p99 ${round(s.p99, 1)} ms (server p50/p99 ${round(s.serviceP50, 1)}/${round(s.serviceP99, 1)} ms), failed ${s.failed} ${JSON.stringify({ ...s.statuses, ...s.errors })}, ` +
        `send lag p99 ${round(s.lagP99, 1)} ms, simulator thread ${round(s.simulatorBusy * 100)} % busy\n` +
        `  discovery p50/p99 ${round(s.discoveryP50, 1)}/${round(s.discoveryP99, 1)} ms (${s.discoveryCount} requests, ` +
        `${s.discoveryMisses} cache misses), sweep: ${s.sweepOffline}/${s.sweepStopped} offline after ` +
        `${round(s.sweepAllOfflineSeconds, 1)} s, all logged after ${round(s.sweepAllLoggedSeconds, 1)} s ` +
        `${JSON.stringify(s.stoppedReasons)}, passes ${s.sweepPasses}, longest ${round(s.sweepPassMaxMs)} ms ` +
        `(${s.sweepPassMaxExpired} expired), flaps ${s.flaps}, states ${JSON.stringify(s.states)}, ` +
        `health checks ${JSON.stringify(s.healthChecks)}\n` +
        `  CPU s/s: replicas ${s.replicaCpu.map((c) => round(c, 2)).join(' + ')}, PostgreSQL ${round(s.pgCpu, 2)}, ` +
        `simulator ${round(s.simulatorCpu, 2)}; machine ${round(s.machineBusy * 100)} % busy; ` +
        `${round(s.commitsPerSecond)} commits/s, ${round(s.activeMean, 1)} active backends` +
        (s.broke.length > 0
          ? `\n  BREAKS: ${s.broke.join('; ')}${s.simulatorLimited ? ' (simulator limited)' : ''}`
          : ''),
    );
  }

  function printSummary(reference) {
    const base = steps.find((s) => s.p50 !== undefined);
    if (!base) {
      process.exitCode = 1;
      return;
    }
    const ours = (s) => s.replicaCpu.reduce((a, b) => a + b, 0) + s.pgCpu + s.simulatorCpu;
    const cpuPerBeat = (s) => ((s.replicaCpu.reduce((a, b) => a + b, 0) + s.pgCpu) / s.okPerSecond) * 1000;
    const rows = [
      ['heartbeats/s offered', (s) => round(s.offered)],
      [
        'heartbeats/s achieved (× offered)',
        (s) => `${round(s.okPerSecond)} (${round(s.okPerSecond / s.offered, 2)})`,
      ],
      ['heartbeat p50 / p99 ms', (s) => `${round(s.p50, 1)} / ${round(s.p99, 1)}`],
      [
        'of which the server (written → answered) p50 / p99 ms',
        (s) => `${round(s.serviceP50, 1)} / ${round(s.serviceP99, 1)}`,
      ],
      ['p50, p99 × first step', (s) => `${round(s.p50 / base.p50, 2)}, ${round(s.p99 / base.p99, 2)}`],
      ['p50 × `select 1` p50', (s) => round(s.p50 / reference.p50, 1)],
      [
        'failed heartbeats',
        (s) => `${s.failed}${s.failed ? ` ${JSON.stringify({ ...s.statuses, ...s.errors })}` : ''}`,
      ],
      [
        'simulator: send lag p99 ms, thread busy',
        (s) => `${round(s.lagP99, 1)}, ${round(s.simulatorBusy * 100)} %`,
      ],
      ['registration agents/s', (s) => round(s.registrationPerSecond)],
      ['warm-up s (backlog drained)', (s) => `${round(s.warmupSeconds)} (${s.drained ? 'yes' : 'no'})`],
      [
        'discovery p50 / p99 ms (cache misses)',
        (s) => `${round(s.discoveryP50, 1)} / ${round(s.discoveryP99, 1)} (${s.discoveryMisses})`,
      ],
      ['discovery p99 × first step', (s) => round(s.discoveryP99 / base.discoveryP99, 2)],
      [
        '10 % stopped: all offline after s (all events logged)',
        (s) =>
          `${round(s.sweepAllOfflineSeconds, 1)} (${round(s.sweepAllLoggedSeconds, 1)}), ${s.sweepOffline}/${s.sweepStopped}`,
      ],
      [
        'offline after lease end p50 / max ms',
        (s) => `${round(s.offlineAfterLeaseP50)} / ${round(s.offlineAfterLeaseMax)}`,
      ],
      [
        'sweep pass: longest ms (expired), ms per instance',
        (s) => `${round(s.sweepPassMaxMs)} (${s.sweepPassMaxExpired}), ${round(s.sweepMsPerInstance, 2)}`,
      ],
      ['healthy agents taken offline', (s) => s.flaps],
      ['health probes/s', (s) => round(s.probesPerSecond)],
      ['CPU s/s: replica A, B', (s) => s.replicaCpu.map((c) => round(c, 2)).join(', ')],
      ['CPU s/s: PostgreSQL backends, simulator', (s) => `${round(s.pgCpu, 2)}, ${round(s.simulatorCpu, 2)}`],
      ['CPU s/s of this run (of 2 cores)', (s) => round(ours(s), 2)],
      ['machine busy (2 cores)', (s) => `${round(s.machineBusy * 100)} %`],
      ['CPU ms per heartbeat (replicas + PostgreSQL)', (s) => round(cpuPerBeat(s), 2)],
      ['CPU per heartbeat × first step', (s) => round(cpuPerBeat(s) / cpuPerBeat(base), 2)],
      ['replica event-loop lag p99 ms', (s) => s.replicaLoopLagP99.map((v) => round(v, 1)).join(', ')],
      [
        'commits/s (per heartbeat)',
        (s) => `${round(s.commitsPerSecond)} (${round(s.commitsPerSecond / s.okPerSecond, 2)})`,
      ],
      ['rows updated/s, inserted/s', (s) => `${round(s.updatedPerSecond)}, ${round(s.insertedPerSecond)}`],
      ['blocks read/s, hit/s', (s) => `${round(s.blocksReadPerSecond)}, ${round(s.blocksHitPerSecond)}`],
      [
        'connections (mean), active mean / max',
        (s) => `${round(s.connectionsMean, 1)}, ${round(s.activeMean, 1)} / ${s.activeMax}`,
      ],
      [
        'breaks',
        (s) =>
          s.broke.length ? s.broke.join('; ') + (s.simulatorLimited ? ' (simulator limited)' : '') : 'no',
      ],
    ];
    console.log(
      `\nFleet simulation: 2 replicas, PostgreSQL, heartbeat every ${INTERVAL_MS / 1000} s, ${MEASURE_MS / 1000} s measured per step, ` +
        `${WORKERS} simulator thread(s) × ${SOCKETS} connections per replica; \`select 1\` p50 ${round(reference.p50, 3)} ms, ` +
        `p99 ${round(reference.p99, 3)} ms; load average ${round(load0, 1)} before, ${round(loadavg()[0], 1)} after; ` +
        `${round((Date.now() - benchStarted) / 1000)} s in all\n`,
    );
    console.log(`| measure | ${steps.map((s) => `${s.size.toLocaleString('en')} agents`).join(' | ')} |`);
    console.log(`|---|${steps.map(() => '---').join('|')}|`);
    for (const [label, value] of rows)
      console.log(`| ${label} | ${steps.map((s) => (s.p50 === undefined ? '' : value(s))).join(' | ')} |`);
    const broken = steps.find((s) => s.broke?.length > 0);
    if (broken) {
      const consumers = [
        ['replica A', broken.replicaCpu[0]],
        ['replica B', broken.replicaCpu[1]],
        ['PostgreSQL', broken.pgCpu],
        ['simulator', broken.simulatorCpu],
      ].sort((a, b) => b[1] - a[1]);
      console.log(
        `\nBreaks at ${broken.size} agents: ${broken.broke.join('; ')}. Machine ${round(broken.machineBusy * 100)} % busy; ` +
          `CPU s/s ${consumers.map(([name, value]) => `${name} ${round(value, 2)}`).join(', ')} ` +
          `(${round(ours(broken), 2)} of the 2 cores; the rest went to other work on the machine)` +
          (broken.simulatorLimited
            ? "; the simulator was itself saturated (its limit, not necessarily the servers')"
            : ''),
      );
    } else console.log('\nNo step broke.');
  }
}
