/**
 * Human approvals: an execution pauses for a person and resumes on the decision. Real
 * agents on 127.0.0.1 (test/helpers/approval-agent.ts) pause the way the TypeScript SDK does and
 * take the decision on their callback_url; the dispatcher runs for real, the callback deliverer
 * and the expiry sweep are driven by the test with the control plane's clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalAgent, startApprovalAgent, until } from './approvals-agent.ts';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { openSse, type SseClient } from './helpers/sse.ts';

const KEY = 'approvals-test-key';
const AUTH = { 'X-API-Key': KEY };
let cp: TestControlPlane;
const agents: ApprovalAgent[] = [];
let ids = 0;

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => {
      config.api.auth = { apiKey: KEY, skipPaths: [] };
    },
  });
  cp.parts.executions.dispatcher.start();
});

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await cp.parts.executions.dispatcher.drain();
});

afterAll(async () => {
  await cp?.close();
});

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH) =>
  call(cp.base, method, path, body, headers);

/** An approval id no other test uses. */
function approvalId(prefix = 'apr'): string {
  ids += 1;
  return `${prefix}-${process.pid}-${ids}`;
}

async function agent(options: { failCallbacks?: number; specPath?: boolean } = {}): Promise<ApprovalAgent> {
  const started = await startApprovalAgent({
    controlPlaneUrl: cp.base,
    nodeId: uniqueNodeId('approver'),
    apiKey: KEY,
    ...options,
  });
  agents.push(started);
  await started.register();
  return started;
}

async function record(id: string) {
  return (await api('GET', `/api/v1/executions/${id}`)).body;
}

/** Starts `publish` on the agent and waits until the agent has paused it. */
async function paused(on: ApprovalAgent, input: Record<string, unknown>): Promise<string> {
  const ack = await api('POST', `/api/v1/execute/async/${on.nodeId}.publish`, { input });
  expect(ack.status).toBe(202);
  const id = ack.body.execution_id as string;
  await until('the agent paused the execution', async () =>
    on.pauses.some((p) => p.executionId === id) ? true : undefined,
  );
  return id;
}

/**
 * A running execution the agent took and will not end by itself: it pauses at once (without a
 * callback_url, so no decision ever reaches the agent) and is resumed here by request_changes.
 */
async function runningExecution(on: ApprovalAgent): Promise<string> {
  const ack = await api('POST', `/api/v1/execute/async/${on.nodeId}.publish`, {
    input: { approval_id: approvalId('unused'), callback: false },
  });
  const id = ack.body.execution_id as string;
  const pause = await until('the agent paused it', async () => on.pauses.find((p) => p.executionId === id));
  await api('POST', '/api/v1/webhooks/approval', {
    approval_request_id: pause.body.approval_request_id,
    decision: 'request_changes',
  });
  expect((await record(id)).status).toBe('running');
  return id;
}

