import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { docsBaseUrl } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { type ApprovalAgent, startApprovalAgent, until } from './approvals-agent.ts';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

let cp: TestControlPlane;
let agent: ExecutionAgent;
const KEY = 'k-overview';
const AUTH = { 'X-API-Key': KEY };

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => (config.api.auth = { apiKey: KEY, skipPaths: [] }),
  });
  agent = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: uniqueNodeId('overview'),
    apiKey: KEY,
    reasoners: {
      ok: { kind: 'answer' },
      broken: { kind: 'error', status: 500, error: 'model quota exceeded' },
    },
    heartbeatMs: 60_000,
  });
  await agent.register();
});

afterAll(async () => {
  await agent?.close();
  await cp?.close();
});

const overview = async () => {
  const answer = await call(cp.base, 'GET', '/api/ui/v1/overview', undefined, AUTH);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  return answer.body;
};

/** The overview as another replica on the same database answers it, run with `config`. */
async function overviewOfReplica(config: typeof cp.config) {
  const replica = createServer(
    createApp({ db: cp.handle.db, config, clock: cp.clock, log: silentLogger() }).callback(),
  );
  await new Promise<void>((done) => replica.listen(0, '127.0.0.1', done));
  try {
    const { port } = replica.address() as { port: number };
    const answer = await call(`http://127.0.0.1:${port}`, 'GET', '/api/ui/v1/overview', undefined, AUTH);
    expect(answer.status).toBe(200);
    return answer.body;
  } finally {
    await new Promise((done) => replica.close(done));
  }
}

/** Inserts a finished execution directly, as the finisher writes one, for figures over time. */
async function seedFinished(status: string, completedAt: Date, durationMs: number | null) {
  const id = `exec_seed_${Math.random().toString(36).slice(2)}`;
  await cp.handle.db('executions').insert({
    execution_id: id,
    run_id: `run_${id}`,
    workflow_id: `wf_${id}`,
    target: 'seeded.fn',
    node_id: 'seeded',
    function_name: 'fn',
    function_type: 'reasoner',
    lane: 'sync',
    status,
    input: JSON.stringify({}),
    error: status === 'succeeded' ? null : `seeded ${status}`,
    available_at: completedAt,
    created_at: new Date(completedAt.getTime() - (durationMs ?? 0)),
    started_at: new Date(completedAt.getTime() - (durationMs ?? 0)),
    completed_at: completedAt,
    duration_ms: durationMs,
    updated_at: completedAt,
  });
  return id;
}

