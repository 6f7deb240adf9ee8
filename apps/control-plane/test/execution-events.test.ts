import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { executionEventFrame } from '../src/modules/executions/event-routes.ts';
import {
  completedPayload,
  EXECUTIONS_STREAM,
  type ExecutionEventSource,
  startedPayload,
  waitingPayload,
} from '../src/modules/executions/events.ts';
import { appendEvent, createPostgresEventBus } from '../src/platform/events/index.ts';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { openSse, type SseClient, type SseFrame } from './helpers/sse.ts';

const PATH = '/api/ui/v1/executions/events';
let cp: TestControlPlane;
let counter = 0;

/** An execution as the payload builders read it; a fresh id per call. */
function execution(overrides: Partial<ExecutionEventSource> = {}): ExecutionEventSource {
  counter += 1;
  return {
    execution_id: `exec_test_${process.pid}_${counter}`,
    target: 'hello-agent.summarize',
    workflow_id: `wf_${counter}`,
    run_id: `run_${counter}`,
    node_id: 'hello-agent',
    status: 'running',
    duration_ms: null,
    error: null,
    ...overrides,
  };
}

/** Appends an event as the executions service does (after its transaction) and announces it. */
async function emit(on: TestControlPlane, event: string, payload: object): Promise<void> {
  await appendEvent(on.handle.db, EXECUTIONS_STREAM, event, payload);
  on.parts.eventLog.announce(EXECUTIONS_STREAM);
}

const isEvent = (frame: SseFrame) => frame.event !== '';
const dataOf = (frame: SseFrame) => JSON.parse(frame.data) as Record<string, unknown>;

/**
 * Opens a stream and waits for `: connected`. With `lastEventId`, the request carries the
 * Last-Event-ID header as a reconnecting EventSource sends it: openSse sets its own request
 * headers, so the header is added to the one fetch it makes.
 */
async function connected(url: string, lastEventId?: string): Promise<SseClient> {
  if (lastEventId !== undefined) {
    const original = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementationOnce((input, init) =>
      original(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), 'Last-Event-ID': lastEventId },
      }),
    );
  }
  const client = await openSse(url);
  await client.next((f) => f.comment.includes('connected'));
  return client;
}

/** Waits for the frame of one execution's event, which also means every earlier frame arrived. */
function frameOf(client: SseClient, executionId: string, event?: string): Promise<SseFrame> {
  return client.next(
    (f) => isEvent(f) && dataOf(f).execution_id === executionId && (!event || f.event === event),
  );
}

beforeAll(async () => {
  cp = await startTestControlPlane({ sseKeepAliveMs: 50 });
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await cp?.close();
});

