/**
 * Human approvals: how a decision reaches the agent (the callback outbox: retries,
 * leases, a crashed replica, two replicas at once, an execution that ends first), the expiry of
 * an unanswered request, and signed decisions. Real agents on 127.0.0.1; the deliverer and the
 * sweep are driven by the test with the control plane's clock.
 */
import { createHmac } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCallbackDeliverer } from '../src/modules/approvals/callbacks.ts';
import { createApprovalService } from '../src/modules/approvals/service.ts';
import { createInProcessEventBus } from '../src/platform/events/index.ts';
import { type ApprovalAgent, startApprovalAgent, until } from './approvals-agent.ts';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { openSse } from './helpers/sse.ts';

let cp: TestControlPlane;
const agents: ApprovalAgent[] = [];
let ids = 0;

beforeAll(async () => {
  cp = await startTestControlPlane();
  cp.parts.executions.dispatcher.start();
});

afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
  await cp.parts.executions.dispatcher.drain();
});

afterAll(async () => {
  await cp?.close();
});

function approvalId(prefix: string): string {
  ids += 1;
  return `${prefix}-${process.pid}-${ids}`;
}

async function agent(on: TestControlPlane = cp, failCallbacks = 0): Promise<ApprovalAgent> {
  const started = await startApprovalAgent({
    controlPlaneUrl: on.base,
    nodeId: uniqueNodeId('deliver'),
    failCallbacks,
  });
  agents.push(started);
  await started.register();
  return started;
}

async function paused(on: ApprovalAgent, input: Record<string, unknown>, body: Record<string, unknown> = {}) {
  const ack = await call(cp.base, 'POST', `/api/v1/execute/async/${on.nodeId}.publish`, { input, ...body });
  expect(ack.status).toBe(202);
  const id = ack.body.execution_id as string;
  await until('the agent paused the execution', async () =>
    on.pauses.some((p) => p.executionId === id) ? true : undefined,
  );
  return id;
}

const status = async (id: string, apr: string) =>
  (await call(cp.base, 'GET', `/api/v1/executions/${id}/approval-status?approval_request_id=${apr}`)).body;
const record = async (id: string) => (await call(cp.base, 'GET', `/api/v1/executions/${id}`)).body;
const decide = (apr: string, decision = 'approved', feedback?: string) =>
  call(cp.base, 'POST', '/api/v1/webhooks/approval', { approval_request_id: apr, decision, feedback });

