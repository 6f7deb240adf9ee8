/**
 * The execution lanes (synchronous and asynchronous) against real agents on 127.0.0.1
 * (test/helpers/execution-agent.ts, written from the agent protocol the SDKs speak): one answering
 * 200, one answering 202 and
 * calling back, a slow one, one that errors, one that crashes mid-call, one never started. The dispatcher
 * runs for real (woken by submissions); the reaper is driven by the test with the control plane's clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, EXECUTIONS_STREAM } from '../src/modules/executions/events.ts';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import {
  type ExecutionAgent,
  type FunctionSpec,
  registerUnstartedAgent,
  startExecutionAgent,
} from './helpers/execution-agent.ts';
import { metricValue } from './helpers/metrics.ts';

let cp: TestControlPlane;
const agents: ExecutionAgent[] = [];

const TEXT_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 }, max: { type: 'integer', maximum: 10 } },
  required: ['text'],
};

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => {
      config.executionQueue.syncTimeoutMs = 1_500;
    },
  });
  cp.parts.executions.dispatcher.start();
});

afterEach(async () => {
  // Closing the agents first ends calls a `hang` agent still holds, so the drain cannot wait for ever.
  for (const agent of agents.splice(0)) await agent.close();
  await cp.parts.executions.dispatcher.drain();
});

afterAll(async () => {
  await cp.close();
});

/** Starts and registers an agent whose reasoners behave as given. */
async function agentWith(
  reasoners: Record<string, FunctionSpec>,
  options: { skills?: Record<string, FunctionSpec>; version?: string; nodeId?: string } = {},
): Promise<ExecutionAgent> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: options.nodeId ?? uniqueNodeId('exec'),
    version: options.version,
    reasoners,
    skills: options.skills,
    heartbeatMs: 60_000,
  });
  agents.push(agent);
  await agent.register();
  return agent;
}

