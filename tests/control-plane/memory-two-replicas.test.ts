/**
 * Memory event streams across replicas. PostgreSQL only: PGlite's files belong to a
 * single process, so there is no second replica to run.
 *
 * Two real control-plane processes (A and B) on one throwaway database:
 * - a change made on A reaches an SSE and a WebSocket subscriber on B;
 * - concurrent writers to one key through both replicas end with a stored value that is the data
 *   of the last change of that key in the history (and in the order B's subscribers saw);
 * - an event id received from A resumes on B (SSE Last-Event-ID, WebSocket last_event_id) with
 *   exactly the changes A delivered after it;
 * - B shutting down (SIGTERM) closes its WebSocket subscribers with 1001 and ends its SSE streams,
 *   and they resume on A with their last id without missing a change;
 * - writers racing through two processes for the last room of a scope's quota get exactly the
 *   entries that fit, the others 409 quota_exceeded.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const RUN_ID = randomBytes(3).toString('hex');
/** Writers per replica to the contended key. */
const WRITERS = 40;

interface Change {
  id: string;
  scope: string;
  scope_id: string;
  key: string;
  action: string;
  data: any;
}

interface Subscriber {
  changes: Change[];
  /** Resolves when the server ends the stream: the WebSocket close code, or 'ended' for SSE. */
  ended: Promise<number | 'ended'>;
  close(): void;
}

/** GET /api/v1/memory/events/sse as it arrives, frames parsed by eventsource-parser. */
async function subscribeSse(url: string, search: string, lastEventId?: string): Promise<Subscriber> {
  const controller = new AbortController();
  const response = await fetch(`${url}/api/v1/memory/events/sse?${search}`, {
    signal: controller.signal,
    headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
  });
  if (response.status !== 200) throw new Error(`SSE answered ${response.status}: ${await response.text()}`);
  const changes: Change[] = [];
  const parser = createParser({
    onEvent: ({ id, event, data }) => {
      if (event === 'memory_change') changes.push({ id: id!, ...JSON.parse(data) });
    },
  });
  let connected = () => {};
  const ready = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const ended = (async (): Promise<'ended'> => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'ended';
        parser.feed(value);
        if (value.includes(': connected')) connected();
      }
    } catch {
      // closed by the test
      return 'ended';
    }
  })();
  await ready;
  return { changes, ended, close: () => controller.abort() };
}