describe('delivery of the decision to the agent', () => {
  it('retries after the agent failed, 1 s later, and then delivers once', async () => {
    const a = await agent(cp, 1);
    const apr = approvalId('retry');
    const id = await paused(a, { approval_id: apr });
    await decide(apr, 'approved', 'go');
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks.map((c) => c.answered)).toEqual([500]);
    const failed = await status(id, apr);
    expect(failed.callback).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 500,
      last_error: 'the agent answered 500',
      next_attempt_at: new Date(cp.clock.now() + 1_000).toISOString(),
    });
    // Not due yet: nothing is sent.
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(1);
    cp.clock.advance(1_000);
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks.map((c) => c.answered)).toEqual([500, 200]);
    expect((await status(id, apr)).callback).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_error: null,
    });
    await until('the agent reported', async () =>
      (await record(id)).status === 'succeeded' ? true : undefined,
    );
  });

  it('doubles the wait up to approvals.callback_max_backoff while the agent keeps failing', async () => {
    const a = await agent(cp, 100);
    const apr = approvalId('backoff');
    const id = await paused(a, { approval_id: apr });
    await decide(apr);
    const waits: number[] = [];
    for (let i = 0; i < 11; i++) {
      await cp.parts.approvals.callbacks.runOnce();
      const now = await status(id, apr);
      const wait = Date.parse(now.callback.next_attempt_at) - cp.clock.now();
      waits.push(wait);
      cp.clock.advance(wait);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * 1_000));
    expect(a.callbacks).toHaveLength(11);
    // The execution ends (cancelled): the delivery is given up, and the agent hears nothing more.
    await call(cp.base, 'POST', `/api/v1/executions/${id}/cancel`);
    await cp.parts.approvals.callbacks.runOnce();
    const gaveUp = await status(id, apr);
    expect(gaveUp.callback).toMatchObject({ status: 'abandoned', attempts: 11, next_attempt_at: null });
    expect(gaveUp.callback.last_error).toContain('the execution ended (cancelled)');
    cp.clock.advance(600_000);
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(11);
  });

  it('does not deliver a decision again once the execution has asked anew: the agent had it', async () => {
    // The agent took decision A (its 2xx was lost with a replica, say) and paused again for B. A
    // repeat of A now would be read by the SDKs as the answer to B: they resolve a pause whose
    // approval id they do not know by its execution id.
    const a = await agent();
    const first = approvalId('moved-on');
    const id = await paused(a, { approval_id: first, callback: false });
    // A's decision, to a callback_url, as if the agent had asked with one.
    await cp.handle
      .db('approval_requests')
      .where({ approval_request_id: first })
      .update({
        callback_url: `${a.url}/webhooks/approval`,
      });
    await decide(first, 'request_changes', 'shorter');
    cp.clock.advance(1_000);
    const second = approvalId('moved-on');
    const again = await call(cp.base, 'POST', `/api/v1/executions/${id}/request-approval`, {
      approval_request_id: second,
      callback_url: `${a.url}/webhooks/approval`,
    });
    expect(again.status).toBe(200);
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toEqual([]);
    expect((await status(id, first)).callback).toMatchObject({ status: 'abandoned', attempts: 0 });
    expect((await record(id)).status).toBe('waiting');
  });

  it('claims again a delivery whose replica crashed mid-attempt, once its lease expires', async () => {
    const a = await agent();
    const apr = approvalId('crash');
    const id = await paused(a, { approval_id: apr });
    await decide(apr);
    // Another replica claimed it and died: its lease runs for callback_timeout + 5 s.
    const leaseEnds = new Date(cp.clock.now() + 15_000);
    await cp.handle.db('approval_requests').where({ approval_request_id: apr }).update({
      callback_status: 'delivering',
      callback_leased_by: 'crashed-replica',
      callback_lease_expires_at: leaseEnds,
    });
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(0);
    expect((await status(id, apr)).callback.status).toBe('delivering');
    cp.clock.set(leaseEnds.getTime());
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks).toHaveLength(1);
    expect((await status(id, apr)).callback).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('is delivered once when two replicas look for due deliveries at the same moment', async () => {
    const a = await agent();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const apr = approvalId('pair');
      await paused(a, { approval_id: apr });
      await decide(apr);
      made.push(apr);
    }
    const other = createCallbackDeliverer({
      db: cp.handle.db,
      events: createInProcessEventBus(),
      clock: cp.clock,
      log: pino({ level: 'silent' }),
      settings: cp.config.approvals,
      replicaId: 'second-replica',
      waiting: cp.parts.executions.waiting,
    });
    await Promise.all([cp.parts.approvals.callbacks.runOnce(), other.runOnce()]);
    await other.stop();
    const received = a.callbacks.map((c) => c.body.approval_request_id);
    expect(received.sort()).toEqual([...made].sort());
  });
});

