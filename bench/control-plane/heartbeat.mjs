#!/usr/bin/env node
// Heartbeat throughput of the real control-plane server with 1,000 registered nodes.
// Run from the repository root:
//   node --import tsx bench/control-plane/heartbeat.mjs            (embedded PGlite)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/control-plane/heartbeat.mjs
// Settings: BENCH_NODES (1000), BENCH_DURATION seconds (10), BENCH_CONNECTIONS (10).
// With DATABASE_URL a throwaway database is created on that server and dropped afterwards.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import autocannon from 'autocannon';
import { startServer } from '../../apps/control-plane/src/server.ts';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

// Every node points at one healthy agent, so the health monitor's probes (which keep running, as
// in production) succeed instead of piling up connection errors.
const agent = createServer((req, res) => {
  res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
  res.end('{"status":"ok"}');
});
await new Promise((done) => agent.listen(0, '127.0.0.1', done));
const agentUrl = `http://127.0.0.1:${agent.address().port}`;

let databaseUrl;
let dropDatabase = async () => {};
if (process.env.DATABASE_URL) {
  const name = `sy_bench_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url: process.env.DATABASE_URL, poolMax: 1 });
  await admin.raw(`create database ${name}`);
  await admin.destroy();
  const target = new URL(process.env.DATABASE_URL);
  target.pathname = `/${name}`;
  databaseUrl = target.toString();
  dropDatabase = async () => {
    const cleanup = await openDatabase({ url: process.env.DATABASE_URL, poolMax: 1 });
    await cleanup.raw(`drop database if exists ${name} with (force)`);
    await cleanup.destroy();
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'sy-bench-'));
const running = await startServer({
  env: {
    CONTROL_PLANE_PORT: '0',
    SWITCHYARD_DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  },
  log: () => {},
});

const ids = Array.from({ length: NODES }, (_, i) => `bench-node-${i}`);
const registrationStarted = performance.now();
for (let i = 0; i < ids.length; i += 50) {
  await Promise.all(
    ids.slice(i, i + 50).map(async (id) => {
      const response = await fetch(`${running.url}/api/v1/nodes/register`, {
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
      if (response.status !== 201) throw new Error(`registering ${id} answered ${response.status}`);
      await response.arrayBuffer();
    }),
  );
}
const registrationMs = performance.now() - registrationStarted;

let next = 0;
const body = JSON.stringify({ status: 'ready', version: '1.0.0', timestamp: new Date().toISOString() });
const result = await autocannon({
  url: running.url,
  connections: CONNECTIONS,
  duration: DURATION,
  requests: [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      // Round-robin over the fleet, as 1,000 agents heartbeating would.
      setupRequest: (request) => ({
        ...request,
        path: `/api/v1/nodes/${ids[next++ % ids.length]}/heartbeat`,
      }),
    },
  ],
});

const ready = await fetch(`${running.url}/api/ui/v1/nodes?status=ready`).then((r) => r.json());

await running.close();
await new Promise((done) => agent.close(done));
await dropDatabase();
rmSync(dataDir, { recursive: true, force: true });

const database = databaseUrl ? 'PostgreSQL' : 'PGlite (embedded)';
console.log(`
Heartbeat benchmark: ${NODES} registered nodes, ${database}, ${CONNECTIONS} connections, ${DURATION} s
  registration      ${NODES} nodes in ${(registrationMs / 1000).toFixed(2)} s (${Math.round(NODES / (registrationMs / 1000))}/s)
  heartbeats        ${result.requests.total} requests, ${Math.round(result.requests.average)} req/s average
  latency           p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms
  non-2xx / errors  ${result.non2xx} / ${result.errors} (timeouts ${result.timeouts})
  ready afterwards  ${ready.total} of ${NODES} nodes
| database | nodes | connections | req/s | p50 ms | p99 ms |
|---|---|---|---|---|---|
| ${database} | ${NODES} | ${CONNECTIONS} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} |
`);
if (result.non2xx > 0 || result.errors > 0) process.exitCode = 1;
