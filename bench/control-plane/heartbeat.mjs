#!/usr/bin/env node
// Heartbeat throughput of the real control-plane server with 1,000 registered nodes.
// Run from the repository root:
//   node --import tsx bench/control-plane/heartbeat.mjs            (embedded PGlite)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/control-plane/heartbeat.mjs
// Settings: BENCH_NODES (1000), BENCH_DURATION seconds (10), BENCH_CONNECTIONS (10).
// With DATABASE_URL a throwaway database is created on that server and dropped afterwards.
import autocannon from 'autocannon';
import { startServer } from '../../apps/control-plane/src/server.ts';
import { benchStorage, registerFleet, startHealthyAgent } from './fleet.mjs';

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

const agent = await startHealthyAgent();
const storage = await benchStorage('heartbeat');
const running = await startServer({ env: { CONTROL_PLANE_PORT: '0', LOG_LEVEL: 'silent', ...storage.env } });

const ids = Array.from({ length: NODES }, (_, i) => `bench-node-${i}`);
const registrationMs = await registerFleet(running.url, NODES, (id) => ({
  id,
  version: '1.0.0',
  base_url: agent.url,
  reasoners: [{ id: 'summarize', input_schema: { type: 'object' }, tags: ['text'] }],
  skills: [{ id: 'word_count', tags: ['text'] }],
}));

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
await agent.close();
await storage.remove();

const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite (embedded)';
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
