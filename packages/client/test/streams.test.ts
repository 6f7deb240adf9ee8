import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSwitchyardClient,
  type EventStreamHandle,
  type StreamPath,
  type SwitchyardClient,
  unwrap,
} from '../src/index.ts';
import { registrationOf, startAgent, type TestAgent, uniqueNodeId } from './helpers/agent.ts';
import { startControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { type RecordedStream, recordStream } from './helpers/stream-recorder.ts';

let cp: TestControlPlane;
let client: SwitchyardClient;
const agents: TestAgent[] = [];
const handles: EventStreamHandle[] = [];

beforeAll(async () => {
  cp = await startControlPlane();
  client = createSwitchyardClient({ baseUrl: cp.url });
});

afterEach(async () => {
  for (const handle of handles.splice(0)) {
    handle.close();
    await handle.done;
  }
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await cp?.close();
});

/** A registered, ready agent of its own, so each test's filter sees only its own executions. */
async function readyAgent(): Promise<TestAgent> {
  const agent = await startAgent(uniqueNodeId());
  agents.push(agent);
  await unwrap(client.POST('/api/v1/nodes/register', { body: registrationOf(agent) }));
  await unwrap(
    client.POST('/api/v1/nodes/{node_id}/heartbeat', {
      params: { path: { node_id: agent.nodeId } },
      body: { status: 'ready' },
    }),
  );
  return agent;
}

/** Runs the agent's `echo` synchronously and returns the execution id. */
async function execute(agent: TestAgent, text: string): Promise<string> {
  const result = await unwrap(
    client.POST('/api/v1/execute/{target}', {
      params: { path: { target: `${agent.nodeId}.echo` } },
      body: { input: { text } },
    }),
  );
  return result.execution_id;
}

/** Closes the stream after the test, whatever the test's outcome. */
function track<P extends StreamPath>(stream: RecordedStream<P>): RecordedStream<P> {
  handles.push(stream.handle);
  return stream;
}

/** What a sequence of executions emits, in order: started then completed for each. */
function lifecycleOf(executionIds: string[]) {
  return executionIds.flatMap((id) => [
    { event: 'execution.started', execution_id: id },
    { event: 'execution.completed', execution_id: id },
  ]);
}

describe('streamEvents on /api/ui/v1/executions/events', () => {
  it('delivers typed execution events with their ids, in order', async () => {
    const agent = await readyAgent();
    const stream = track(
      recordStream({
        baseUrl: cp.url,
        path: '/api/ui/v1/executions/events',
        query: { target: `${agent.nodeId}.echo` },
      }),
    );
    await stream.untilState('live');
    const ids = [await execute(agent, 'one'), await execute(agent, 'two')];
    await stream.untilEvents(4);

    expect(stream.events.map((e) => ({ event: e.event, execution_id: e.data.execution_id }))).toEqual(
      lifecycleOf(ids),
    );
    for (const event of stream.events) {
      expect(event.id).toMatch(/^\d+-\d+$/);
      expect(event.data.type).toBe(event.event);
      expect(event.data.target).toBe(`${agent.nodeId}.echo`);
    }
    const completed = stream.events[1]!;
    if (completed.event !== 'execution.completed')
      throw new Error(`expected completed, got ${completed.event}`);
    expect(completed.data.status).toBe('succeeded');
    expect(completed.data.duration_ms).toEqual(expect.any(Number));
    expect(stream.states).toEqual(['connecting', 'live']);
    expect(stream.requests[0]!.headers.get('last-event-id')).toBeNull();
  });

  it('resumes after a cut connection with Last-Event-ID: every event once, in order', async () => {
    const agent = await readyAgent();
    const stream = track(
      recordStream({
        baseUrl: cp.url,
        path: '/api/ui/v1/executions/events',
        query: { target: `${agent.nodeId}.echo` },
      }),
    );
    await stream.untilState('live');
    const ids = [await execute(agent, 'before')];
    await stream.untilEvents(2);
    const lastBeforeCut = stream.events[1]!.id;

    // The reconnection is held back until the server has recorded two more executions: only
    // resuming from the log can deliver their events.
    stream.holdRequests();
    cp.cutConnections();
    await stream.untilState('reconnecting');
    ids.push(await execute(agent, 'while away 1'), await execute(agent, 'while away 2'));
    const awayDone = Date.now();
    stream.releaseRequests();

    await stream.untilState('live', 2);
    ids.push(await execute(agent, 'after'));
    await stream.untilEvents(8);

    expect(stream.requests).toHaveLength(2);
    expect(stream.requests[1]!.at).toBeGreaterThanOrEqual(awayDone);
    expect(stream.requests[1]!.headers.get('last-event-id')).toBe(lastBeforeCut);
    expect(stream.reconnects).toEqual([{ resumed: true, lastEventId: lastBeforeCut }]);
    expect(stream.events.map((e) => ({ event: e.event, execution_id: e.data.execution_id }))).toEqual(
      lifecycleOf(ids),
    );
    const eventIds = stream.events.map((e) => e.id);
    expect(new Set(eventIds).size).toBe(eventIds.length);
    expect(stream.handle.lastEventId).toBe(eventIds.at(-1));
    expect(stream.states).toEqual(['connecting', 'live', 'reconnecting', 'live']);
    expect(stream.errors.map((e) => e.retrying)).toEqual([true]);
  });

  it('stops on abort: state closed, done resolves, no request and no event after it', async () => {
    const agent = await readyAgent();
    const controller = new AbortController();
    const stream = recordStream({
      baseUrl: cp.url,
      path: '/api/ui/v1/executions/events',
      query: { target: `${agent.nodeId}.echo` },
      signal: controller.signal,
    });
    await stream.untilState('live');
    await execute(agent, 'seen');
    await stream.untilEvents(2);

    controller.abort();
    await stream.handle.done;
    await execute(agent, 'not seen');
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(stream.events).toHaveLength(2);
    expect(stream.states).toEqual(['connecting', 'live', 'closed']);
    expect(stream.requests).toHaveLength(1);
    expect(stream.errors).toEqual([]);
  });

  it('ends with a final ApiProblem, without retrying, when the server refuses the request', async () => {
    const stream = recordStream({
      baseUrl: cp.url,
      path: '/api/ui/v1/executions/events',
      lastEventId: 'not-a-cursor',
    });
    await stream.handle.done;

    expect(stream.requests).toHaveLength(1);
    expect(stream.states).toEqual(['connecting', 'closed']);
    expect(stream.errors).toHaveLength(1);
    const { error, retrying } = stream.errors[0]!;
    expect(retrying).toBe(false);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
    expect(error.detail).toContain('Last-Event-ID');
  });
});

describe('streamEvents on /api/ui/v1/nodes/events', () => {
  it('delivers node events and, having no log to resume from, tells the caller to refetch on reconnect', async () => {
    const nodeId = uniqueNodeId('watched');
    const stream = track(
      recordStream({ baseUrl: cp.url, path: '/api/ui/v1/nodes/events', query: { node_id: nodeId } }),
    );
    await stream.untilState('live');
    const agent = await startAgent(nodeId);
    agents.push(agent);
    await unwrap(client.POST('/api/v1/nodes/register', { body: registrationOf(agent) }));
    await stream.untilEvents(1);
    const registered = stream.events.find((e) => e.event === 'node.registered');
    expect(registered).toMatchObject({
      id: undefined,
      event: 'node.registered',
      data: { type: 'node.registered', node_id: nodeId, version: '1.0.0' },
    });

    cp.cutConnections();
    await stream.untilState('live', 2);
    expect(stream.reconnects).toEqual([{ resumed: false, lastEventId: undefined }]);
    expect(stream.requests[1]!.headers.get('last-event-id')).toBeNull();
  });
});

describe('streamEvents on /api/v1/memory/events/sse', () => {
  it('delivers memory changes matching its filters', async () => {
    const key = `${uniqueNodeId('key')}.prefs`;
    const stream = track(
      recordStream({ baseUrl: cp.url, path: '/api/v1/memory/events/sse', query: { scope: 'global', key } }),
    );
    await stream.untilState('live');
    await unwrap(
      client.POST('/api/v1/memory/set', { body: { key, data: { theme: 'dark' }, scope: 'global' } }),
    );
    await unwrap(
      client.POST('/api/v1/memory/set', { body: { key: `${key}.other`, data: 1, scope: 'global' } }),
    );
    await unwrap(
      client.POST('/api/v1/memory/set', { body: { key, data: { theme: 'light' }, scope: 'global' } }),
    );
    await stream.untilEvents(2);
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(stream.events.map((e) => [e.event, e.data.key, e.data.action, e.data.data])).toEqual([
      ['memory_change', key, 'set', { theme: 'dark' }],
      ['memory_change', key, 'set', { theme: 'light' }],
    ]);
    expect(stream.events.every((e) => /^\d+-\d+$/.test(e.id ?? ''))).toBe(true);
  });
});

describe('streamEvents across a server restart', () => {
  it('keeps trying while the server is down and resumes from the log once it is back', async () => {
    const agent = await readyAgent();
    const stream = track(
      recordStream({
        baseUrl: cp.url,
        path: '/api/ui/v1/executions/events',
        query: { target: `${agent.nodeId}.echo` },
      }),
    );
    await stream.untilState('live');
    const ids = [await execute(agent, 'before restart')];
    await stream.untilEvents(2);
    const lastBeforeRestart = stream.events[1]!.id;

    await cp.restart();
    // The node's lease survived in the database; a heartbeat keeps it ready on the new process.
    await unwrap(
      client.POST('/api/v1/nodes/{node_id}/heartbeat', {
        params: { path: { node_id: agent.nodeId } },
        body: { status: 'ready' },
      }),
    );
    ids.push(await execute(agent, 'after restart'));
    await stream.untilEvents(4, 30_000);

    const resumed = stream.requests.at(-1)!;
    expect(resumed.headers.get('last-event-id')).toBe(lastBeforeRestart);
    expect(stream.reconnects.at(-1)).toEqual({ resumed: true, lastEventId: lastBeforeRestart });
    expect(stream.events.map((e) => ({ event: e.event, execution_id: e.data.execution_id }))).toEqual(
      lifecycleOf(ids),
    );
    // The graceful end of the stream, then any refused attempts while no server listened.
    expect(stream.errors.every((e) => e.retrying)).toBe(true);
    expect(stream.errors[0]!.error.code).toBe('stream_ended');
    expect(stream.states.at(-1)).toBe('live');
  }, 60_000);
});
