import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import { createForwarder, type Forwarder, type ForwarderDeps } from '../src/modules/observability/index.ts';
import { createEventLog, type EventLog } from '../src/platform/events/index.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

/**
 * Observability forwarding (content/concepts/observability.md): a real collector on 127.0.0.1 receives signed
 * batches of execution, node and memory events read from the event log; the collector going down
 * parks batches in the DLQ, coming back lets a redrive deliver them; a second forwarder takes over
 * after the first's lease expired. Time is the manual clock (snapshots, leases); the forwarder is
 * driven with runOnce(), except where its own loop is the point.
 */

const PATH = '/api/v1/settings/observability-webhook';
/** A deadline for what the forwarder's own loop does (never a timing assertion). */
const POLL = { timeout: 30_000, interval: 50 };
const SECRET = 'collector-secret';

interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  signatureValid: boolean;
}

type Mode = number | 'hang';

interface Collector {
  url: string;
  received: Received[];
  mode: Mode;
  /** While set, every request is held until it resolves, then answered as `mode` says. */
  gate?: Promise<void>;
  /** Every event of every batch received, in arrival order. */
  events(): any[];
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A collector that checks signatures as content/api/observability.md tells collectors to. */
async function startCollector(secret = SECRET): Promise<Collector> {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters: Array<{ count: number; done: () => void }> = [];
  const collector: Collector = {
    url: '',
    received,
    mode: 204,
    events: () => received.flatMap((r) => r.body?.events ?? []),
    waitFor(count) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((done) => waiters.push({ count, done }));
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const header = req.headers['x-service-signature'];
    const expected = createHmac('sha256', secret).update(raw).digest();
    const given =
      typeof header === 'string' ? Buffer.from(header.replace(/^sha256=/, ''), 'hex') : Buffer.alloc(0);
    const signatureValid =
      typeof header === 'string' &&
      header.startsWith('sha256=') &&
      given.length === expected.length &&
      timingSafeEqual(given, expected);
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    received.push({ headers: req.headers, raw, body, signatureValid });
    for (const waiter of waiters.splice(0)) {
      if (received.length >= waiter.count) waiter.done();
      else waiters.push(waiter);
    }
    if (collector.mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (collector.gate) {
      hanging.add(res);
      await collector.gate;
      hanging.delete(res);
    }
    res.statusCode = collector.mode;
    res.end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  collector.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/ingest`;
  return collector;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Another replica's forwarder on `cp`'s database, with an event log of its own (`log` silent
 * unless given), both stopped after the test; `overrides` replace any of its deps.
 */
function replicaForwarder(
  cp: TestControlPlane,
  replicaId: string,
  overrides: Partial<ForwarderDeps> = {},
): Forwarder {
  const log = overrides.log ?? pino({ level: 'silent' });
  const eventLog = createEventLog({ db: cp.handle.db, events: cp.events, log });
  const forwarder = createForwarder({
    db: cp.handle.db,
    events: cp.events,
    eventLog,
    clock: cp.clock,
    log,
    settings: cp.config.observability,
    allowPrivateNetworks: true,
    replicaId,
    ...overrides,
  });
  cleanups.push(async () => {
    await forwarder.stop();
    await eventLog.stop();
  });
  return forwarder;
}

async function collectorFor(secret?: string): Promise<Collector> {
  const collector = await startCollector(secret);
  cleanups.push(() => collector.close());
  return collector;
}

/** A control plane whose forwarder retries at once (1 ms backoff) and checks no address rule by default. */
async function controlPlane(
  options: {
    allowHttp?: boolean;
    allowPrivate?: boolean;
    snapshotMs?: number;
    httpTimeoutMs?: number;
    batchSize?: number;
    maxAttempts?: number;
  } = {},
) {
  const cp = await startTestControlPlane({
    config: (config) => {
      if (options.batchSize) config.observability.batchSize = options.batchSize;
      if (options.maxAttempts) config.observability.maxAttempts = options.maxAttempts;
      config.observability.initialBackoffMs = 1;
      config.observability.maxBackoffMs = 2;
      config.observability.snapshotIntervalMs = options.snapshotMs ?? 0;
      if (options.httpTimeoutMs) config.observability.httpTimeoutMs = options.httpTimeoutMs;
      config.executionQueue.webhookAllowHttp = options.allowHttp ?? true;
      config.executionQueue.webhookAllowPrivateNetworks = options.allowPrivate ?? true;
    },
  });
  cleanups.push(() => cp.close());
  return cp;
}

async function configure(cp: TestControlPlane, body: Record<string, unknown>) {
  const answer = await call(cp.base, 'POST', PATH, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

async function status(cp: TestControlPlane) {
  const answer = await call(cp.base, 'GET', `${PATH}/status`);
  expect(answer.status).toBe(200);
  return answer.body;
}

let keys = 0;
async function memorySet(cp: TestControlPlane, count: number): Promise<string[]> {
  const written: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = `obs-key-${++keys}`;
    const answer = await call(cp.base, 'POST', '/api/v1/memory/set', { key, data: { n: keys } });
    expect(answer.status).toBe(200);
    written.push(key);
  }
  return written;
}

/**
 * Runs the forwarder until `done` holds. On PostgreSQL an event becomes readable only once every
 * older transaction of the cluster has ended (the event log's visibility rule), and other
 * databases' transactions count too: a pass may find an entry not yet readable. A deadline, never
 * a timing assertion.
 */
async function forwardUntil(forwarder: Forwarder, done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await forwarder.runOnce();
    if (done()) return;
    if (Date.now() > deadline) throw new Error(`the forwarder did not ${what} within 30 s`);
    await new Promise((resume) => setTimeout(resume, 50));
  }
}

describe('observability forwarding to a real collector', () => {
  it('forwards signed batches of execution, node and memory events written after it was enabled', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    const [before] = await memorySet(cp, 1);
    await configure(cp, { url: collector.url, secret: SECRET, headers: { 'X-Tenant': 'acme' } });

    const nodeId = uniqueNodeId('obs');
    expect(
      (await call(cp.base, 'POST', '/api/v1/nodes/register', registration(nodeId, 'http://127.0.0.1:9')))
        .status,
    ).toBe(201);
    const agent: ExecutionAgent = await startExecutionAgent({
      controlPlaneUrl: cp.base,
      nodeId: uniqueNodeId('obs-exec'),
      reasoners: { work: { kind: 'answer' } },
      heartbeatMs: 60_000,
    });
    cleanups.push(() => agent.close());
    await agent.register();
    const executed = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: { a: 1 } });
    expect(executed.status).toBe(200);
    const keysWritten = await memorySet(cp, 12);

    await forwardUntil(
      cp.parts.observability,
      () =>
        collector.events().filter((e) => e.stream === 'memory').length === 12 &&
        collector.events().some((e) => e.event === 'execution.completed'),
      'forward every event',
    );

    expect(collector.received.length).toBeGreaterThanOrEqual(2);
    for (const request of collector.received) {
      expect(request.signatureValid).toBe(true);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-tenant']).toBe('acme');
      expect(request.headers['x-service-delivery-id']).toBe(request.body.batch_id);
      expect(request.body).toMatchObject({
        batch_id: expect.stringMatching(/^obsb_/),
        sent_at: expect.any(String),
        source: {
          service: 'switchyard-control-plane',
          version: expect.any(String),
          replica: cp.parts.replica.id,
        },
      });
      expect(request.body.events.length).toBeGreaterThanOrEqual(1);
      expect(request.body.events.length).toBeLessThanOrEqual(10);
    }
    const events = collector.events();
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const streams = new Set(events.map((e) => e.stream));
    expect([...streams].sort()).toEqual(['executions', 'memory', 'nodes']);
    expect(events).toContainEqual(
      expect.objectContaining({
        stream: 'nodes',
        event: 'node.registered',
        payload: expect.objectContaining({ node_id: nodeId }),
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        stream: 'executions',
        event: 'execution.completed',
        payload: expect.objectContaining({ execution_id: executed.body.execution_id }),
      }),
    );
    const memoryKeys = events.filter((e) => e.stream === 'memory').map((e) => e.payload.key);
    expect(memoryKeys).toEqual(keysWritten);
    expect(memoryKeys).not.toContain(before);
    for (const event of events) expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false);

    const after = await status(cp);
    expect(after).toMatchObject({
      configured: true,
      enabled: true,
      forwarded_total: events.length,
      dropped_total: 0,
      last_error: null,
      dlq_batches: 0,
      queue_depth: 0,
      forwarder: { replica_id: cp.parts.replica.id },
    });
    expect(Number.isNaN(Date.parse(after.last_forward_at))).toBe(false);

    // Nothing new: a second pass sends nothing again.
    const sent = collector.received.length;
    await cp.parts.observability.runOnce();
    expect(collector.received.length).toBe(sent);
  });

  it('sends a system snapshot at once and then every snapshot_interval of the clock', async () => {
    const cp = await controlPlane({ snapshotMs: 60_000 });
    const collector = await collectorFor();
    await configure(cp, { url: collector.url, secret: SECRET });
    await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId('snap'), 'http://127.0.0.1:9'),
    );
    await forwardUntil(
      cp.parts.observability,
      () => collector.events().some((e) => e.event === 'system.snapshot'),
      'send a snapshot',
    );
    const snapshots = () => collector.events().filter((e) => e.event === 'system.snapshot');
    expect(snapshots()).toHaveLength(1);
    expect(snapshots()[0]).toMatchObject({
      stream: 'system',
      id: expect.stringMatching(/^snap_/),
      payload: {
        nodes: { total: expect.any(Number), by_status: expect.any(Object) },
        executions: { by_status: expect.any(Object), queue_depth: 0 },
        memory: { entries: expect.any(Number), vectors: expect.any(Number) },
        replicas: { active: expect.any(Number) },
        forwarder: { replica_id: cp.parts.replica.id },
      },
    });
    await cp.parts.observability.runOnce();
    expect(snapshots()).toHaveLength(1);
    cp.clock.advance(59_000);
    await cp.parts.observability.runOnce();
    expect(snapshots()).toHaveLength(1);
    cp.clock.advance(1_000);
    await cp.parts.observability.runOnce();
    expect(snapshots()).toHaveLength(2);
    expect((await status(cp)).last_snapshot_at).toBe(new Date(cp.clock.now()).toISOString());
  });

  it('parks a batch in the DLQ after max_attempts when the collector is down, and redrive delivers it', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    collector.mode = 503;
    await configure(cp, { url: collector.url, secret: SECRET });
    const keysWritten = await memorySet(cp, 3);
    await forwardUntil(cp.parts.observability, () => collector.received.length === 3, 'make three attempts');

    // Three attempts of the same batch, then parked.
    expect(collector.received).toHaveLength(3);
    const batchIds = new Set(collector.received.map((r) => r.body.batch_id));
    expect(batchIds.size).toBe(1);
    const [batchId] = [...batchIds];
    const down = await status(cp);
    expect(down).toMatchObject({ forwarded_total: 0, dropped_total: 0, dlq_batches: 1, dlq_events: 3 });
    expect(down.last_error).toContain('503');
    expect(Number.isNaN(Date.parse(down.last_error_at))).toBe(false);
    const dlq = await call(cp.base, 'GET', `${PATH}/dlq`);
    expect(dlq.body).toMatchObject({ total_batches: 1, total_events: 3, next_cursor: null });
    expect(dlq.body.batches[0]).toMatchObject({
      batch_id: batchId,
      event_count: 3,
      attempts: 3,
      last_status_code: 503,
      last_error: 'the receiver answered 503',
    });
    expect(dlq.body.batches[0].events.map((e: any) => e.payload.key)).toEqual(keysWritten);

    // The cursor moved on: later events are not held back behind the parked batch.
    collector.mode = 204;
    const later = await memorySet(cp, 1);
    await forwardUntil(
      cp.parts.observability,
      () => collector.received.at(-1)?.body.events.at(-1)?.payload.key === later[0],
      'forward the later event',
    );
    expect(collector.received.at(-1)?.body.events.map((e: any) => e.payload.key)).toEqual(later);

    // Still down for a redrive: the batch stays, with one more attempt.
    collector.mode = 500;
    const failed = await call(cp.base, 'POST', `${PATH}/redrive`);
    expect(failed.body).toMatchObject({ attempted: 1, delivered: 0, failed: 1, remaining: 1 });
    expect(failed.body.results[0]).toMatchObject({ batch_id: batchId, delivered: false, status_code: 500 });
    expect((await call(cp.base, 'GET', `${PATH}/dlq`)).body.batches[0].attempts).toBe(4);

    // Back up: the redrive delivers it, signed, with the same batch id; the DLQ empties.
    collector.mode = 204;
    const redriven = await call(cp.base, 'POST', `${PATH}/redrive`, { batch_ids: [batchId] });
    expect(redriven.status).toBe(200);
    expect(redriven.body).toMatchObject({
      attempted: 1,
      delivered: 1,
      failed: 0,
      delivered_events: 3,
      remaining: 0,
      results: [{ batch_id: batchId, event_count: 3, delivered: true, status_code: 204, error: null }],
    });
    const last = collector.received.at(-1) as Received;
    expect(last.signatureValid).toBe(true);
    expect(last.body.batch_id).toBe(batchId);
    expect(last.headers['x-service-delivery-id']).toBe(batchId);
    expect(last.body.events.map((e: any) => e.payload.key)).toEqual(keysWritten);
    expect(await status(cp)).toMatchObject({
      forwarded_total: 4,
      dlq_batches: 0,
      dlq_events: 0,
      dropped_total: 0,
    });
    expect((await call(cp.base, 'GET', `${PATH}/dlq`)).body).toMatchObject({ batches: [], total_batches: 0 });
  });

  it('clearing the DLQ counts its events as dropped', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    collector.mode = 502;
    await configure(cp, { url: collector.url });
    await memorySet(cp, 2);
    await forwardUntil(cp.parts.observability, () => collector.received.length === 3, 'make three attempts');
    expect(collector.received).toHaveLength(3);
    expect(collector.received[0]?.headers['x-service-signature']).toBeUndefined();
    const cleared = await call(cp.base, 'DELETE', `${PATH}/dlq`);
    expect(cleared.body).toEqual({ cleared_batches: 1, cleared_events: 2 });
    expect(await status(cp)).toMatchObject({ dropped_total: 2, dlq_batches: 0 });
    expect((await call(cp.base, 'DELETE', `${PATH}/dlq`)).body).toEqual({
      cleared_batches: 0,
      cleared_events: 0,
    });
    expect((await status(cp)).dropped_total).toBe(2);
  });

  it('pages the DLQ with limit and cursor', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    collector.mode = 503;
    await configure(cp, { url: collector.url });
    for (let i = 0; i < 3; i++) {
      await memorySet(cp, 1);
      await forwardUntil(
        cp.parts.observability,
        () => collector.received.length === 3 * (i + 1),
        'park the batch',
      );
    }
    const first = await call(cp.base, 'GET', `${PATH}/dlq?limit=2`);
    expect(first.body.batches).toHaveLength(2);
    expect(first.body.total_batches).toBe(3);
    const second = await call(cp.base, 'GET', `${PATH}/dlq?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.batches).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    const all = [...first.body.batches, ...second.body.batches].map((b: any) => b.batch_id);
    expect(new Set(all).size).toBe(3);
  });

