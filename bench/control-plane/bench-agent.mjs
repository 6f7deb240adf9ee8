#!/usr/bin/env node
// The agent the execution benches call: a child process (plain node:http, no SDK) that the bench
// forks (lane-kit.mjs `forkBenchAgent`), so it never shares the servers' event loop.
// POST /reasoners/echo answers 200 with a small JSON result (after BENCH_AGENT_WORK_MS, 0 by
// default). POST /reasoners/work answers 202 and then reports `succeeded` through
// POST /api/v1/executions/{id}/status on a keep-alive connection, retrying a failed callback like
// the SDKs. Once told where the control plane is, it heartbeats like an SDK agent. It talks to the
// parent over IPC: `configure` (control plane URL), `expect` (tell me when this many callbacks
// succeeded), `receipts` (when each execution arrived, wall clock in ms), `cpu` (its CPU time),
// `failed-callbacks`, `stop`.
import { createServer, Agent as HttpAgent, request as httpRequest } from 'node:http';
import { NODE_ID } from './lane-kit.mjs';

const RESULT = JSON.stringify({ ok: true, words: 1 });
/** How long the echo function works before answering (0: answers at once). */
const WORK_MS = Number(process.env.BENCH_AGENT_WORK_MS ?? 0);

runAgent();

function runAgent() {
  let controlPlane;
  let heartbeat;
  let okCallbacks = 0;
  let failedCallbacks = 0;
  let expected = Number.POSITIVE_INFINITY;
  let receipts = new Map();
  const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  const wallNow = () => performance.timeOrigin + performance.now();

  const post = (path, body) =>
    new Promise((resolve) => {
      const payload = JSON.stringify(body);
      const req = httpRequest(
        `${controlPlane}${path}`,
        {
          method: 'POST',
          agent: keepAlive,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', () => resolve(0));
      req.end(payload);
    });

  async function callback(id) {
    for (let attempt = 0; attempt < 6; attempt++) {
      const status = await post(`/api/v1/executions/${id}/status`, {
        execution_id: id,
        status: 'succeeded',
        result: { ok: true, words: 1 },
      });
      if (status >= 200 && status < 300) {
        okCallbacks += 1;
        if (okCallbacks >= expected) {
          expected = Number.POSITIVE_INFINITY;
          process.send({ event: 'done', at: wallNow() });
        }
        return;
      }
      failedCallbacks += 1;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    const arrived = wallNow();
    req.resume();
    req.on('end', () => {
      if (req.url === '/reasoners/work') {
        const id = String(req.headers['x-execution-id']);
        receipts.set(id, arrived);
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'accepted', execution_id: id }));
        setImmediate(() => void callback(id));
        return;
      }
      const answer = () => {
        res.writeHead(req.url === '/reasoners/echo' ? 200 : 404, { 'content-type': 'application/json' });
        res.end(RESULT);
      };
      if (WORK_MS > 0) setTimeout(answer, WORK_MS);
      else answer();
    });
  });

  process.on('message', async (message) => {
    if (message.cmd === 'configure') {
      controlPlane = message.controlPlaneUrl;
      keepAlive.destroy();
      clearInterval(heartbeat);
      heartbeat = setInterval(() => {
        void post(`/api/v1/nodes/${NODE_ID}/heartbeat`, {
          status: 'ready',
          version: '1.0.0',
          timestamp: new Date().toISOString(),
        });
      }, 2_000);
      process.send({ event: 'configured' });
    } else if (message.cmd === 'expect') {
      okCallbacks = 0;
      failedCallbacks = 0;
      receipts = new Map();
      expected = message.count;
      process.send({ event: 'expecting' });
    } else if (message.cmd === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ event: 'cpu', ms: (user + system) / 1000 });
    } else if (message.cmd === 'failed-callbacks') {
      process.send({ event: 'failed-callbacks', count: failedCallbacks });
    } else if (message.cmd === 'receipts') {
      process.send({ event: 'receipts', receipts: [...receipts], okCallbacks, failedCallbacks });
    } else if (message.cmd === 'stop') {
      clearInterval(heartbeat);
      keepAlive.destroy();
      server.close();
      process.disconnect();
    }
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => {
    process.send({ event: 'listening', url: `http://127.0.0.1:${server.address().port}` });
  });
}
