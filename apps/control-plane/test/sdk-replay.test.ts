/**
 * Every request kind the platform's TypeScript SDK sends, as recorded from a real agent
 * (test/fixtures/sdk-requests.jsonl, one example of each), replayed in order against a real
 * control plane and answered as the SDK needs. The recorded execution and run ids are rewritten
 * to executions this test creates on two agents standing in for the recorded ones (real HTTP
 * servers that answer calls with 202, as SDK agents do); everything else is sent as recorded.
 * With an API key, the key goes on every request, as the SDK sends it when the user puts it in
 * `defaultHeaders` (see the docs page on connecting SDK agents).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';

interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
}

const RECORDED_TEXT = readFileSync(new URL('./fixtures/sdk-requests.jsonl', import.meta.url), 'utf8');
const RECORDED: Recorded[] = RECORDED_TEXT.trim()
  .split('\n')
  .map((line) => JSON.parse(line));
/** The raw bytes of a recorded body, as the SDK serialised it. */
const RAW_BODIES = RECORDED_TEXT.trim()
  .split('\n')
  .map((line) => {
    const at = line.indexOf(',"body":');
    return at < 0 ? undefined : line.slice(at + ',"body":'.length, -1);
  });

/** A stand-in for one recorded agent: answers every call with 202, as SDK agents do. */
async function standInAgent(nodeId: string) {
  const calls: Array<{ path: string; executionId: string | undefined }> = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '';
      if (url === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'healthy', node_id: nodeId, version: '1.0.0' }));
        return;
      }
      const executionId = req.headers['x-execution-id'] as string | undefined;
      calls.push({ path: url, executionId });
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'processing', execution_id: executionId }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { nodeId, url, calls, close: () => new Promise<void>((done) => server.close(() => done())) };
}

type Agent = Awaited<ReturnType<typeof standInAgent>>;