  it('ends a DLQ page early once its batches hold 8 MiB of events, and redrives huge batches one by one', async () => {
    const cp = await startTestControlPlane({
      config: (config) => {
        config.memory.maxValueBytes = 5 * 1024 * 1024;
        config.observability.initialBackoffMs = 1;
        config.observability.maxBackoffMs = 2;
        config.observability.snapshotIntervalMs = 0;
      },
    });
    cleanups.push(() => cp.close());
    const collector = await collectorFor();
    collector.mode = 503;
    await configure(cp, { url: collector.url });
    // Three values of 4.5 MB: each is a batch of its own, parked after three attempts.
    const data = 'y'.repeat(4_500_000);
    for (let i = 0; i < 3; i++) {
      const answer = await call(cp.base, 'POST', '/api/v1/memory/set', { key: `huge-${i}`, data });
      expect(answer.status).toBe(200);
    }
    await forwardUntil(cp.parts.observability, () => collector.received.length === 9, 'park three batches');
    expect(collector.received.map((r) => r.body.events.length)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);

    // 9 MB in two batches already: the page ends there, with a cursor to the third (batches
    // parked by the two workers at once may be in either order).
    const first = await call(cp.base, 'GET', `${PATH}/dlq?limit=100`);
    expect(first.status).toBe(200);
    expect(first.body.batches).toHaveLength(2);
    expect(first.body).toMatchObject({ total_batches: 3, total_events: 3 });
    expect(first.body.next_cursor).not.toBeNull();
    const second = await call(cp.base, 'GET', `${PATH}/dlq?limit=100&cursor=${first.body.next_cursor}`);
    expect(second.body.batches).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    const keys = [...first.body.batches, ...second.body.batches].map((b: any) => b.events[0].payload.key);
    expect(keys.sort()).toEqual(['huge-0', 'huge-1', 'huge-2']);

    collector.mode = 204;
    const redriven = await call(cp.base, 'POST', `${PATH}/redrive`);
    expect(redriven.body).toMatchObject({ attempted: 3, delivered: 3, delivered_events: 3, remaining: 0 });
    expect(
      collector.received
        .slice(9)
        .map((r) => r.body.events[0].payload.key)
        .sort(),
    ).toEqual(['huge-0', 'huge-1', 'huge-2']);
  });