describe('the approval round trip with a real agent', () => {
  it('pauses, shows waiting_for, resumes on the decision, delivers it to the agent, which then succeeds', async () => {
    const a = await agent();
    const stream: SseClient = await openSse(`${cp.base}/api/ui/v1/executions/events?api_key=${KEY}`);
    await stream.next((f) => f.comment.includes('connected'));
    const apr = approvalId('post');
    const id = await paused(a, { approval_id: apr, hours: 2 });
    const pause = a.pauses.find((p) => p.executionId === id)!;
    expect(pause.status).toBe(200);
    expect(pause.body).toEqual({
      execution_id: id,
      status: 'waiting',
      approval_request_id: apr,
      approval_request_url: `https://review.example.com/requests/${apr}`,
      expires_at: new Date(cp.clock.now() + 2 * 3_600_000).toISOString(),
    });

    const waiting = await record(id);
    expect(waiting.status).toBe('waiting');
    expect(waiting.waiting_for).toEqual({
      type: 'approval',
      approval_request_id: apr,
      approval_request_url: `https://review.example.com/requests/${apr}`,
      expires_at: pause.body.expires_at,
    });

    const pending = await api('GET', `/api/v1/executions/${id}/approval-status?approval_request_id=${apr}`);
    expect(pending.body).toMatchObject({
      approval_request_id: apr,
      execution_id: id,
      node_id: a.nodeId,
      target: `${a.nodeId}.publish`,
      status: 'pending',
      decision: null,
      feedback: null,
      decided_at: null,
      callback: { url: `${a.url}/webhooks/approval`, status: null, attempts: 0 },
    });
    const queue = await api('GET', `/api/v1/approvals?status=pending&node_id=${a.nodeId}`);
    expect(queue.body.approvals.map((r: any) => r.approval_request_id)).toEqual([apr]);

    const decided = await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: apr,
      decision: 'approved',
      feedback: 'Ship it.',
    });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({
      approval_request_id: apr,
      status: 'approved',
      decision: 'approved',
      feedback: 'Ship it.',
      execution_status: 'running',
      callback: { status: 'pending', attempts: 0 },
    });
    const resumed = await record(id);
    expect(resumed.status).toBe('running');
    expect(resumed).not.toHaveProperty('waiting_for');

    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(1);
    expect(a.callbacks[0]!.body).toEqual({
      execution_id: id,
      approval_request_id: apr,
      decision: 'approved',
      feedback: 'Ship it.',
    });
    // Calls to agents carry the API key when one is set.
    expect(a.callbacks[0]!.headers['x-api-key']).toBe(KEY);
    const done = await until('the agent reported', async () => {
      const now = await record(id);
      return now.status === 'succeeded' ? now : undefined;
    });
    expect(done.result).toEqual({ decision: 'approved', feedback: 'Ship it.' });

    const status = await api('GET', `/api/v1/executions/${id}/approval-status`);
    expect(status.body).toMatchObject({
      status: 'approved',
      callback: { status: 'delivered', attempts: 1, last_status_code: 200, last_error: null },
    });

    const names: string[] = [];
    const payloads: any[] = [];
    while (!names.includes('execution.completed')) {
      const frame = await stream.next((f) => f.event !== '' && JSON.parse(f.data).execution_id === id);
      names.push(frame.event);
      payloads.push(JSON.parse(frame.data));
    }
    stream.close();
    expect(names).toEqual([
      'execution.started',
      'execution.waiting',
      'execution.approval_resolved',
      'execution.completed',
    ]);
    expect(payloads[1]).toMatchObject({ status: 'waiting', approval_request_id: apr });
    expect(payloads[2]).toMatchObject({ status: 'running', approval_request_id: apr, decision: 'approved' });
    expect(payloads[3]).toMatchObject({ status: 'succeeded' });
  });

  it('resumes on rejected and on request_changes too: the agent gets the decision and decides', async () => {
    const a = await agent({ specPath: true });
    for (const decision of ['rejected', 'request_changes'] as const) {
      const apr = approvalId(decision);
      const id = await paused(a, { approval_id: apr });
      const answer = await api('POST', '/api/v1/webhooks/approval', {
        approval_request_id: apr,
        decision,
        feedback: `because ${decision}`,
      });
      expect(answer.body).toMatchObject({ status: decision, execution_status: 'running' });
      await cp.parts.approvals.callbacks.runOnce();
      const done = await until('the agent reported', async () => {
        const now = await record(id);
        return now.status === 'succeeded' ? now : undefined;
      });
      expect(done.result).toEqual({ decision, feedback: `because ${decision}` });
    }
  });

  it('lets an agent without a callback_url poll approval-status (no delivery is made)', async () => {
    const a = await agent();
    const apr = approvalId('poll');
    const id = await paused(a, { approval_id: apr, callback: false });
    await api('POST', '/api/v1/webhooks/approval', { approval_request_id: apr, decision: 'approved' });
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toEqual([]);
    const status = await api('GET', `/api/v1/executions/${id}/approval-status?approval_request_id=${apr}`);
    expect(status.body).toMatchObject({
      status: 'approved',
      decision: 'approved',
      feedback: null,
      callback: null,
    });
  });

  it('pauses the same execution again after request_changes, with a new approval id', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    cp.clock.advance(1_000);
    const second = approvalId('again');
    const answer = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: second,
      approval_request_url: 'https://review.example.com/requests/again',
    });
    expect(answer.status).toBe(200);
    // The latest request is what approval-status shows without an id.
    const latest = await api('GET', `/api/v1/executions/${id}/approval-status`);
    expect(latest.body).toMatchObject({ approval_request_id: second, status: 'pending' });
    // Default expiry: approvals.default_expiry (24 h).
    expect(Date.parse(latest.body.expires_at) - Date.parse(latest.body.requested_at)).toBe(24 * 3_600_000);
  });
});

