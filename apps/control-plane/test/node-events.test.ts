import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEventFrame } from '../src/modules/nodes/event-frames.ts';
import {
  createInProcessEventBus,
  createPostgresEventBus,
  type EventBus,
} from '../src/platform/events/index.ts';
import { startTestAgent, type TestAgent } from './helpers/agents.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { openSse } from './helpers/sse.ts';

/** An in-process bus that counts live subscriptions, to see a disconnect unsubscribe. */
function countingBus(): EventBus & { subscribers(): number } {
  const inner = createInProcessEventBus();
  let live = 0;
  return {
    publish: (topic, event) => inner.publish(topic, event),
    subscribe(topic, handler) {
      live++;
      const off = inner.subscribe(topic, handler);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        live--;
        off();
      };
    },
    close: () => inner.close(),
    subscribers: () => live,
  };
}

let cp: TestControlPlane;
let agent: TestAgent;
const bus = countingBus();
/** Subscriptions the app holds for itself (before any stream is opened). */
let permanent = 0;

async function settle(expected: number): Promise<void> {
  for (let i = 0; i < 200 && bus.subscribers() !== expected; i++)
    await new Promise((done) => setTimeout(done, 20));
}

beforeAll(async () => {
  cp = await startTestControlPlane({ events: bus, sseKeepAliveMs: 50 });
  agent = await startTestAgent();
  permanent = bus.subscribers();
});

afterAll(async () => {
  await agent?.close();
  await cp?.close();
});

describe('GET /api/ui/v1/nodes/events', () => {
  it('answers an event stream with no buffering and a first frame at once', async () => {
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events`);
    try {
      expect(client.response.status).toBe(200);
      expect(client.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(client.response.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(client.response.headers.get('x-accel-buffering')).toBe('no');
      expect(client.response.headers.get('connection')).toBe('keep-alive');
      const first = await client.next(() => true);
      expect(first.comment).toContain('connected');
    } finally {
      client.close();
    }
  });

  it('streams node.registered and node.status_changed frames as they happen', async () => {
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events`);
    try {
      await client.next((f) => f.comment.includes('connected'));
      const id = uniqueNodeId();
      await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
      const registered = await client.next((f) => f.event === 'node.registered');
      expect(JSON.parse(registered.data)).toMatchObject({
        node_id: id,
        version: '1.0.0',
        timestamp: expect.any(String),
      });

      const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
      const changed = await client.next((f) => f.event === 'node.status_changed');
      expect(JSON.parse(changed.data)).toMatchObject({
        type: 'node.status_changed',
        node_id: id,
        version: '1.0.0',
        old_status: 'starting',
        new_status: 'ready',
        reason: 'agent_reported',
      });

      cp.clock.set(Date.parse(beat.body.lease_expires_at) + 1);
      await cp.runtime.presence.tick();
      const offline = await client.next(
        (f) => f.event === 'node.status_changed' && f.data.includes('"offline"'),
      );
      expect(JSON.parse(offline.data)).toMatchObject({
        node_id: id,
        old_status: 'ready',
        new_status: 'offline',
      });
    } finally {
      client.close();
    }
  });

  it('sends keep-alive comments while idle', async () => {
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events`);
    try {
      const ping = await client.next((f) => f.comment.includes('keep-alive'));
      expect(ping.event).toBe('');
    } finally {
      client.close();
    }
  });

  it('filters by node_id when asked', async () => {
    const wanted = uniqueNodeId('wanted');
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events?node_id=${wanted}`);
    try {
      await client.next((f) => f.comment.includes('connected'));
      await call(cp.base, 'POST', '/api/v1/nodes/register', registration(uniqueNodeId('other'), agent.url));
      await call(cp.base, 'POST', '/api/v1/nodes/register', registration(wanted, agent.url));
      const frame = await client.next((f) => f.event === 'node.registered');
      expect(JSON.parse(frame.data).node_id).toBe(wanted);
      expect(client.frames.filter((f) => f.event).every((f) => JSON.parse(f.data).node_id === wanted)).toBe(
        true,
      );
    } finally {
      client.close();
    }
  });

  it('keeps frames intact when a version carries newlines and SSE syntax', async () => {
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events`);
    try {
      await client.next((f) => f.comment.includes('connected'));
      const id = uniqueNodeId();
      const version = '1.0\n\nevent: node.removed\ndata: {"evil":true}\n\n';
      await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url, { version }));
      const frame = await client.next((f) => f.event === 'node.registered');
      expect(JSON.parse(frame.data)).toMatchObject({ node_id: id, version });
      expect(client.frames.some((f) => f.event === 'node.removed')).toBe(false);
    } finally {
      client.close();
    }
  });

  it('unsubscribes from the bus when the client disconnects', async () => {
    await settle(permanent); // streams of earlier tests finish closing
    const baseline = bus.subscribers();
    expect(baseline).toBe(permanent);
    const client = await openSse(`${cp.base}/api/ui/v1/nodes/events`);
    await client.next((f) => f.comment.includes('connected'));
    expect(bus.subscribers()).toBe(baseline + 1);
    client.close();
    await settle(baseline);
    expect(bus.subscribers()).toBe(baseline);
  });

  it('answers HEAD with the stream headers and an empty body, and subscribes to nothing', async () => {
    await settle(permanent); // streams of earlier tests finish closing
    const baseline = bus.subscribers();
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${cp.base}/api/ui/v1/nodes/events`, {
        method: 'HEAD',
        signal: AbortSignal.timeout(5_000),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
      expect(await response.text()).toBe('');
    }
    expect(bus.subscribers()).toBe(baseline);
    // An event published now reaches no leftover subscription (there is none to leak into).
    await call(cp.base, 'POST', '/api/v1/nodes/register', registration(uniqueNodeId('head'), agent.url));
    expect(bus.subscribers()).toBe(baseline);
  });

  it('answers 400 for a repeated node_id parameter and 405 for POST', async () => {
    const repeated = await call(cp.base, 'GET', '/api/ui/v1/nodes/events?node_id=a&node_id=b');
    expect(repeated.status).toBe(400);
    expect(repeated.headers.get('content-type')).toBe('application/problem+json');
    const post = await call(cp.base, 'POST', '/api/ui/v1/nodes/events', {});
    expect(post.status).toBe(405);
  });
});