  it('stops forwarding when disabled or removed, and starts from now when enabled again', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    await configure(cp, { url: collector.url, secret: SECRET });
    await memorySet(cp, 1);
    await forwardUntil(
      cp.parts.observability,
      () => collector.events().length === 1,
      'forward the first event',
    );
    expect(collector.events()).toHaveLength(1);

    const disabled = await configure(cp, { url: collector.url, secret: SECRET, enabled: false });
    expect(disabled.enabled).toBe(false);
    await memorySet(cp, 2);
    await cp.parts.observability.runOnce();
    expect(collector.events()).toHaveLength(1);
    expect(await status(cp)).toMatchObject({ configured: true, enabled: false, forwarder: null });
    expect((await call(cp.base, 'POST', `${PATH}/redrive`)).status).toBe(409);

    await configure(cp, { url: collector.url, secret: SECRET, enabled: null });
    const [fresh] = await memorySet(cp, 1);
    await forwardUntil(
      cp.parts.observability,
      () => collector.events().some((e) => e.payload.key === fresh),
      'forward the fresh event',
    );
    expect(
      collector
        .events()
        .map((e) => e.payload.key)
        .slice(1),
    ).toEqual([fresh]);

    expect((await call(cp.base, 'DELETE', PATH)).status).toBe(204);
    expect((await call(cp.base, 'GET', PATH)).status).toBe(404);
    expect((await call(cp.base, 'DELETE', PATH)).status).toBe(404);
    await memorySet(cp, 2);
    await cp.parts.observability.runOnce();
    expect(collector.events()).toHaveLength(2);
    expect(await status(cp)).toMatchObject({
      configured: false,
      enabled: false,
      forwarded_total: 2,
      forwarder: null,
    });
  });

  it('answers the settings without the secret or header values', async () => {
    const cp = await controlPlane();
    const set = await configure(cp, {
      url: 'http://127.0.0.1:9/ingest',
      secret: 'hidden',
      headers: { Authorization: 'Bearer token-value' },
    });
    const read = await call(cp.base, 'GET', PATH);
    for (const body of [set, read.body]) {
      expect(body).toMatchObject({
        url: 'http://127.0.0.1:9/ingest',
        enabled: true,
        secret_set: true,
        header_names: ['Authorization'],
      });
      expect(JSON.stringify(body)).not.toContain('hidden');
      expect(JSON.stringify(body)).not.toContain('token-value');
    }
    expect(read.headers.get('cache-control')).toBe('no-store');
    // The secret may be empty, which means batches go out unsigned.
    expect((await configure(cp, { url: 'http://127.0.0.1:9/ingest', secret: '' })).secret_set).toBe(false);
  });
});