describe("the SDKs' own calls (TypeScript and Python)", () => {
  it('pause() without a review URL: request-approval answers 200 with approval_request_url null', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const apr = approvalId('sdk-nourl');
    // Exactly what both SDKs send when their caller names no approvalRequestUrl.
    const body = {
      approval_request_id: apr,
      expires_in_hours: 72,
      callback_url: `${a.url}/webhooks/approval`,
    };
    const path = `/api/v1/agents/${a.nodeId}/executions/${id}/request-approval`;
    const answer = await api('POST', path, body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 'waiting',
      approval_request_id: apr,
      approval_request_url: null,
    });
    // An SDK retry of the same call is the same pause.
    expect((await api('POST', path, body)).status).toBe(200);
    const waiting = await record(id);
    expect(waiting.waiting_for).toMatchObject({ approval_request_id: apr, approval_request_url: null });
    const status = await api('GET', `/api/v1/executions/${id}/approval-status`);
    expect(status.body).toMatchObject({
      approval_request_id: apr,
      approval_request_url: null,
      status: 'pending',
    });
  });

  it('polls approval-status on the agent path, as get_approval_status and waitForApproval do', async () => {
    const a = await agent();
    const apr = approvalId('sdk-poll');
    const id = await paused(a, { approval_id: apr, callback: false });
    const poll = `/api/v1/agents/${a.nodeId}/executions/${id}/approval-status`;
    const pending = await api('GET', poll);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ approval_request_id: apr, status: 'pending' });
    await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: apr,
      decision: 'rejected',
      feedback: 'No.',
    });
    const decided = await api('GET', `${poll}?approval_request_id=${apr}`);
    expect(decided.body).toMatchObject({ status: 'rejected', feedback: 'No.' });
    // Another node's path, an unknown execution and a bad query.
    expect((await api('GET', poll.replace(a.nodeId, `${a.nodeId}-other`))).status).toBe(404);
    expect((await api('GET', poll.replace(id, 'exec_nobody'))).status).toBe(404);
    expect((await api('GET', `${poll}?approval_request_id=`)).status).toBe(400);
  });
});

