/**
 * No node can stall the others' asynchronous work. A node that never answers keeps at
 * most `max_concurrent_per_node` dispatch slots (the rest of the queue goes on flowing), and a
 * call it neither answers nor reports on ends by the answer rule (`answer_timeout`), while an
 * agent that answered 202, or reports while it works, is never ended by that rule.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { type ExecutionAgent, type FunctionSpec, startExecutionAgent } from './helpers/execution-agent.ts';

const planes: TestControlPlane[] = [];
const agents: ExecutionAgent[] = [];

afterEach(async () => {
  // Agents first: closing one ends the calls a hanging function holds, so the drains can finish.
  for (const agent of agents.splice(0)) await agent.close();
  for (const cp of planes.splice(0).reverse()) {
    await cp.parts.executions.dispatcher.drain();
    await cp.close();
  }
});

async function plane(
  settings: { concurrency?: number; perNode?: number; answerTimeoutMs?: number },
  shared?: TestControlPlane,
): Promise<TestControlPlane> {
  const cp = await startTestControlPlane({
    handle: shared?.handle,
    events: shared?.events,
    config: (config) => {
      if (settings.concurrency) config.executionQueue.dispatchConcurrency = settings.concurrency;
      if (settings.perNode) config.executionQueue.maxConcurrentPerNode = settings.perNode;
      if (settings.answerTimeoutMs) config.executionQueue.answerTimeoutMs = settings.answerTimeoutMs;
    },
  });
  planes.push(cp);
  cp.parts.executions.dispatcher.start();
  return cp;
}

async function agentOn(
  cp: TestControlPlane,
  reasoners: Record<string, FunctionSpec>,
): Promise<ExecutionAgent> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: uniqueNodeId('fair'),
    reasoners,
    heartbeatMs: 60_000,
  });
  agents.push(agent);
  await agent.register();
  return agent;
}

async function submit(cp: TestControlPlane, target: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${target}`, { input: { i } });
    expect(ack.status).toBe(202);
    ids.push(ack.body.execution_id);
  }
  return ids;
}

async function record(cp: TestControlPlane, id: string): Promise<any> {
  return (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
}

const POLL = { timeout: 20_000, interval: 25 };

describe('one node that never answers', () => {
  it("holds no more than its per-node cap of slots while another node's executions flow", async () => {
    const cp = await plane({ concurrency: 8, perNode: 3 });
    const hung = await agentOn(cp, { think: { kind: 'hang' } });
    const healthy = await agentOn(cp, { echo: { kind: 'answer' } });

    const held = await submit(cp, `${hung.nodeId}.think`, 20);
    await expect.poll(() => hung.calls.length, POLL).toBe(3);
    // Submitted after the hung node's whole backlog, and still served at once.
    const served = await submit(cp, `${healthy.nodeId}.echo`, 12);
    for (const id of served) {
      await expect.poll(async () => (await record(cp, id)).status, POLL).toBe('succeeded');
    }
    expect(hung.calls.length).toBe(3);
    const statuses = await Promise.all(held.map(async (id) => (await record(cp, id)).status));
    expect(statuses.filter((s) => s === 'running')).toHaveLength(3);
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(17);

    // Ending one of the held calls frees its slot for the next of the same node's queue.
    const running = held.find((_, i) => statuses[i] === 'running');
    expect((await call(cp.base, 'POST', `/api/v1/executions/${running}/cancel`)).status).toBe(200);
    await expect.poll(() => hung.calls.length, POLL).toBe(4);
  });

  it('fills the slots of a node with room when the others are at their cap (no slot left idle)', async () => {
    const cp = await plane({ concurrency: 6, perNode: 2 });
    const [a, b, c] = [
      await agentOn(cp, { think: { kind: 'hang' } }),
      await agentOn(cp, { think: { kind: 'hang' } }),
      await agentOn(cp, { think: { kind: 'hang' } }),
    ];
    // Interleaved backlogs, oldest first: each node gets exactly its cap, all six slots in use.
    await submit(cp, `${a.nodeId}.think`, 5);
    await submit(cp, `${b.nodeId}.think`, 5);
    await submit(cp, `${c.nodeId}.think`, 5);
    await expect.poll(() => a.calls.length + b.calls.length + c.calls.length, POLL).toBe(6);
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([2, 2, 2]);
    expect(cp.parts.executions.dispatcher.inFlight()).toBe(6);
  });
});

describe('eager dispatch: a submission skips an empty queue', () => {
  it('is written running and dispatched before it is acknowledged, started once, called once', async () => {
    const cp = await plane({});
    const agent = await agentOn(cp, { think: { kind: 'hang' } });
    // A pass that found the queue empty: from now on the dispatcher knows it is drained.
    await cp.parts.executions.dispatcher.runOnce();
    const [id] = (await submit(cp, `${agent.nodeId}.think`, 1)) as [string];
    // No claim came between: the row the acknowledgement left is already the dispatched one.
    const row = await cp.handle.db('executions').where({ execution_id: id }).first();
    expect(row).toMatchObject({ status: 'running', dispatch_count: 1, accepted_at: null });
    expect(row.dispatched_by).toEqual(expect.any(String));
    expect(row.agent_base_url).toBe(agent.url);
    await expect.poll(() => agent.receivedCount(id), POLL).toBe(1);
    expect(cp.parts.executions.dispatcher.inFlightIds()).toEqual([id]);
    const started = await cp.handle
      .db('event_log')
      .where({ event: 'execution.started' })
      .whereRaw("payload->>'execution_id' = ?", [id]);
    expect(started).toHaveLength(1);
  });

  it('takes no slot while queued work may be due, nor past the caps', async () => {
    const cp = await plane({ concurrency: 2, perNode: 1 });
    const dispatcher = cp.parts.executions.dispatcher;
    await dispatcher.runOnce();
    const slot = dispatcher.dispatchNow('some-node');
    expect(slot).toBeDefined();
    // The node's one slot is taken: no second, but another node still has room.
    expect(dispatcher.dispatchNow('some-node')).toBeUndefined();
    const other = dispatcher.dispatchNow('other-node');
    expect(other).toBeDefined();
    // Both of the replica's slots are taken.
    expect(dispatcher.dispatchNow('third-node')).toBeUndefined();
    slot?.release();
    other?.release();
    expect(dispatcher.inFlight()).toBe(0);

    // A submission was queued (or another replica hinted): until a pass has looked, nothing skips.
    dispatcher.wake();
    expect(dispatcher.dispatchNow('some-node')).toBeUndefined();
    await dispatcher.runOnce();
    const again = dispatcher.dispatchNow('some-node');
    expect(again).toBeDefined();
    again?.release();
  });

  it('queues a submission behind the executions a node at its cap left waiting, in order', async () => {
    const cp = await plane({ concurrency: 8, perNode: 1 });
    const agent = await agentOn(cp, { think: { kind: 'hang' } });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      // The test clock stands still unless moved: a millisecond apart, the queue has an order.
      cp.clock.advance(1);
      ids.push(...(await submit(cp, `${agent.nodeId}.think`, 1)));
    }
    await expect.poll(() => agent.calls.length, POLL).toBe(1);
    // A claim leaves out a node at its cap, so its backlog counts as work waiting: nothing skips it.
    await cp.parts.executions.dispatcher.runOnce();
    expect(cp.parts.executions.dispatcher.dispatchNow('another-node')).toBeUndefined();
    // Each cancel frees the one slot for the oldest of the queue, never for a later submission.
    for (const [n, id] of ids.slice(0, 3).entries()) {
      expect((await call(cp.base, 'POST', `/api/v1/executions/${id}/cancel`)).status).toBe(200);
      await expect.poll(() => agent.calls.length, POLL).toBe(n + 2);
    }
    expect(agent.calls.map((c) => c.executionId)).toEqual(ids);
  });
});

describe('the answer rule (execution_queue.answer_timeout)', () => {
  it('ends a call the agent neither answers nor reports on as timeout, closes it, and frees the slot', async () => {
    const cp = await plane({ perNode: 1, answerTimeoutMs: 1_000 });
    const hung = await agentOn(cp, { think: { kind: 'hang' } });
    const [first, second] = (await submit(cp, `${hung.nodeId}.think`, 2)) as [string, string];
    await expect.poll(async () => (await record(cp, first)).status, POLL).toBe('timeout');
    const ended = await record(cp, first);
    expect(ended.error).toContain('execution_queue.answer_timeout');
    expect(ended.error).toContain(hung.nodeId);
    // The call was closed (the agent saw its caller go away), and the cap's one slot went to the next.
    await expect.poll(() => hung.calls.find((c) => c.executionId === first)?.outcome, POLL).toBe('aborted');
    await expect.poll(() => hung.receivedCount(second), POLL).toBe(1);
    await expect.poll(async () => (await record(cp, second)).status, POLL).toBe('timeout');
  });

  it('never ends an execution the agent took with 202, however long it works', async () => {
    const cp = await plane({ answerTimeoutMs: 1_000 });
    const agent = await agentOn(cp, { long: { kind: 'accept', callbackDelayMs: 2_500 } });
    const [id] = (await submit(cp, `${agent.nodeId}.long`, 1)) as [string];
    await expect.poll(async () => (await record(cp, id)).status, POLL).toBe('succeeded');
  });

  it('never ends a call the agent reports on while it works, even before it answers', async () => {
    const cp = await plane({ answerTimeoutMs: 1_000 });
    const agent = await agentOn(cp, { think: { kind: 'hang' } });
    const [id] = (await submit(cp, `${agent.nodeId}.think`, 1)) as [string];
    await expect.poll(() => agent.receivedCount(id), POLL).toBe(1);
    // What an agent holding the request open sends while it works: a running report.
    const report = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, {
      status: 'running',
      progress: 10,
    });
    expect(report.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await record(cp, id)).status).toBe('running');
    expect(agent.calls.find((c) => c.executionId === id)?.outcome).toBeUndefined();
  });
});

describe('two replicas', () => {
  it('a cancel through one replica closes the call another replica holds open, and frees its slot', async () => {
    const a = await plane({ perNode: 1 });
    // Replica B shares A's database and bus; it never dispatches (its dispatcher is stopped).
    const b = await plane({}, a);
    await b.parts.executions.dispatcher.stop();
    // A function that ignores cancels: only the control plane closing the call ends it.
    const hung = await agentOn(a, { think: { kind: 'slow', delayMs: 120_000 } });
    const [first, second] = (await submit(a, `${hung.nodeId}.think`, 2)) as [string, string];
    await expect.poll(() => hung.receivedCount(first), POLL).toBe(1);
    expect((await call(b.base, 'POST', `/api/v1/executions/${first}/cancel`)).status).toBe(200);
    await expect.poll(() => hung.calls.find((c) => c.executionId === first)?.outcome, POLL).toBe('aborted');
    await expect.poll(() => hung.receivedCount(second), POLL).toBe(1);
    expect(a.parts.executions.dispatcher.inFlightIds()).toEqual([second]);
  });
});