describe('redrives at the same time', () => {
  /**
   * A control plane with `count` parked batches of one memory event each (batch_size 1, one
   * attempt): their batch ids, oldest first. The collector then takes everything (204).
   */
  async function parked(count: number) {
    const cp = await controlPlane({ batchSize: 1, maxAttempts: 1 });
    const collector = await collectorFor();
    collector.mode = 503;
    await configure(cp, { url: collector.url, secret: SECRET });
    await memorySet(cp, count);
    await forwardUntil(cp.parts.observability, () => collector.received.length === count, 'park the batches');
    const dlq = await call(cp.base, 'GET', `${PATH}/dlq?limit=100`);
    expect(dlq.body.total_batches).toBe(count);
    const batchIds: string[] = dlq.body.batches.map((b: any) => b.batch_id);
    collector.received.splice(0);
    collector.mode = 204;
    return { cp, collector, batchIds };
  }

  /** The collector's count of each batch id it received. */
  const receipts = (collector: Collector) => {
    const counts = new Map<string, number>();
    for (const r of collector.received) counts.set(r.body.batch_id, (counts.get(r.body.batch_id) ?? 0) + 1);
    return counts;
  };

  it('deliver every parked batch exactly once, and their answers add up to what was parked', async () => {
    const { cp, collector, batchIds } = await parked(12);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => call(cp.base, 'POST', `${PATH}/redrive`)),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    // The collector saw each batch once, and each answer lists only batches its redrive sent.
    expect([...receipts(collector).entries()].sort()).toEqual(batchIds.map((id) => [id, 1]).sort());
    const results = answers.flatMap((answer) => answer.body.results);
    expect(results.map((r: any) => r.batch_id).sort()).toEqual([...batchIds].sort());
    expect(results.every((r: any) => r.delivered && r.status_code === 204 && r.error === null)).toBe(true);
    const sum = (field: string) => answers.reduce((total, answer) => total + answer.body[field], 0);
    expect({ attempted: sum('attempted'), delivered: sum('delivered'), failed: sum('failed') }).toEqual({
      attempted: 12,
      delivered: 12,
      failed: 0,
    });
    expect(sum('delivered_events')).toBe(12);
    expect(await status(cp)).toMatchObject({ forwarded_total: 12, dlq_batches: 0, dlq_events: 0 });
  });

  it('leave the batches one is sending to it: another finds none to send, or answers 409 for named ones', async () => {
    const { cp, collector, batchIds } = await parked(3);
    let release = () => {};
    collector.gate = new Promise<void>((done) => {
      release = done;
    });
    // The first redrive claims all three and posts two (two workers); the collector holds them.
    const first = call(cp.base, 'POST', `${PATH}/redrive`);
    await collector.waitFor(2);

    const second = await call(cp.base, 'POST', `${PATH}/redrive`);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      attempted: 0,
      delivered: 0,
      failed: 0,
      delivered_events: 0,
      remaining: 3,
      results: [],
    });
    const named = await call(cp.base, 'POST', `${PATH}/redrive`, { batch_ids: [batchIds[2]] });
    expect(named.status).toBe(409);
    expect(named.body.code).toBe('conflict');
    expect(named.body.detail).toContain(batchIds[2]);
    // Clearing the DLQ meanwhile leaves them to the redrive too.
    expect((await call(cp.base, 'DELETE', `${PATH}/dlq`)).body).toEqual({
      cleared_batches: 0,
      cleared_events: 0,
    });

    collector.gate = undefined;
    release();
    const answer = await first;
    expect(answer.body).toMatchObject({ attempted: 3, delivered: 3, failed: 0, remaining: 0 });
    expect(answer.body.results.map((r: any) => r.batch_id)).toEqual(batchIds);
    expect([...receipts(collector).values()]).toEqual([1, 1, 1]);
    expect(await status(cp)).toMatchObject({ forwarded_total: 3, dropped_total: 0, dlq_batches: 0 });
  });

  it('free the batches of a failed attempt for the next redrive', async () => {
    const { cp, collector, batchIds } = await parked(2);
    collector.mode = 500;
    const failed = await call(cp.base, 'POST', `${PATH}/redrive`);
    expect(failed.body).toMatchObject({ attempted: 2, delivered: 0, failed: 2, remaining: 2 });
    collector.mode = 204;
    const again = await call(cp.base, 'POST', `${PATH}/redrive`, { batch_ids: batchIds });
    expect(again.body).toMatchObject({ attempted: 2, delivered: 2, failed: 0, remaining: 0 });
  });

  it('take over the batches of a redrive that died once its claim ran out', async () => {
    const { cp, collector, batchIds } = await parked(2);
    // A redrive on a replica that crashed after claiming: 2 batches, 2 workers, 10 s http_timeout,
    // so its claim lasts one round of posts plus a minute.
    const claimedAt = cp.clock.now();
    await cp.handle
      .db('observability_dlq')
      .update({ claimed_by: 'rep_dead/redrive_x', claim_expires_at: new Date(claimedAt + 70_000) });
    expect((await call(cp.base, 'POST', `${PATH}/redrive`)).body.attempted).toBe(0);
    expect((await call(cp.base, 'POST', `${PATH}/redrive`, { batch_ids: batchIds })).status).toBe(409);
    expect(collector.received).toHaveLength(0);

    cp.clock.advance(70_000);
    const taken = await call(cp.base, 'POST', `${PATH}/redrive`);
    expect(taken.body).toMatchObject({ attempted: 2, delivered: 2, remaining: 0 });
    expect([...receipts(collector).values()]).toEqual([1, 1]);
  });
});