describe('POST /api/v1/executions/{id}/request-approval', () => {
  it('answers a repeat of the pending request as the first (SDKs retry), and changes nothing', async () => {
    const a = await agent();
    const apr = approvalId('repeat');
    const id = await paused(a, { approval_id: apr, hours: 3 });
    const first = a.pauses.find((p) => p.executionId === id)!;
    const body = {
      approval_request_id: apr,
      approval_request_url: `https://review.example.com/requests/${apr}`,
      expires_in_hours: 3,
      callback_url: `${a.url}/webhooks/approval`,
    };
    const again = await api('POST', `/api/v1/agents/${a.nodeId}/executions/${id}/request-approval`, body);
    expect(again).toMatchObject({ status: 200, body: first.body });
    const spec = await api('POST', `/api/v1/executions/${id}/request-approval`, body);
    expect(spec).toMatchObject({ status: 200, body: first.body });
  });

  it('answers 409 for another request while waiting, an id another execution used, and an execution that is not running', async () => {
    const a = await agent();
    const apr = approvalId('busy');
    const id = await paused(a, { approval_id: apr });
    const url = 'https://review.example.com/x';
    const other = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: approvalId('second'),
      approval_request_url: url,
    });
    expect(other).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(other.body.detail).toContain(apr);
    const changed = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: apr,
      approval_request_url: url,
    });
    expect(changed).toMatchObject({ status: 409, body: { code: 'conflict' } });

    const running = await runningExecution(a);
    const taken = await api('POST', `/api/v1/executions/${running}/request-approval`, {
      approval_request_id: apr,
      approval_request_url: url,
    });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain('another execution');
    expect((await record(running)).status).toBe('running');

    const cancelled = await api('POST', `/api/v1/executions/${running}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    const ended = await api('POST', `/api/v1/executions/${running}/request-approval`, {
      approval_request_id: approvalId('ended'),
      approval_request_url: url,
    });
    expect(ended.status).toBe(409);
    expect(ended.body.detail).toContain('cancelled');
  });

  it('answers 409 for an execution still queued', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    // Back in the queue, not due for a day (so no dispatcher takes it while this test runs).
    await cp.handle
      .db('executions')
      .where({ execution_id: id })
      .update({ status: 'queued', available_at: new Date(cp.clock.now() + 86_400_000) });
    const answer = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: approvalId('queued'),
      approval_request_url: 'https://review.example.com/q',
    });
    expect(answer).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(answer.body.detail).toContain('queued');
    await api('POST', `/api/v1/executions/${id}/cancel`);
  });

  it('answers 404 for an unknown execution, an impossible id, and the agent path of another node', async () => {
    const a = await agent();
    const apr = approvalId('nf');
    const id = await paused(a, { approval_id: apr });
    const body = {
      approval_request_id: approvalId('x'),
      approval_request_url: 'https://review.example.com/x',
    };
    for (const path of [
      '/api/v1/executions/exec_missing/request-approval',
      `/api/v1/executions/${encodeURIComponent('exec with space')}/request-approval`,
      `/api/v1/agents/other-node/executions/${id}/request-approval`,
      `/api/v1/agents/${a.nodeId}/executions/exec_missing/request-approval`,
    ]) {
      const answer = await api('POST', path, body);
      expect(answer.status, path).toBe(404);
      expect(answer.body.code).toBe('not_found');
    }
  });

  it('refuses bad input with 400 (or 413) naming the field, and changes nothing', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const path = `/api/v1/executions/${id}/request-approval`;
    const good = {
      approval_request_id: approvalId('bad'),
      approval_request_url: 'https://review.example.com/r',
    };
    const cases: Array<[unknown, string]> = [
      [{}, 'approval_request_id'],
      [{ ...good, approval_request_id: undefined }, 'approval_request_id'],
      [{ ...good, approval_request_id: '' }, 'approval_request_id'],
      [{ ...good, approval_request_id: 'x'.repeat(201) }, 'approval_request_id'],
      [{ ...good, approval_request_id: 'nul\u0000id' }, 'approval_request_id'],
      [{ ...good, approval_request_id: 'lone\ud800' }, 'approval_request_id'],
      [{ ...good, approval_request_id: 'line\nbreak' }, 'approval_request_id'],
      [{ ...good, approval_request_id: 42 }, 'approval_request_id'],
      [{ ...good, approval_request_id: null }, 'approval_request_id'],
      [{ ...good, approval_request_url: 'javascript:alert(1)' }, 'approval_request_url'],
      [{ ...good, approval_request_url: 'not a url' }, 'approval_request_url'],
      [{ ...good, approval_request_url: `https://e.com/${'a'.repeat(2048)}` }, 'approval_request_url'],
      [{ ...good, expires_in_hours: 0 }, 'expires_in_hours'],
      [{ ...good, expires_in_hours: -1 }, 'expires_in_hours'],
      [{ ...good, expires_in_hours: '24' }, 'expires_in_hours'],
      [{ ...good, expires_in_hours: 721 }, 'expires_in_hours'],
      [{ ...good, callback_url: 'ftp://agent/cb' }, 'callback_url'],
      [{ ...good, callback_url: 'http://user:pw@127.0.0.1:1/cb' }, 'callback_url'],
      [{ ...good, callback_url: 5 }, 'callback_url'],
      [[good], '(body)'],
    ];
    for (const [body, field] of cases) {
      const answer = await api('POST', path, body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
    }
    const infinite = await api(
      'POST',
      path,
      `{"approval_request_id":"inf","approval_request_url":"https://e.com","expires_in_hours":1e400}`,
    );
    expect(infinite.body.errors.map((e: any) => e.field)).toEqual(['expires_in_hours']);
    expect((await api('POST', path, '{"approval_request_id":')).status).toBe(400);
    expect(
      (await api('POST', path, 'approval_request_id=x', { ...AUTH, 'content-type': 'text/plain' })).status,
    ).toBe(400);
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const nested = await api('POST', path, deep);
    expect(nested.status).toBe(400);
    expect(nested.body.detail).toContain('nested');
    const huge = await api('POST', path, JSON.stringify({ ...good, pad: 'x'.repeat(70 * 1024) }));
    expect(huge).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
    expect((await api('POST', path, good, {})).status).toBe(401);
    // Nothing changed: still running, no request recorded.
    expect((await record(id)).status).toBe('running');
    const status = await api(
      'GET',
      `/api/v1/executions/${id}/approval-status?approval_request_id=${good.approval_request_id}`,
    );
    expect(status.status).toBe(404);
  });

  it('reads null members as absent (SDKs send unset ones as null)', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const apr = approvalId('nulls');
    const answer = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: apr,
      approval_request_url: 'https://review.example.com/n',
      expires_in_hours: null,
      callback_url: null,
    });
    expect(answer.status).toBe(200);
    const status = await api('GET', `/api/v1/executions/${id}/approval-status?approval_request_id=${apr}`);
    expect(status.body.callback).toBeNull();
    expect(Date.parse(status.body.expires_at) - Date.parse(status.body.requested_at)).toBe(24 * 3_600_000);
  });

  it('keeps hostile but storable text exactly as sent', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const apr = `<script>alert('x')</script>' OR 1=1; -- ✓ é ${approvalId('h')}`;
    const answer = await api('POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: apr,
      approval_request_url: 'https://review.example.com/?q=%3Cscript%3E&a=1',
    });
    expect(answer.body.approval_request_id).toBe(apr);
    const status = await api(
      'GET',
      `/api/v1/executions/${id}/approval-status?approval_request_id=${encodeURIComponent(apr)}`,
    );
    expect(status.body).toMatchObject({ approval_request_id: apr, status: 'pending' });
    const decided = await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: apr,
      decision: 'rejected',
      feedback: "Robert'); DROP TABLE approval_requests;-- \u202e",
    });
    expect(decided.body.feedback).toBe("Robert'); DROP TABLE approval_requests;-- \u202e");
  });
});

