#!/usr/bin/env node
// The observability forwarder's cost to executions (the rule: a collector outage never blocks or
// slows executions), measured through the real control-plane server, on PostgreSQL and on
// embedded PGlite in one run. Sync executions are driven with autocannon for BENCH_DURATION
// seconds in phases, each printed as a ratio to its reference:
//   off       no collector configured (the reference, run before and after every other phase:
//             each is compared with the mean of the two beside it);
//   healthy   a collector that answers 200 at once (also: events it received per second);
//   hanging   a collector that accepts the connection and never answers (attempts time out);
//   refused   a collector URL whose port refuses connections.
// Run from the repository root:
//   node --import tsx bench/control-plane/forwarder.mjs
// Settings: DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a scratch database is created
// on that server and dropped afterwards), BENCH_DATABASES (postgres,pglite), BENCH_DURATION
// seconds per phase (5), BENCH_CONNECTIONS (10).
// The agent and the collector run in a child process (plain node:http), autocannon in a worker
// thread, so neither shares the control plane's event loop.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_ID = 'bench-forwarded';

if (process.argv[2] === '--peers') runPeers();
else await main();

// ── The agent and the collector (child process) ─────────────────────────────────────────────────
// The agent answers POST /reasoners/echo with 200 at once. The collector counts the events of
// every batch it takes; `mode` (set over IPC) makes it answer 200, or hold every request open.
function runPeers() {
  let mode = 'ok';
  let events = 0;
  const held = new Set();
  const agent = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  const collector = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (mode === 'hang') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      events += JSON.parse(Buffer.concat(chunks).toString('utf8')).events?.length ?? 0;
      res.writeHead(200);
      res.end();
    });
  });
  process.on('message', (message) => {
    if (message.cmd === 'mode') {
      mode = message.mode;
      for (const res of held) res.destroy();
      process.send({ event: 'mode' });
    } else if (message.cmd === 'events') process.send({ event: 'events', events });
  });
  agent.listen(0, '127.0.0.1', () =>
    collector.listen(0, '127.0.0.1', () =>
      process.send({
        event: 'listening',
        agent: `http://127.0.0.1:${agent.address().port}`,
        collector: `http://127.0.0.1:${collector.address().port}/ingest`,
      }),
    ),
  );
}