describe('a second forwarder', () => {
  it('takes over after the first one’s lease expired, without losing or repeating committed batches', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    await configure(cp, { url: collector.url, secret: SECRET });
    const first = await memorySet(cp, 12);
    await forwardUntil(
      cp.parts.observability,
      () => collector.events().length === 12,
      'forward the first events',
    );
    expect(collector.events().map((e) => e.payload.key)).toEqual(first);

    const errors: unknown[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
    const second = replicaForwarder(cp, 'rep_second', { log });

    // The first replica "crashed" holding the lease: the second waits for it to expire.
    const more = await memorySet(cp, 3);
    await second.runOnce();
    expect(collector.events()).toHaveLength(12);
    expect((await status(cp)).forwarder.replica_id).toBe(cp.parts.replica.id);

    cp.clock.advance(15_000);
    await forwardUntil(second, () => collector.events().length === 15, 'forward the later events');
    const keys = collector.events().map((e) => e.payload.key);
    expect(keys).toEqual([...first, ...more]);
    expect(collector.received.at(-1)?.body.source.replica).toBe('rep_second');
    expect((await status(cp)).forwarder.replica_id).toBe('rep_second');

    // The first one comes back: the lease is taken, so it forwards nothing.
    await memorySet(cp, 1);
    await cp.parts.observability.runOnce();
    expect(collector.events()).toHaveLength(15);
    await forwardUntil(second, () => collector.events().length === 16, 'forward the last event');
    expect(collector.events()).toHaveLength(16);
    expect(errors).toEqual([]);
  });

  it('a forwarder whose lease lapsed while another forwarded reads on from the stored cursors, not its own', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    await configure(cp, { url: collector.url, secret: SECRET });
    const first = await memorySet(cp, 2);
    await forwardUntil(cp.parts.observability, () => collector.events().length === 2, 'forward two events');

    // The first replica stalls past its lease; a second takes over, forwards three more events,
    // and stops cleanly (giving the lease back).
    cp.clock.advance(15_000);
    const second = replicaForwarder(cp, 'rep_meanwhile');
    const more = await memorySet(cp, 3);
    await forwardUntil(second, () => collector.events().length === 5, 'forward the later events');
    await second.stop();
    expect((await status(cp)).forwarder).toBeNull();

    // The first one wakes up and takes the free lease: it must not send those three again.
    await cp.parts.observability.runOnce();
    await cp.parts.observability.runOnce();
    expect(collector.events().map((e) => e.payload.key)).toEqual([...first, ...more]);
    expect((await status(cp)).forwarder.replica_id).toBe(cp.parts.replica.id);
    const last = await memorySet(cp, 1);
    await forwardUntil(
      cp.parts.observability,
      () => collector.events().length === 6,
      'forward the last event',
    );
    expect(collector.events().map((e) => e.payload.key)).toEqual([...first, ...more, ...last]);
  });

  it('renews its lease on time while events keep arriving (reading never holds the renewal back)', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    await configure(cp, { url: collector.url });
    const log = pino({ level: 'silent' });
    const real = createEventLog({ db: cp.handle.db, events: cp.events, log });
    cleanups.push(() => real.stop());
    // A steady flow of events: every read of the log takes a few milliseconds and ends with new
    // entries announced meanwhile, so the forwarder reads on and on.
    const wakers: Array<() => void> = [];
    const busy: EventLog = {
      ...real,
      follow: (stream, after, onEntry, options) => {
        wakers.push(() => onEntry({ id: '0-0', event: 'tick', payload: {} }));
        return real.follow(stream, after, onEntry, options);
      },
      page: async (stream, options) => {
        const page = await real.page(stream, options);
        await new Promise((resume) => setTimeout(resume, 5));
        for (const wake of wakers) wake();
        return page;
      },
    };
    const forwarder = createForwarder({
      db: cp.handle.db,
      events: cp.events,
      eventLog: busy,
      clock: cp.clock,
      log,
      settings: cp.config.observability,
      allowPrivateNetworks: true,
      replicaId: 'rep_busy',
      leaseTtlMs: 300,
    });
    cleanups.push(() => forwarder.stop());
    forwarder.start();
    await expect.poll(async () => (await status(cp)).forwarder?.replica_id, POLL).toBe('rep_busy');
    cp.clock.advance(1_000);
    const renewed = new Date(cp.clock.now() + 300).toISOString();
    await expect.poll(async () => (await status(cp)).forwarder?.lease_expires_at, POLL).toBe(renewed);
  });

  it('applies settings changes without a restart: a started forwarder is woken through the event bus', async () => {
    const cp = await controlPlane();
    const collector = await collectorFor();
    cp.parts.observability.start();
    await configure(cp, { url: collector.url, secret: SECRET });
    // Give the enable a moment to reach the forwarder through the bus before writing.
    await expect.poll(async () => (await status(cp)).forwarder?.replica_id, POLL).toBe(cp.parts.replica.id);
    await memorySet(cp, 1);
    await collector.waitFor(1);
    expect(collector.received[0]?.signatureValid).toBe(true);
    await configure(cp, { url: collector.url, secret: SECRET, enabled: false });
    await expect.poll(async () => (await status(cp)).forwarder, POLL).toBeNull();
  });
});