describe('POST /api/v1/webhooks/approval', () => {
  it('answers a repeated identical decision 200 without a second resume, and a conflicting one 409', async () => {
    const a = await agent();
    const apr = approvalId('dup');
    const id = await paused(a, { approval_id: apr });
    const decision = { approval_request_id: apr, decision: 'approved', feedback: 'ok' };
    const first = await api('POST', '/api/v1/webhooks/approval', decision);
    expect(first.status).toBe(200);
    const events = async () =>
      (await cp.handle.db('event_log').where({ stream: 'executions', event: 'execution.approval_resolved' }))
        .map((row: any) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload))
        .filter((payload: any) => payload.execution_id === id);
    expect(await events()).toHaveLength(1);
    const again = await api('POST', '/api/v1/webhooks/approval', decision);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'approved', decided_at: first.body.decided_at });
    expect(await events()).toHaveLength(1);
    for (const other of [
      { ...decision, decision: 'rejected' },
      { ...decision, feedback: 'something else' },
      { approval_request_id: apr, decision: 'approved' },
    ]) {
      const answer = await api('POST', '/api/v1/webhooks/approval', other);
      expect(answer, JSON.stringify(other)).toMatchObject({ status: 409, body: { code: 'conflict' } });
    }
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(1);
  });

  it('answers 404 for an unknown approval id', async () => {
    const answer = await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: 'apr-nobody-asked',
      decision: 'approved',
    });
    expect(answer).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('refuses bad input with 400 (or 413) and changes nothing', async () => {
    const a = await agent();
    const apr = approvalId('badd');
    const id = await paused(a, { approval_id: apr });
    const cases: Array<[unknown, string]> = [
      [{}, 'approval_request_id'],
      [{ approval_request_id: apr }, 'decision'],
      [{ approval_request_id: apr, decision: 'APPROVED' }, 'decision'],
      [{ approval_request_id: apr, decision: 'expired' }, 'decision'],
      [{ approval_request_id: apr, decision: null }, 'decision'],
      [{ approval_request_id: apr, decision: 'approved', feedback: 'x'.repeat(10_001) }, 'feedback'],
      [{ approval_request_id: apr, decision: 'approved', feedback: 'a\u0000b' }, 'feedback'],
      [{ approval_request_id: apr, decision: 'approved', feedback: { text: 'no' } }, 'feedback'],
      [{ approval_request_id: '', decision: 'approved' }, 'approval_request_id'],
      ['"approved"', '(body)'],
    ];
    for (const [body, field] of cases) {
      const answer = await api('POST', '/api/v1/webhooks/approval', body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
    }
    expect((await api('POST', '/api/v1/webhooks/approval', '{"decision"')).status).toBe(400);
    expect((await api('POST', '/api/v1/webhooks/approval', '')).body.errors[0].field).toBe('(body)');
    const deep = `{"a":${'{"a":'.repeat(5000)}1${'}'.repeat(5001)}`;
    expect((await api('POST', '/api/v1/webhooks/approval', deep)).status).toBe(400);
    const huge = JSON.stringify({
      approval_request_id: apr,
      decision: 'approved',
      feedback: 'x'.repeat(70_000),
    });
    expect((await api('POST', '/api/v1/webhooks/approval', huge)).status).toBe(413);
    // Without a webhook secret the decision is behind the API key like every route.
    const noKey = await api(
      'POST',
      '/api/v1/webhooks/approval',
      { approval_request_id: apr, decision: 'approved' },
      {},
    );
    expect(noKey.status).toBe(401);
    expect((await record(id)).status).toBe('waiting');
    // null feedback is absent feedback.
    const ok = await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: apr,
      decision: 'approved',
      feedback: null,
    });
    expect(ok.body).toMatchObject({ status: 'approved', feedback: null });
  });
});

