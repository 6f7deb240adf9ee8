#!/usr/bin/env node
// A healthy node's async executions next to a node that never answers. Three runs of
// the real control-plane server, each on a fresh database:
//   alone      the healthy node only;
//   neighbour  first HUNG executions to a node whose function never answers (they take its
//              per-node cap of dispatch slots and the rest wait), then the healthy node's;
//   no cap     the same with max_concurrent_per_node = dispatch_concurrency, as before the cap
//              existed: the hung calls hold every slot until the answer rule ends them.
// For each it prints the healthy executions' queued → running time (started_at − created_at,
// p50/p95/max) and, as the figure that matters, the ratio of each p50 to the `alone` p50 of the
// same run. Run from the repository root:
//   node --import tsx bench/control-plane/hung-neighbour.mjs
// Settings: DATABASE_URL (a scratch database is created on that server and dropped; unset runs
// on embedded PGlite), BENCH_HEALTHY executions to the healthy node (200), BENCH_HUNG executions
// to the hung node (300), BENCH_ANSWER_TIMEOUT of the `no cap` run (5s).
// The agents run in a child process (plain node:http), so they do not share the server's loop.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HEALTHY = 'bench-healthy';
const HUNG = 'bench-hung';

if (process.argv[2] === '--agents') runAgents();
else await main();

// ── The agents (child process) ──────────────────────────────────────────────────────────────────
// Two servers: the healthy one answers every call 200 at once; the hung one reads the call and
// never answers (it lets go when the control plane closes the connection). Both heartbeat.
function runAgents() {
  const held = new Set();
  const healthy = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.method === 'GET' ? '{"status":"ok"}' : '{"ok":true}');
    });
  });
  const hung = createServer((req, res) => {
    if (req.method === 'GET') return res.end('{"status":"ok"}');
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  let beat;
  const post = (url, body) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(JSON.stringify(body));
  };
  process.on('message', (message) => {
    if (message.cmd === 'heartbeat') {
      clearInterval(beat);
      beat = setInterval(() => {
        for (const id of [HEALTHY, HUNG])
          post(`${message.url}/api/v1/nodes/${id}/heartbeat`, { status: 'ready', version: '1.0.0' });
      }, 2_000);
    } else if (message.cmd === 'stop') {
      clearInterval(beat);
      for (const res of held) res.destroy();
      healthy.close();
      hung.close();
      process.disconnect();
    }
  });
  let listening = 0;
  const urls = {};
  for (const [name, server] of [
    ['healthy', healthy],
    ['hung', hung],
  ]) {
    server.listen(0, '127.0.0.1', () => {
      urls[name] = `http://127.0.0.1:${server.address().port}`;
      if (++listening === 2) process.send({ event: 'listening', urls });
    });
  }
}

// ── The benchmark (parent process) ──────────────────────────────────────────────────────────────
async function main() {
  const { startServer } = await import('../../apps/control-plane/src/server.ts');
  const { createScratchDatabase } = await import('@switchyard/shared/db');
  const HEALTHY_COUNT = Number(process.env.BENCH_HEALTHY ?? 200);
  const HUNG_COUNT = Number(process.env.BENCH_HUNG ?? 300);
  const ANSWER_TIMEOUT = process.env.BENCH_ANSWER_TIMEOUT ?? '5s';

  const agents = fork(fileURLToPath(import.meta.url), ['--agents'], { stdio: 'inherit' });
  const urls = await new Promise((resolve) => agents.once('message', (m) => resolve(m.urls)));

  async function api(base, method, path, body) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  }

  async function register(base, id, baseUrl) {
    await api(base, 'POST', '/api/v1/nodes/register', {
      id,
      version: '1.0.0',
      base_url: baseUrl,
      reasoners: [{ id: 'work', input_schema: { type: 'object' } }],
      skills: [],
    });
    await api(base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready', version: '1.0.0' });
  }

  /** Submits `count` async executions one after another; returns their ids. */
  async function submit(base, node, count) {
    const ids = [];
    for (let i = 0; i < count; i += 1)
      ids.push(
        (await api(base, 'POST', `/api/v1/execute/async/${node}.work`, { input: { i } })).execution_id,
      );
    return ids;
  }

  /** Waits until none of `ids` is queued; returns their queued → running times in ms. */
  async function queuedToRunning(db, ids) {
    for (;;) {
      const rows = await db('executions')
        .whereIn('execution_id', ids)
        .select('status', db.raw('extract(epoch from (started_at - created_at)) * 1000 as ms'));
      if (rows.every((r) => r.status !== 'queued' && r.ms !== null)) return rows.map((r) => Number(r.ms));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const percentile = (sorted, p) =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

  async function run(label, env, hungCount) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-hung-'));
    const scratch = process.env.DATABASE_URL
      ? await createScratchDatabase(process.env.DATABASE_URL, 'sy_bench')
      : null;
    const server = await startServer({
      env: {
        CONTROL_PLANE_PORT: '0',
        LOG_LEVEL: 'silent',
        SWITCHYARD_DATA_DIR: dataDir,
        ...(scratch ? { DATABASE_URL: scratch.url } : {}),
        ...env,
      },
    });
    try {
      await register(server.url, HEALTHY, urls.healthy);
      await register(server.url, HUNG, urls.hung);
      agents.send({ cmd: 'heartbeat', url: server.url });
      // Warm-up: connections, JIT.
      await queuedToRunning(server.db, await submit(server.url, HEALTHY, 20));
      if (hungCount > 0) await submit(server.url, HUNG, hungCount);
      const started = performance.now();
      const ms = (await queuedToRunning(server.db, await submit(server.url, HEALTHY, HEALTHY_COUNT))).sort(
        (a, b) => a - b,
      );
      const figures = {
        label,
        p50: percentile(ms, 50),
        p95: percentile(ms, 95),
        max: ms[ms.length - 1],
        seconds: (performance.now() - started) / 1000,
      };
      console.error(`${label}: done`);
      return figures;
    } finally {
      await server.close();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
  try {
    const alone = await run('alone', {}, 0);
    const neighbour = await run('hung neighbour (default cap 32 of 64 slots)', {}, HUNG_COUNT);
    const uncapped = await run(
      `hung neighbour, no per-node cap (answer_timeout ${ANSWER_TIMEOUT})`,
      {
        SWITCHYARD_EXECUTION_QUEUE_MAX_CONCURRENT_PER_NODE: '64',
        SWITCHYARD_EXECUTION_QUEUE_ANSWER_TIMEOUT: ANSWER_TIMEOUT,
      },
      Math.min(HUNG_COUNT, 128),
    );
    console.log(
      `\n${database}: queued → running of ${HEALTHY_COUNT} executions to a healthy node, submitted one after another\n`,
    );
    console.log('| run | p50 ms | p95 ms | max ms | p50 ÷ alone p50 |');
    console.log('|---|---|---|---|---|');
    for (const f of [alone, neighbour, uncapped]) {
      const ratio = f.p50 / Math.max(alone.p50, 0.001);
      console.log(
        `| ${f.label} | ${f.p50.toFixed(1)} | ${f.p95.toFixed(1)} | ${f.max.toFixed(1)} | ${ratio.toFixed(2)}× |`,
      );
    }
  } finally {
    agents.send({ cmd: 'stop' });
  }
}
