import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import { createPresenceManager } from '../src/modules/nodes/presence.ts';
import type { NodeTransitions } from '../src/modules/nodes/transitions.ts';
import { startTestAgent, type TestAgent } from './helpers/agents.ts';
import { startChildAgent } from './helpers/child-agent.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';

let cp: TestControlPlane;
let agent: TestAgent;
const seen: Array<Record<string, any>> = [];

beforeAll(async () => {
  cp = await startTestControlPlane();
  agent = await startTestAgent();
  cp.events.subscribe(NODES_TOPIC, (event) => seen.push(event));
});

afterAll(async () => {
  await agent?.close();
  await cp?.close();
});

async function readyNode(id = uniqueNodeId()): Promise<string> {
  expect((await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url))).status).toBe(
    201,
  );
  expect(
    (await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' })).body.status,
  ).toBe('ready');
  return id;
}

async function statusOf(id: string) {
  const response = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
  return response.status === 404 ? 'gone' : (response.body.lifecycle_status as string);
}

describe('presence sweep (heartbeat TTL 15 s)', () => {
  it('keeps a node within the TTL and takes it offline once the TTL has passed', async () => {
    const id = await readyNode();
    cp.clock.advance(15_000);
    await cp.runtime.presence.tick();
    expect(await statusOf(id)).toBe('ready');
    cp.clock.advance(1);
    const report = await cp.runtime.presence.tick();
    expect(report.expired).toContainEqual({ nodeId: id, version: '1.0.0', oldStatus: 'ready' });
    expect(await statusOf(id)).toBe('offline');
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body).toMatchObject({ status_reason: 'heartbeat_expired', routable: false });
    expect(seen).toContainEqual(
      expect.objectContaining({
        type: 'node.status_changed',
        node_id: id,
        old_status: 'ready',
        new_status: 'offline',
      }),
    );
    expect(await cp.runtime.nodes.pickInstance(id)).toBeUndefined();
  });

  it('takes offline a node that registered and never sent a heartbeat', async () => {
    const id = uniqueNodeId();
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
    cp.clock.advance(15_001);
    await cp.runtime.presence.tick();
    expect(await statusOf(id)).toBe('offline');
  });

  it('brings an expired node back when its heartbeats resume', async () => {
    const id = await readyNode();
    cp.clock.advance(16_000);
    await cp.runtime.presence.tick();
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.body.status).toBe('ready');
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body.status_reason).toBe('heartbeat_resumed');
  });

  it('never leaves a live agent offline when a heartbeat and a sweep race', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, () => readyNode()));
    cp.clock.advance(20_000); // every lease has expired; only the racing heartbeat can save them
    await Promise.all([
      ...ids.map((id) => call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' })),
      cp.runtime.presence.tick(),
      cp.runtime.presence.tick(),
    ]);
    for (const id of ids) expect(await statusOf(id)).toBe('ready');
  });

  it('reports each transition once when several replicas sweep at the same time', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => readyNode()));
    const replicas = [1, 2, 3].map(() =>
      createPresenceManager({
        db: cp.handle.db,
        transitions: cp.runtime.transitions,
        clock: cp.clock,
        settings: cp.runtime.lifecycle,
      }),
    );
    cp.clock.advance(16_000);
    const before = seen.length;
    const reports = await Promise.all(replicas.map((replica) => replica.tick()));
    const expired = reports.flatMap((r) => r.expired).filter((k) => ids.includes(k.nodeId));
    expect(expired).toHaveLength(ids.length);
    const events = seen
      .slice(before)
      .filter(
        (e) => e.type === 'node.status_changed' && ids.includes(e.node_id) && e.new_status === 'offline',
      );
    expect(events).toHaveLength(ids.length);
  });
});