/** Polls the status record until `done` says so (or fails after 20 s, showing the last record). */
async function recordWhen(id: string, done: (record: any) => boolean): Promise<any> {
  const deadline = Date.now() + 20_000;
  let last: any;
  while (Date.now() < deadline) {
    last = (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`execution ${id} never got there; last record: ${JSON.stringify(last)}`);
}

const ended = (record: any) => ['succeeded', 'failed', 'cancelled', 'timeout'].includes(record.status);

describe('synchronous lane', () => {
  it('forwards the raw input with the context headers and answers the result (200 agent)', async () => {
    const agent = await agentWith({
      summarize: {
        kind: 'answer',
        inputSchema: TEXT_SCHEMA,
        result: (input: any) => ({ length: input.text.length }),
      },
    });
    const answer = await call(
      cp.base,
      'POST',
      `/api/v1/execute/${agent.nodeId}.summarize`,
      { input: { text: 'hello' } },
      { 'X-Workflow-ID': 'wf-sync-1', 'X-Session-ID': 'session-7', 'X-Actor-ID': 'user-3' },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 'succeeded',
      result: { length: 5 },
      workflow_id: 'wf-sync-1',
    });
    expect(answer.body.execution_id).toMatch(/^exec_[0-9a-z]{26}$/);
    expect(answer.body.run_id).toMatch(/^run_[0-9a-z]{26}$/);
    expect(answer.body).not.toHaveProperty('error_message');
    expect(answer.headers.get('x-routed-version')).toBe('1.0.0');

    const [received] = agent.calls;
    expect(received?.input).toEqual({ text: 'hello' });
    expect(received?.headers).toMatchObject({
      'x-execution-id': answer.body.execution_id,
      'x-run-id': answer.body.run_id,
      'x-workflow-id': 'wf-sync-1',
      'x-session-id': 'session-7',
      'x-actor-id': 'user-3',
    });

    const record = await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`);
    expect(record.body).toMatchObject({
      status: 'succeeded',
      result: { length: 5 },
      error: null,
      target: `${agent.nodeId}.summarize`,
      type: 'reasoner',
      routed_version: '1.0.0',
      webhook_registered: false,
    });
    expect(record.body.completed_at).not.toBeNull();
    expect(record.body).not.toHaveProperty('waiting_for');
  });

  it('waits for the status callback when the agent answers 202, as SDK agents do', async () => {
    const agent = await agentWith({ work: { kind: 'accept', callbackDelayMs: 100, result: { done: true } } });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'succeeded', result: { done: true } });
    // The agent learns its callback's answer a moment after the control plane answered the caller.
    await agent.settled();
    expect(agent.callbacks.filter((c) => c.executionId === answer.body.execution_id)).toEqual([
      expect.objectContaining({ status: 'succeeded', httpStatus: 200 }),
    ]);
  });

  it('answers 502 with the execution, its status and the agent error when the agent fails, and keeps the record', async () => {
    const agent = await agentWith({
      broken: { kind: 'error', status: 500, error: 'model quota exhausted', details: { retry_in: 30 } },
    });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.broken`, { input: {} });
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({
      status: 502,
      code: 'execution_failed',
      execution_status: 'failed',
      error_message: 'model quota exhausted',
      error: 'model quota exhausted',
      error_details: { retry_in: 30 },
    });
    expect(answer.body.execution_id).toMatch(/^exec_[0-9a-z]{26}$/);
    expect(answer.headers.get('x-execution-id')).toBe(answer.body.execution_id);
    const record = await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`);
    expect(record.body).toMatchObject({
      status: 'failed',
      error: 'model quota exhausted',
      error_details: { retry_in: 30 },
    });
  });

  it("passes the agent's own 4xx through when it refuses the call", async () => {
    const agent = await agentWith({
      picky: { kind: 'error', status: 422, error: 'text is too long', details: { max: 10 } },
    });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.picky`, { input: {} });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      status: 422,
      code: 'execution_failed',
      execution_status: 'failed',
      error_message: 'text is too long',
      error_details: { max: 10 },
    });
    expect((await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`)).body.status).toBe(
      'failed',
    );
  });

  it('answers 502 when an agent that answered 202 reports failed through its callback', async () => {
    const agent = await agentWith({
      flaky: {
        kind: 'fail-callback',
        error: 'tool crashed',
        details: { tool: 'search' },
        callbackDelayMs: 50,
      },
    });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.flaky`, { input: {} });
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({
      code: 'execution_failed',
      execution_status: 'failed',
      error_message: 'tool crashed',
      error_details: { tool: 'search' },
    });
    const record = await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`);
    expect(record.body).toMatchObject({ status: 'failed', error: 'tool crashed' });
  });

  it('answers 502 with the execution id when the agent is not listening (never started)', async () => {
    const nodeId = uniqueNodeId('gone');
    const unstarted = await registerUnstartedAgent({
      controlPlaneUrl: cp.base,
      nodeId,
      reasoners: { work: { kind: 'answer' } },
      heartbeatMs: 60_000,
    });
    try {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/${nodeId}.work`, { input: {} });
      expect(answer.status).toBe(502);
      expect(answer.body.code).toBe('upstream_unavailable');
      expect(answer.body.execution_id).toMatch(/^exec_/);
      const record = await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`);
      expect(record.body.status).toBe('failed');
      expect(record.body.error).toContain('ECONNREFUSED');
    } finally {
      unstarted.stopHeartbeats();
    }
  });

  it('answers 502 when the agent dies in the middle of the call, and records the failure', async () => {
    const agent = await agentWith({ fragile: { kind: 'crash' } });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.fragile`, { input: {} });
    expect(answer.status).toBe(502);
    const record = await call(cp.base, 'GET', `/api/v1/executions/${answer.body.execution_id}`);
    expect(record.body.status).toBe('failed');
    expect(record.body.error).toMatch(/closed the connection/);
  });

  it('answers 504 after the sync timeout, records timeout and asks the agent to cancel', async () => {
    const agent = await agentWith({ slow: { kind: 'hang' } });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.slow`, { input: {} });
    expect(answer.status).toBe(504);
    expect(answer.body.code).toBe('upstream_timeout');
    const id = answer.body.execution_id;
    const record = await call(cp.base, 'GET', `/api/v1/executions/${id}`);
    expect(record.body.status).toBe('timeout');
    await expect.poll(() => agent.cancels, { timeout: 5_000 }).toContain(id);
    // The agent's late `cancelled` report changes nothing: timeout is terminal.
    await agent.settled();
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('timeout');
  });

  it('resolves skill targets and refuses unknown nodes, functions and malformed targets', async () => {
    const agent = await agentWith(
      { summarize: { kind: 'answer' } },
      { skills: { word_count: { kind: 'answer', result: { words: 2 } } } },
    );
    const skill = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.skill:word_count`, {
      input: {},
    });
    expect(skill.status).toBe(200);
    expect(skill.body.result).toEqual({ words: 2 });
    expect(agent.calls.at(-1)).toMatchObject({ fn: 'word_count', kind: 'skill' });

    const unknownNode = await call(cp.base, 'POST', '/api/v1/execute/nobody-here.summarize', { input: {} });
    expect(unknownNode.status).toBe(404);
    const unknownFn = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.translate`, { input: {} });
    expect(unknownFn.status).toBe(404);
    expect(unknownFn.body.detail).toContain('summarize');
    // A skill is not a reasoner: the kind is part of the target.
    const wrongKind = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.word_count`, {
      input: {},
    });
    expect(wrongKind.status).toBe(404);
    for (const target of ['no-dot', 'a.b.c', '.x', 'a.skill:', 'a.%20b']) {
      const bad = await call(cp.base, 'POST', `/api/v1/execute/${target}`, { input: {} });
      expect(bad.status, target).toBe(400);
      expect(bad.body.errors, target).toEqual([expect.objectContaining({ field: 'target' })]);
    }
  });

  it('validates the input against the input_schema and lists every failing field', async () => {
    const agent = await agentWith({ summarize: { kind: 'answer', inputSchema: TEXT_SCHEMA } });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.summarize`, {
      input: { max: 50 },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.errors.map((e: any) => e.field).sort()).toEqual(['input.max', 'input.text']);
    expect(agent.calls).toHaveLength(0);
  });

  it('keeps the input as called, readable by id for the dashboard, and answers 404 for an unknown id', async () => {
    const agent = await agentWith({ summarize: { kind: 'answer', inputSchema: TEXT_SCHEMA } });
    const input = { text: 'ünïcode and "quotes"', max: 3 };
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.summarize`, { input });
    expect(answer.status).toBe(200);
    const read = await call(cp.base, 'GET', `/api/ui/v1/executions/${answer.body.execution_id}/input`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      execution_id: answer.body.execution_id,
      target: `${agent.nodeId}.summarize`,
      input,
    });
    const missing = await call(cp.base, 'GET', '/api/ui/v1/executions/exec_00000000000000000000000000/input');
    expect(missing.status).toBe(404);
  });

  it('answers 503 with Retry-After when no instance of the node is routable', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    const stop = await call(cp.base, 'POST', `/api/v1/nodes/${agent.nodeId}/stop`, {});
    expect(stop.status).toBe(200);
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    expect(answer.status).toBe(503);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    const queued = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    expect(queued.status).toBe(503);
    expect(agent.calls).toHaveLength(0);
  });
});

