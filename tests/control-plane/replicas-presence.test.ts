/**
 * Many replicas on one PostgreSQL: presence sweeps and health probes do not fire once
 * per replica. PostgreSQL only: PGlite's files belong to a single process, so there is no second
 * replica to run.
 *
 * Three real control-plane processes on one fresh database, with short presence and health
 * timings so the fleet's background work happens many times within the test:
 * - an agent that stops heartbeating (its server still up) goes offline once, then is evicted
 *   once: one `node.status_changed` to offline and one `node.removed` in the event log and on each
 *   replica's node stream, although all three replicas sweep every 200 ms;
 * - an agent's GET /health, counted at the agent (a real HTTP server heartbeating through all three
 *   replicas), is probed about once per check interval by the fleet: over a window of the test's
 *   own measure, no more probes than intervals (plus three for the window's edges), where one probe
 *   per replica per interval would be three times as many.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgent,
  executionAgentRegistration,
  startExecutionAgent,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { eventually } from '../support/eventually.ts';
import { type ReplicaCluster, startReplicaCluster } from '../support/replica-cluster.ts';
import { openSse, type SseReader } from '../support/sse-reader.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const NOTE = POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process';
const RUN_ID = randomBytes(3).toString('hex');
const SWEEP_MS = 200;
const CHECK_INTERVAL_MS = 1000;
const HEARTBEAT_MS = 500;
/** How long the test counts probes. */
const WINDOW_MS = 10_000;

let cluster: ReplicaCluster | undefined;
const streams: SseReader[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
const url = (n: number) => cluster!.replicas[n]!.url;

beforeAll(async () => {
  if (!POSTGRES) return;
  cluster = await startReplicaCluster('sy_replicas_presence', 3, {
    SWITCHYARD_NODE_LIFECYCLE_SWEEP_INTERVAL: `${SWEEP_MS}ms`,
    SWITCHYARD_NODE_LIFECYCLE_RECONCILE_INTERVAL: `${SWEEP_MS}ms`,
    // Leases of 4 s from the agents' own 500 ms rhythm, not from an assumed 30 s one: short
    // enough for a quick test, long enough that a stall of the loaded test machine does not let
    // one lapse while the agent still heartbeats.
    SWITCHYARD_NODE_LIFECYCLE_HEARTBEAT_TTL: '4s',
    SWITCHYARD_NODE_LIFECYCLE_MAX_HEARTBEAT_TTL: '6s',
    SWITCHYARD_NODE_LIFECYCLE_ASSUMED_HEARTBEAT_INTERVAL: '0',
    // Offline instances unseen for 8 s are evicted (about 4 s after they went offline).
    SWITCHYARD_NODE_LIFECYCLE_HARD_EVICT_TTL: '8s',
    SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: `${CHECK_INTERVAL_MS}ms`,
  });
}, 120_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  for (const cleanup of cleanups.reverse()) await cleanup();
  await cluster?.close();
});