describe('the synchronous lane (POST /api/v1/execute/{target}) while the execution waits', () => {
  it('answers the result once the decision came and the agent reported', async () => {
    const a = await agent();
    const apr = approvalId('sync');
    const answer = api('POST', `/api/v1/execute/${a.nodeId}.publish`, { input: { approval_id: apr } });
    const pause = await until('the agent paused', async () => a.pauses[0]);
    expect(pause.status).toBe(200);
    expect((await record(pause.executionId)).status).toBe('waiting');
    await api('POST', '/api/v1/webhooks/approval', { approval_request_id: apr, decision: 'approved' });
    await cp.parts.approvals.callbacks.runOnce();
    const done = await answer;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      execution_id: pause.executionId,
      status: 'succeeded',
      result: { decision: 'approved', feedback: null },
    });
  });

  it('times out as usual when no decision comes in time: the request is cancelled, a decision then 409', async () => {
    const short = await startTestControlPlane({
      config: (config) => {
        config.executionQueue.syncTimeoutMs = 1_500;
      },
    });
    try {
      const a = await startApprovalAgent({ controlPlaneUrl: short.base, nodeId: uniqueNodeId('sync-to') });
      agents.push(a);
      await a.register();
      const apr = approvalId('sync-to');
      const answer = await call(short.base, 'POST', `/api/v1/execute/${a.nodeId}.publish`, {
        input: { approval_id: apr },
      });
      expect(answer.status).toBe(504);
      const id = a.pauses[0]!.executionId;
      expect((await call(short.base, 'GET', `/api/v1/executions/${id}`)).body.status).toBe('timeout');
      const status = await call(short.base, 'GET', `/api/v1/executions/${id}/approval-status`);
      expect(status.body).toMatchObject({ status: 'cancelled', decision: null });
      const late = await call(short.base, 'POST', '/api/v1/webhooks/approval', {
        approval_request_id: apr,
        decision: 'approved',
      });
      expect(late.status).toBe(409);
    } finally {
      await short.close();
    }
  });
});