describe('node events in the event log (nodes/transitions.ts)', () => {
  it('appends each node event to the nodes stream and still publishes it on the bus', async () => {
    const cp = await controlPlane();
    const onBus: Array<Record<string, unknown>> = [];
    const unsubscribe = cp.events.subscribe(NODES_TOPIC, (event) => void onBus.push(event));
    cleanups.push(unsubscribe);
    const nodeId = uniqueNodeId('logged');
    const registered = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(nodeId, 'http://127.0.0.1:9'),
    );
    expect(registered.status).toBe(201);
    const page = await cp.parts.eventLog.page('nodes', { limit: 100 });
    const logged = page.entries.filter((entry) => entry.payload.node_id === nodeId);
    expect(logged.map((entry) => entry.event)).toContain('node.registered');
    const fromBus = onBus.filter((event) => event.node_id === nodeId).map((event) => event.type);
    expect(fromBus).toEqual(logged.map((entry) => entry.event));
    for (const entry of logged) expect(entry.payload).toMatchObject({ type: entry.event, node_id: nodeId });
  });
});

describe('a forwarder that crashed with a batch in flight', () => {
  it('has that batch sent again by the next holder of the lease, and nothing after it lost', async () => {
    const cp = await controlPlane({ httpTimeoutMs: 60_000 });
    const collector = await collectorFor();
    collector.mode = 'hang';
    await configure(cp, { url: collector.url, secret: SECRET });
    cp.parts.observability.start();
    const inFlight = await memorySet(cp, 3);
    await collector.waitFor(1);
    expect(collector.received[0]?.body.events.map((e: any) => e.payload.key)).toEqual(inFlight);

    // The first replica is gone (its post never returns); a second one waits out its lease.
    const second = replicaForwarder(cp, 'rep_next');
    collector.mode = 204;
    const after = await memorySet(cp, 2);
    cp.clock.advance(15_000);
    await forwardUntil(
      second,
      () =>
        collector.received.filter((r) => r.body.source.replica === 'rep_next').flatMap((r) => r.body.events)
          .length === 5,
      'resend the batch and the events after it',
    );
    const resent = collector.received.slice(1).filter((r) => r.body.source.replica === 'rep_next');
    const keys = resent.flatMap((r) => r.body.events.map((e: any) => e.payload.key));
    expect(keys).toEqual([...inFlight, ...after]);
    // Same events (same ids), in a batch of the new holder.
    const firstIds = collector.received[0]?.body.events.map((e: any) => e.id);
    expect(resent[0]?.body.events.slice(0, 3).map((e: any) => e.id)).toEqual(firstIds);
    expect(resent[0]?.body.batch_id).not.toBe(collector.received[0]?.body.batch_id);
    expect((await status(cp)).forwarder.replica_id).toBe('rep_next');
  });
});

describe('a collector that hangs', () => {
  it('never blocks or slows executions: they complete while batches wait on the collector', async () => {
    const cp = await controlPlane({ httpTimeoutMs: 60_000 });
    const collector = await collectorFor();
    collector.mode = 'hang';
    await configure(cp, { url: collector.url, secret: SECRET });
    cp.parts.observability.start();
    await expect.poll(async () => (await status(cp)).forwarder?.replica_id, POLL).toBe(cp.parts.replica.id);
    const agent = await startExecutionAgent({
      controlPlaneUrl: cp.base,
      nodeId: uniqueNodeId('obs-hang'),
      reasoners: { work: { kind: 'answer' } },
      heartbeatMs: 60_000,
    });
    cleanups.push(() => agent.close());
    await agent.register();
    // Two posts hang (both workers busy) before the executions run.
    await memorySet(cp, 25);
    await collector.waitFor(2);
    for (let i = 0; i < 20; i++) {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: { i } });
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('succeeded');
    }
    // Nothing was delivered or parked meanwhile: the collector still holds the first two posts.
    expect(collector.received).toHaveLength(2);
    expect(await status(cp)).toMatchObject({ forwarded_total: 0, dlq_batches: 0 });
  });
});

