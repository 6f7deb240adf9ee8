/**
 * Local calls and notes as the platform's SDKs report them (their recorded bodies): a function an
 * agent ran in its own process becomes an execution of the workflow, and a note is kept with its
 * execution's logs. The parent is a real execution held open by a real agent on 127.0.0.1.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';
import { openSse } from './helpers/sse.ts';

let cp: TestControlPlane;
const agents: ExecutionAgent[] = [];

beforeAll(async () => {
  cp = await startTestControlPlane();
  cp.parts.executions.dispatcher.start();
});

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await cp.parts.executions.dispatcher.drain();
});

afterAll(async () => {
  await cp.close();
});

/** A registered agent whose `exercise` reasoner holds its call open, and a running execution of it. */
async function runningParent() {
  const agent = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: uniqueNodeId('local'),
    reasoners: { exercise: { kind: 'hang' } },
    skills: { math_double: { kind: 'answer' } },
    heartbeatMs: 60_000,
  });
  agents.push(agent);
  await agent.register();
  const ack = await call(
    cp.base,
    'POST',
    `/api/v1/execute/async/${agent.nodeId}.exercise`,
    { input: {} },
    {
      'X-Session-ID': 'sess-9',
    },
  );
  const parent = ack.body;
  const deadline = Date.now() + 10_000;
  while (
    (await call(cp.base, 'GET', `/api/v1/executions/${parent.execution_id}`)).body.status !== 'running'
  ) {
    if (Date.now() > deadline) throw new Error('the parent never started');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { agent, parent };
}

/** A local call report shaped as the SDK sends it. */
function report(
  agent: ExecutionAgent,
  parent: { execution_id: string; run_id: string; workflow_id: string },
  overrides: Record<string, unknown>,
) {
  return {
    execution_id: randomUUID(),
    workflow_id: parent.workflow_id,
    run_id: parent.run_id,
    root_workflow_id: parent.workflow_id,
    reasoner_id: 'math_add',
    type: 'math_add',
    agent_node_id: agent.nodeId,
    status: 'running',
    parent_execution_id: parent.execution_id,
    parent_workflow_id: parent.workflow_id,
    input_data: { a: 2, b: 3 },
    ...overrides,
  };
}

const post = (body: unknown) => call(cp.base, 'POST', '/api/v1/workflow/executions/events', body);