describe('an execution that ends while waiting', () => {
  it('takes its open request with it (cancelled), and a later decision is a conflict', async () => {
    const a = await agent();
    const apr = approvalId('cancel');
    const id = await paused(a, { approval_id: apr });
    const cancelled = await api('POST', `/api/v1/executions/${id}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    expect(cancelled.body).not.toHaveProperty('waiting_for');
    const status = await api('GET', `/api/v1/executions/${id}/approval-status`);
    expect(status.body).toMatchObject({ status: 'cancelled', decision: null });
    const late = await api('POST', '/api/v1/webhooks/approval', {
      approval_request_id: apr,
      decision: 'approved',
    });
    expect(late).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(late.body.detail).toContain('cancelled');
    expect((await api('GET', `/api/v1/approvals?status=pending&node_id=${a.nodeId}`)).body.approvals).toEqual(
      [],
    );
  });

  it('is not failed for silence by the reaper, nor waited for by a shutdown drain', async () => {
    const a = await agent();
    const apr = approvalId('silent');
    const id = await paused(a, { approval_id: apr, hours: 700 });
    cp.clock.advance(cp.config.executionQueue.maxSilenceMs + 60_000);
    await cp.parts.executions.reaper.runOnce();
    expect((await record(id)).status).toBe('waiting');
    expect(await cp.parts.executions.countActive(a.nodeId, '1.0.0')).toBe(0);
    // Resumed, silence counts again from the decision.
    await api('POST', '/api/v1/webhooks/approval', { approval_request_id: apr, decision: 'approved' });
    expect(await cp.parts.executions.countActive(a.nodeId, '1.0.0')).toBe(1);
    await cp.parts.executions.reaper.runOnce();
    expect((await record(id)).status).toBe('running');
  });
});

describe('GET /api/v1/executions/{id}/approval-status', () => {
  it('answers 404 for an unknown execution or request, and 400 for a bad query', async () => {
    const a = await agent();
    const apr = approvalId('st');
    const id = await paused(a, { approval_id: apr });
    expect((await api('GET', '/api/v1/executions/exec_missing/approval-status')).status).toBe(404);
    const other = await api('GET', `/api/v1/executions/${id}/approval-status?approval_request_id=nope`);
    expect(other).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await api('GET', `/api/v1/executions/${id}/approval-status?approval_request_id=`)).status).toBe(
      400,
    );
    expect(
      (
        await api(
          'GET',
          `/api/v1/executions/${id}/approval-status?approval_request_id=a&approval_request_id=b`,
        )
      ).status,
    ).toBe(400);
    // Another execution's request is not this one's.
    const second = await runningExecution(a);
    expect(
      (await api('GET', `/api/v1/executions/${second}/approval-status?approval_request_id=${apr}`)).status,
    ).toBe(404);
  });
});

describe('GET /api/v1/approvals', () => {
  it('lists newest first, filters by status and node, and pages with next_cursor', async () => {
    const a = await agent();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const apr = approvalId('list');
      await paused(a, { approval_id: apr });
      made.push(apr);
      cp.clock.advance(1_000);
    }
    const first = await api('GET', `/api/v1/approvals?status=pending&node_id=${a.nodeId}&limit=2`);
    expect(first.body.approvals.map((r: any) => r.approval_request_id)).toEqual([made[2], made[1]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api(
      'GET',
      `/api/v1/approvals?status=pending&node_id=${a.nodeId}&limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.body).toMatchObject({ next_cursor: null });
    expect(second.body.approvals.map((r: any) => r.approval_request_id)).toEqual([made[0]]);
    await api('POST', '/api/v1/webhooks/approval', { approval_request_id: made[1], decision: 'approved' });
    const approved = await api('GET', `/api/v1/approvals?status=approved&node_id=${a.nodeId}`);
    expect(approved.body.approvals.map((r: any) => r.approval_request_id)).toEqual([made[1]]);
    for (const query of [
      'status=open',
      'limit=0',
      'limit=201',
      'limit=x',
      'cursor=!!',
      'cursor=abc',
      'status=pending&status=approved',
    ]) {
      const answer = await api('GET', `/api/v1/approvals?${query}`);
      expect(answer.status, query).toBe(400);
    }
    // A cursor forged with a time the database cannot store is refused like any unknown cursor.
    for (const at of ['0000-06-01T00:00:00.000Z', '0000-12-31T23:59:59.999Z']) {
      const cursor = Buffer.from(`${at}|${made[0]}`).toString('base64url');
      const answer = await api('GET', `/api/v1/approvals?cursor=${cursor}`);
      expect(answer.status, at).toBe(400);
      expect(answer.body.errors[0].field).toBe('cursor');
    }
    expect((await api('GET', '/api/v1/approvals', undefined, {})).status).toBe(401);
  });
});