async function post(base: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * An agent whose only job is to be probed: a real HTTP server answering GET /health and counting
 * each hit, registered through replica 1 and heartbeating round-robin through all three, as
 * through a load balancer. Written here because the test agents do not count their probes.
 */
async function startProbedAgent(nodeId: string) {
  const hits: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      hits.push(Date.now());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', node_id: nodeId }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const body = await executionAgentRegistration({
    controlPlaneUrl: url(0),
    nodeId,
    baseUrl,
    reasoners: { work: { kind: 'answer' } },
  });
  expect(await post(url(0), '/api/v1/nodes/register', body)).toBe(201);
  expect(
    await post(url(0), `/api/v1/nodes/${nodeId}/lifecycle/status`, { status: 'ready', version: '1.0.0' }),
  ).toBe(200);
  let beat = 0;
  const timer = setInterval(() => {
    void post(url(beat++ % 3), `/api/v1/nodes/${nodeId}/heartbeat`, {
      status: 'ready',
      version: '1.0.0',
    }).catch(() => {});
  }, HEARTBEAT_MS);
  const stop = async () => {
    clearInterval(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(stop);
  return { hits, stop };
}

describe('presence and health checks with three control-plane replicas on one PostgreSQL database', () => {
  it.skipIf(!POSTGRES)(
    `an agent that stops heartbeating goes offline once and is evicted once, not once per replica (${NOTE})`,
    { timeout: 90_000 },
    async () => {
      const nodeId = `replicas-quiet-${RUN_ID}`;
      const onEach = await Promise.all(
        [0, 1, 2].map((n) => openSse(`${url(n)}/api/ui/v1/nodes/events?node_id=${nodeId}`)),
      );
      streams.push(...onEach);
      const agent: ExecutionAgent = await startExecutionAgent({
        controlPlaneUrl: url(1),
        nodeId,
        heartbeatMs: HEARTBEAT_MS,
        reasoners: { work: { kind: 'answer' } },
      });
      cleanups.push(() => agent.close());
      await agent.register();
      // A few heartbeats first, so its lease follows its own rhythm (and the sweeps run meanwhile).
      await eventually('three ready heartbeats', async () =>
        agent.heartbeats.filter((h) => h.status === 'ready' && h.httpStatus === 200).length >= 3
          ? true
          : undefined,
      );
      agent.stopHeartbeats();
      const transitions = (reader: SseReader) =>
        reader.frames
          .filter((f) => f.event === 'node.status_changed')
          .map((f) => `${f.data.old_status}->${f.data.new_status} (${f.data.reason})`);
      // Read from the streams, which keep it: the node is offline for only about 4 s before its
      // eviction, and a GET polled on a stalled machine could miss that window.
      await eventually(
        'the node is offline',
        async () =>
          onEach.some((reader) => transitions(reader).some((t) => t.includes('->offline')))
            ? true
            : undefined,
        () => JSON.stringify(onEach.map(transitions)),
      );
      // Then it is evicted, by the same sweeps.
      await eventually(
        'node.removed on every replica',
        async () =>
          onEach.every((reader) => reader.frames.some((f) => f.event === 'node.removed')) ? true : undefined,
        () => JSON.stringify(onEach.map((reader) => reader.frames.map((f) => f.event))),
      );
      // Every replica sweeps again several times after the one that evicted it.
      await new Promise((done) => setTimeout(done, SWEEP_MS * 10));
      const rows = await cluster!
        .db('event_log')
        .select('id', 'event', 'payload')
        .whereIn('event', ['node.status_changed', 'node.removed'])
        .orderBy('id');
      const payloads = rows
        .map((row) => ({
          event: row.event as string,
          ...(typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload),
        }))
        .filter((payload) => payload.node_id === nodeId);
      const logged = payloads
        .filter((p) => p.event === 'node.status_changed')
        .map((p) => `${p.old_status}->${p.new_status} (${p.reason})`);
      console.log(
        `replicas-presence: node events in the event log: ${JSON.stringify(payloads.map((p) => p.event))}, transitions ${JSON.stringify(logged)}`,
      );
      expect(
        payloads.filter((p) => p.event === 'node.removed'),
        'node.removed in the event log',
      ).toHaveLength(1);
      for (const [n, reader] of onEach.entries()) {
        expect(
          reader.frames.filter((f) => f.event === 'node.removed'),
          `node.removed on replica ${n + 1}`,
        ).toHaveLength(1);
      }
      expect(logged.filter((t) => t.startsWith('ready->offline'))).toEqual([
        'ready->offline (heartbeat_expired)',
      ]);
      expect(logged.filter((t) => t.includes('->offline'))).toHaveLength(1);
      for (const [n, reader] of onEach.entries()) {
        await eventually(`replica ${n + 1}'s stream carries the transition`, async () =>
          transitions(reader).length >= logged.length ? true : undefined,
        );
        expect(transitions(reader), `node stream on replica ${n + 1}`).toEqual(logged);
      }
    },
  );

  it.skipIf(!POSTGRES)(
    `an agent's /health is probed about once per interval by the fleet, not once per replica (${NOTE})`,
    { timeout: 90_000 },
    async () => {
      const nodeId = `replicas-probed-${RUN_ID}`;
      const agent = await startProbedAgent(nodeId);
      // Probing has begun (the first claim is due at once) before the window opens.
      await eventually('the first probe', async () => (agent.hits.length > 0 ? true : undefined));
      const opened = Date.now();
      const before = agent.hits.length;
      await new Promise((done) => setTimeout(done, WINDOW_MS));
      const closed = Date.now();
      const probes = agent.hits.length - before;
      const intervals = (closed - opened) / CHECK_INTERVAL_MS;
      const state = await fetch(`${url(0)}/api/v1/nodes/${nodeId}`).then((r) => r.json());
      console.log(
        `replicas-presence: ${probes} probes in ${closed - opened} ms (${intervals.toFixed(1)} check intervals; one probe per replica per interval would be about ${Math.round(3 * intervals)}); node ${state.lifecycle_status}`,
      );
      expect(state.lifecycle_status, 'the probed agent stayed ready').toBe('ready');
      expect(probes, 'probes within the window').toBeGreaterThan(0);
      // Each claim moves the instance's next check an interval on, so probes start at least an
      // interval apart; the slack covers a probe claimed just before the window and sent late.
      expect(probes, 'at most one probe per check interval').toBeLessThanOrEqual(Math.ceil(intervals) + 3);
    },
  );
});
