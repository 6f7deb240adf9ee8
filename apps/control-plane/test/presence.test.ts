import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import { leaseTtlMs, nextObservedInterval } from '../src/modules/nodes/lifecycle.ts';
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
  // These tests pin the plain heartbeat TTL: with no interval assumed before one is observed, a
  // node's lease is 15 s until its rhythm says otherwise. The defaults (30 s assumed, the
  // TypeScript SDK's rhythm) are exercised by the 'presence adapts to each node’s heartbeat rhythm'
  // tests below.
  cp = await startTestControlPlane({ lifecycle: { assumedHeartbeatIntervalMs: 0 } });
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

function expectNotFound(response: { status: number; body: any }) {
  expect(response.status).toBe(404);
  expect(response.body.code).toBe('not_found');
}

/** Takes a ready node offline and evicts it (TTL 15 s, hard evict 5 min), as the sweeps would. */
async function evicted(id: string, at: TestControlPlane = cp): Promise<void> {
  at.clock.advance(16_000);
  await at.runtime.presence.tick();
  at.clock.advance(300_000);
  const report = await at.runtime.presence.tick();
  expect(report.evicted.map((k) => k.nodeId)).toContain(id);
}

async function statusOf(id: string) {
  const response = await call(cp.base, 'GET', `/api/v1/nodes/${id}`);
  return response.status === 404 ? 'gone' : (response.body.lifecycle_status as string);
}