describe('POST /api/v1/workflow/executions/events', () => {
  it('records a local call as an execution of the workflow, under its parent, with input, result and duration', async () => {
    const { agent, parent } = await runningParent();
    const stream = await openSse(`${cp.base}/api/ui/v1/executions/events`);
    await stream.next((f) => f.comment.includes('connected'));
    const started = report(agent, parent, {});
    const first = await post(started);
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/api/v1/executions/${started.execution_id}`);
    expect(first.body).toMatchObject({
      execution_id: started.execution_id,
      parent_execution_id: parent.execution_id,
      workflow_id: parent.workflow_id,
      run_id: parent.run_id,
      target: `${agent.nodeId}.math_add`,
      node_id: agent.nodeId,
      status: 'running',
    });

    const ended = await post({
      ...started,
      status: 'succeeded',
      input_data: {},
      result: { sum: 5 },
      duration_ms: 2,
    });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'succeeded', result: { sum: 5 } });
    expect(ended.body.duration_ms).toBeGreaterThanOrEqual(0);

    const dag = await call(cp.base, 'GET', `/api/v1/workflows/${parent.workflow_id}/dag`);
    expect(dag.body.edges).toContainEqual({ from: parent.execution_id, to: started.execution_id });
    expect(dag.body.nodes).toContainEqual(
      expect.objectContaining({ execution_id: started.execution_id, status: 'succeeded', depth: 2 }),
    );
    const stored = await cp.handle.db('executions').where({ execution_id: started.execution_id }).first();
    expect(stored).toMatchObject({ lane: 'local', input: { a: 2, b: 3 }, session_id: 'sess-9' });

    await stream.next(
      (f) => f.event === 'execution.completed' && JSON.parse(f.data).execution_id === started.execution_id,
    );
    const events = stream.frames
      .filter((f) => f.data && JSON.parse(f.data).execution_id === started.execution_id)
      .map((f) => f.event);
    expect(events).toEqual(['execution.started', 'execution.completed']);
    stream.close();
  });

  it('records a failed local call with its error, and one whose running report was lost, from its end alone', async () => {
    const { agent, parent } = await runningParent();
    const failing = report(agent, parent, { reasoner_id: 'boom' });
    await post(failing);
    const failed = await post({ ...failing, status: 'failed', error: 'intentional failure', duration_ms: 4 });
    expect(failed.body).toMatchObject({ status: 'failed', error: 'intentional failure' });

    const late = report(agent, parent, { status: 'succeeded', result: { value: 10 }, duration_ms: 1_500 });
    const only = await post(late);
    expect(only.status).toBe(201);
    expect(only.body).toMatchObject({ status: 'succeeded', result: { value: 10 } });
    expect(only.body.duration_ms).toBeGreaterThanOrEqual(1_500);
  });

  it('names a skill of the agent as a skill target', async () => {
    const { agent, parent } = await runningParent();
    const skill = await post(report(agent, parent, { reasoner_id: 'math_double' }));
    expect(skill.body.target).toBe(`${agent.nodeId}.skill:math_double`);
    expect(skill.body.type).toBe('skill');
  });

  it('shows a local call as waiting while its agent says it awaits a child, and changes nothing after it ended', async () => {
    const { agent, parent } = await runningParent();
    const local = report(agent, parent, {});
    await post(local);
    const waiting = await post({ ...local, status: 'waiting', status_reason: 'awaiting child exec_x' });
    expect(waiting.body).toMatchObject({
      status: 'waiting',
      waiting_for: { type: 'child', reason: 'awaiting child exec_x' },
    });
    expect((await post({ ...local, status: 'running' })).body.status).toBe('running');
    await post({ ...local, status: 'succeeded', result: { sum: 5 } });
    const again = await post({ ...local, status: 'failed', error: 'late' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'succeeded', result: { sum: 5 }, error: null });
  });

  it('refuses a report about an execution the control plane routed, or about another function, with 409 and changes nothing', async () => {
    const { agent, parent } = await runningParent();
    const routed = await post(
      report(agent, parent, { execution_id: parent.execution_id, status: 'succeeded' }),
    );
    expect(routed.status).toBe(409);
    expect(routed.body.code).toBe('conflict');
    expect((await call(cp.base, 'GET', `/api/v1/executions/${parent.execution_id}`)).body.status).toBe(
      'running',
    );
    const local = report(agent, parent, {});
    await post(local);
    const other = await post({ ...local, reasoner_id: 'other', status: 'succeeded' });
    expect(other.status).toBe(409);
    expect((await call(cp.base, 'GET', `/api/v1/executions/${local.execution_id}`)).body.status).toBe(
      'running',
    );
  });

  it('answers 404 for an unknown node and 400 for missing, malformed, oversized, deep and hostile bodies, storing nothing', async () => {
    const { agent, parent } = await runningParent();
    const before = Number((await cp.handle.db('executions').count({ n: '*' }).first())?.n);
    const unknown = await post(report(agent, parent, { agent_node_id: uniqueNodeId('ghost') }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const base = report(agent, parent, {});
    const { execution_id: _omit, ...withoutId } = base;
    for (const body of [
      undefined,
      '{"execution_id":',
      [],
      withoutId,
      { ...base, status: 'paused' },
      { ...base, reasoner_id: '../admin' },
      { ...base, agent_node_id: 'a\nb' },
      { ...base, execution_id: 'x'.repeat(201) },
      { ...base, duration_ms: -1 },
      { ...base, input_data: { text: 'a\u0000b' } },
      { ...base, error: 7 },
    ]) {
      const answer = await call(cp.base, 'POST', '/api/v1/workflow/executions/events', body);
      expect(answer.status, JSON.stringify(body)?.slice(0, 80)).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/problem\+json/);
    }
    const deep = `{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    expect((await post(JSON.stringify({ ...base, input_data: '' }).replace('""', deep))).status).toBe(400);
    expect((await post({ ...base, input_data: { blob: 'x'.repeat(11 * 1024 * 1024) } })).status).toBe(413);
    expect(Number((await cp.handle.db('executions').count({ n: '*' }).first())?.n)).toBe(before);
  });
});

describe('POST /api/ui/v1/executions/note', () => {
  const note = (execution: string, body: unknown, headers: Record<string, string> = {}) =>
    call(cp.base, 'POST', '/api/ui/v1/executions/note', body, { 'X-Execution-ID': execution, ...headers });

  it("keeps the note with its execution and returns it with the execution's logs, in order", async () => {
    const { agent, parent } = await runningParent();
    const id = parent.execution_id;
    await call(cp.base, 'POST', `/api/v1/executions/${id}/logs`, { level: 'info', message: 'before' });
    const answer = await note(
      id,
      {
        message: 'exercise half way',
        tags: ['harness'],
        timestamp: 1795704222.202,
        agent_node_id: agent.nodeId,
      },
      { 'X-Run-ID': parent.run_id, 'X-Workflow-ID': parent.workflow_id },
    );
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      execution_id: id,
      note: {
        type: 'note',
        message: 'exercise half way',
        tags: ['harness'],
        timestamp: '2026-11-26T14:43:42.202Z',
        agent_node_id: agent.nodeId,
      },
    });
    const logs = await call(cp.base, 'GET', `/api/v1/executions/${id}/logs`);
    expect(logs.body.entries.map((e: any) => e.entry.message)).toEqual(['before', 'exercise half way']);
    expect(logs.body.entries[1].entry.type).toBe('note');
  });

  it('answers 400 without X-Execution-ID or with a bad body, 404 for an unknown execution, and stores nothing', async () => {
    const { parent } = await runningParent();
    const id = parent.execution_id;
    const missing = await call(cp.base, 'POST', '/api/ui/v1/executions/note', { message: 'lost' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([{ field: 'header x-execution-id', message: 'required' }]);
    for (const body of [
      undefined,
      '{',
      {},
      { message: '' },
      { message: 7 },
      { message: 'x', tags: 'one' },
      { message: 'x', timestamp: 'now' },
      { message: 'a\u0000b' },
      { message: 'x'.repeat(10_001) },
    ]) {
      expect((await note(id, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await note(id, { message: 'x'.repeat(70_000) })).status).toBe(413);
    expect((await note('exec_missing', { message: 'x' })).status).toBe(404);
    expect((await call(cp.base, 'GET', `/api/v1/executions/${id}/logs`)).body.entries).toEqual([]);
  });
});