describe('POST /api/v1/agents/{node_id}/executions/{id}/awaiter-status', () => {
  it('shows the execution as waiting for its child until the agent reports running, and keeps each report in its log', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const stream: SseClient = await openSse(`${cp.base}/api/ui/v1/executions/events?api_key=${KEY}`);
    await stream.next((f) => f.comment.includes('connected'));
    const path = `/api/v1/agents/${a.nodeId}/executions/${id}/awaiter-status`;
    const answer = await api('POST', path, { status: 'waiting', reason: 'awaiting approval of exec_child' });
    expect(answer).toMatchObject({
      status: 200,
      body: {
        execution_id: id,
        status: 'waiting',
        reason: 'awaiting approval of exec_child',
        execution_status: 'waiting',
        recorded: true,
      },
    });
    const waiting = await record(id);
    expect(waiting).toMatchObject({
      status: 'waiting',
      waiting_for: { type: 'child', reason: 'awaiting approval of exec_child' },
    });
    expect(waiting.waiting_for.since).toMatch(/^\d{4}-\d\d-\d\dT/);
    const listed = await api('GET', `/api/v1/executions?status=waiting&node_id=${a.nodeId}`);
    expect(listed.body.executions.map((e: any) => e.execution_id)).toContain(id);
    // A repeated report changes nothing.
    expect((await api('POST', path, { status: 'waiting' })).body.execution_status).toBe('waiting');

    const resumed = await api('POST', path, { status: 'running', reason: null });
    expect(resumed.body).toMatchObject({ reason: null, execution_status: 'running' });
    const running = await record(id);
    expect(running.status).toBe('running');
    expect(running).not.toHaveProperty('waiting_for');

    const ofThis = (f: { event: string; data: string }) =>
      ['execution.waiting', 'execution.resumed'].includes(f.event) && JSON.parse(f.data).execution_id === id;
    await stream.next((f) => f.event === 'execution.resumed' && ofThis(f));
    const frames = stream.frames.filter(ofThis).map((f) => JSON.parse(f.data));
    expect(frames.map((f) => [f.type, f.waiting_for, f.status])).toEqual([
      ['execution.waiting', 'child', 'waiting'],
      ['execution.resumed', undefined, 'running'],
    ]);
    stream.close();
    const logs = await api('GET', `/api/v1/executions/${id}/logs`);
    expect(logs.body.entries.map((e: any) => e.entry)).toEqual([
      expect.objectContaining({ type: 'awaiter_status', status: 'waiting', node_id: a.nodeId }),
      expect.objectContaining({ type: 'awaiter_status', status: 'waiting', reason: null }),
      expect.objectContaining({ type: 'awaiter_status', status: 'running', reason: null }),
    ]);
  });

  it('lets a parent that awaits a child end, or pause for an approval of its own, straight from waiting', async () => {
    const a = await agent();
    const ends = await runningExecution(a);
    await api('POST', `/api/v1/agents/${a.nodeId}/executions/${ends}/awaiter-status`, { status: 'waiting' });
    const done = await api('POST', `/api/v1/executions/${ends}/status`, {
      status: 'succeeded',
      result: { ok: 1 },
    });
    expect(done.body).toMatchObject({ status: 'succeeded', result: { ok: 1 } });
    expect(done.body).not.toHaveProperty('waiting_for');
    // A report after the end changes nothing.
    const late = await api('POST', `/api/v1/agents/${a.nodeId}/executions/${ends}/awaiter-status`, {
      status: 'running',
    });
    expect(late.body.execution_status).toBe('succeeded');

    const pauses = await runningExecution(a);
    await api('POST', `/api/v1/agents/${a.nodeId}/executions/${pauses}/awaiter-status`, {
      status: 'waiting',
    });
    const apr = approvalId('own');
    const asked = await api('POST', `/api/v1/executions/${pauses}/request-approval`, {
      approval_request_id: apr,
      expires_in_hours: 1,
    });
    expect(asked.status).toBeLessThan(300);
    expect((await record(pauses)).waiting_for).toMatchObject({ type: 'approval', approval_request_id: apr });
    // Awaiting a child does not end an approval pause.
    await api('POST', `/api/v1/agents/${a.nodeId}/executions/${pauses}/awaiter-status`, {
      status: 'running',
    });
    expect((await record(pauses)).waiting_for).toMatchObject({ type: 'approval', approval_request_id: apr });
  });

  it('answers 200 with recorded false once the execution log is full (10,000 entries)', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const thousand = Array.from({ length: 1_000 }, (_, n) => ({ message: `line ${n}` }));
    for (let i = 0; i < 10; i++)
      expect((await api('POST', `/api/v1/executions/${id}/logs`, thousand)).status).toBe(202);
    const answer = await api('POST', `/api/v1/agents/${a.nodeId}/executions/${id}/awaiter-status`, {
      status: 'waiting',
    });
    expect(answer).toMatchObject({ status: 200, body: { recorded: false } });
  });

  it('answers 404 for another node or an unknown execution, 400 and 413 for bad bodies', async () => {
    const a = await agent();
    const id = await runningExecution(a);
    const path = `/api/v1/agents/${a.nodeId}/executions/${id}/awaiter-status`;
    expect(
      (await api('POST', `/api/v1/agents/other/executions/${id}/awaiter-status`, { status: 'waiting' }))
        .status,
    ).toBe(404);
    expect(
      (
        await api('POST', `/api/v1/agents/${a.nodeId}/executions/exec_missing/awaiter-status`, {
          status: 'waiting',
        })
      ).status,
    ).toBe(404);
    for (const body of [
      {},
      { status: 'paused' },
      { status: 'waiting', reason: 'x'.repeat(1001) },
      { status: 'waiting', reason: 'a\u0000' },
      '[',
      'null',
    ]) {
      expect((await api('POST', path, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(
      (await api('POST', path, JSON.stringify({ status: 'waiting', reason: 'x'.repeat(70_000) }))).status,
    ).toBe(413);
    expect((await api('GET', `/api/v1/executions/${id}/logs`)).body.entries).toEqual([]);
  });
});