/** Presence managers of other replicas on the same database, clock and settings. */
function otherReplicas(count: number) {
  return Array.from({ length: count }, () =>
    createPresenceManager({
      db: cp.handle.db,
      transitions: cp.runtime.transitions,
      clock: cp.clock,
      settings: cp.runtime.lifecycle,
    }),
  );
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
    const replicas = otherReplicas(3);
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
      // A pass announces its transitions of one kind together (publishAll).
      async publishAll(events: Parameters<NodeTransitions['publishAll']>[0]) {
        const reason = events.map((event) => ('reason' in event ? event.reason : undefined)).find(Boolean);
        const gate = reason ? gates.get(reason) : undefined;
        if (reason && gate) {
          gate.enter();
          await gate.opened;
          finished.add(reason);
        }
        return real.publishAll(events);
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
  it('evicts an instance offline and unseen for the hard-evict TTL from every answer and announces node.removed', async () => {
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
    expect((await call(cp.base, 'GET', `/api/ui/v1/nodes?node_id=${id}`)).body.nodes).toEqual([]);
    const bulk = await call(cp.base, 'POST', '/api/v1/nodes/status/bulk', { node_ids: [id] });
    expect(bulk.body[id].error).toBe('not_found');
    const discovery = await call(cp.base, 'GET', `/api/v1/discovery/capabilities?agent=${id}`);
    expect(discovery.body.capabilities).toEqual([]);
    expectNotFound(await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`));
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
      // The 20 s jump counted as the agent's rhythm, so its lease is 3 × 20 s: move past it.
      const lease = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body.lease_expires_at;
      expect(Date.parse(lease) - cp.clock.now()).toBe(60_000);
      cp.clock.set(Date.parse(lease) + 1);
      await cp.runtime.presence.tick();
      expect(await statusOf(id)).toBe('offline');
    } finally {
      await child.kill();
    }
  });
});

describe('presence adapts to each node’s heartbeat rhythm', () => {
  // The default settings: TTL 15 s as the floor, 30 s assumed until a rhythm is observed, leases
  // capped at 2 min. A database of its own, so this clock and these sweeps touch only these nodes.
  let sdk: TestControlPlane;
  const events: Array<Record<string, any>> = [];

  beforeAll(async () => {
    sdk = await startTestControlPlane();
    sdk.events.subscribe(NODES_TOPIC, (event) => events.push(event));
  });

  afterAll(async () => {
    await sdk?.close();
  });

  const beat = async (id: string, status = 'ready') =>
    (await call(sdk.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status, version: '1.0.0' })).body;
  const statusIn = async (id: string) =>
    (await call(sdk.base, 'GET', `/api/v1/nodes/${id}`)).body.lifecycle_status as string;
  const wentOffline = (id: string) =>
    events.filter((e) => e.type === 'node.status_changed' && e.node_id === id && e.new_status === 'offline');

  /** Moves time by `ms` in sweep-interval steps, sweeping on two replicas at every step. */
  async function live(ms: number) {
    const replicas = [sdk.runtime.presence, createPresenceManager({ ...presenceDeps(), clock: sdk.clock })];
    for (let passed = 0; passed < ms; passed += 5_000) {
      sdk.clock.advance(Math.min(5_000, ms - passed));
      await Promise.all(replicas.map((replica) => replica.tick()));
    }
  }
  const presenceDeps = () => ({
    db: sdk.handle.db,
    transitions: sdk.runtime.transitions,
    settings: sdk.runtime.lifecycle,
  });

  async function registered(): Promise<string> {
    const id = uniqueNodeId('rhythm');
    const response = await call(sdk.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
    expect(response.status).toBe(201);
    return id;
  }

  it('keeps a node heartbeating every 30 s (the TypeScript SDK default) online between heartbeats, from the first on', async () => {
    const id = await registered();
    expect((await beat(id, 'starting')).lease_ttl_seconds).toBe(90);
    for (let i = 0; i < 10; i++) {
      await live(30_000);
      expect(await statusIn(id)).not.toBe('offline');
      const answer = await beat(id);
      expect(answer.status).toBe('ready');
      expect(answer.observed_heartbeat_interval_seconds).toBe(30);
      expect(answer.lease_ttl_seconds).toBe(90);
    }
    expect(wentOffline(id)).toEqual([]);
  });

  it('takes it offline once three of its intervals pass without a heartbeat', async () => {
    const id = await registered();
    await beat(id);
    for (let i = 0; i < 3; i++) {
      await live(30_000);
      await beat(id);
    }
    await live(90_000);
    expect(await statusIn(id)).toBe('ready');
    sdk.clock.advance(1);
    const report = await sdk.runtime.presence.tick();
    expect(report.expired).toContainEqual({ nodeId: id, version: '1.0.0', oldStatus: 'ready' });
    expect(await statusIn(id)).toBe('offline');
  });

  it('never gives less than the 15 s TTL, and tightens back to it when a node heartbeats every 5 s', async () => {
    const id = await registered();
    await beat(id);
    let answer: any;
    // The assumed 30 s decays by half every 30 s of faster heartbeats: 80 s here.
    for (let i = 0; i < 16; i++) {
      await live(5_000);
      answer = await beat(id);
    }
    expect(answer.observed_heartbeat_interval_seconds).toBeLessThanOrEqual(5);
    expect(answer.lease_ttl_seconds).toBe(15);
    await live(15_000);
    expect(await statusIn(id)).toBe('ready');
    sdk.clock.advance(1);
    await sdk.runtime.presence.tick();
    expect(await statusIn(id)).toBe('offline');
  });

  it('caps the lease at max_heartbeat_ttl (2 min) and does not learn a gap longer than that', async () => {
    const id = await registered();
    await beat(id);
    sdk.clock.advance(100_000);
    const slow = await beat(id);
    expect(slow.observed_heartbeat_interval_seconds).toBe(100);
    expect(slow.lease_ttl_seconds).toBe(120);
    sdk.clock.advance(200_000); // an outage, not a rhythm
    const back = await beat(id);
    expect(back.observed_heartbeat_interval_seconds).toBe(100);
  });

  it('computes the interval in the heartbeat UPDATE exactly as lifecycle.nextObservedInterval states it', async () => {
    const id = await registered();
    await beat(id);
    let expected: number | null = null;
    for (const gap of [30_000, 1_000, 200, 45_000, 500_000, 7_000, 0, 12_345]) {
      sdk.clock.advance(gap);
      const answer = await beat(id);
      expected = nextObservedInterval(expected, gap, sdk.runtime.lifecycle);
      expect(answer.observed_heartbeat_interval_seconds).toBe(Math.round(expected!) / 1000);
      // The lease is a timestamp: the answer carries it to the millisecond.
      expect(answer.lease_ttl_seconds).toBeCloseTo(leaseTtlMs(expected, sdk.runtime.lifecycle) / 1000, 2);
    }
  });
});

describe('a sign of life from an evicted node brings back its last registration', () => {
  it('revives the node from a heartbeat: registration intact, ready again, announced, and in discovery', async () => {
    const id = uniqueNodeId('evicted');
    const body = registration(id, agent.url, { metadata: { team: 'blue' }, tags: ['sdk'] });
    expect((await call(cp.base, 'POST', '/api/v1/nodes/register', body)).status).toBe(201);
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    const before = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
    await evicted(id);
    expect(await statusOf(id)).toBe('gone');
    const since = seen.length;

    // The TypeScript SDK never registers again: it just keeps heartbeating.
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {
      status: 'ready',
      version: '1.0.0',
    });
    expect(beat.status).toBe(200);
    expect(beat.body.status).toBe('ready');

    const node = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
    expect(node).toMatchObject({
      lifecycle_status: 'ready',
      status_reason: 'revived',
      routable: true,
      metadata: { team: 'blue' },
      tags: ['sdk'],
      registered_at: before.registered_at,
      reasoners: before.reasoners,
      skills: before.skills,
    });
    expect(seen.slice(since)).toEqual([
      expect.objectContaining({ type: 'node.registered', node_id: id, version: '1.0.0' }),
      expect.objectContaining({
        type: 'node.status_changed',
        node_id: id,
        old_status: 'offline',
        new_status: 'ready',
        reason: 'revived',
      }),
    ]);
    const discovery = await call(cp.base, 'GET', `/api/v1/discovery/capabilities?agent=${id}`);
    expect(discovery.body.capabilities.map((c: any) => c.agent_id)).toEqual([id]);
    expect(await cp.runtime.nodes.pickInstance(id)).toMatchObject({ nodeId: id });
  });

  it('revives it from PATCH /status and from a lifecycle report as well', async () => {
    for (const send of [
      (id: string) =>
        call(cp.base, 'PATCH', `/api/v1/nodes/${id}/status`, { state: 'ready', health: { q: 1 } }),
      (id: string) => call(cp.base, 'POST', `/api/v1/nodes/${id}/lifecycle/status`, { status: 'degraded' }),
    ]) {
      const id = await readyNode();
      await evicted(id);
      expect((await send(id)).status).toBe(200);
      expect(await statusOf(id)).not.toBe('gone');
    }
  });

  it('revives an evicted version only when the heartbeat names it or the node has no live instance', async () => {
    const id = uniqueNodeId('versions');
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url, { version: '1.0.0' }));
    await evicted(id);
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url, { version: '2.0.0' }));
    const versions = async () =>
      (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body.instances.map((i: any) => i.version).sort();
    expect((await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, {})).body.version).toBe('2.0.0');
    expect(await versions()).toEqual(['2.0.0']);
    const named = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { version: '1.0.0' });
    expect(named.body.version).toBe('1.0.0');
    expect(await versions()).toEqual(['1.0.0', '2.0.0']);

    const lone = await readyNode();
    await evicted(lone);
    expect((await call(cp.base, 'POST', `/api/v1/nodes/${lone}/heartbeat`, {})).body.status).toBe('ready');
  });

  it('treats registering an evicted id and version again as a new registration (201)', async () => {
    const id = await readyNode();
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    cp.clock.advance(300_001);
    await cp.runtime.presence.tick();
    expect(await statusOf(id)).toBe('gone');
    const again = await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
    expect(again.status).toBe(201);
    // The stop belonged to the evicted registration.
    expect(again.body).toMatchObject({ lifecycle_status: 'starting', admin_state: 'active' });
  });

  it('keeps an evicted registration for 7 days, then deletes it and heartbeats answer 404', async () => {
    const id = await readyNode();
    await evicted(id);
    cp.clock.advance(168 * 3_600_000 - 1);
    expect((await cp.runtime.presence.tick()).purged.map((k) => k.nodeId)).not.toContain(id);
    cp.clock.advance(1);
    expect((await cp.runtime.presence.tick()).purged).toContainEqual({ nodeId: id, version: '1.0.0' });
    expectNotFound(await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' }));
  });

  it('evicts and revives exactly once when several replicas sweep while the agent comes back', async () => {
    const ids = await Promise.all(Array.from({ length: 4 }, () => readyNode()));
    const replicas = otherReplicas(3);
    cp.clock.advance(16_000);
    await Promise.all(replicas.map((replica) => replica.tick()));
    cp.clock.advance(300_000);
    const since = seen.length;
    const reports = await Promise.all(replicas.map((replica) => replica.tick()));
    expect(reports.flatMap((r) => r.evicted).filter((k) => ids.includes(k.nodeId))).toHaveLength(ids.length);
    const removed = seen.slice(since).filter((e) => e.type === 'node.removed' && ids.includes(e.node_id));
    expect(removed).toHaveLength(ids.length);

    const revivedBefore = seen.length;
    await Promise.all([
      ...ids.map((id) => call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' })),
      ...replicas.map((replica) => replica.tick()),
    ]);
    for (const id of ids) expect(await statusOf(id)).toBe('ready');
    const registered = seen
      .slice(revivedBefore)
      .filter((e) => e.type === 'node.registered' && ids.includes(e.node_id));
    expect(registered).toHaveLength(ids.length);
  });
});