describe('expiry', () => {
  it('ends the execution as timeout, streams approval_resolved then completed, tells the agent, and triggers the webhook', async () => {
    const a = await agent();
    const stream = await openSse(`${cp.base}/api/ui/v1/executions/events`);
    await stream.next((f) => f.comment.includes('connected'));
    const apr = approvalId('expire');
    const hook = 'http://127.0.0.1:9/hook';
    const id = await paused(a, { approval_id: apr, hours: 0.5 }, { webhook: { url: hook } });
    cp.clock.advance(30 * 60_000 - 1);
    expect(await cp.parts.approvals.sweep.runOnce()).toBe(0);
    expect((await record(id)).status).toBe('waiting');
    cp.clock.advance(1);
    expect(await cp.parts.approvals.sweep.runOnce()).toBe(1);
    // A second pass (another replica) finds nothing left to do.
    expect(await cp.parts.approvals.sweep.runOnce()).toBe(0);

    const ended = await record(id);
    expect(ended).toMatchObject({ status: 'timeout', error: `approval request ${apr} expired` });
    expect(ended).not.toHaveProperty('waiting_for');
    expect(await status(id, apr)).toMatchObject({ status: 'expired', decision: 'expired', feedback: null });

    // The one delivery made after the end: the agent hears that it expired.
    await cp.parts.approvals.callbacks.runOnce();
    expect(a.callbacks.map((c) => c.body)).toEqual([
      { execution_id: id, approval_request_id: apr, decision: 'expired', feedback: null },
    ]);
    expect((await status(id, apr)).callback.status).toBe('delivered');

    const frames = [];
    while (frames.length < 4) {
      frames.push(await stream.next((f) => f.event !== '' && JSON.parse(f.data).execution_id === id));
    }
    stream.close();
    expect(frames.map((f) => f.event)).toEqual([
      'execution.started',
      'execution.waiting',
      'execution.approval_resolved',
      'execution.completed',
    ]);
    expect(JSON.parse(frames[2]!.data)).toMatchObject({
      decision: 'expired',
      status: 'timeout',
      approval_request_id: apr,
    });
    expect(JSON.parse(frames[3]!.data)).toMatchObject({
      status: 'timeout',
      error_message: `approval request ${apr} expired`,
    });

    // The terminal path's webhook delivery was written, as for any timeout.
    const deliveries = await call(cp.base, 'GET', `/api/ui/v1/executions/${id}/webhook/deliveries`);
    expect(deliveries.body.deliveries).toHaveLength(1);
    expect(deliveries.body.deliveries[0]).toMatchObject({ event: 'execution.failed', url: hook });

    // A decision after the expiry is refused.
    const late = await decide(apr);
    expect(late).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(late.body.detail).toContain('expired');
  });

  it('refuses a decision that comes after expires_at even before the sweep ran, and expires the request then', async () => {
    const a = await agent();
    const apr = approvalId('late');
    const id = await paused(a, { approval_id: apr, hours: 1 });
    cp.clock.advance(3_600_000);
    const late = await decide(apr);
    expect(late.status).toBe(409);
    expect(await status(id, apr)).toMatchObject({ status: 'expired' });
    expect((await record(id)).status).toBe('timeout');
  });

  it('expires each request once when two replicas sweep at the same moment', async () => {
    const a = await agent();
    const made: Array<{ id: string; apr: string }> = [];
    for (let i = 0; i < 4; i++) {
      const apr = approvalId('sweep');
      made.push({ id: await paused(a, { approval_id: apr, hours: 1 }), apr });
    }
    cp.clock.advance(3_600_000);
    const other = createApprovalService({
      db: cp.handle.db,
      clock: cp.clock,
      log: pino({ level: 'silent' }),
      waiting: cp.parts.executions.waiting,
      logs: cp.parts.executions.logs,
      settings: cp.config.approvals,
      wakeCallbacks: () => {},
    });
    const counts = await Promise.all([cp.parts.approvals.sweep.runOnce(), other.expireDue()]);
    // Rows one replica held may be left to the next pass; nothing is expired twice.
    const again = await cp.parts.approvals.sweep.runOnce();
    expect(counts[0] + counts[1] + again).toBe(4);
    for (const { id, apr } of made) {
      expect((await record(id)).status).toBe('timeout');
      expect((await status(id, apr)).status).toBe('expired');
      const completed = (
        await cp.handle.db('event_log').where({ stream: 'executions', event: 'execution.completed' })
      )
        .map((row: any) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload))
        .filter((payload: any) => payload.execution_id === id);
      expect(completed).toHaveLength(1);
    }
  });

  it('gives up telling the agent of an expiry after a day', async () => {
    const a = await agent(cp, 1_000);
    const apr = approvalId('gone');
    const id = await paused(a, { approval_id: apr, hours: 1 });
    cp.clock.advance(3_600_000);
    await cp.parts.approvals.sweep.runOnce();
    await cp.parts.approvals.callbacks.runOnce();
    expect((await status(id, apr)).callback).toMatchObject({ status: 'pending', attempts: 1 });
    cp.clock.advance(24 * 3_600_000 + 1);
    await cp.parts.approvals.callbacks.runOnce();
    const given = await status(id, apr);
    expect(given.callback).toMatchObject({ status: 'abandoned', attempts: 1 });
    expect(given.callback.last_error).toContain('expiry notice');
  });
});