describe.each([
  { mode: 'without an API key', apiKey: undefined },
  { mode: 'with SERVICE_API_KEY (the key also in defaultHeaders)', apiKey: 'sdk-replay-key' },
])('the recorded SDK requests, $mode', ({ apiKey }) => {
  let cp: TestControlPlane;
  let harness: Agent;
  let peer: Agent;
  const auth: Record<string, string> = apiKey ? { 'X-API-Key': apiKey } : {};
  /** Recorded id → the id of what this test created in its place. */
  const ids = new Map<string, string>();

  beforeAll(async () => {
    cp = await startTestControlPlane({
      config: (config) => {
        config.api.auth.apiKey = apiKey;
        config.executionQueue.syncTimeoutMs = 20_000;
      },
    });
    cp.parts.executions.dispatcher.start();
    harness = await standInAgent('sdk-harness');
    peer = await standInAgent('sdk-peer');
  });

  afterAll(async () => {
    await harness?.close();
    await peer?.close();
    await cp?.close();
  });

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(cp.base, method, path, body, { ...auth, ...headers });

  /** Rewrites recorded ids and agent addresses in a request to this run's. */
  function rewrite<T>(value: T): T {
    let text = JSON.stringify(value);
    for (const [recorded, created] of [...ids].sort((a, b) => b[0].length - a[0].length)) {
      text = text.split(recorded).join(created);
    }
    text = text
      .split('http://127.0.0.1:8791')
      .join(harness.url)
      .split('http://127.0.0.1:8792')
      .join(peer.url);
    return JSON.parse(text) as T;
  }

  /** Waits until the stand-in agent holds the execution (it answered 202 to the control plane). */
  async function taken(agent: Agent, executionId: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!agent.calls.some((c) => c.executionId === executionId)) {
      if (Date.now() > deadline) throw new Error(`${agent.nodeId} never received ${executionId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** An execution of the harness running on it, standing in for a recorded one. */
  async function stand(recorded: string, fn: string, headers: Record<string, string> = {}) {
    const ack = await api('POST', `/api/v1/execute/async/sdk-harness.${fn}`, { input: {} }, headers);
    expect(ack.status).toBe(202);
    ids.set(recorded, ack.body.execution_id);
    await taken(harness, ack.body.execution_id);
    return ack.body;
  }

  async function send(index: number) {
    const line = rewrite(RECORDED[index] as Recorded);
    const headers: Record<string, string> = { ...line.headers, ...auth };
    delete headers['content-type'];
    const query = new URLSearchParams(line.query).toString();
    return api(line.method, `${line.path}${query ? `?${query}` : ''}`, line.body, headers);
  }

  const index = (method: string, path: string | RegExp, nth = 0) => {
    const found = RECORDED.flatMap((r, i) =>
      r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)) ? [i] : [],
    );
    const at = found[nth];
    if (at === undefined) throw new Error(`no recorded ${method} ${path} #${nth}`);
    return at;
  };

  it('registers both recorded agents from their recorded bytes, every reasoner with accepts_webhook "warn"', async () => {
    for (const nth of [0, 1]) {
      const at = index('POST', '/api/v1/nodes/register', nth);
      const exact = await fetch(`${cp.base}/api/v1/nodes/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: RAW_BODIES[at],
      });
      expect(exact.status, await exact.clone().text()).toBe(201);
      const registered = await exact.json();
      expect(
        (registered as { reasoners: Array<{ accepts_webhook: unknown }> }).reasoners.every(
          (r) => r.accepts_webhook === 'warn',
        ),
      ).toBe(true);
      // The same registration pointing at this run's stand-in agent replaces it.
      const again = await send(at);
      expect(again.status).toBe(200);
    }
    expect((await send(index('GET', '/api/v1/health'))).status).toBe(200);
    // did/register is the platform's DID feature, which Switchyard does not serve; the SDK
    // tolerates the 404 and goes on.
    const did = await send(index('POST', '/api/v1/did/register'));
    expect(did.status).toBe(404);
    expect(did.headers.get('content-type')).toMatch(/problem\+json/);
    const beat = await send(index('POST', /^\/api\/v1\/nodes\/[^/]+\/heartbeat$/));
    expect(beat.status).toBe(200);
    // Then every 30 s, as `ready`, for each agent: the same request kind with the next status.
    const recorded = RECORDED[index('POST', /^\/api\/v1\/nodes\/[^/]+\/heartbeat$/)] as Recorded;
    for (const node of ['sdk-harness', 'sdk-peer']) {
      const ready = await api('POST', `/api/v1/nodes/${node}/heartbeat`, {
        ...(recorded.body as object),
        status: 'ready',
      });
      expect(ready.status).toBe(200);
      expect((await api('GET', `/api/v1/nodes/${node}`)).body.lifecycle_status).toBe('ready');
    }
  });

  it('opens the memory event WebSocket as the SDK does at start', async () => {
    const line = RECORDED[index('GET (websocket upgrade)', '/api/v1/memory/events/ws')] as Recorded;
    const socket = new WebSocket(`${cp.base.replace('http', 'ws')}${line.path}`, {
      headers: { 'user-agent': line.headers['user-agent'] as string, ...auth },
    });
    await once(socket, 'open');
    socket.close();
  });

  it('takes the status callbacks of executions the agent answered with 202: succeeded, failed, progress and cancelled', async () => {
    await stand('exec-a1', 'echo');
    await stand('exec-a2', 'boom');
    await stand('exec_a3b2959a8d4c4189', 'math_add');
    await stand('exec-c1', 'slow');
    const succeeded = await send(index('POST', '/api/v1/executions/exec-a1/status'));
    expect(succeeded.body).toMatchObject({ status: 'succeeded', result: { echoed: { message: 'async' } } });
    const failed = await send(index('POST', '/api/v1/executions/exec-a2/status'));
    expect(failed.body).toMatchObject({ status: 'failed', error: 'intentional failure' });
    expect((await send(index('POST', '/api/v1/executions/exec_a3b2959a8d4c4189/status'))).body).toMatchObject(
      {
        status: 'succeeded',
        result: { sum: 42 },
      },
    );
    const cancelled = await send(index('POST', '/api/v1/executions/exec-c1/status'));
    expect(cancelled.body).toMatchObject({ status: 'cancelled', error: 'cancelled_by_control_plane' });
    // A repeated terminal callback (SDKs retry) changes nothing.
    expect((await send(index('POST', '/api/v1/executions/exec-a2/status'))).body.status).toBe('failed');
  });

  it('keeps the structured log line the SDK posts for an execution', async () => {
    const at = index('POST', /\/logs$/);
    const recordedId = (RECORDED[at] as Recorded).path.split('/')[4] as string;
    const created = await stand(recordedId, 'echo');
    const logged = await send(at);
    expect(logged.status).toBe(202);
    const read = await api('GET', `/api/v1/executions/${created.execution_id}/logs`);
    expect(read.body.entries[0].entry).toMatchObject({
      event_type: 'execution.started',
      reasoner_id: 'echo',
    });
  });

  it('answers a synchronous call through the control plane with the result the agent reports by callback', async () => {
    const pending = api('POST', '/api/v1/execute/sdk-harness.echo', { input: { message: 'through cp' } });
    const deadline = Date.now() + 15_000;
    while (
      !harness.calls.some(
        (c) =>
          c.path === '/reasoners/echo' &&
          !ids.has(c.executionId as string) &&
          ![...ids.values()].includes(c.executionId as string),
      )
    ) {
      if (Date.now() > deadline) throw new Error('the sync call never reached the agent');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const held = harness.calls.filter((c) => c.path === '/reasoners/echo').at(-1)?.executionId as string;
    ids.set('exec_0700a9f626f64ab3', held);
    const callback = await send(index('POST', '/api/v1/executions/exec_0700a9f626f64ab3/status'));
    expect(callback.status).toBe(200);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      execution_id: held,
      status: 'succeeded',
      result: { echoed: { message: 'through cp' } },
    });
  });

  it('serves everything a running function does: memory, vectors, progress, a note, discovery, calls to another agent and a local call', async () => {
    const exercise = await stand('exec_0aa8d8d1a1144c90', 'exercise', {
      'X-Session-ID': 'sess-9',
      'X-Actor-ID': 'actor-9',
    });
    ids.set('run_97dc5cfc36ad4ba4', exercise.run_id);
    const memory = (path: string) => send(index('POST', path));
    if (apiKey) {
      // What an agent configured with apiKey alone gets: its memory client sends no key.
      const line = rewrite(RECORDED[index('POST', '/api/v1/memory/set')] as Recorded);
      const { 'content-type': _type, ...headers } = line.headers;
      expect((await call(cp.base, 'POST', line.path, line.body, headers)).status).toBe(401);
    }
    expect((await memory('/api/v1/memory/set')).status).toBe(200);
    expect((await memory('/api/v1/memory/get')).body).toMatchObject({ key: 'harness.k1', data: { n: 1 } });
    const list = await send(index('GET', '/api/v1/memory/list'));
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((e: any) => e.key)).toContain('harness.k1');
    expect((await memory('/api/v1/memory/delete')).status).toBe(200);
    expect((await memory('/api/v1/memory/vector/set')).status).toBeLessThan(300);
    const search = await memory('/api/v1/memory/vector/search');
    expect(search.status).toBe(200);
    const results = Array.isArray(search.body) ? search.body : search.body.results;
    expect(results[0]).toMatchObject({ key: 'doc-1', scope: 'workflow', metadata: { title: 'Doc 1' } });
    expect((await memory('/api/v1/memory/vector/delete')).status).toBeLessThan(300);

    const progress = await send(index('POST', '/api/v1/executions/exec_0aa8d8d1a1144c90/status', 0));
    expect(progress.body).toMatchObject({ status: 'running', progress: 50 });
    const note = await send(index('POST', '/api/ui/v1/executions/note'));
    expect(note.status).toBe(201);
    const discovery = await send(index('GET', '/api/v1/discovery/capabilities'));
    expect(discovery.status).toBe(200);
    expect(JSON.stringify(discovery.body)).toContain('sdk-peer');

    const child = await send(index('POST', '/api/v1/execute/async/sdk-peer.echo'));
    expect(child.status).toBe(202);
    ids.set('exec_bd78dd02a9c241a8', child.body.execution_id);
    await taken(peer, child.body.execution_id);
    expect((await send(index('POST', '/api/v1/executions/exec_bd78dd02a9c241a8/status'))).body.status).toBe(
      'succeeded',
    );
    const skill = await send(index('POST', '/api/v1/execute/async/sdk-peer.skill:upper'));
    expect(skill.status).toBe(202);
    const local = await send(index('POST', '/api/v1/workflow/executions/events'));
    expect(local.status).toBe(201);
    const done = await send(index('POST', '/api/v1/executions/exec_0aa8d8d1a1144c90/status', 1));
    expect(done.body.status).toBe('succeeded');

    const dag = await api('GET', `/api/v1/workflows/${exercise.workflow_id}/dag`);
    const children = dag.body.edges
      .filter((e: any) => e.from === exercise.execution_id)
      .map((e: any) => e.to);
    expect(children).toEqual(
      expect.arrayContaining([child.body.execution_id, skill.body.execution_id, local.body.execution_id]),
    );
    const logs = await api('GET', `/api/v1/executions/${exercise.execution_id}/logs`);
    expect(logs.body.entries.map((e: any) => e.entry)).toContainEqual(
      expect.objectContaining({ type: 'note', message: 'exercise half way', tags: ['harness'] }),
    );
  });

  it('pauses for approval on the agent path, and shows a parent awaiting its paused child as waiting', async () => {
    await stand('exec_cb35a023f1db45c1', 'needs_approval');
    const asked = await send(index('POST', /\/request-approval$/));
    expect(asked.status).toBeLessThan(300);
    expect((await api('GET', `/api/v1/executions/${ids.get('exec_cb35a023f1db45c1')}`)).body.status).toBe(
      'waiting',
    );
    expect((await send(index('POST', '/api/v1/executions/exec_cb35a023f1db45c1/status'))).body.status).toBe(
      'succeeded',
    );

    const parent = await stand('exec_9f6c8a6e3e3a4d9d', 'await_paused_child');
    ids.set('run_5e4e205681494131', parent.run_id);
    const child = await send(index('POST', '/api/v1/execute/async/sdk-peer.needs_approval'));
    expect(child.status).toBe(202);
    ids.set('exec_16e7b6b5261c4338', child.body.execution_id);
    await taken(peer, child.body.execution_id);
    const awaiting = await send(index('POST', /\/awaiter-status$/));
    expect(awaiting.body).toMatchObject({ status: 'waiting', execution_status: 'waiting' });
    expect((await api('GET', `/api/v1/executions/${parent.execution_id}`)).body).toMatchObject({
      status: 'waiting',
      waiting_for: { type: 'child', reason: `awaiting child ${child.body.execution_id}` },
    });
    expect((await send(index('POST', '/api/v1/executions/exec_16e7b6b5261c4338/status'))).body.status).toBe(
      'succeeded',
    );
    expect((await send(index('POST', '/api/v1/executions/exec_9f6c8a6e3e3a4d9d/status'))).body.status).toBe(
      'succeeded',
    );
  });

  it('has replayed every recorded request kind', () => {
    const kinds = new Set(
      RECORDED.map((r) => `${r.method} ${r.path.replace(/exec[-_][\w-]+|[0-9a-f-]{36}|sdk-\w+/g, ':id')}`),
    );
    // Held to the list above: a new kind in the recording must get a test of its own.
    expect([...kinds].sort()).toEqual(
      [
        'GET (websocket upgrade) /api/v1/memory/events/ws',
        'GET /api/v1/discovery/capabilities',
        'GET /api/v1/health',
        'GET /api/v1/memory/list',
        'POST /api/ui/v1/executions/note',
        'POST /api/v1/agents/:id/executions/:id/awaiter-status',
        'POST /api/v1/agents/:id/executions/:id/request-approval',
        'POST /api/v1/did/register',
        'POST /api/v1/execute/async/:id.echo',
        'POST /api/v1/execute/async/:id.needs_approval',
        'POST /api/v1/execute/async/:id.skill:upper',
        'POST /api/v1/executions/:id/logs',
        'POST /api/v1/executions/:id/status',
        'POST /api/v1/memory/delete',
        'POST /api/v1/memory/get',
        'POST /api/v1/memory/set',
        'POST /api/v1/memory/vector/delete',
        'POST /api/v1/memory/vector/search',
        'POST /api/v1/memory/vector/set',
        'POST /api/v1/nodes/:id/heartbeat',
        'POST /api/v1/nodes/register',
        'POST /api/v1/workflow/executions/events',
      ].sort(),
    );
  });
});