describe('GET /api/ui/v1/executions/events', () => {
  it('streams each event as a frame with an id, the event name and the payload as JSON', async () => {
    const client = await connected(`${cp.base}${PATH}`);
    try {
      expect(client.response.status).toBe(200);
      expect(client.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const run = execution();
      const now = new Date('2026-11-22T06:20:00.140Z');
      await emit(cp, 'execution.started', startedPayload(run, now));
      await emit(cp, 'execution.waiting', waitingPayload({ ...run, status: 'waiting' }, 'apr_1', now));
      await emit(
        cp,
        'execution.completed',
        completedPayload({ ...run, status: 'failed', duration_ms: 21.6, error: 'agent said no' }, now),
      );
      const completed = await frameOf(client, run.execution_id, 'execution.completed');
      const frames = client.frames.filter(isEvent);
      expect(frames.map((f) => f.event)).toEqual([
        'execution.started',
        'execution.waiting',
        'execution.completed',
      ]);
      for (const frame of frames) expect(frame.id).toMatch(/^\d+-\d+$/);
      expect(new Set(frames.map((f) => f.id)).size).toBe(3);
      expect(dataOf(frames[0]!)).toEqual({
        type: 'execution.started',
        execution_id: run.execution_id,
        status: 'running',
        agent_node_id: 'hello-agent',
        target: 'hello-agent.summarize',
        workflow_id: run.workflow_id,
        run_id: run.run_id,
        timestamp: '2026-11-22T06:20:00.140Z',
      });
      expect(dataOf(frames[1]!)).toMatchObject({ status: 'waiting', approval_request_id: 'apr_1' });
      expect(dataOf(completed)).toMatchObject({
        type: 'execution.completed',
        status: 'failed',
        duration_ms: 22,
        error_message: 'agent said no',
      });
    } finally {
      client.close();
    }
  });

  it('starts with the next event when no id is given: earlier events are not replayed', async () => {
    const before = execution();
    await emit(cp, 'execution.started', startedPayload(before, new Date()));
    const client = await connected(`${cp.base}${PATH}`);
    try {
      const after = execution();
      await emit(cp, 'execution.started', startedPayload(after, new Date()));
      await frameOf(client, after.execution_id);
      expect(client.frames.filter(isEvent).map((f) => dataOf(f).execution_id)).toEqual([after.execution_id]);
    } finally {
      client.close();
    }
  });

  it('resumes with Last-Event-ID: exactly the events missed while disconnected, then live ones', async () => {
    const runs = Array.from({ length: 6 }, () => execution());
    const first = await connected(`${cp.base}${PATH}`);
    for (const run of runs.slice(0, 3)) await emit(cp, 'execution.started', startedPayload(run, new Date()));
    const seen = await frameOf(first, runs[2]!.execution_id);
    first.close();
    // Missed while away.
    for (const run of runs.slice(3, 5)) await emit(cp, 'execution.started', startedPayload(run, new Date()));

    const resumed = await connected(`${cp.base}${PATH}`, seen.id!);
    try {
      await emit(cp, 'execution.started', startedPayload(runs[5]!, new Date()));
      await frameOf(resumed, runs[5]!.execution_id);
      expect(resumed.frames.filter(isEvent).map((f) => dataOf(f).execution_id)).toEqual(
        runs.slice(3).map((r) => r.execution_id),
      );
    } finally {
      resumed.close();
    }
  });

  it('resumes with ?last_event_id= too, and the header wins when both are sent', async () => {
    const runs = Array.from({ length: 3 }, () => execution());
    const first = await connected(`${cp.base}${PATH}`);
    for (const run of runs) await emit(cp, 'execution.started', startedPayload(run, new Date()));
    const [a, b] = [await frameOf(first, runs[0]!.execution_id), await frameOf(first, runs[1]!.execution_id)];
    await frameOf(first, runs[2]!.execution_id);
    first.close();

    const byQuery = await connected(`${cp.base}${PATH}?last_event_id=${a.id}`);
    const both = await connected(`${cp.base}${PATH}?last_event_id=${a.id}`, b.id!);
    try {
      await frameOf(byQuery, runs[2]!.execution_id);
      await frameOf(both, runs[2]!.execution_id);
      expect(byQuery.frames.filter(isEvent).map((f) => dataOf(f).execution_id)).toEqual(
        runs.slice(1).map((r) => r.execution_id),
      );
      expect(both.frames.filter(isEvent).map((f) => dataOf(f).execution_id)).toEqual([runs[2]!.execution_id]);
    } finally {
      byQuery.close();
      both.close();
    }
  });

  it('filters by execution_id, workflow_id and target', async () => {
    const wanted = execution({ target: 'wanted-agent.run' });
    const other = execution({ target: 'other-agent.run' });
    const byExecution = await connected(`${cp.base}${PATH}?execution_id=${wanted.execution_id}`);
    const byWorkflow = await connected(`${cp.base}${PATH}?workflow_id=${wanted.workflow_id}`);
    const byTarget = await connected(`${cp.base}${PATH}?target=wanted-agent.run`);
    try {
      await emit(cp, 'execution.started', startedPayload(other, new Date()));
      await emit(cp, 'execution.started', startedPayload(wanted, new Date()));
      await emit(cp, 'execution.completed', completedPayload({ ...other, status: 'succeeded' }, new Date()));
      await emit(
        cp,
        'execution.completed',
        completedPayload({ ...wanted, status: 'succeeded', duration_ms: 5 }, new Date()),
      );
      for (const client of [byExecution, byWorkflow, byTarget]) {
        await frameOf(client, wanted.execution_id, 'execution.completed');
        const frames = client.frames.filter(isEvent);
        expect(frames.map((f) => f.event)).toEqual(['execution.started', 'execution.completed']);
        expect(frames.every((f) => dataOf(f).execution_id === wanted.execution_id)).toBe(true);
      }
    } finally {
      for (const client of [byExecution, byWorkflow, byTarget]) client.close();
    }
  });

  it('answers 400 problem+json for a bad filter, a repeated parameter or an id the server never sent', async () => {
    for (const query of [
      'execution_id=',
      `target=${'x'.repeat(501)}`,
      'workflow_id=a&workflow_id=b',
      'last_event_id=abc',
      'last_event_id=1-99999999999999999999',
    ]) {
      const answer = await call(cp.base, 'GET', `${PATH}?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors.length).toBeGreaterThan(0);
    }
    const header = await call(cp.base, 'GET', PATH, undefined, { 'Last-Event-ID': 'yesterday' });
    expect(header.status).toBe(400);
    expect(header.body.errors).toEqual([{ field: 'Last-Event-ID', message: expect.any(String) }]);
  });

  it('answers HEAD with the stream headers and an empty body', async () => {
    const response = await fetch(`${cp.base}${PATH}`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await response.text()).toBe('');
  });

  it('only streams the four execution events', () => {
    const payload = { execution_id: 'e', status: 'failed', timestamp: 't' };
    expect(executionEventFrame({ id: '1-2', event: 'execution.failed', payload })).toBeNull();
    expect(executionEventFrame({ id: '1-2', event: 'execution.completed\ndata: {}', payload })).toBeNull();
    expect(executionEventFrame({ id: '1-2', event: 'execution.completed', payload })).toBe(
      `id: 1-2\nevent: execution.completed\ndata: ${JSON.stringify({ type: 'execution.completed', ...payload })}\n\n`,
    );
  });
});

describe('GET /api/ui/v1/executions/events with an API key', () => {
  it('accepts the key as ?api_key= (EventSource cannot send headers) and refuses the stream without it', async () => {
    const secured = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.api.auth = { apiKey: 'sse-key', skipPaths: [] };
      },
    });
    try {
      const refused = await fetch(`${secured.base}${PATH}`);
      expect(refused.status).toBe(401);
      await refused.body?.cancel();
      const client = await connected(`${secured.base}${PATH}?api_key=sse-key`);
      try {
        const run = execution();
        await emit(secured, 'execution.started', startedPayload(run, new Date()));
        await frameOf(client, run.execution_id);
      } finally {
        client.close();
      }
    } finally {
      await secured.close();
    }
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.runIf(databaseUrl)('execution events across replicas (needs DATABASE_URL)', () => {
  it('streams on one replica what another recorded, and resumes there with an id from the other', async () => {
    const channelPrefix = `sy_test_${randomBytes(4).toString('hex')}_`;
    const busA = createPostgresEventBus(databaseUrl!, { channelPrefix });
    const busB = createPostgresEventBus(databaseUrl!, { channelPrefix });
    const replicaA = await startTestControlPlane({ events: busA, handle: cp.handle });
    const replicaB = await startTestControlPlane({ events: busB, handle: cp.handle });
    const onA = await connected(`${replicaA.base}${PATH}`);
    const onB = await connected(`${replicaB.base}${PATH}`);
    try {
      await busB.listening();
      const runs = Array.from({ length: 4 }, () => execution());
      await emit(replicaA, 'execution.started', startedPayload(runs[0]!, new Date()));
      const fromA = await frameOf(onB, runs[0]!.execution_id);
      expect(dataOf(fromA)).toMatchObject({ type: 'execution.started', execution_id: runs[0]!.execution_id });

      // A client of A leaves after the first event; the rest happen; it comes back on B.
      const last = await frameOf(onA, runs[0]!.execution_id);
      onA.close();
      for (const run of runs.slice(1))
        await emit(replicaA, 'execution.started', startedPayload(run, new Date()));
      const resumed = await connected(`${replicaB.base}${PATH}`, last.id!);
      try {
        await frameOf(resumed, runs[3]!.execution_id);
        expect(resumed.frames.filter(isEvent).map((f) => dataOf(f).execution_id)).toEqual(
          runs.slice(1).map((r) => r.execution_id),
        );
        expect(resumed.frames.filter(isEvent).map((f) => f.id)).toEqual(
          (await Promise.all(runs.slice(1).map((r) => frameOf(onB, r.execution_id)))).map((f) => f.id),
        );
      } finally {
        resumed.close();
      }
    } finally {
      onA.close();
      onB.close();
      await replicaA.close();
      await replicaB.close();
    }
  });
});
