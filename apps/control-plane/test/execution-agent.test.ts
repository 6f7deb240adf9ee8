// Self-test of the execution test agents (helpers/execution-agent.ts and its child-process script)
// against a fake control plane, so a failing execution test points at Switchyard, not at the helper.
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  countReceipts,
  type ExecutionAgent,
  type ExecutionAgentOptions,
  type ExecutionAgentProcess,
  parseAgentLog,
  registerUnstartedAgent,
  startExecutionAgent,
  startExecutionAgentProcess,
  type UnstartedAgent,
} from './helpers/execution-agent.ts';

/** One request the fake control plane received. */
interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A node:http server standing in for the control plane: records requests, answers 200 unless told. */
interface FakeControlPlane {
  url: string;
  seen: Seen[];
  /** Decides the status of each answer; default 200. */
  status: (req: Seen) => number;
  callbacks(executionId?: string): Seen[];
  waitFor(match: (req: Seen) => boolean): Promise<Seen>;
  close(): Promise<void>;
}

async function startFakeControlPlane(): Promise<FakeControlPlane> {
  const waiters: Array<{ match: (req: Seen) => boolean; resolve: (req: Seen) => void }> = [];
  const fake: FakeControlPlane = {
    url: '',
    seen: [],
    status: () => 200,
    callbacks: (executionId) =>
      fake.seen.filter(
        (r) =>
          /^\/api\/v1\/executions\/[^/]+\/status$/.test(r.path) &&
          (executionId === undefined || r.path === `/api/v1/executions/${executionId}/status`),
      ),
    waitFor(match) {
      const seen = fake.seen.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      const seen: Seen = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      fake.seen.push(seen);
      res.writeHead(fake.status(seen), { 'content-type': 'application/json' }).end('{}');
      for (const waiter of [...waiters]) {
        if (waiter.match(seen)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(seen);
        }
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  return fake;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

async function setup(options: Partial<ExecutionAgentOptions> = {}) {
  const fake = await startFakeControlPlane();
  cleanup.push(() => fake.close());
  const agent = await startExecutionAgent({
    controlPlaneUrl: fake.url,
    nodeId: 'agent-1',
    heartbeatMs: 20,
    callbackRetry: { retries: 5, backoffMs: 5, maxBackoffMs: 20 },
    ...options,
  });
  cleanup.push(() => agent.close());
  return { fake, agent };
}

/** Context headers as the control plane forwards them. */
function ids(executionId: string, extra: Record<string, string> = {}) {
  return { 'content-type': 'application/json', 'x-run-id': 'run-1', 'x-execution-id': executionId, ...extra };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Resolves once the agent has received `count` execute requests. */
async function receivedCalls(agent: ExecutionAgent, count: number) {
  await vi.waitFor(() => expect(agent.calls.length).toBeGreaterThanOrEqual(count), {
    timeout: 10_000,
    interval: 5,
  });
}

describe('registration and heartbeats', () => {
  it('registers functions with schemas, heartbeats starting, reports ready, then heartbeats ready', async () => {
    const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const { fake, agent } = await setup({
      version: '2.0.0',
      apiKey: 'key-1',
      reasoners: { summarize: { kind: 'answer', inputSchema: schema, tags: ['nlp'] } },
      skills: { word_count: { kind: 'answer' } },
    });
    await agent.register();

    const [register, first, lifecycle] = fake.seen;
    expect(register).toMatchObject({ method: 'POST', path: '/api/v1/nodes/register' });
    expect(register!.body).toEqual({
      id: 'agent-1',
      version: '2.0.0',
      base_url: agent.url,
      deployment_type: 'long_running',
      tags: ['test'],
      metadata: {},
      reasoners: [
        { id: 'summarize', input_schema: schema, output_schema: { type: 'object' }, tags: ['nlp'] },
      ],
      skills: [{ id: 'word_count', input_schema: { type: 'object' }, tags: [] }],
    });
    expect(first).toMatchObject({ path: '/api/v1/nodes/agent-1/heartbeat', body: { status: 'starting' } });
    expect(first!.body.version).toBe('2.0.0');
    expect(Number.isNaN(Date.parse(first!.body.timestamp))).toBe(false);
    expect(lifecycle).toMatchObject({
      path: '/api/v1/nodes/agent-1/lifecycle/status',
      body: { status: 'ready', version: '2.0.0' },
    });
    for (const req of fake.seen) expect(req.headers['x-api-key']).toBe('key-1');

    // Two periodic heartbeats prove the rhythm continues.
    await vi.waitFor(
      () =>
        expect(
          fake.seen.filter((r) => r.path.endsWith('/heartbeat') && r.body.status === 'ready').length,
        ).toBeGreaterThanOrEqual(2),
      { timeout: 10_000 },
    );
  });

  it('keeps heartbeating when a heartbeat is refused, and stops on stopHeartbeats()', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'answer' } } });
    await agent.register();
    // From now on the control plane has "forgotten" the node: the SDK logs and keeps beating.
    fake.status = (req) => (req.path.endsWith('/heartbeat') ? 404 : 200);
    await vi.waitFor(
      () => expect(agent.heartbeats.filter((h) => h.httpStatus === 404).length).toBeGreaterThanOrEqual(2),
      {
        timeout: 10_000,
      },
    );

    agent.stopHeartbeats();
    const beats = () => fake.seen.filter((r) => r.path.endsWith('/heartbeat')).length;
    // A beat in flight at stop time may still land; after that nothing more arrives.
    await new Promise((done) => setTimeout(done, 100));
    const afterStop = beats();
    await new Promise((done) => setTimeout(done, 200));
    expect(beats()).toBe(afterStop);
  });

  it('rejects register() when the control plane refuses the registration', async () => {
    const { fake, agent } = await setup();
    fake.status = (req) => (req.path === '/api/v1/nodes/register' ? 400 : 200);
    await expect(agent.register()).rejects.toThrow(/registration answered 400/);
    expect(fake.seen).toHaveLength(1);
  });

  it('rejects register() when the first heartbeat is refused', async () => {
    const { fake, agent } = await setup();
    fake.status = (req) => (req.path.endsWith('/heartbeat') ? 404 : 200);
    await expect(agent.register()).rejects.toThrow(/first heartbeat answered 404/);
  });

  it('answers GET /health and serves every route under basePath', async () => {
    const { agent } = await setup({ basePath: '/agents/a1/', reasoners: { f: { kind: 'answer' } } });
    expect(agent.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/agents\/a1$/);
    const health = await fetch(`${agent.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', node_id: 'agent-1', version: '1.0.0' });
    expect((await post(`${agent.url}/reasoners/f`, { a: 1 })).body).toEqual({ echo: { a: 1 } });
    const outside = await fetch(`${new URL(agent.url).origin}/health`);
    expect(outside.status).toBe(404);
  });

  it('registers an agent that never started: heartbeats, but nothing listens at its base_url', async () => {
    const fake = await startFakeControlPlane();
    cleanup.push(() => fake.close());
    const ghost: UnstartedAgent = await registerUnstartedAgent({
      controlPlaneUrl: fake.url,
      nodeId: 'ghost',
      heartbeatMs: 20,
      reasoners: { f: { kind: 'answer' } },
    });
    cleanup.push(() => ghost.stopHeartbeats());
    expect(fake.seen[0]!.body).toMatchObject({ id: 'ghost', base_url: ghost.url, reasoners: [{ id: 'f' }] });
    await expect(fetch(`${ghost.url}/health`)).rejects.toThrow();
  });
});

describe('execute behaviours', () => {
  it('answer: 200 with { echo: input } and records the call with its context headers', async () => {
    const { agent } = await setup({ reasoners: { f: { kind: 'answer' } } });
    const headers = ids('exec-1', {
      'x-workflow-id': 'wf-1',
      'x-parent-execution-id': 'exec-0',
      'x-session-id': 's-1',
      'x-actor-id': 'u-1',
      'x-api-key': 'k',
    });
    // Both ids present, yet 'answer' answers 200: it is the synchronous agent.
    expect(await post(`${agent.url}/reasoners/f`, { text: 'hi' }, headers)).toEqual({
      status: 200,
      body: { echo: { text: 'hi' } },
    });
    expect(agent.calls).toHaveLength(1);
    expect(agent.calls[0]).toMatchObject({
      fn: 'f',
      kind: 'reasoner',
      executionId: 'exec-1',
      runId: 'run-1',
      input: { text: 'hi' },
      outcome: { status: 200 },
      headers: {
        'x-run-id': 'run-1',
        'x-execution-id': 'exec-1',
        'x-workflow-id': 'wf-1',
        'x-parent-execution-id': 'exec-0',
        'x-session-id': 's-1',
        'x-actor-id': 'u-1',
        'x-api-key': 'k',
      },
    });
    expect(agent.receivedCount('exec-1')).toBe(1);
    expect(agent.receivedCount('exec-2')).toBe(0);
  });

  it('answer: a custom result sees the input and context; skills are served at /skills/{id}', async () => {
    const { agent } = await setup({
      skills: {
        count: {
          kind: 'answer',
          result: (input: { text: string }, ctx) => ({
            words: input.text.split(' ').length,
            by: ctx.executionId,
          }),
        },
        fixed: { kind: 'answer', result: { value: 7 } },
        broken: {
          kind: 'answer',
          result: () => {
            throw new Error('boom');
          },
        },
      },
    });
    expect((await post(`${agent.url}/skills/count`, { text: 'a b c' }, ids('e-9'))).body).toEqual({
      words: 3,
      by: 'e-9',
    });
    expect((await post(`${agent.url}/skills/fixed`, {})).body).toEqual({ value: 7 });
    expect(await post(`${agent.url}/skills/broken`, {})).toEqual({ status: 500, body: { error: 'boom' } });
    expect(agent.calls.map((c) => c.kind)).toEqual(['skill', 'skill', 'skill']);
    // The reasoner route does not serve a skill.
    expect((await post(`${agent.url}/reasoners/count`, {})).status).toBe(404);
  });

  it('unknown function: 404 {error}, still recorded as received', async () => {
    const { agent } = await setup({ reasoners: { f: { kind: 'answer' } } });
    const answer = await post(`${agent.url}/reasoners/nope`, {}, ids('exec-x'));
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatch(/nope/);
    expect(agent.receivedCount('exec-x')).toBe(1);
  });

  it('accept: 202 processing, then a succeeded callback with result, duration_ms and completed_at', async () => {
    const { fake, agent } = await setup({
      apiKey: 'key-2',
      reasoners: { f: { kind: 'accept', callbackDelayMs: 10, result: (input: unknown) => ({ got: input }) } },
    });
    expect(await post(`${agent.url}/reasoners/f`, { n: 1 }, ids('exec-a'))).toEqual({
      status: 202,
      body: { status: 'processing', execution_id: 'exec-a' },
    });
    await agent.settled();
    const [callback] = fake.callbacks('exec-a');
    expect(fake.callbacks()).toHaveLength(1);
    expect(callback!.method).toBe('POST');
    expect(callback!.headers['x-api-key']).toBe('key-2');
    expect(callback!.body).toMatchObject({
      execution_id: 'exec-a',
      status: 'succeeded',
      result: { got: { n: 1 } },
    });
    expect(callback!.body.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Number.isNaN(Date.parse(callback!.body.completed_at))).toBe(false);
    expect(agent.callbacks).toEqual([
      { executionId: 'exec-a', status: 'succeeded', httpStatus: 200, attempt: 1 },
    ]);
  });

  it('accept: without X-Run-ID and X-Execution-ID it answers 200 like answer, and calls nobody back', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'accept' } } });
    expect(await post(`${agent.url}/reasoners/f`, { n: 2 }, { 'x-execution-id': 'only-exec' })).toEqual({
      status: 200,
      body: { echo: { n: 2 } },
    });
    await agent.settled();
    expect(fake.callbacks()).toEqual([]);
  });

  it('accept: retries a refused callback with backoff until it is taken', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'accept' } } });
    let refusals = 2;
    fake.status = (req) => (req.path.endsWith('/status') && refusals-- > 0 ? 503 : 200);
    await post(`${agent.url}/reasoners/f`, {}, ids('exec-r'));
    await agent.settled();
    expect(agent.callbacks.map((c) => [c.httpStatus, c.attempt])).toEqual([
      [503, 1],
      [503, 2],
      [200, 3],
    ]);
    expect(fake.callbacks('exec-r').map((r) => r.body.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });

  it('accept: gives up after `retries` retries, and counts an unreachable control plane as a failure', async () => {
    const { fake, agent } = await setup({
      reasoners: { f: { kind: 'accept' } },
      callbackRetry: { retries: 2, backoffMs: 5 },
    });
    fake.status = () => 500;
    await post(`${agent.url}/reasoners/f`, {}, ids('exec-g'));
    await agent.settled();
    expect(agent.callbacks.map((c) => c.httpStatus)).toEqual([500, 500, 500]);

    await fake.close();
    await post(`${agent.url}/reasoners/f`, {}, ids('exec-h'));
    await agent.settled();
    expect(agent.callbacks.filter((c) => c.executionId === 'exec-h').map((c) => c.httpStatus)).toEqual([
      'error',
      'error',
      'error',
    ]);
  });

  it('slow: answers 200 after its delay', async () => {
    const { agent } = await setup({ reasoners: { f: { kind: 'slow', delayMs: 30 } } });
    expect(await post(`${agent.url}/reasoners/f`, { s: 1 }, ids('exec-s'))).toEqual({
      status: 200,
      body: { echo: { s: 1 } },
    });
  });

  it('slow: has not answered while other calls are served, and stops waiting when the caller aborts', async () => {
    const { agent } = await setup({
      reasoners: { slow: { kind: 'slow', delayMs: 60_000 }, quick: { kind: 'answer' } },
    });
    const abort = new AbortController();
    const slowCall = post(`${agent.url}/reasoners/slow`, {}, ids('exec-slow'), abort.signal).catch((e) => e);
    await receivedCalls(agent, 1);
    expect((await post(`${agent.url}/reasoners/quick`, {})).status).toBe(200);
    expect(agent.calls[0]!.outcome).toBeUndefined();

    abort.abort();
    expect(await slowCall).toBeInstanceOf(Error);
    await vi.waitFor(() => expect(agent.calls[0]!.outcome).toBe('aborted'), { timeout: 10_000 });
  });

  it('error: the given status with {error, error_details}; 500 by default', async () => {
    const { agent } = await setup({
      reasoners: {
        bad: { kind: 'error', status: 422, error: 'invalid text', details: { field: 'text' } },
        plain: { kind: 'error' },
      },
    });
    expect(await post(`${agent.url}/reasoners/bad`, {}, ids('exec-e'))).toEqual({
      status: 422,
      body: { error: 'invalid text', error_details: { field: 'text' } },
    });
    expect(await post(`${agent.url}/reasoners/plain`, {})).toEqual({
      status: 500,
      body: { error: 'agent error' },
    });
  });

  it('fail-callback: 202, then a failed callback with error and error_details; 500 without ids', async () => {
    const { fake, agent } = await setup({
      reasoners: { f: { kind: 'fail-callback', error: 'model overloaded', details: { retry: true } } },
    });
    expect((await post(`${agent.url}/reasoners/f`, {}, ids('exec-f'))).status).toBe(202);
    await agent.settled();
    expect(fake.callbacks('exec-f').map((r) => r.body)).toEqual([
      expect.objectContaining({
        execution_id: 'exec-f',
        status: 'failed',
        error: 'model overloaded',
        error_details: { retry: true },
      }),
    ]);
    expect(fake.callbacks('exec-f')[0]!.body).not.toHaveProperty('result');
    expect(await post(`${agent.url}/reasoners/f`, {})).toEqual({
      status: 500,
      body: { error: 'model overloaded', error_details: { retry: true } },
    });
  });

  it('progress: 202, a running callback with progress 50, then succeeded', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'progress' } } });
    expect((await post(`${agent.url}/reasoners/f`, { p: 1 }, ids('exec-p'))).status).toBe(202);
    await agent.settled();
    const bodies = fake.callbacks('exec-p').map((r) => r.body);
    expect(bodies).toEqual([
      { execution_id: 'exec-p', status: 'running', progress: 50 },
      expect.objectContaining({ status: 'succeeded', result: { echo: { p: 1 } } }),
    ]);
  });

  it('crash: reads the request, then drops the connection without an answer', async () => {
    const { agent } = await setup({ reasoners: { f: { kind: 'crash' } } });
    await expect(post(`${agent.url}/reasoners/f`, { c: 1 }, ids('exec-c'))).rejects.toThrow();
    expect(agent.calls[0]).toMatchObject({ executionId: 'exec-c', input: { c: 1 }, outcome: 'crashed' });
    // The agent itself is still up (only the call died).
    expect((await fetch(`${agent.url}/health`)).status).toBe(200);
  });
});

describe('cancel', () => {
  it('hang: never answers; a cancel is answered 200, reported cancelled, then the request is released', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'hang' }, quick: { kind: 'answer' } } });
    const hanging = post(`${agent.url}/reasoners/f`, {}, ids('exec-hang'));
    await receivedCalls(agent, 1);
    expect((await post(`${agent.url}/reasoners/quick`, {})).status).toBe(200);
    expect(agent.calls[0]!.outcome).toBeUndefined();

    expect(await post(`${agent.url}/_internal/executions/exec-hang/cancel`, {})).toEqual({
      status: 200,
      body: { execution_id: 'exec-hang', status: 'cancelled' },
    });
    expect(await hanging).toEqual({
      status: 409,
      body: { error: 'execution cancelled', error_details: { execution_id: 'exec-hang' } },
    });
    // The cancelled callback was delivered before the held request was released.
    expect(fake.callbacks('exec-hang').map((r) => r.body.status)).toEqual(['cancelled']);
    expect(agent.cancels).toEqual(['exec-hang']);
  });

  it('accept: a cancel before the callback replaces succeeded with cancelled', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'accept', callbackDelayMs: 60_000 } } });
    expect((await post(`${agent.url}/reasoners/f`, {}, ids('exec-ca'))).status).toBe(202);
    expect((await post(`${agent.url}/_internal/executions/exec-ca/cancel`, {})).body.status).toBe(
      'cancelled',
    );
    await agent.settled();
    expect(fake.callbacks('exec-ca').map((r) => r.body)).toEqual([
      expect.objectContaining({ execution_id: 'exec-ca', status: 'cancelled' }),
    ]);
  });

  it('a cancel for an execution that is not pending is recorded and answered 200, with no callback', async () => {
    const { fake, agent } = await setup({ reasoners: { f: { kind: 'accept' } } });
    await post(`${agent.url}/reasoners/f`, {}, ids('exec-done'));
    await agent.settled();
    expect(await post(`${agent.url}/_internal/executions/exec-done/cancel`, {})).toEqual({
      status: 200,
      body: { execution_id: 'exec-done', status: 'not_running' },
    });
    await agent.settled();
    expect(fake.callbacks('exec-done').map((r) => r.body.status)).toEqual(['succeeded']);
    expect(agent.cancels).toEqual(['exec-done']);
  });

  it('close() drops pending callbacks and releases held requests', async () => {
    const { fake, agent } = await setup({
      reasoners: { later: { kind: 'accept', callbackDelayMs: 60_000 }, hang: { kind: 'hang' } },
    });
    await post(`${agent.url}/reasoners/later`, {}, ids('exec-l'));
    const hanging = post(`${agent.url}/reasoners/hang`, {}, ids('exec-hh')).catch((e) => e);
    await receivedCalls(agent, 2);
    await agent.close();
    expect(await hanging).toBeInstanceOf(Error);
    expect(fake.callbacks()).toEqual([]);
  });
});

describe('child-process agent', () => {
  async function startProcess(
    fake: FakeControlPlane,
    extra: Partial<Parameters<typeof startExecutionAgentProcess>[0]> = {},
  ): Promise<ExecutionAgentProcess> {
    const child = await startExecutionAgentProcess({
      controlPlaneUrl: fake.url,
      nodeId: 'child-1',
      heartbeatMs: 50,
      callbackRetry: { retries: 3, backoffMs: 5 },
      reasoners: {
        answer: { kind: 'answer' },
        accept: { kind: 'accept', result: { done: true } },
        crash: { kind: 'crash' },
      },
      ...extra,
    });
    cleanup.push(() => child.kill());
    return child;
  }

  it('registers, answers 200 and 202 + callback, and logs every receipt on stdout', async () => {
    const fake = await startFakeControlPlane();
    cleanup.push(() => fake.close());
    const child = await startProcess(fake);
    expect(fake.seen.slice(0, 3).map((r) => [r.path, r.body.status])).toEqual([
      ['/api/v1/nodes/register', undefined],
      ['/api/v1/nodes/child-1/heartbeat', 'starting'],
      ['/api/v1/nodes/child-1/lifecycle/status', 'ready'],
    ]);
    expect(fake.seen[0]!.body).toMatchObject({ id: 'child-1', base_url: child.url });

    expect(await post(`${child.url}/reasoners/answer`, { x: 1 }, ids('exec-1'))).toEqual({
      status: 200,
      body: { echo: { x: 1 } },
    });
    expect((await post(`${child.url}/reasoners/accept`, {}, ids('exec-2'))).status).toBe(202);
    const callback = await fake.waitFor((r) => r.path === '/api/v1/executions/exec-2/status');
    expect(callback.body).toMatchObject({ status: 'succeeded', result: { done: true } });
    await child.waitFor((e) => e.event === 'callback' && e.execution_id === 'exec-2');

    expect(child.receivedCount('exec-1')).toBe(1);
    expect(child.receivedCount('exec-2')).toBe(1);
    expect(child.events.find((e) => e.event === 'received' && e.execution_id === 'exec-1')).toMatchObject({
      fn: 'answer',
      kind: 'reasoner',
      pid: child.process.pid,
    });
    await child.stop();
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('crash: logs the receipt, then the process SIGKILLs itself mid-call', async () => {
    const fake = await startFakeControlPlane();
    cleanup.push(() => fake.close());
    const dir = await mkdtemp(join(tmpdir(), 'execution-agent-'));
    const logFile = join(dir, 'agent.log');
    const child = await startProcess(fake, { logFile });

    await expect(post(`${child.url}/reasoners/crash`, {}, ids('exec-c'))).rejects.toThrow();
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(child.receivedCount('exec-c')).toBe(1);

    // A second process (a restart) appends to the same log: receipts add up across both.
    const again = await startProcess(fake, { logFile });
    await expect(post(`${again.url}/reasoners/crash`, {}, ids('exec-c'))).rejects.toThrow();
    await again.exited;
    const events = parseAgentLog(await readFile(logFile, 'utf8'));
    expect(countReceipts(events, 'exec-c')).toBe(2);
    expect(events.filter((e) => e.event === 'listening')).toHaveLength(2);
  });

  it('register: false only listens; a refused registration makes start fail with the reason', async () => {
    const fake = await startFakeControlPlane();
    cleanup.push(() => fake.close());
    const quiet = await startProcess(fake, { register: false });
    expect((await fetch(`${quiet.url}/health`)).status).toBe(200);
    expect(fake.seen).toEqual([]);

    fake.status = () => 409;
    await expect(startProcess(fake)).rejects.toThrow(/registration answered 409/);
  });
});