describe('nodeEventFrame', () => {
  it('streams node.registered, node.status_changed and node.removed, and nothing else', () => {
    const base = { node_id: 'n', version: '1', timestamp: '2026-01-01T00:00:00.000Z' };
    expect(nodeEventFrame({ type: 'node.registered', ...base })).toBe(
      `event: node.registered\ndata: ${JSON.stringify({ type: 'node.registered', ...base })}\n\n`,
    );
    expect(nodeEventFrame({ type: 'node.removed', ...base })).toMatch(/^event: node.removed\n/);
    expect(nodeEventFrame({ type: 'node.updated', ...base })).toBeNull();
    expect(nodeEventFrame({ type: 'node.registered', node_id: 'n' })).toBeNull();
    expect(nodeEventFrame({ type: 'execution.started', ...base })).toBeNull();
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.runIf(databaseUrl)('node events across replicas (needs DATABASE_URL)', () => {
  it('streams from one replica what another replica registered, through LISTEN/NOTIFY', async () => {
    const channelPrefix = `sy_test_${randomBytes(4).toString('hex')}_`;
    const busA = createPostgresEventBus(databaseUrl!, { channelPrefix });
    const busB = createPostgresEventBus(databaseUrl!, { channelPrefix });
    const replicaA = await startTestControlPlane({ events: busA, handle: cp.handle });
    const replicaB = await startTestControlPlane({ events: busB, handle: cp.handle });
    const client = await openSse(`${replicaB.base}/api/ui/v1/nodes/events`);
    try {
      await client.next((f) => f.comment.includes('connected'));
      await busB.listening();
      const id = uniqueNodeId('replicated');
      await call(replicaA.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
      const frame = await client.next((f) => f.event === 'node.registered' && f.data.includes(id));
      expect(JSON.parse(frame.data)).toMatchObject({ node_id: id, version: '1.0.0' });
    } finally {
      client.close();
      await replicaA.close();
      await replicaB.close();
    }
  });
});