describe('signed decisions (approvals.webhook_secret)', () => {
  const SECRET = 'approval-s3cret';
  const KEY = 'signed-key';
  let signed: TestControlPlane;

  beforeAll(async () => {
    signed = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.approvals.webhookSecret = SECRET;
        config.api.auth = { apiKey: KEY, skipPaths: [] };
      },
    });
    signed.clock.set(cp.clock.now());
  });

  afterAll(async () => {
    await signed?.close();
  });

  function signedHeaders(body: string, timestamp = Math.floor(signed.clock.now() / 1000), secret = SECRET) {
    const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
    return {
      'content-type': 'application/json',
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Signature': `sha256=${signature}`,
    };
  }

  it('takes a well-signed decision without the API key, and refuses a bad, stale or missing signature with 401', async () => {
    signed.clock.set(cp.clock.now());
    const a = await agent();
    const apr = approvalId('signed');
    const id = await paused(a, { approval_id: apr });
    const body = JSON.stringify({ approval_request_id: apr, decision: 'approved', feedback: 'signed off' });
    const post = (headers: Record<string, string>, text = body) =>
      call(signed.base, 'POST', '/api/v1/webhooks/approval', text, headers);
    const now = Math.floor(signed.clock.now() / 1000);
    const refused: Array<[string, Record<string, string>, string?]> = [
      ['no headers', { 'content-type': 'application/json' }],
      ['only the API key', { 'content-type': 'application/json', 'X-API-Key': KEY }],
      ['wrong secret', signedHeaders(body, now, 'wrong')],
      ['another body', signedHeaders(body.replace('signed off', 'forged'))],
      ['stale (6 min old)', signedHeaders(body, now - 360)],
      ['from the future (6 min)', signedHeaders(body, now + 360)],
      ['not unix seconds', { ...signedHeaders(body), 'X-Service-Timestamp': '2026-01-01T00:00:00Z' }],
      ['no signature', { 'content-type': 'application/json', 'X-Service-Timestamp': String(now) }],
      ['signature without prefix', { ...signedHeaders(body), 'X-Service-Signature': 'deadbeef' }],
    ];
    for (const [what, headers] of refused) {
      const answer = await post(headers);
      expect(answer.status, what).toBe(401);
      expect(answer.body.code, what).toBe('unauthorized');
    }
    expect((await record(id)).status).toBe('waiting');
    // Within the tolerance (5 min) either way, and no API key needed: the signature authenticates.
    const ok = await post(signedHeaders(body, now - 299));
    expect(ok).toMatchObject({
      status: 200,
      body: { status: 'approved', feedback: 'signed off', execution_status: 'running' },
    });
    // Every other route still needs the key.
    expect((await call(signed.base, 'GET', '/api/v1/approvals')).status).toBe(401);
    // A bad body under a good signature is still a 400.
    const bad = '{"approval_request_id":"x","decision":"maybe"}';
    expect((await post(signedHeaders(bad), bad)).status).toBe(400);
  });
});