/** GET /api/v1/memory/events/ws with the `ws` client; resolves once the socket is open. */
async function subscribeWs(url: string, search: string): Promise<Subscriber> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v1/memory/events/ws?${search}`);
  const changes: Change[] = [];
  socket.on('message', (data) => changes.push(JSON.parse(data.toString())));
  const ended = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return { changes, ended, close: () => socket.terminate() };
}

async function post(url: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status !== 200)
    throw new Error(`${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Every change of the history matching `search`, paging with next_cursor. */
async function fullHistory(url: string, search: string): Promise<Change[]> {
  const all: Change[] = [];
  let after: string | null = null;
  for (;;) {
    const query = `${search}&limit=1000${after ? `&after=${after}` : ''}`;
    const response = await fetch(`${url}/api/v1/memory/events/history?${query}`);
    if (response.status !== 200) throw new Error(`history answered ${response.status}`);
    const page = (await response.json()) as {
      events: Change[];
      has_more: boolean;
      next_cursor: string | null;
    };
    all.push(...page.events);
    if (!page.has_more) return all;
    after = page.next_cursor;
  }
}

const describeChange = (c: Change) => `${c.id} ${c.action} ${c.key} ${JSON.stringify(c.data)}`;

let dirA: string;
let dirB: string;
let database: ThrowawayDatabase | undefined;
let replicaA: ControlPlaneProcess | undefined;
let replicaB: ControlPlaneProcess | undefined;
const subscribers: Subscriber[] = [];

beforeAll(async () => {
  if (!POSTGRES) return;
  dirA = mkdtempSync(join(tmpdir(), 'sy-memory-a-'));
  dirB = mkdtempSync(join(tmpdir(), 'sy-memory-b-'));
  database = await throwawayDatabase('sy_memory_replicas');
  // One after the other: the first one migrates the fresh database.
  replicaA = await startControlPlaneProcess({ dir: dirA, databaseUrl: database.url });
  replicaB = await startControlPlaneProcess({ dir: dirB, databaseUrl: database.url });
});

afterAll(async () => {
  for (const subscriber of subscribers) subscriber.close();
  await Promise.all([replicaA?.stop(), replicaB?.stop()]);
  await database?.drop();
  for (const dir of [dirA, dirB]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const note = POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process';

describe('memory event streams across two control-plane replicas on one PostgreSQL database', () => {
  it.skipIf(!POSTGRES)(
    `a change made on A reaches SSE and WebSocket subscribers on B (${note})`,
    async () => {
      const a = replicaA!;
      const b = replicaB!;
      const scopeId = `sess_${RUN_ID}_live`;
      const sse = await subscribeSse(b.url, `scope_id=${scopeId}`);
      const ws = await subscribeWs(b.url, `scope_id=${scopeId}&key=note*`);
      subscribers.push(sse, ws);
      await post(a.url, '/api/v1/memory/set', {
        key: 'note',
        data: { from: 'A' },
        scope: 'session',
        scope_id: scopeId,
      });
      await post(a.url, '/api/v1/memory/set', { key: 'other', data: 2, scope: 'session', scope_id: scopeId });
      await post(a.url, '/api/v1/memory/delete', { key: 'note', scope: 'session', scope_id: scopeId });
      await eventually('B delivers A’s changes', async () =>
        sse.changes.length >= 3 && ws.changes.length >= 2 ? true : undefined,
      );
      expect(sse.changes.map((c) => `${c.action} ${c.key}`)).toEqual([
        'set note',
        'set other',
        'delete note',
      ]);
      expect(ws.changes.map((c) => `${c.action} ${c.key}`)).toEqual(['set note', 'delete note']);
      expect(ws.changes[0]).toMatchObject({
        scope: 'session',
        scope_id: scopeId,
        scopeId,
        data: { from: 'A' },
      });
      expect(ws.changes.map((c) => c.id)).toEqual([sse.changes[0]!.id, sse.changes[2]!.id]);
    },
  );

  it.skipIf(!POSTGRES)(
    `concurrent writers to one key through both replicas end with the value of the last change in the history (${note})`,
    async () => {
      const a = replicaA!;
      const b = replicaB!;
      const scopeId = `sess_${RUN_ID}_contended`;
      const onB = await subscribeWs(b.url, `scope_id=${scopeId}`);
      subscribers.push(onB);
      const writes = Array.from({ length: WRITERS * 2 }, (_, n) => ({
        url: n % 2 === 0 ? a.url : b.url,
        data: { replica: n % 2 === 0 ? 'A' : 'B', n },
      }));
      await Promise.all(
        writes.map((write) =>
          post(write.url, '/api/v1/memory/set', {
            key: 'counter',
            data: write.data,
            scope: 'session',
            scope_id: scopeId,
          }),
        ),
      );
      const stored = await post(a.url, '/api/v1/memory/get', {
        key: 'counter',
        scope: 'session',
        scope_id: scopeId,
      });
      const history = await fullHistory(b.url, `scope_id=${scopeId}&key=counter`);
      expect(history).toHaveLength(WRITERS * 2);
      expect(new Set(history.map((c) => c.data.n)).size).toBe(WRITERS * 2);
      expect(history.at(-1)!.data).toEqual(stored.data);
      // B's subscriber saw the same changes in the same order, ending with the stored value.
      await eventually(
        'B’s subscriber received every change',
        async () => (onB.changes.length >= WRITERS * 2 ? true : undefined),
        () => `received ${onB.changes.length}`,
      );
      expect(onB.changes.map(describeChange)).toEqual(history.map(describeChange));
      const writers = new Set(history.map((c) => c.data.replica));
      expect(writers).toEqual(new Set(['A', 'B']));
    },
  );

  it.skipIf(!POSTGRES)(`an event id received from A resumes on B (${note})`, async () => {
    const a = replicaA!;
    const b = replicaB!;
    const scopeId = `sess_${RUN_ID}_resume`;
    const onA = await subscribeSse(a.url, `scope_id=${scopeId}`);
    subscribers.push(onA);
    for (let n = 0; n < 10; n++) {
      await post(n % 2 === 0 ? a.url : b.url, '/api/v1/memory/set', {
        key: `k${n}`,
        data: n,
        scope: 'session',
        scope_id: scopeId,
      });
    }
    await eventually('A delivers all ten', async () => (onA.changes.length >= 10 ? true : undefined));
    const cut = onA.changes[3]!;
    const expected = onA.changes.slice(4).map(describeChange);
    const sseOnB = await subscribeSse(b.url, `scope_id=${scopeId}`, cut.id);
    const wsOnB = await subscribeWs(b.url, `scope_id=${scopeId}&last_event_id=${cut.id}`);
    subscribers.push(sseOnB, wsOnB);
    await eventually('B resumes with the six changes A delivered after the cut', async () =>
      sseOnB.changes.length >= 6 && wsOnB.changes.length >= 6 ? true : undefined,
    );
    expect(sseOnB.changes.map(describeChange)).toEqual(expected);
    expect(wsOnB.changes.map(describeChange)).toEqual(expected);
  });

  it.skipIf(!POSTGRES)(
    `B shutting down closes its WebSocket subscribers with 1001 and ends its SSE streams; they resume on A (${note})`,
    async () => {
      const a = replicaA!;
      const b = replicaB!;
      const scopeId = `sess_${RUN_ID}_failover`;
      const ws = await subscribeWs(b.url, `scope_id=${scopeId}`);
      const sse = await subscribeSse(b.url, `scope_id=${scopeId}`);
      subscribers.push(ws, sse);
      const set = (key: string) =>
        post(a.url, '/api/v1/memory/set', { key, data: key, scope: 'session', scope_id: scopeId });
      await set('before');
      await eventually('B delivers the first change', async () =>
        ws.changes.length >= 1 && sse.changes.length >= 1 ? true : undefined,
      );
      const exit = b.stop();
      expect(await ws.ended).toBe(1001);
      expect(await sse.ended).toBe('ended');
      expect((await exit).code).toBe(0);
      // Written while the subscribers had no server: they pick it up on A from their last id.
      await set('during');
      const wsOnA = await subscribeWs(a.url, `scope_id=${scopeId}&last_event_id=${ws.changes.at(-1)!.id}`);
      const sseOnA = await subscribeSse(a.url, `scope_id=${scopeId}`, sse.changes.at(-1)!.id);
      subscribers.push(wsOnA, sseOnA);
      await set('after');
      await eventually('A resumes both', async () =>
        wsOnA.changes.length >= 2 && sseOnA.changes.length >= 2 ? true : undefined,
      );
      expect(wsOnA.changes.map((c) => c.key)).toEqual(['during', 'after']);
      expect(sseOnA.changes.map((c) => c.key)).toEqual(['during', 'after']);
    },
  );
});

describe('the memory scope quota across two control-plane processes on one PostgreSQL database', () => {
  it.skipIf(!POSTGRES)(
    `writers racing through both replicas for a scope's last room get exactly the entries that fit (${note})`,
    async () => {
      const quota = { SWITCHYARD_MEMORY_SCOPE_MAX_ENTRIES: '25' };
      const dirs = [mkdtempSync(join(tmpdir(), 'sy-quota-a-')), mkdtempSync(join(tmpdir(), 'sy-quota-b-'))];
      const pair: ControlPlaneProcess[] = [];
      try {
        for (const dir of dirs) {
          pair.push(await startControlPlaneProcess({ dir, databaseUrl: database!.url, env: quota }));
        }
        const scopeId = `wf_${RUN_ID}_quota`;
        const write = (url: string, key: string) =>
          fetch(`${url}/api/v1/memory/set`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ key, data: { key }, scope: 'workflow', scope_id: scopeId }),
          }).then(async (response) => ({ status: response.status, body: await response.json() }));
        for (let n = 0; n < 20; n++) expect((await write(pair[0]!.url, `before-${n}`)).status).toBe(200);
        // 60 writers, 30 on each replica, for the last 5 entries.
        const answers = await Promise.all(
          Array.from({ length: 60 }, (_, n) => write(pair[n % 2]!.url, `race-${n}`)),
        );
        expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
        const refused = answers.filter((a) => a.status === 409);
        expect(refused).toHaveLength(55);
        for (const answer of refused)
          expect(answer.body).toMatchObject({ code: 'quota_exceeded', entries: 25 });
        const listed = await fetch(
          `${pair[1]!.url}/api/v1/memory/list?scope=workflow&scope_id=${scopeId}&limit=1000`,
        );
        expect(((await listed.json()) as unknown[]).length).toBe(25);
        // A delete through one replica frees room for a write through the other.
        const removed = await fetch(`${pair[0]!.url}/api/v1/memory/delete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: 'before-0', scope: 'workflow', scope_id: scopeId }),
        });
        expect(removed.status).toBe(200);
        expect((await write(pair[1]!.url, 'after-delete')).status).toBe(200);
        expect((await write(pair[0]!.url, 'one-too-many')).status).toBe(409);
      } finally {
        await Promise.all(pair.map((process) => process.stop()));
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