// ── The measurement ─────────────────────────────────────────────────────────────────────────────
async function main() {
  const { default: autocannon } = await import('autocannon');
  const { startServer } = await import('../../apps/control-plane/src/server.ts');
  const { createScratchDatabase } = await import('@switchyard/shared/db');
  const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const DATABASES = (process.env.BENCH_DATABASES ?? 'postgres,pglite').split(',').map((s) => s.trim());
  const DURATION = Number(process.env.BENCH_DURATION ?? 5);
  const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const loadBefore = loadavg()[0];

  const peers = fork(fileURLToPath(import.meta.url), ['--peers'], { execArgv: [] });
  const waiting = new Map();
  peers.on('message', (message) => {
    const wake = waiting.get(message.event);
    waiting.delete(message.event);
    wake?.(message);
  });
  const ask = (command, event) => {
    const answer = new Promise((resolve) => waiting.set(event, resolve));
    if (command) peers.send(command);
    return answer;
  };
  const { agent, collector } = await ask(undefined, 'listening');
  // A port nothing listens on: bound for a moment, then closed.
  const refused = await new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(`http://127.0.0.1:${port}/ingest`));
    });
  });

  async function send(base, method, path, body) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  async function register(base) {
    await send(base, 'POST', '/api/v1/nodes/register', {
      id: NODE_ID,
      version: '1.0.0',
      base_url: agent,
      deployment_type: 'long_running',
      reasoners: [{ id: 'echo', input_schema: { type: 'object' }, tags: ['bench'] }],
      skills: [],
    });
    const beat = { version: '1.0.0', timestamp: new Date().toISOString() };
    await send(base, 'POST', `/api/v1/nodes/${NODE_ID}/heartbeat`, { ...beat, status: 'starting' });
    await send(base, 'POST', `/api/v1/nodes/${NODE_ID}/lifecycle/status`, {
      status: 'ready',
      version: '1.0.0',
    });
  }

  const execute = (base, duration) =>
    autocannon({
      workers: 1,
      connections: CONNECTIONS,
      url: `${base}/api/v1/execute/${NODE_ID}.echo`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { text: 'hello' } }),
      duration,
    });

  async function benchDatabase(kind) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-forwarder-'));
    const scratch = kind === 'postgres' ? await createScratchDatabase(DATABASE_URL, 'sy_bench_fwd') : null;
    const running = await startServer({
      env: {
        CONTROL_PLANE_PORT: '0',
        LOG_LEVEL: 'silent',
        SWITCHYARD_DATA_DIR: dataDir,
        // The collectors listen on 127.0.0.1 over plain HTTP.
        SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
        SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        ...(scratch ? { DATABASE_URL: scratch.url } : {}),
      },
    });
    const settings = '/api/v1/settings/observability-webhook';
    const rows = [];
    try {
      await register(running.url);
      await execute(running.url, 3); // warm-up: JIT, pools, keep-alive sockets
      // Each collector phase sits between two `off` phases and is compared with their mean, so
      // drift over the run (a warming process, a growing table, the machine's load) does not
      // read as the collector's doing.
      const off = ['off', undefined, 'ok'];
      const phases = [
        off,
        ['healthy', collector, 'ok'],
        off,
        ['hanging', collector, 'hang'],
        off,
        ['refused', refused, 'ok'],
        off,
      ];
      for (const [name, url, mode] of phases) {
        await ask({ cmd: 'mode', mode }, 'mode');
        if (url) await send(running.url, 'POST', settings, { url, enabled: true });
        const before = (await ask({ cmd: 'events' }, 'events')).events;
        // Statements the server ran during the phase, by their first words (what costs what).
        const statements = new Map();
        const count = (query) => {
          const key = String(query.sql ?? '')
            .replace(/\s+/g, ' ')
            .slice(0, 60);
          statements.set(key, (statements.get(key) ?? 0) + 1);
        };
        running.db.on('query', count);
        const result = await execute(running.url, DURATION);
        running.db.removeListener('query', count);
        const received = (await ask({ cmd: 'events' }, 'events')).events - before;
        const status = url ? await send(running.url, 'GET', `${settings}/status`) : undefined;
        rows.push({
          name,
          rps: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          errors: result.errors + result.non2xx,
          eventsPerSecond: name === 'healthy' ? received / DURATION : undefined,
          lastError: status?.last_error ?? null,
          statementsPerExecution:
            [...statements.values()].reduce((a, b) => a + b, 0) / Math.max(1, result.requests.total),
          topStatements: [...statements].sort((a, b) => b[1] - a[1]).slice(0, 8),
        });
        if (url) await send(running.url, 'DELETE', settings);
      }
    } finally {
      await running.close();
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    return rows;
  }

  const fmt = (n, digits = 0) => (n === undefined ? '' : n.toFixed(digits));
  try {
    for (const kind of DATABASES) {
      const rows = await benchDatabase(kind);
      // The reference of a phase: the mean of the `off` phases beside it (of an `off` phase, itself).
      const referenceOf = (i) => {
        if (rows[i].name === 'off') return rows[i];
        return { rps: (rows[i - 1].rps + rows[i + 1].rps) / 2, p99: (rows[i - 1].p99 + rows[i + 1].p99) / 2 };
      };
      console.log(`\n${kind}: sync executions, ${CONNECTIONS} connections, ${DURATION} s per phase`);
      console.log(
        '| collector | executions/s | × off beside | p50 ms | p99 ms | p99 × off beside | errors | events/s received |',
      );
      console.log('|---|---|---|---|---|---|---|---|');
      rows.forEach((r, i) => {
        const reference = referenceOf(i);
        console.log(
          `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.rps / reference.rps, 2)} | ${r.p50} | ${r.p99} | ${fmt(r.p99 / reference.p99, 2)} | ${r.errors} | ${fmt(r.eventsPerSecond)} |`,
        );
      });
      for (const r of rows) {
        console.log(`  ${r.name}: ${fmt(r.statementsPerExecution, 1)} statements per execution`);
        if (process.env.BENCH_PROFILE === '1')
          for (const [sql, n] of r.topStatements) console.log(`    ${n}× ${sql}`);
      }
      for (const r of rows.filter((row) => row.lastError)) {
        console.log(`  ${r.name}: the forwarder's last error was "${r.lastError}"`);
      }
      if (rows.some((r) => r.errors > 0)) process.exitCode = 1;
    }
    console.log(`\nload average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`);
  } finally {
    peers.kill();
  }
}