describe('asynchronous lane', () => {
  it('acknowledges at once, dispatches through the queue and records the callback result', async () => {
    const agent = await agentWith({ work: { kind: 'accept', result: { answer: 42 } } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, {
      input: { q: 1 },
    });
    expect(ack.status).toBe(202);
    expect(ack.body).toMatchObject({
      status: 'queued',
      target: `${agent.nodeId}.work`,
      type: 'reasoner',
      webhook_registered: false,
      webhook_error: null,
    });
    expect(ack.headers.get('location')).toBe(`/api/v1/executions/${ack.body.execution_id}`);
    expect(ack.body.workflow_id).toBe(ack.body.run_id);
    const record = await recordWhen(ack.body.execution_id, ended);
    expect(record).toMatchObject({ status: 'succeeded', result: { answer: 42 }, progress: 100 });
    expect(agent.receivedCount(ack.body.execution_id)).toBe(1);

    const batch = await call(cp.base, 'POST', '/api/v1/executions/batch-status', {
      execution_ids: [ack.body.execution_id, 'exec_00000000000000000000000000'],
    });
    expect(batch.status).toBe(200);
    expect(Object.keys(batch.body)).toEqual([ack.body.execution_id]);
    expect(batch.body[ack.body.execution_id].status).toBe('succeeded');
  });

  it('records a 200 answer on the async lane, and agent failures reported by callback', async () => {
    const agent = await agentWith({
      quick: { kind: 'answer', result: { fast: true } },
      flaky: { kind: 'fail-callback', error: 'tool crashed', details: { tool: 'search' } },
    });
    const quick = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.quick`, { input: {} });
    const flaky = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.flaky`, { input: {} });
    expect(await recordWhen(quick.body.execution_id, ended)).toMatchObject({
      status: 'succeeded',
      result: { fast: true },
    });
    expect(await recordWhen(flaky.body.execution_id, ended)).toMatchObject({
      status: 'failed',
      error: 'tool crashed',
      error_details: { tool: 'search' },
    });
  });

  it('keeps the progress an agent reports while running', async () => {
    const agent = await agentWith({ long: { kind: 'hang' } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.long`, { input: {} });
    const id = ack.body.execution_id;
    await recordWhen(id, (r) => r.status === 'running');
    const report = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, {
      status: 'running',
      progress: 50,
    });
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ status: 'running', progress: 50 });
    const done = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, {
      status: 'succeeded',
      result: { ok: true },
    });
    expect(done.body).toMatchObject({ status: 'succeeded', progress: 100, result: { ok: true } });
  });

  it('answers 429 with Retry-After when the queue is full, and queues nothing', async () => {
    const small = await startTestControlPlane({
      config: (config) => {
        config.executionQueue.queueSize = 2;
      },
    });
    try {
      const agent = await startExecutionAgent({
        controlPlaneUrl: small.base,
        nodeId: uniqueNodeId('full'),
        reasoners: { work: { kind: 'answer' } },
        heartbeatMs: 60_000,
      });
      agents.push(agent);
      await agent.register();
      const path = `/api/v1/execute/async/${agent.nodeId}.work`;
      expect((await call(small.base, 'POST', path, { input: {} })).status).toBe(202);
      expect((await call(small.base, 'POST', path, { input: {} })).status).toBe(202);
      const refused = await call(small.base, 'POST', path, { input: {} });
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toBe('1');
      const list = await call(small.base, 'GET', '/api/v1/executions?status=queued');
      expect(list.body.executions).toHaveLength(2);
      expect(await metricValue(small.metrics, 'service_queue_depth')).toBe(2);
    } finally {
      await small.close();
    }
  });
});

describe('status callbacks', () => {
  it('ignores a repeated terminal report: the first outcome stands', async () => {
    const agent = await agentWith({ work: { kind: 'accept', result: { first: true } } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    const id = ack.body.execution_id;
    await recordWhen(id, ended);
    for (const report of [
      { status: 'succeeded', result: { second: true } },
      { status: 'failed', error: 'late failure' },
      { status: 'running', progress: 10 },
    ]) {
      const again = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, report);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ status: 'succeeded', result: { first: true }, progress: 100 });
    }
  });

  it('refuses malformed reports and reports on unknown executions', async () => {
    const unknown = await call(cp.base, 'POST', '/api/v1/executions/exec_00000000000000000000000000/status', {
      status: 'succeeded',
    });
    expect(unknown.status).toBe(404);
    const agent = await agentWith({ work: { kind: 'hang' } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    const id = ack.body.execution_id;
    await recordWhen(id, (r) => r.status === 'running');
    for (const body of [{}, { status: 'done' }, { status: 'running', progress: 300 }, '{"status":', '[]']) {
      const bad = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const deep = `{"status":"succeeded","result":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect((await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, deep)).status).toBe(400);
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('running');
    // A result PostgreSQL cannot store ends the execution as failed instead of leaving it running.
    const nul = await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, {
      status: 'succeeded',
      result: { text: 'a\u0000b' },
    });
    expect(nul.status).toBe(200);
    expect(nul.body.status).toBe('failed');
    expect(nul.body.error).toContain('result.text');
    await call(cp.base, 'POST', `/api/v1/executions/${id}/cancel`);
  });
});

describe('cancel', () => {
  it('cancels a running execution and forwards the cancel to its agent; a second cancel is 409', async () => {
    const agent = await agentWith({ work: { kind: 'hang' } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    const id = ack.body.execution_id;
    await recordWhen(id, (r) => r.status === 'running');
    await expect.poll(() => agent.receivedCount(id)).toBe(1);
    const cancelled = await call(cp.base, 'POST', `/api/v1/executions/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', agent_notified: true, agent_error: null });
    expect(agent.cancels).toContain(id);
    const again = await call(cp.base, 'POST', `/api/v1/executions/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    expect(
      (await call(cp.base, 'POST', '/api/v1/executions/exec_00000000000000000000000000/cancel')).status,
    ).toBe(404);
  });
});

describe('workflows', () => {
  it('links child calls into one DAG through the workflow and parent headers', async () => {
    const agent = await agentWith({ step: { kind: 'answer' } });
    const target = `${agent.nodeId}.step`;
    const root = await call(
      cp.base,
      'POST',
      `/api/v1/execute/${target}`,
      { input: {} },
      { 'X-Workflow-ID': 'wf-dag-1' },
    );
    const rootId = root.body.execution_id;
    cp.clock.advance(10);
    // A child names only its parent: the workflow (and run) come from the parent.
    const child = await call(
      cp.base,
      'POST',
      `/api/v1/execute/${target}`,
      { input: {} },
      { 'X-Parent-Execution-ID': rootId },
    );
    expect(child.body.workflow_id).toBe('wf-dag-1');
    expect(child.body.run_id).toBe(root.body.run_id);
    cp.clock.advance(10);
    const grandchild = await call(
      cp.base,
      'POST',
      `/api/v1/execute/async/${target}`,
      { input: {} },
      {
        'X-Parent-Execution-ID': child.body.execution_id,
        'X-Workflow-ID': 'wf-dag-1',
      },
    );
    await recordWhen(grandchild.body.execution_id, ended);
    expect(agent.calls.at(-1)?.headers['x-parent-execution-id']).toBe(child.body.execution_id);

    const dag = await call(cp.base, 'GET', '/api/v1/workflows/wf-dag-1/dag');
    expect(dag.status).toBe(200);
    expect(dag.body).toMatchObject({ workflow_id: 'wf-dag-1', depth: 3, total_nodes: 3, truncated: false });
    expect(dag.body.nodes.map((n: any) => [n.execution_id, n.depth, n.status])).toEqual([
      [rootId, 1, 'succeeded'],
      [child.body.execution_id, 2, 'succeeded'],
      [grandchild.body.execution_id, 3, 'succeeded'],
    ]);
    expect(dag.body.edges).toEqual([
      { from: rootId, to: child.body.execution_id },
      { from: child.body.execution_id, to: grandchild.body.execution_id },
    ]);
    expect((await call(cp.base, 'GET', '/api/v1/workflows/no-such-workflow/dag')).status).toBe(404);
    expect((await call(cp.base, 'GET', `/api/v1/workflows/${'w'.repeat(300)}/dag`)).status).toBe(400);
  });
});

describe('versions', () => {
  it('routes by traffic weight, names the version in X-Routed-Version, and skips offline instances', async () => {
    const nodeId = uniqueNodeId('versions');
    const v1 = await agentWith({ work: { kind: 'answer', result: { v: 1 } } }, { nodeId, version: '1.0.0' });
    const v2 = await agentWith({ work: { kind: 'answer', result: { v: 2 } } }, { nodeId, version: '2.0.0' });
    // All traffic to 2.0.0 (the connector's weight endpoint sets this column).
    await cp.handle
      .db('node_instances')
      .where({ node_id: nodeId, version: '1.0.0' })
      .update({ traffic_weight: 0 });
    await cp.events.publish('nodes', { type: 'weights_changed', node_id: nodeId });
    for (let i = 0; i < 5; i++) {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/${nodeId}.work`, { input: {} });
      expect(answer.headers.get('x-routed-version')).toBe('2.0.0');
      expect(answer.body.result).toEqual({ v: 2 });
    }
    expect(v1.calls).toHaveLength(0);
    // Both weighted, but 2.0.0 offline: everything goes to 1.0.0.
    await cp.handle.db('node_instances').where({ node_id: nodeId }).update({ traffic_weight: 50 });
    await cp.handle
      .db('node_instances')
      .where({ node_id: nodeId, version: '2.0.0' })
      .update({ lifecycle_status: 'offline' });
    await cp.events.publish('nodes', { type: 'status_changed', node_id: nodeId });
    const before = v2.calls.length;
    for (let i = 0; i < 5; i++) {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/${nodeId}.work`, { input: {} });
      expect(answer.headers.get('x-routed-version')).toBe('1.0.0');
    }
    expect(v2.calls).toHaveLength(before);
  });
});

describe('reaper', () => {
  it('fails executions whose agent went offline while running them, naming the agent', async () => {
    // One agent took its execution (202, the callback far off); the other holds the call open.
    const agent = await agentWith({
      took: { kind: 'accept', callbackDelayMs: 600_000 },
      holds: { kind: 'hang' },
    });
    const took = (await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.took`, { input: {} }))
      .body.execution_id;
    const holds = (await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.holds`, { input: {} }))
      .body.execution_id;
    await expect
      .poll(async () => (await cp.handle.db('executions').where({ execution_id: took }).first()).accepted_at)
      .not.toBeNull();
    await expect.poll(() => agent.receivedCount(holds)).toBe(1);
    // The agent stops heartbeating; presence takes it offline once its lease has passed.
    agent.stopHeartbeats();
    cp.clock.advance(2 * 60_000);
    await cp.runtime.presence.tick();
    await cp.parts.executions.reaper.runOnce();
    for (const id of [took, holds]) {
      const record = (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
      expect(record.status).toBe('failed');
      expect(record.error).toContain(`${agent.nodeId}@1.0.0 went offline`);
    }
  });

  it('fails executions an agent took before it restarted (registered again)', async () => {
    const agent = await agentWith({ took: { kind: 'accept', callbackDelayMs: 600_000 } });
    const id = (await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.took`, { input: {} })).body
      .execution_id;
    await expect
      .poll(async () => (await cp.handle.db('executions').where({ execution_id: id }).first()).accepted_at)
      .not.toBeNull();
    await cp.parts.executions.reaper.runOnce();
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('running');
    // SDKs register once, at start: a second registration is a new process that lost the work.
    // (Within 5 s of taking it does not count: replicas' clocks differ a little.)
    cp.clock.advance(6_000);
    await agent.register();
    await cp.parts.executions.reaper.runOnce();
    const record = (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
    expect(record.status).toBe('failed');
    expect(record.error).toContain(`${agent.nodeId}@1.0.0 registered again`);
  });

  it('sends again an execution whose replica stopped before the agent acknowledged it', async () => {
    const agent = await agentWith({ work: { kind: 'answer', result: { ok: 1 } } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    const id = ack.body.execution_id;
    await recordWhen(id, ended);
    // As a crashed replica leaves it: sent by a replica whose lease just ended, never acknowledged.
    const now = new Date(cp.clock.now());
    await cp.handle.db('control_plane_replicas').insert({
      replica_id: 'rep_crashed',
      host: 'elsewhere',
      pid: 1,
      started_at: now,
      renewed_at: now,
      lease_expires_at: now,
    });
    const orphan = {
      status: 'running',
      dispatched_by: 'rep_crashed',
      accepted_at: null,
      completed_at: null,
      result: null,
      updated_at: now,
    };
    await cp.handle.db('executions').where({ execution_id: id }).update(orphan);
    // The agent may have it: it gets the orphan grace to report before the execution is sent again.
    cp.clock.advance(cp.config.executionQueue.orphanGraceMs - 1_000);
    await cp.parts.executions.reaper.runOnce();
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('running');
    cp.clock.advance(2_000);
    await cp.parts.executions.reaper.runOnce();
    expect((await recordWhen(id, ended)).status).toBe('succeeded');
    expect(agent.receivedCount(id)).toBe(2);

    // Claimed but never routed, so never sent: recovered as soon as its replica is gone.
    const second = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    await recordWhen(second.body.execution_id, ended);
    await cp.handle
      .db('executions')
      .where({ execution_id: second.body.execution_id })
      .update({ ...orphan, started_at: null, updated_at: new Date(cp.clock.now()) });
    await cp.parts.executions.reaper.runOnce();
    expect((await recordWhen(second.body.execution_id, ended)).status).toBe('succeeded');
    expect(agent.receivedCount(second.body.execution_id)).toBe(2);
  });
});

describe('events', () => {
  it('writes execution.completed with the payload events.ts defines, on the one-statement path too', async () => {
    const agent = await agentWith({ ok: { kind: 'answer' }, broken: { kind: 'error', error: 'nope' } });
    for (const fn of ['ok', 'broken']) {
      const run = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.${fn}`, { input: {} });
      const id = run.body.execution_id;
      const row = await cp.handle.db('executions').where({ execution_id: id }).first();
      const logged = await cp.handle
        .db('event_log')
        .where({ stream: EXECUTIONS_STREAM })
        .whereRaw("payload->>'execution_id' = ?", [id])
        .orderBy('id');
      expect(logged.map((e: any) => e.event)).toEqual(['execution.started', 'execution.completed']);
      const completed = logged[1].payload;
      expect(completed).toEqual(completedPayload(row, new Date(completed.timestamp)));
    }
  });
});

describe('many at once', () => {
  it('writes a burst of submissions and results together, each as it would be alone; a result that cannot be stored fails only its own', async () => {
    const agent = await agentWith({
      echo: { kind: 'answer', result: (input) => ({ echoed: input.n }) },
      nul: { kind: 'answer', result: () => ({ text: 'a\u0000b' }) },
    });
    // Ends of several executions in one statement are the only statements reading arrays.
    const batches: string[] = [];
    const onQuery = (query: { sql: string }) => {
      if (query.sql.includes('from unnest(')) batches.push(query.sql);
    };
    cp.handle.db.on('query', onQuery);
    try {
      const submitted = await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.${n === 17 ? 'nul' : 'echo'}`, {
            input: { n },
          }),
        ),
      );
      expect(submitted.map((answer) => answer.status)).toEqual(Array(40).fill(202));
      const records = await Promise.all(
        submitted.map((answer) => recordWhen(answer.body.execution_id, ended)),
      );
      records.forEach((record, n) => {
        if (n === 17) {
          expect(record.status).toBe('failed');
          expect(record.error).toMatch(/cannot be stored/);
        } else {
          expect(record).toMatchObject({ status: 'succeeded', result: { echoed: n }, progress: 100 });
        }
      });
      expect(batches.length).toBeGreaterThan(0);
      for (const record of records) {
        const row = await cp.handle.db('executions').where({ execution_id: record.execution_id }).first();
        const completed = await cp.handle
          .db('event_log')
          .where({ stream: EXECUTIONS_STREAM, event: 'execution.completed' })
          .whereRaw("payload->>'execution_id' = ?", [record.execution_id]);
        expect(completed).toHaveLength(1);
        expect(completed[0].payload).toEqual(completedPayload(row, new Date(completed[0].payload.timestamp)));
      }
    } finally {
      cp.handle.db.off('query', onQuery);
    }
  });
});

describe('what agents send back', () => {
  it('ends an execution even when the agent answers what the database cannot store', async () => {
    const nest = (depth: number): unknown => (depth === 0 ? 'bottom' : { d: nest(depth - 1) });
    const agent = await agentWith({
      nul: { kind: 'error', error: 'crash dump \u0000 here', details: { raw: 'a\u0000b' } },
      deep: { kind: 'answer', result: () => nest(100) },
    });
    const nul = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.nul`, { input: {} });
    expect(nul.status).toBe(502);
    expect(nul.body).toMatchObject({ execution_status: 'failed', error_message: 'crash dump \uFFFD here' });
    const record = (await call(cp.base, 'GET', `/api/v1/executions/${nul.body.execution_id}`)).body;
    expect(record.error_details).toBeNull();
    const deep = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.deep`, { input: {} });
    const ended = await recordWhen(
      deep.body.execution_id,
      (r) => r.status !== 'queued' && r.status !== 'running',
    );
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/nested \d+ levels deep/);
  });

  it('times out an execution whose agent took it and then never reported (max_silence)', async () => {
    const agent = await agentWith({ work: { kind: 'accept', callbackDelayMs: 600_000 } });
    const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
    const id = ack.body.execution_id;
    await expect
      .poll(async () => (await cp.handle.db('executions').where({ execution_id: id }).first()).accepted_at)
      .not.toBeNull();
    // A progress report is a sign of life: the silence starts again from it.
    cp.clock.advance(cp.config.executionQueue.maxSilenceMs - 60_000);
    await call(cp.base, 'POST', `/api/v1/executions/${id}/status`, { status: 'running' });
    cp.clock.advance(120_000);
    await cp.parts.executions.reaper.runOnce();
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('running');
    // The agent stays registered and ready (no presence sweep runs here): only the silence ends it.
    cp.clock.advance(cp.config.executionQueue.maxSilenceMs);
    await cp.parts.executions.reaper.runOnce();
    const record = (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
    expect(record.status).toBe('timeout');
    expect(record.error).toContain('max_silence');
  });

  it('sends X-Routed-Version percent-encoded when the version is not ASCII', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } }, { version: '2.0-β' });
    const answer = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    expect(answer.status).toBe(200);
    expect(decodeURIComponent(answer.headers.get('x-routed-version')!)).toBe('2.0-β');
  });

  it('leaves large results out of lists and batches, and says so', async () => {
    const big = { text: 'x'.repeat(300 * 1024) };
    const agent = await agentWith({ big: { kind: 'answer', result: big } });
    const run = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.big`, { input: {} });
    const id = run.body.execution_id;
    const list = await call(cp.base, 'GET', `/api/v1/executions?target=${agent.nodeId}.big`);
    expect(list.body.executions[0]).toMatchObject({ execution_id: id, result: null, result_truncated: true });
    const batch = await call(cp.base, 'POST', '/api/v1/executions/batch-status', { execution_ids: [id] });
    expect(batch.body[id]).toMatchObject({ result: null, result_truncated: true });
    const one = await call(cp.base, 'GET', `/api/v1/executions/${id}`);
    expect(one.body.result).toEqual(big);
    expect(one.body).not.toHaveProperty('result_truncated');
  });

  it('answers ids, filters and cursors holding a NUL as unknown or invalid, never 500', async () => {
    for (const path of ['/api/v1/executions/a%00b', '/api/v1/executions/a%00b/logs']) {
      expect((await call(cp.base, 'GET', path)).status, path).toBe(404);
    }
    expect((await call(cp.base, 'POST', '/api/v1/executions/a%00b/cancel')).status).toBe(404);
    for (const query of [
      'target=a%00b',
      'workflow_id=a%00b',
      'node_id=a%00b',
      `cursor=${Buffer.from('2026-01-01T00:00:00.000Z|a\u0000b').toString('base64url')}`,
    ]) {
      expect((await call(cp.base, 'GET', `/api/v1/executions?${query}`)).status, query).toBe(400);
    }
    expect(
      (await call(cp.base, 'POST', '/api/v1/executions/batch-status', { execution_ids: ['a\u0000b'] }))
        .status,
    ).toBe(400);
    expect((await call(cp.base, 'GET', '/api/v1/workflows/a%00b/dag')).status).toBe(400);
  });
});

describe('recovery of stranded claims', () => {
  it('leaves alone an orphan whose agent reports progress, and recovers its own stranded claims', async () => {
    const agent = await agentWith({ work: { kind: 'answer', result: { ok: 2 } } });
    const submit = async () => {
      const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, { input: {} });
      await recordWhen(ack.body.execution_id, ended);
      return ack.body.execution_id as string;
    };
    const strand = (id: string, replica: string) =>
      cp.handle
        .db('executions')
        .where({ execution_id: id })
        .update({
          status: 'running',
          dispatched_by: replica,
          accepted_at: null,
          completed_at: null,
          result: null,
          updated_at: new Date(cp.clock.now()),
        });
    const now = new Date(cp.clock.now());
    await cp.handle.db('control_plane_replicas').insert({
      replica_id: 'rep_gone',
      host: 'elsewhere',
      pid: 2,
      started_at: now,
      renewed_at: now,
      lease_expires_at: now,
    });

    // A running report proves the agent has it: no second dispatch after the grace.
    const reported = await submit();
    await strand(reported, 'rep_gone');
    await call(cp.base, 'POST', `/api/v1/executions/${reported}/status`, { status: 'running', progress: 10 });
    // A claim of this very replica that no call here is working on (its forwarding failed half-way).
    const stranded = await submit();
    await strand(stranded, cp.parts.replica.id);
    await cp.parts.executions.reaper.runOnce();
    expect((await call(cp.base, 'GET', `/api/v1/executions/${stranded}`)).body.status).toBe('running');

    cp.clock.advance(cp.config.executionQueue.orphanGraceMs + 1_000);
    await cp.parts.executions.reaper.runOnce();
    expect((await recordWhen(stranded, ended)).status).toBe('succeeded');
    expect(agent.receivedCount(stranded)).toBe(2);
    expect((await call(cp.base, 'GET', `/api/v1/executions/${reported}`)).body.status).toBe('running');
    expect(agent.receivedCount(reported)).toBe(1);
    await call(cp.base, 'POST', `/api/v1/executions/${reported}/status`, { status: 'succeeded', result: {} });
  });
});

