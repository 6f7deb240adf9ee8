import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHealthMonitor } from '../src/modules/nodes/health-monitor.ts';
import { httpHealthProbe } from '../src/modules/nodes/health-probe.ts';
import { NODES_TOPIC } from '../src/modules/nodes/index.ts';
import { deadAgentUrl, startTestAgent, type TestAgent } from './helpers/agents.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';

let cp: TestControlPlane;
const agents: TestAgent[] = [];
const seen: Array<Record<string, any>> = [];

beforeAll(async () => {
  // The default settings (a 5 s probe timeout: a healthy local agent answers well inside it even
  // on a machine busy enough to delay it by a second); the hanging-agent case uses a monitor of
  // its own with a short timeout.
  cp = await startTestControlPlane();
  cp.events.subscribe(NODES_TOPIC, (event) => seen.push(event));
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await cp?.close();
});

async function agentAndNode(status: 'ready' | 'starting' = 'ready') {
  const agent = await startTestAgent();
  agents.push(agent);
  const id = uniqueNodeId();
  await call(cp.base, 'POST', '/api/v1/nodes/register', registration(id, agent.url));
  if (status === 'ready') await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
  return { agent, id };
}

/** One monitor interval later: heartbeat (so presence keeps it), then a monitor round. */
async function nextRound(id: string) {
  cp.clock.advance(30_000);
  await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
  await cp.runtime.health.runOnce();
  return (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
}

describe('health monitor', () => {
  it('probes GET {base_url}/health and records the result without changing a healthy node', async () => {
    const { agent, id } = await agentAndNode();
    const outcomes = await cp.runtime.health.runOnce();
    expect(outcomes.map((o) => o.key.nodeId)).toContain(id);
    expect(agent.healthRequests).toBe(1);
    const node = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
    expect(node.lifecycle_status).toBe('ready');
    expect(node.health).toMatchObject({
      last_check_ok: true,
      last_check_status_code: 200,
      consecutive_failures: 0,
    });
    expect(node.health.healthy_since).toBe(new Date(cp.clock.now()).toISOString());
  });

  it('probes each instance once per check interval, however often rounds run', async () => {
    const { agent } = await agentAndNode();
    await cp.runtime.health.runOnce();
    await cp.runtime.health.runOnce();
    expect(agent.healthRequests).toBe(1);
    cp.clock.advance(29_999);
    await cp.runtime.health.runOnce();
    expect(agent.healthRequests).toBe(1);
    cp.clock.advance(1);
    await cp.runtime.health.runOnce();
    expect(agent.healthRequests).toBe(2);
  });

  it('splits the probing between replicas instead of each probing everyone', async () => {
    const { agent } = await agentAndNode();
    const replicas = [1, 2, 3].map(() =>
      createHealthMonitor({
        db: cp.handle.db,
        transitions: cp.runtime.transitions,
        clock: cp.clock,
        settings: cp.runtime.healthSettings,
      }),
    );
    cp.clock.advance(30_000);
    await Promise.all(replicas.map((replica) => replica.runOnce()));
    expect(agent.healthRequests).toBe(1);
  });

  it('claims no more than it can probe before the claim runs out, even when every probe times out', async () => {
    for (let i = 0; i < 20; i++) {
      // A path of its own makes every base URL unique: the probe below finds its instance by URL,
      // and two closed ports handed out by the OS in one run may be the same port.
      await call(
        cp.base,
        'POST',
        '/api/v1/nodes/register',
        registration(uniqueNodeId(), `${await deadAgentUrl()}/claim-budget-${i}`),
      );
    }
    cp.clock.advance(30_000);
    const settings = { ...cp.runtime.healthSettings, checkIntervalMs: 30_000, checkTimeoutMs: 5_000 };
    const overdue: string[] = [];
    const shared: string[] = [];
    let probes = 0;
    const monitor = createHealthMonitor({
      db: cp.handle.db,
      transitions: cp.runtime.transitions,
      clock: cp.clock,
      settings,
      concurrency: 2,
      // Every agent hangs: each probe waits out the 5 s timeout, two at a time.
      probe: async (baseUrl, timeoutMs) => {
        probes += 1;
        const [claimed, ...others] = await cp.handle.db('node_instances').where({ base_url: baseUrl });
        if (others.length > 0) shared.push(baseUrl);
        // Past its claim another replica could have claimed and probed it too.
        if (cp.clock.now() >= new Date(claimed.next_check_at).getTime()) overdue.push(claimed.node_id);
        cp.clock.advance(timeoutMs / 2);
        return {
          ok: false,
          statusCode: null,
          error: `no answer within ${timeoutMs} ms`,
          durationMs: timeoutMs,
        };
      },
    });
    await monitor.runOnce();
    expect(probes).toBeGreaterThanOrEqual(20);
    expect(overdue).toEqual([]);
    expect(shared).toEqual([]);
  });

  it('degrades a ready node after 3 consecutive failed checks (HTTP 500), and a ready heartbeat does not undo it', async () => {
    const { agent, id } = await agentAndNode();
    agent.health = 'fail';
    await cp.runtime.health.runOnce();
    expect((await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body.health.consecutive_failures).toBe(1);
    expect((await nextRound(id)).lifecycle_status).toBe('ready');
    const third = await nextRound(id);
    expect(third).toMatchObject({
      lifecycle_status: 'degraded',
      status_reason: 'health_check_failed',
      routable: false,
    });
    expect(third.health).toMatchObject({
      consecutive_failures: 3,
      last_check_ok: false,
      last_check_status_code: 500,
    });
    expect(seen).toContainEqual(
      expect.objectContaining({
        type: 'node.status_changed',
        node_id: id,
        old_status: 'ready',
        new_status: 'degraded',
      }),
    );
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.body.status).toBe('degraded');
    expect(await cp.runtime.nodes.pickInstance(id)).toBeUndefined();
  });

  it('returns a degraded node to ready only after it stayed healthy for the 60 s recovery debounce', async () => {
    const { agent, id } = await agentAndNode();
    agent.health = 'fail';
    await cp.runtime.health.runOnce();
    await nextRound(id);
    expect((await nextRound(id)).lifecycle_status).toBe('degraded');
    agent.health = 'ok';
    expect((await nextRound(id)).lifecycle_status).toBe('degraded'); // healthy for 0 s
    expect((await nextRound(id)).lifecycle_status).toBe('degraded'); // 30 s
    const recovered = await nextRound(id); // 60 s
    expect(recovered).toMatchObject({ lifecycle_status: 'ready', status_reason: 'health_recovered' });
  });

  it('restarts the debounce when a check fails during recovery', async () => {
    const { agent, id } = await agentAndNode();
    agent.health = 'fail';
    await cp.runtime.health.runOnce();
    await nextRound(id);
    await nextRound(id);
    agent.health = 'ok';
    await nextRound(id);
    await nextRound(id);
    agent.health = 'fail';
    await nextRound(id);
    agent.health = 'ok';
    await nextRound(id);
    expect((await nextRound(id)).lifecycle_status).toBe('degraded');
    expect((await nextRound(id)).lifecycle_status).toBe('ready');
  });

  it('counts a probe that gets no answer within the timeout as a failure', async () => {
    const { agent, id } = await agentAndNode();
    agent.health = 'hang';
    const quick = createHealthMonitor({
      db: cp.handle.db,
      transitions: cp.runtime.transitions,
      clock: cp.clock,
      settings: { ...cp.runtime.healthSettings, checkTimeoutMs: 300 },
    });
    await quick.runOnce();
    const node = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
    expect(node.health).toMatchObject({
      last_check_ok: false,
      last_check_status_code: null,
      consecutive_failures: 1,
    });
    expect(node.health.last_check_error).toBe('no answer within 300 ms');
    agent.health = 'ok'; // later rounds need not wait on this agent
  });

  it('counts a 200 whose body says unhealthy as a failure', async () => {
    const { agent, id } = await agentAndNode();
    agent.health = 'unhealthy-body';
    await cp.runtime.health.runOnce();
    const node = (await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body;
    expect(node.health).toMatchObject({ last_check_ok: false, last_check_status_code: 200 });
  });

  it('counts a refused connection as a failure', async () => {
    const result = await httpHealthProbe(await deadAgentUrl(), 1000);
    expect(result).toMatchObject({ ok: false, statusCode: null });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('does not degrade a node that is still starting, and degrades it when it then claims ready', async () => {
    const { agent, id } = await agentAndNode('starting');
    agent.health = 'fail';
    await cp.runtime.health.runOnce();
    for (let i = 0; i < 3; i++) {
      cp.clock.advance(30_000);
      await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'starting' });
      await cp.runtime.health.runOnce();
    }
    expect((await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).body.lifecycle_status).toBe('starting');
    const beat = await call(cp.base, 'POST', `/api/v1/nodes/${id}/heartbeat`, { status: 'ready' });
    expect(beat.body.status).toBe('degraded');
  });

  it('does not probe offline or stopped nodes', async () => {
    const { agent, id } = await agentAndNode();
    await call(cp.base, 'POST', `/api/v1/nodes/${id}/stop`);
    cp.clock.advance(30_000);
    await cp.runtime.health.runOnce();
    expect(agent.healthRequests).toBe(0);
  });
});