describe('stopping the presence manager', () => {
  it('waits for both a sweep and a reconcile pass that are under way at the same time', async () => {
    // Holds each kind of transition until released, so both passes are caught mid-way.
    const gates = new Map<
      string,
      { entered: Promise<void>; enter: () => void; open: () => void; opened: Promise<void> }
    >();
    for (const reason of ['heartbeat_expired', 'transition_timeout']) {
      let enter = () => {};
      let open = () => {};
      const entered = new Promise<void>((done) => {
        enter = done;
      });
      const opened = new Promise<void>((done) => {
        open = done;
      });
      gates.set(reason, { entered, enter, open, opened });
    }
    const finished = new Set<string>();
    const real = cp.runtime.transitions;
    const transitions = {
      ...real,
      async statusChanged(...args: Parameters<NodeTransitions['statusChanged']>) {
        const gate = gates.get(args[2]);
        if (gate) {
          gate.enter();
          await gate.opened;
          finished.add(args[2]);
        }
        return real.statusChanged(...args);
      },
    } as NodeTransitions;

    // `stuck` has been starting for over 2 min but keeps its lease; `lapsed` lets its lease run out.
    const stuck = uniqueNodeId('stuck');
    expect(
      (await call(cp.base, 'POST', '/api/v1/nodes/register', registration(stuck, agent.url))).status,
    ).toBe(201);
    cp.clock.advance(130_000);
    const lapsed = uniqueNodeId('lapsed');
    expect(
      (await call(cp.base, 'POST', '/api/v1/nodes/register', registration(lapsed, agent.url))).status,
    ).toBe(201);
    cp.clock.advance(10_000);
    await call(cp.base, 'POST', `/api/v1/nodes/${stuck}/heartbeat`, { status: 'starting' });
    const later = cp.clock.now() + 6_000;

    const manager = createPresenceManager({
      db: cp.handle.db,
      transitions,
      clock: { now: () => later },
      // The sweep starts first, so the reconcile pass is the one started last.
      settings: { ...cp.runtime.lifecycle, sweepIntervalMs: 1, reconcileIntervalMs: 20 },
    });
    manager.start();
    await gates.get('heartbeat_expired')!.entered;
    await gates.get('transition_timeout')!.entered;
    const stopped = manager.stop();
    gates.get('transition_timeout')!.open();
    // The sweep is released only later; stop() must not resolve before it has finished.
    setTimeout(() => gates.get('heartbeat_expired')!.open(), 20);
    await stopped;
    expect([...finished].sort()).toEqual(['heartbeat_expired', 'transition_timeout']);
    expect(await statusOf(lapsed)).toBe('offline');
    expect(await statusOf(stuck)).toBe('degraded');
  });
});

describe('hard evict (5 min)', () => {
  it('deletes an instance offline and unseen for the hard-evict TTL and announces node.removed', async () => {
    const id = await readyNode();
    cp.clock.advance(16_000);
    await cp.runtime.presence.tick();
    cp.clock.advance(300_000 - 16_000);
    await cp.runtime.presence.tick();
    expect(await statusOf(id)).toBe('offline');
    cp.clock.advance(1);
    const report = await cp.runtime.presence.tick();
    expect(report.evicted).toContainEqual({ nodeId: id, version: '1.0.0' });
    expect(await statusOf(id)).toBe('gone');
    expect(seen).toContainEqual(
      expect.objectContaining({ type: 'node.removed', node_id: id, version: '1.0.0' }),
    );
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.status).toBe(404);
  });

  it('keeps a stopped node that still heartbeats', async () => {
    const id = await readyNode();
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    for (let i = 0; i < 7; i++) {
      cp.clock.advance(60_000);
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
      await cp.runtime.presence.tick();
    }
    expect(await statusOf(id)).toBe('offline');
  });
});

describe('max transition time (2 min)', () => {
  it('degrades a node still starting after 2 min, holds it there while it says starting, and readies it when it says ready', async () => {
    const id = uniqueNodeId();
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
    for (let i = 0; i < 12; i++) {
      cp.clock.advance(10_000);
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'starting' });
      await cp.runtime.presence.reconcile();
    }
    expect(await statusOf(id)).toBe('starting');
    cp.clock.advance(1_000);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'starting' });
    const report = await cp.runtime.presence.reconcile();
    expect(report.timedOut).toContainEqual({ nodeId: id, version: '1.0.0' });
    const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
    expect(node.body).toMatchObject({ lifecycle_status: 'degraded', status_reason: 'transition_timeout' });
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'starting' });
    expect(await statusOf(id)).toBe('degraded');
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(await statusOf(id)).toBe('ready');
  });
});

describe('a real agent process', () => {
  it('stays ready while it heartbeats and goes offline after it is killed', async () => {
    const id = uniqueNodeId('proc');
    const child = await startChildAgent(cp.base, id);
    try {
      expect(await statusOf(id)).toBe('ready');
      // Move time past the TTL, then wait for the live process to heartbeat at the new time.
      cp.clock.advance(20_000);
      const at = new Date(cp.clock.now()).toISOString();
      for (let i = 0; i < 200; i++) {
        const node = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
        if (node.body.last_heartbeat === at) break;
        await new Promise((done) => setTimeout(done, 25));
      }
      await cp.runtime.presence.tick();
      expect(await statusOf(id)).toBe('ready');

      await child.kill();
      const refreshed = await call(cp.base, 'POST', `/api/v1/nodes/${id}/status/refresh`);
      expect(refreshed.body.health.last_check_ok).toBe(false);
      expect(refreshed.body.health.last_check_error).toMatch(/ECONNREFUSED/);
      cp.clock.advance(15_001);
      await cp.runtime.presence.tick();
      expect(await statusOf(id)).toBe('offline');
    } finally {
      await child.kill();
    }
  });
});