describe('the read-ahead bound', () => {
  it('holds at most queue_size events; the rest wait in the event log until there is room', async () => {
    const cp = await startTestControlPlane({
      config: (config) => {
        config.observability.queueSize = 5;
        config.observability.batchTimeoutMs = 10;
        config.observability.httpTimeoutMs = 60_000;
        config.observability.snapshotIntervalMs = 0;
      },
    });
    cleanups.push(() => cp.close());
    const collector = await collectorFor();
    collector.mode = 'hang';
    await configure(cp, { url: collector.url, secret: SECRET });
    cp.parts.observability.start();
    await expect.poll(async () => (await status(cp)).forwarder?.replica_id, POLL).toBe(cp.parts.replica.id);
    const written = await memorySet(cp, 12);
    await collector.waitFor(1);
    await expect.poll(() => cp.parts.observability.queueDepth(), POLL).toBe(5);
    // Posts in flight count as read ahead: whatever was posted is among the first five events,
    // and the other seven were never read while the posts hang.
    const posted = collector.events().map((e) => e.payload.key);
    expect(posted.length).toBeGreaterThan(0);
    expect(posted.length).toBeLessThanOrEqual(5);
    for (const key of posted) expect(written.slice(0, 5)).toContain(key);
  });
});

describe('huge events', () => {
  it('bound the bytes read ahead and the bytes of a batch, not only the number of events', async () => {
    const cp = await controlPlane({ httpTimeoutMs: 60_000 });
    const collector = await startCollector();
    collector.mode = 'hang';
    await configure(cp, { url: collector.url, secret: SECRET });
    // Thirty changes of one size (values of 20 KB standing in for values of a MiB).
    const data = 'x'.repeat(20_000);
    for (let i = 0; i < 30; i++) {
      const key = `big-${String(i).padStart(3, '0')}`;
      expect((await call(cp.base, 'POST', '/api/v1/memory/set', { key, data })).status).toBe(200);
    }
    const page = await cp.parts.eventLog.page('memory', { limit: 1000 });
    const sizes = new Set(
      page.entries
        .filter((entry) => String(entry.payload.key).startsWith('big-'))
        .map((entry) => Buffer.byteLength(JSON.stringify(entry.payload))),
    );
    expect(sizes.size).toBe(1);
    const size = [...sizes][0] as number;

    const forwarder = replicaForwarder(cp, 'rep_bytes', {
      readAheadBytes: Math.floor(10.5 * size),
      batchBytes: Math.floor(3.5 * size),
    });
    // Closed before the forwarder stops, so its hanging posts end.
    cleanups.push(() => collector.close());
    forwarder.start();
    await collector.waitFor(2);
    // Batches of three (a fourth event would pass the batch's byte bound), ten events read ahead
    // (an eleventh would pass the read-ahead bound): the other twenty stay in the event log.
    expect(collector.received.map((r) => r.body.events.length)).toEqual([3, 3]);
    await expect.poll(() => forwarder.queueDepth(), POLL).toBe(10);
    expect(collector.received).toHaveLength(2);
  });
});

