// What both control-plane benchmarks set up: one healthy agent that every node points at, a
// database of their own, and a fleet registered through the real HTTP API.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '@switchyard/shared/db';

/**
 * Starts an agent whose /health answers 200, so the health monitor's probes (which keep running,
 * as in production) succeed quietly instead of piling up connection errors.
 */
export async function startHealthyAgent() {
  const agent = createServer((req, res) => {
    res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  });
  await new Promise((done) => agent.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${agent.address().port}`,
    close: () => new Promise((done) => agent.close(done)),
  };
}

/**
 * Where the benchmark keeps its data: a scratch database on the server of DATABASE_URL when it is
 * set (dropped by `remove`), else a temporary directory for embedded PGlite.
 */
export async function benchStorage(label) {
  const dataDir = mkdtempSync(join(tmpdir(), `sy-bench-${label}-`));
  const scratch = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'sy_bench')
    : null;
  return {
    env: { SWITCHYARD_DATA_DIR: dataDir, ...(scratch ? { DATABASE_URL: scratch.url } : {}) },
    async remove() {
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers `count` nodes named bench-node-<i> through POST /api/v1/nodes/register, 50 at a time,
 * each built by `describe(id, i)`. Returns the milliseconds it took.
 */
export async function registerFleet(controlPlaneUrl, count, describe) {
  const started = performance.now();
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
        const id = `bench-node-${i + j}`;
        const response = await fetch(`${controlPlaneUrl}/api/v1/nodes/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(describe(id, i + j)),
        });
        if (response.status !== 201) throw new Error(`registering ${id} answered ${response.status}`);
        await response.arrayBuffer();
      }),
    );
  }
  return performance.now() - started;
}