/** The members of a JSON value, recursively (an array by its first item), to compare shapes. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length > 0 ? [shape(value[0])] : [];
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, shape(member)]));
  }
  return value === null ? 'null-or-value' : typeof value === 'number' ? 'null-or-value' : typeof value;
}

describe('GET /api/ui/v1/overview', () => {
  it('is behind the API key like the rest of the API', async () => {
    const answer = await call(cp.base, 'GET', '/api/ui/v1/overview');
    expect(answer.status).toBe(401);
  });

  it('counts what really ran: nodes by state, outcomes, the queue and the newest failure', async () => {
    const before = await overview();
    expect(before.docs_url).toBe(docsBaseUrl());
    expect(before.nodes).toMatchObject({ total: 1, instances: 1 });
    expect(Object.values(before.nodes.by_state).reduce((a: number, b) => a + (b as number), 0)).toBe(1);
    expect(before.executions.last_hour).toMatchObject({
      started: 0,
      finished: 0,
      failure_rate: null,
      p50_ms: null,
    });
    expect(before.executions.per_minute).toHaveLength(60);

    for (let i = 0; i < 3; i++) {
      expect(
        (await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.ok`, { input: { i } }, AUTH)).status,
      ).toBe(200);
    }
    const failed = await call(cp.base, 'POST', `/api/v1/execute/${agent.nodeId}.broken`, { input: {} }, AUTH);
    expect(failed.status).toBe(502);
    // The async lane's loops are not running in this test, so the call stays queued.
    const queued = await call(
      cp.base,
      'POST',
      `/api/v1/execute/async/${agent.nodeId}.ok`,
      { input: {} },
      AUTH,
    );
    expect(queued.status).toBe(202);

    const after = await overview();
    expect(after.executions.queue_depth).toBe(1);
    expect(after.executions.last_hour).toMatchObject({
      started: 5,
      finished: 4,
      succeeded: 3,
      failed: 1,
      cancelled: 0,
      failure_rate: 0.25,
    });
    const current = after.executions.per_minute.at(-1);
    expect(current).toMatchObject({ started: 5, succeeded: 3, failed: 1 });
    expect(Date.parse(current.minute)).toBeLessThanOrEqual(cp.clock.now());
    expect(Date.parse(after.window.to)).toBeGreaterThan(cp.clock.now());
    expect(after.executions.recent_failures[0]).toMatchObject({
      execution_id: failed.body.execution_id,
      target: `${agent.nodeId}.broken`,
      status: 'failed',
      error_message: expect.stringContaining('model quota exceeded'),
    });
  });

  it('keeps to the last hour minute by minute, with percentiles of the durations in it', async () => {
    const start = await overview();
    const windowStart = Date.parse(start.window.from);
    // 100 successes one per minute-slot 10 minutes ago with durations 1..100 ms, and one failure
    // from two hours ago that only the newest-failures list still shows.
    const tenAgo = new Date(cp.clock.now() - 10 * 60_000);
    for (let d = 1; d <= 100; d++) await seedFinished('succeeded', tenAgo, d * 10);
    const old = await seedFinished('timeout', new Date(cp.clock.now() - 2 * 3600_000), 5);
    await seedFinished('cancelled', tenAgo, null);

    const body = await overview();
    const bucket = body.executions.per_minute.find(
      (m: { minute: string }) => Date.parse(m.minute) === Math.floor(tenAgo.getTime() / 60_000) * 60_000,
    );
    expect(bucket).toMatchObject({ succeeded: 100, failed: 0, cancelled: 1 });
    expect(body.executions.last_hour.succeeded).toBe(start.executions.last_hour.succeeded + 100);
    expect(body.executions.last_hour.cancelled).toBe(1);
    expect(Date.parse(body.window.from)).toBe(windowStart);
    // Durations 10..1000 plus the first test's (about 0 ms on the manual clock).
    expect(body.executions.last_hour.p95_ms).toBeGreaterThan(900);
    expect(body.executions.last_hour.p50_ms).toBeGreaterThan(400);
    expect(body.executions.last_hour.p50_ms).toBeLessThan(600);
    expect(body.executions.recent_failures.map((f: { execution_id: string }) => f.execution_id)).toContain(
      old,
    );

    // An hour and a bit later the window has moved past all of it; the failures list stays.
    cp.clock.advance(75 * 60_000);
    const later = await overview();
    expect(later.executions.last_hour).toMatchObject({
      started: 0,
      finished: 0,
      failure_rate: null,
      p50_ms: null,
    });
    expect(later.executions.recent_failures.length).toBeGreaterThanOrEqual(2);
    expect(later.executions.queue_depth).toBe(1);
  });

  it('counts pending approvals and dead-lettered webhooks', async () => {
    const base = await overview();
    // A real agent pauses an execution for a reviewer, as the SDKs do.
    cp.parts.executions.dispatcher.start();
    const approver: ApprovalAgent = await startApprovalAgent({
      controlPlaneUrl: cp.base,
      nodeId: uniqueNodeId('overview-approver'),
      apiKey: KEY,
    });
    await approver.register();
    const ack = await call(
      cp.base,
      'POST',
      `/api/v1/execute/async/${approver.nodeId}.publish`,
      { input: { approval_id: `apr-overview-${process.pid}` } },
      AUTH,
    );
    const id = ack.body.execution_id as string;
    await until('the agent paused the execution', async () =>
      approver.pauses.some((p) => p.executionId === id) ? true : undefined,
    );
    const paused = await overview();
    expect(paused.approvals.pending).toBe(base.approvals.pending + 1);
    expect(paused.executions.waiting).toBe(base.executions.waiting + 1);
    await approver.close();
    await cp.parts.executions.dispatcher.drain();

    const now = new Date(cp.clock.now());
    await cp.handle.db('webhook_deliveries').insert({
      delivery_id: 'whd_overview_1',
      execution_id: 'exec_overview_dead',
      event: 'execution.failed',
      url: 'http://127.0.0.1:9/hook',
      headers: JSON.stringify({}),
      payload: JSON.stringify({}),
      status: 'dead',
      attempts: 5,
      created_at: now,
      dead_at: now,
      updated_at: now,
    });
    const body = await overview();
    expect(body.webhooks.dead_lettered).toBe(base.webhooks.dead_lettered + 1);

    // A second replica on the same database answers the same figures.
    const other = await overviewOfReplica(cp.config);
    expect({ ...other, generated_at: null }).toEqual({ ...body, generated_at: null });
  });

  it('says whether the connector API is on, so a UI offers weight changes only then', async () => {
    expect((await overview()).connector).toEqual({ enabled: false });
    const withConnector = await overviewOfReplica({
      ...cp.config,
      connector: { ...cp.config.connector, token: 'connector-secret' },
    });
    expect(withConnector.connector).toEqual({ enabled: true });
  });

  it('is shown on the API page with every member the real answer has', async () => {
    const page = readFileSync(new URL('../../../content/api/events-and-ui.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## GET /api/ui/v1/overview'));
    const sample = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!);
    expect(shape(sample)).toEqual(shape(await overview()));
  });
});