describe('list and logs', () => {
  it('lists executions newest first with filters and a cursor', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    const target = `${agent.nodeId}.work`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      cp.clock.advance(1_000);
      ids.push(
        (await call(cp.base, 'POST', `/api/v1/execute/${target}`, { input: { i } })).body.execution_id,
      );
    }
    const first = await call(
      cp.base,
      'GET',
      `/api/v1/executions?target=${encodeURIComponent(target)}&limit=2`,
    );
    expect(first.status).toBe(200);
    expect(first.body.executions.map((e: any) => e.execution_id)).toEqual([ids[4], ids[3]]);
    const second = await call(
      cp.base,
      'GET',
      `/api/v1/executions?target=${encodeURIComponent(target)}&limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.body.executions.map((e: any) => e.execution_id)).toEqual([ids[2], ids[1]]);
    const since = new Date(cp.clock.now() - 1_500).toISOString();
    const recent = await call(
      cp.base,
      'GET',
      `/api/v1/executions?target=${encodeURIComponent(target)}&since=${since}`,
    );
    expect(recent.body.executions.map((e: any) => e.execution_id)).toEqual([ids[4], ids[3]]);
    for (const query of ['status=done', 'limit=0', 'limit=501', 'since=yesterday', 'cursor=bm9wZQ']) {
      expect((await call(cp.base, 'GET', `/api/v1/executions?${query}`)).status, query).toBe(400);
    }
  });

  it('answers 400 naming since and the accepted range for a time before year 1 or after 9999, and refuses such a cursor', async () => {
    for (const since of ['0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00']) {
      const answer = await call(cp.base, 'GET', `/api/v1/executions?since=${encodeURIComponent(since)}`);
      expect(answer.status, since).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors).toEqual([
        {
          field: 'since',
          message: `must be a time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (got "${since}")`,
        },
      ]);
      expect(answer.body.detail).toContain('since');
    }
    // The bounds themselves are times like any other.
    for (const since of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      const answer = await call(cp.base, 'GET', `/api/v1/executions?since=${since}&limit=1`);
      expect(answer.status, since).toBe(200);
    }
    const cursorAt = (at: string) =>
      Buffer.from(`${at}|exec_0000000000000000000000000a`).toString('base64url');
    for (const at of [
      '0000-06-01T00:00:00.000Z',
      '-000001-01-01T00:00:00.000Z',
      '+275760-09-13T00:00:00.000Z',
    ]) {
      const answer = await call(cp.base, 'GET', `/api/v1/executions?cursor=${cursorAt(at)}`);
      expect(answer.status, at).toBe(400);
      expect(answer.body.errors).toEqual([{ field: 'cursor', message: 'not a cursor from a previous page' }]);
    }
  });

  it('stores the log lines SDKs post and returns them in order', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    const run = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    const path = `/api/v1/executions/${run.body.execution_id}/logs`;
    expect((await call(cp.base, 'POST', path, { level: 'info', message: 'step 1' })).status).toBe(202);
    const many = await call(cp.base, 'POST', path, [{ message: 'step 2' }, { message: 'step 3' }]);
    expect(many.body).toEqual({ execution_id: run.body.execution_id, accepted: 2 });
    const read = await call(cp.base, 'GET', path);
    expect(read.body.entries.map((e: any) => e.entry.message)).toEqual(['step 1', 'step 2', 'step 3']);
    const page = await call(cp.base, 'GET', `${path}?limit=1&after=${read.body.entries[0].id}`);
    expect(page.body.entries.map((e: any) => e.entry.message)).toEqual(['step 2']);
    expect(page.body.next_after).toBe(read.body.entries[1].id);
    for (const body of ['"text"', '[1,2]', '{"a":"\\u0000"}', '{"x":']) {
      expect((await call(cp.base, 'POST', path, body)).status, body).toBe(400);
    }
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ i }));
    expect((await call(cp.base, 'POST', path, tooMany)).status).toBe(413);
    expect(
      (await call(cp.base, 'POST', '/api/v1/executions/exec_00000000000000000000000000/logs', {})).status,
    ).toBe(404);
  });

  it('accepts an empty batch of log lines in every shape SDKs send, and stores nothing', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    const run = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    const path = `/api/v1/executions/${run.body.execution_id}/logs`;
    for (const body of [[], { logs: [] }, { entries: [] }]) {
      const answer = await call(cp.base, 'POST', path, body);
      expect(answer.status, JSON.stringify(body)).toBe(202);
      expect(answer.body).toEqual({ execution_id: run.body.execution_id, accepted: 0 });
    }
    expect((await call(cp.base, 'GET', path)).body.entries).toEqual([]);
    // Still a post to an execution: an unknown one is 404, empty batch or not.
    const unknown = await call(
      cp.base,
      'POST',
      '/api/v1/executions/exec_00000000000000000000000000/logs',
      [],
    );
    expect(unknown.status).toBe(404);
    // The lines that come after are kept as usual.
    expect((await call(cp.base, 'POST', path, [{ message: 'after' }])).body.accepted).toBe(1);
    expect((await call(cp.base, 'GET', path)).body.entries.map((e: any) => e.entry.message)).toEqual([
      'after',
    ]);
  });
});

describe('bad input on the execute endpoints', () => {
  it('refuses missing, malformed, oversized, deeply nested and hostile bodies and headers', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    for (const lane of ['', 'async/']) {
      const path = `/api/v1/execute/${lane}${agent.nodeId}.work`;
      for (const body of [undefined, '', '{"input":', '{"input":[]}', '{"input":"text"}', '{"nope":{}}']) {
        const answer = await call(cp.base, 'POST', path, body);
        expect(answer.status, `${path} ${body}`).toBe(400);
      }
      const deep = `{"input":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`;
      expect((await call(cp.base, 'POST', path, deep)).status).toBe(400);
      const huge = JSON.stringify({ input: { text: 'x'.repeat(5 * 1024 * 1024) } });
      expect((await call(cp.base, 'POST', path, huge)).status).toBe(413);
      const nul = await call(cp.base, 'POST', path, { input: { text: 'a\u0000' } });
      expect(nul.status).toBe(400);
      expect(nul.body.errors[0].field).toBe('input.text');
      const header = await call(cp.base, 'POST', path, { input: {} }, { 'X-Workflow-ID': 'x'.repeat(300) });
      expect(header.status).toBe(400);
      expect(header.body.errors[0].field).toBe('header x-workflow-id');
      // `__proto__` is an ordinary key of the input, forwarded as sent.
      const proto = await call(cp.base, 'POST', path, '{"input":{"__proto__":{"admin":true}}}');
      expect([200, 202]).toContain(proto.status);
    }
    await cp.parts.executions.dispatcher.drain();
    const forwarded = agent.calls.at(-1)?.input as Record<string, unknown>;
    expect(Object.hasOwn(forwarded, '__proto__')).toBe(true);
    expect(({} as any).admin).toBeUndefined();
  });

  it('takes an async call whose webhook secret holds a NUL or a lone surrogate, without the webhook', async () => {
    const agent = await agentWith({ work: { kind: 'answer' } });
    for (const secret of ['a\u0000b', 'a\ud800b']) {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/async/${agent.nodeId}.work`, {
        input: {},
        webhook: { url: 'http://127.0.0.1:9/hook', secret },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      expect(answer.body).toMatchObject({ webhook_registered: false });
      expect(answer.body.webhook_error).toMatch(
        /webhook\.secret may not contain U\+0000 or a lone UTF-16 surrogate/,
      );
    }
  });

  it('counts finished executions by node, type and status', async () => {
    const agent = await agentWith({ work: { kind: 'answer' }, broken: { kind: 'error' } });
    await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.work`, { input: {} });
    await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.broken`, { input: {} });
    expect(
      await metricValue(cp.metrics, 'service_executions_total', {
        node: agent.nodeId,
        type: 'reasoner',
        status: 'succeeded',
      }),
    ).toBe(1);
    expect(
      await metricValue(cp.metrics, 'service_executions_total', {
        node: agent.nodeId,
        type: 'reasoner',
        status: 'failed',
      }),
    ).toBe(1);
  });
});