describe('collector URL rules', () => {
  let strict: TestControlPlane;
  beforeAll(async () => {
    strict = await startTestControlPlane({
      config: (config) => {
        config.executionQueue.webhookAllowHttp = false;
        config.executionQueue.webhookAllowPrivateNetworks = false;
      },
    });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it.each([
    ['http://collector.example.com/ingest', 'https://'],
    ['https://127.0.0.1/ingest', 'loopback'],
    ['https://10.1.2.3/ingest', 'private'],
    ['https://169.254.169.254/latest', 'linkLocal'],
    ['https://[::1]/ingest', 'loopback'],
    ['https://[::ffff:127.0.0.1]/ingest', 'IPv4-mapped'],
    ['https://user:pw@93.184.216.34/ingest', 'credentials'],
  ])('refuses %s (%s) and changes nothing', async (url, reason) => {
    const answer = await call(strict.base, 'POST', PATH, { url });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.detail).toContain(reason);
    expect(answer.body.errors[0].field).toBe('url');
    expect((await call(strict.base, 'GET', PATH)).status).toBe(404);
  });

  it('accepts a public https address', async () => {
    const answer = await call(strict.base, 'POST', PATH, { url: 'https://93.184.216.34/ingest' });
    expect(answer.status).toBe(200);
    expect(answer.body.url).toBe('https://93.184.216.34/ingest');
    expect((await call(strict.base, 'DELETE', PATH)).status).toBe(204);
  });

  it('accepts plain http and private addresses when the webhook settings allow them', async () => {
    const cp = await controlPlane();
    expect((await call(cp.base, 'POST', PATH, { url: 'http://127.0.0.1:9/ingest' })).status).toBe(200);
    expect((await call(cp.base, 'POST', PATH, { url: 'http://10.1.2.3/ingest' })).status).toBe(200);
  });
});

describe('bad input', () => {
  let cp: TestControlPlane;
  const good = { url: 'http://127.0.0.1:9/ingest', secret: 'kept', headers: { 'X-Tenant': 'a' } };
  beforeAll(async () => {
    cp = await startTestControlPlane();
    const answer = await call(cp.base, 'POST', PATH, good);
    expect(answer.status).toBe(200);
  });
  afterAll(async () => {
    await cp?.close();
  });

  async function refused(body: unknown, status = 400, headers: Record<string, string> = {}) {
    const before = await call(cp.base, 'GET', PATH);
    const answer = await call(cp.base, 'POST', PATH, body, headers);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    const after = await call(cp.base, 'GET', PATH);
    expect(after.body).toEqual(before.body);
    return answer.body;
  }

  const headers21 = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
  let nested: unknown = 'deep';
  for (let i = 0; i < 100; i++) nested = { a: nested };

  it.each([
    ['no body', undefined, '(body)'],
    ['an empty object (url missing)', {}, 'url'],
    ['a url of the wrong type', { url: 42 }, 'url'],
    ['a null url', { url: null }, 'url'],
    ['not an absolute url', { url: 'collector' }, 'url'],
    ['an ftp url', { url: 'ftp://collector.example.com' }, 'url'],
    ['a url over 2048 characters', { url: `http://127.0.0.1/${'a'.repeat(2100)}` }, 'url'],
    ['an unknown member', { ...good, extra: 1 }, 'extra'],
    ['enabled as a string', { ...good, enabled: 'yes' }, 'enabled'],
    ['a secret of the wrong type', { ...good, secret: 7 }, 'secret'],
    ['a secret over 512 characters', { ...good, secret: 's'.repeat(513) }, 'secret'],
    ['a secret with a NUL', { ...good, secret: 'a\u0000b' }, 'secret'],
    ['a secret with a lone surrogate', { ...good, secret: 'a\ud800b' }, 'secret'],
    ['headers as a list', { ...good, headers: ['X-A'] }, 'headers'],
    ['21 headers', { ...good, headers: headers21 }, 'headers'],
    ['a header value over 512 characters', { ...good, headers: { 'X-A': 'v'.repeat(513) } }, 'headers'],
    ['a header value that is not a string', { ...good, headers: { 'X-A': 1 } }, 'headers'],
    ['a header with CR LF in its value', { ...good, headers: { 'X-A': 'a\r\nX-Injected: 1' } }, 'headers'],
    ['a header name that is not a token', { ...good, headers: { 'X A': 'v' } }, 'headers'],
    ['the signature header', { ...good, headers: { 'x-service-signature': 'sha256=00' } }, 'headers'],
    ['the batch id header', { ...good, headers: { 'X-Service-Delivery-ID': 'forged' } }, 'headers'],
    ['Host', { ...good, headers: { Host: 'evil.example.com' } }, 'headers'],
    ['a nested header value', { ...good, headers: { 'X-A': { b: { c: 'd' } } } }, 'headers'],
    ['a body nested 100 levels deep', { ...good, headers: { 'X-A': nested } }, '(body)'],
    ['a list body', [good], '(body)'],
    ['a string body', 'collector', '(body)'],
  ])('refuses %s with 400 and changes nothing', async (_name, body, field) => {
    const problem = await refused(body === undefined ? undefined : body);
    expect(problem.code).toBe('invalid_request');
    expect(JSON.stringify(problem.errors ?? [])).toContain(field);
  });

  it('refuses malformed JSON, JSON nested deeper than 64 levels, other content types, and oversized bodies', async () => {
    expect((await refused('{"url":')).code).toBe('invalid_request');
    let deep = '"x"';
    for (let i = 0; i < 200; i++) deep = `[${deep}]`;
    expect((await refused(`{"url":"http://127.0.0.1:9/","headers":${deep}}`)).code).toBe('invalid_request');
    expect((await refused('url=x', 400, { 'content-type': 'application/x-www-form-urlencoded' })).code).toBe(
      'invalid_request',
    );
    const huge = JSON.stringify({ ...good, secret: 's'.repeat(70 * 1024) });
    expect((await refused(huge, 413)).code).toBe('payload_too_large');
  });

  it('takes null members as absent', async () => {
    const answer = await call(cp.base, 'POST', PATH, {
      url: good.url,
      secret: null,
      enabled: null,
      headers: null,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ enabled: true, secret_set: false, header_names: [] });
    expect((await call(cp.base, 'POST', PATH, good)).status).toBe(200);
  });

  it('refuses a body with a __proto__ member and changes nothing', async () => {
    const problem = await refused(`{"url":"${good.url}","__proto__":{"enabled":false}}`);
    expect(problem.code).toBe('invalid_request');
    expect(({} as Record<string, unknown>).enabled).toBeUndefined();
  });

  it('keeps a header named __proto__ as a header, not a prototype', async () => {
    const answer = await call(cp.base, 'POST', PATH, `{"url":"${good.url}","headers":{"__proto__":"x"}}`);
    // "__proto__" is a valid token: it is stored as a header name like any other.
    expect(answer.status).toBe(200);
    expect(answer.body.header_names).toEqual(['__proto__']);
    expect((await call(cp.base, 'POST', PATH, good)).status).toBe(200);
  });

  it.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=abc'],
    ['limit=1&limit=2'],
    ['cursor=abc'],
    ['cursor=-1'],
    ['other=1'],
  ])('refuses the DLQ query %s with 400', async (query) => {
    const answer = await call(cp.base, 'GET', `${PATH}/dlq?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
  });

  it.each([
    ['batch_ids as a string', { batch_ids: 'obsb_1' }],
    ['an empty batch_ids', { batch_ids: [] }],
    ['a batch id that is not a string', { batch_ids: [1] }],
    ['a batch id with a NUL', { batch_ids: ['obsb_\u0000'] }],
    ['a batch id with a lone surrogate', { batch_ids: ['obsb_\ud800'] }],
    ['a batch id with a space', { batch_ids: ['obsb 1'] }],
    ['over 100 batch ids', { batch_ids: Array.from({ length: 101 }, (_, i) => `obsb_${i}`) }],
    ['an unknown member', { all: true }],
    ['a list body', ['obsb_1']],
    ['malformed JSON', '{"batch_ids":'],
  ])('refuses a redrive body with %s with 400', async (_name, body) => {
    const answer = await call(cp.base, 'POST', `${PATH}/redrive`, body);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
  });

  it('answers 404 for a redrive of a batch id the DLQ does not hold, and 413 for an oversized body', async () => {
    const missing = await call(cp.base, 'POST', `${PATH}/redrive`, { batch_ids: ['obsb_nothing'] });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    const huge = JSON.stringify({ batch_ids: ['x'.repeat(70 * 1024)] });
    expect((await call(cp.base, 'POST', `${PATH}/redrive`, huge)).status).toBe(413);
  });
});
