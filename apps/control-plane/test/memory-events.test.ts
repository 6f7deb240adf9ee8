/**
 * Memory event streams: GET /api/v1/memory/events/sse, /ws and /history against the
 * real app on a real database, with real clients: eventsource-parser for SSE, `ws` for WebSocket,
 * raw TCP sockets where a client must misbehave (never read, never answer a ping).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { databaseKind, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { type ClientOptions } from 'ws';
import { keyMatches, keyPatternParts, keyPatternToLike } from '../src/modules/memory/event-filters.ts';
import { MEMORY_CHANGE, MEMORY_STREAM } from '../src/modules/memory/index.ts';
import { appendEvent, appendEvents } from '../src/platform/events/index.ts';
import { createOpenStreams, type OpenStreams } from '../src/platform/http/open-streams.ts';
import { call, startTestControlPlane, type TestControlPlane } from './helpers/control-plane.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';
import { openApiValidatorOf } from './helpers/openapi.ts';
import { openSse, type SseClient, type SseFrame } from './helpers/sse.ts';

const SSE = '/api/v1/memory/events/sse';
const WS = '/api/v1/memory/events/ws';
const HISTORY = '/api/v1/memory/events/history';
const KEY = 'memory-events-test-key';

let handle: TestDatabase;
/**
 * The control plane most tests use: keep-alives every 200 ms, short for the tests of them but long
 * enough that a busy test process still answers every ping in time.
 */
let cp: TestControlPlane;
/** Every client a test opened, closed after it even when it fails (an open socket holds the server). */
const opened: Array<{ close(): void }> = [];
let counter = 0;
/** An id no other test uses: tests subscribe to scope ids of their own. */
const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;

interface Change {
  scope: 'workflow' | 'session' | 'actor' | 'global';
  scope_id: string;
  key: string;
  action: 'set' | 'delete';
  data?: unknown;
}

/** Applies a change through the real memory routes, which record it in the event log. */
async function apply(on: TestControlPlane, change: Change, headers: Record<string, string> = {}) {
  const { action, ...body } = change;
  const path = action === 'set' ? '/api/v1/memory/set' : '/api/v1/memory/delete';
  const scopeBody =
    change.scope === 'global' ? { scope: 'global' } : { scope: body.scope, scope_id: body.scope_id };
  const payload =
    action === 'set'
      ? { key: body.key, data: body.data ?? null, ...scopeBody }
      : { key: body.key, ...scopeBody };
  const answer = await call(on.base, 'POST', path, payload, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** The fields of a change that say which change it is. */
const identity = (c: Record<string, any>) => `${c.action} ${c.scope}/${c.scope_id}/${c.key}`;

/** An independent oracle for key patterns (a regular expression), to check the server's matcher. */
function patternRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 'su');
}

/** What a subscription with these filters must receive, by the oracle. */
function expectedFor(filters: Record<string, string>, changes: Change[]): string[] {
  return changes
    .filter(
      (c) =>
        (filters.scope === undefined || c.scope === filters.scope) &&
        (filters.scope_id === undefined || c.scope_id === filters.scope_id) &&
        (filters.key === undefined || patternRegExp(filters.key).test(c.key)),
    )
    .map(identity);
}

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

// --- SSE -------------------------------------------------------------------------------------

const isEvent = (frame: SseFrame) => frame.event !== '';
const dataOf = (frame: SseFrame) => JSON.parse(frame.data) as Record<string, any>;

/**
 * Opens a stream and waits for `: connected`. openSse sets its own request headers, so extra
 * ones (Last-Event-ID, X-API-Key) are added to the one fetch it makes.
 */
async function sse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  if (Object.keys(headers).length > 0) {
    const original = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementationOnce((input, init) =>
      original(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    );
  }
  const client = await openSse(url);
  opened.push(client);
  expect(client.response.status).toBe(200);
  await client.next((f) => f.comment.includes('connected'));
  return client;
}

/** Waits until the client has received `count` change frames; answers all it has. */
async function sseChanges(client: SseClient, count: number, timeoutMs = 15_000): Promise<SseFrame[]> {
  const deadline = Date.now() + timeoutMs;
  while (client.frames.filter(isEvent).length < count) {
    if (Date.now() > deadline) {
      throw new Error(`received ${client.frames.filter(isEvent).length} of ${count} change frames`);
    }
    await new Promise((wake) => setTimeout(wake, 20));
  }
  return client.frames.filter(isEvent);
}

// --- WebSocket -------------------------------------------------------------------------------

interface SocketClient {
  ws: WebSocket;
  frames: Array<Record<string, any>>;
  pings: number;
  /** Resolves once `count` frames have arrived. */
  until(count: number, timeoutMs?: number): Promise<Array<Record<string, any>>>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

const wsUrl = (base: string, path: string) => base.replace(/^http/, 'ws') + path;

/** Opens a WebSocket with the `ws` client and resolves once it is open. */
async function socket(url: string, options: ClientOptions = {}): Promise<SocketClient> {
  const ws = new WebSocket(url, options);
  const frames: Array<Record<string, any>> = [];
  const waiters = new Set<() => void>();
  const client: SocketClient = {
    ws,
    frames,
    pings: 0,
    async until(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (frames.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${frames.length} of ${count} frames`);
        await new Promise<void>((wake) => {
          waiters.add(wake);
          setTimeout(wake, 50);
        });
      }
      return frames;
    },
    closed: new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    ),
    close: () => ws.terminate(),
  };
  ws.on('message', (data, binary) => {
    expect(binary).toBe(false);
    frames.push(JSON.parse(data.toString()));
    for (const wake of waiters) wake();
    waiters.clear();
  });
  ws.on('ping', () => {
    client.pings += 1;
  });
  opened.push(client);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return client;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * A WebSocket handshake the server refuses, with the `ws` client: the answer's status, headers and
 * body (parsed as JSON), checked against the OpenAPI document, once the server has closed the
 * connection.
 */
async function refused(base: string, path: string, options: ClientOptions = {}): Promise<RawAnswer> {
  const ws = new WebSocket(wsUrl(base, path), options);
  ws.on('error', () => {});
  const [, res] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk;
  const answer = {
    status: res.statusCode!,
    headers: res.headers as Record<string, string>,
    body: JSON.parse(text),
  };
  (await openApiValidatorOf(base)).expectMatches({
    method: 'GET',
    path: WS,
    status: answer.status,
    contentType: answer.headers['content-type'] ?? null,
    body: answer.body,
  });
  return answer;
}

/** A raw TCP connection that sends `request` and reads whatever comes back. */
async function rawConnection(base: string) {
  const { port } = new URL(base);
  const tcp = connect(Number(port), '127.0.0.1');
  opened.push({ close: () => tcp.destroy() });
  await once(tcp, 'connect');
  let received = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => tcp.once('close', () => resolve()));
  tcp.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  });
  tcp.on('error', () => {});
  return {
    tcp,
    closed,
    received: () => received,
    /** The response head, once it has arrived. */
    async head(): Promise<string> {
      while (!received.includes('\r\n\r\n')) await new Promise((wake) => setTimeout(wake, 10));
      return received.subarray(0, received.indexOf('\r\n\r\n')).toString('latin1');
    },
  };
}

const accepted = new Map<TestControlPlane, Map<number, Socket>>();

/** Records the connections `on` accepts, by the client's port, for {@link serverEnd}. */
function trackConnections(on: TestControlPlane): void {
  const ends = new Map<number, Socket>();
  on.server.on('connection', (socket: Socket) => ends.set(socket.remotePort!, socket));
  accepted.set(on, ends);
}

/** The server's end of `tcp`, a connection to `on`, once the server has accepted it. */
async function serverEnd(on: TestControlPlane, tcp: Socket): Promise<Socket> {
  const ends = accepted.get(on)!;
  await waitFor(() => ends.has(tcp.localPort!), 5_000, 'the server to accept the connection');
  return ends.get(tcp.localPort!)!;
}

/**
 * A client that sends `request` and never reads a byte of the answer (paused before it sends:
 * even the response head stays unread), with the server's end of its connection.
 */
async function stalledClient(on: TestControlPlane, request: string) {
  const client = await rawConnection(on.base);
  client.tcp.pause();
  client.tcp.write(request);
  return { client, end: await serverEnd(on, client.tcp) };
}

/** Resolves once `condition` holds; fails after `timeoutMs`. */
async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

/** The request head of a WebSocket handshake. */
function handshake(path: string, extra: Record<string, string> = {}): string {
  const headers = {
    Host: '127.0.0.1',
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
    ...extra,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** The opcodes of the server frames in `bytes` (unmasked, as a server sends them), in order. */
function opcodes(bytes: Buffer): number[] {
  const found: number[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let header = 2;
    if (length === 126) {
      if (at + 4 > bytes.length) break;
      length = bytes.readUInt16BE(at + 2);
      header = 4;
    } else if (length === 127) {
      if (at + 10 > bytes.length) break;
      length = Number(bytes.readBigUInt64BE(at + 2));
      header = 10;
    }
    if (at + header + length > bytes.length) break;
    found.push(opcode);
    at += header + length;
  }
  return found;
}

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  cp = await startTestControlPlane({ handle, sseKeepAliveMs: 200 });
  trackConnections(cp);
});

afterEach(() => {
  for (const client of opened.splice(0)) client.close();
  vi.restoreAllMocks();
});

afterAll(async () => {
  await cp?.close();
  await handle?.close();
});

describe('key patterns', () => {
  it('match the same keys in JS (live frames) and as SQL LIKE (history), exhaustively over a small alphabet', async () => {
    // Every key of 1 to 3 characters over an alphabet with LIKE's special characters, a character
    // outside the BMP and the pattern's own wildcard; every pattern of 1 to 3 characters over the
    // same alphabet and `*`. The history route is asked for each pattern; JS and the oracle must agree.
    const letters = ['a', 'b', '%', '_', '\\', '😀'];
    const words = (alphabet: string[], max: number): string[] => {
      let level = [''];
      const all: string[] = [];
      for (let n = 1; n <= max; n++) {
        level = level.flatMap((word) => alphabet.map((letter) => word + letter));
        all.push(...level);
      }
      return all;
    };
    const keys = words(letters, 3);
    const patterns = words([...letters, '*'], 3);
    const scopeId = unique('patterns');
    await appendEvents(
      handle.db,
      keys.map((key) => ({
        stream: MEMORY_STREAM,
        event: MEMORY_CHANGE,
        payload: {
          scope: 'session',
          scope_id: scopeId,
          key,
          action: 'set',
          data: null,
          timestamp: new Date().toISOString(),
        },
      })),
    );
    let disagreements = 0;
    for (const pattern of patterns) {
      const response = await fetch(
        `${cp.base}${HISTORY}?${query({ scope_id: scopeId, key: pattern, limit: '1000' })}`,
      );
      expect(response.status, pattern).toBe(200);
      const fromSql = ((await response.json()) as { events: Array<{ key: string }> }).events.map(
        (e) => e.key,
      );
      const parts = keyPatternParts(pattern);
      const inJs = keys.filter((key) => keyMatches(parts, key));
      const byOracle = keys.filter((key) => patternRegExp(pattern).test(key));
      if (
        JSON.stringify(fromSql) !== JSON.stringify(inJs) ||
        JSON.stringify(inJs) !== JSON.stringify(byOracle)
      ) {
        disagreements += 1;
        expect({ pattern, fromSql, inJs }).toEqual({ pattern, fromSql: byOracle, inJs: byOracle });
      }
    }
    expect(disagreements).toBe(0);
  });

  it('escape %, _ and \\ for LIKE, and turn * into %', () => {
    expect(keyPatternToLike(keyPatternParts('user.*.prefs'))).toBe('user.%.prefs');
    expect(keyPatternToLike(keyPatternParts('100%_done\\*'))).toBe('100\\%\\_done\\\\%');
    expect(keyPatternToLike(keyPatternParts('draft'))).toBe('draft');
    expect(keyMatches(keyPatternParts('user.*.prefs'), 'user.prefs')).toBe(false);
    expect(keyMatches(keyPatternParts('user.*.prefs'), 'user..prefs')).toBe(true);
    expect(keyMatches(keyPatternParts('a*a*a'), 'aaa')).toBe(true);
    expect(keyMatches(keyPatternParts('a*a*a'), 'aa')).toBe(false);
  });
});

describe('live streams: GET /api/v1/memory/events/sse and /ws', () => {
  it('deliver to each SSE and WebSocket subscriber exactly the changes it filtered for, in order', async () => {
    const id = unique('sess');
    const other = unique('sess');
    const subscriptions: Array<Record<string, string>> = [
      { scope_id: id },
      { scope: 'session', scope_id: id },
      { scope_id: id, key: 'draft*' },
      { scope: 'session', scope_id: id, key: '*draft' },
      { scope_id: id, key: 'user.*.prefs' },
      { scope_id: other },
      { scope: 'actor' },
    ];
    const sseClients = await Promise.all(subscriptions.map((s) => sse(`${cp.base}${SSE}?${query(s)}`)));
    const wsClients = await Promise.all(
      subscriptions.map((s) => socket(wsUrl(cp.base, `${WS}?${query(s)}`))),
    );
    const changes: Change[] = [
      { scope: 'session', scope_id: id, key: 'draft', action: 'set', data: { words: 412 } },
      { scope: 'session', scope_id: id, key: 'draft.v2', action: 'set', data: 'second' },
      { scope: 'session', scope_id: id, key: 'final-draft', action: 'set', data: 3 },
      { scope: 'session', scope_id: id, key: 'user.42.prefs', action: 'set', data: { theme: 'dark' } },
      { scope: 'session', scope_id: id, key: 'user.prefs', action: 'set', data: true },
      { scope: 'session', scope_id: other, key: 'draft', action: 'set', data: 'elsewhere' },
      { scope: 'workflow', scope_id: id, key: 'draft', action: 'set', data: 'workflow' },
      { scope: 'actor', scope_id: other, key: 'user.1.prefs', action: 'set', data: null },
      { scope: 'session', scope_id: id, key: 'draft', action: 'delete' },
      { scope: 'session', scope_id: id, key: 'user.a.b.prefs', action: 'set', data: [1, 2] },
      { scope: 'session', scope_id: id, key: 'draft%_\\', action: 'set', data: 'literal' },
      { scope: 'actor', scope_id: id, key: 'x', action: 'set', data: 'actor' },
      { scope: 'session', scope_id: id, key: 'predraft', action: 'set', data: 'last' },
    ];
    for (const change of changes) await apply(cp, change);

    for (const [index, filters] of subscriptions.entries()) {
      const expected = expectedFor(filters, changes);
      expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0);
      const sseFrames = await sseChanges(sseClients[index]!, expected.length);
      const wsFrames = await wsClients[index]!.until(expected.length);
      expect(
        sseFrames.map((f) => identity(dataOf(f))),
        `SSE ${JSON.stringify(filters)}`,
      ).toEqual(expected);
      expect(wsFrames.map(identity), `WS ${JSON.stringify(filters)}`).toEqual(expected);
      // Both transports name each change by the same event id.
      expect(wsFrames.map((f) => f.id)).toEqual(sseFrames.map((f) => f.id));
    }
    // Nothing arrives that the filters exclude, also after the last expected change.
    await new Promise((wake) => setTimeout(wake, 200));
    for (const [index, filters] of subscriptions.entries()) {
      const count = expectedFor(filters, changes).length;
      expect(sseClients[index]!.frames.filter(isEvent).length).toBe(count);
      expect(wsClients[index]!.frames.length).toBe(count);
    }

    // The frames themselves: SSE `id:`, `event:` and the change as JSON; WebSocket with id and scopeId.
    const frames = sseClients[0]!.frames.filter(isEvent);
    const first = frames[0];
    const removal = frames.find((f) => dataOf(f).action === 'delete');
    expect(first!.id).toMatch(/^\d+-\d+$/);
    expect(first!.event).toBe('memory_change');
    expect(Object.keys(dataOf(first!))).toEqual([
      'type',
      'scope',
      'scope_id',
      'key',
      'action',
      'data',
      'timestamp',
    ]);
    expect(dataOf(first!)).toEqual({
      type: 'memory_change',
      scope: 'session',
      scope_id: id,
      key: 'draft',
      action: 'set',
      data: { words: 412 },
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // A delete carries the value it removed.
    expect(dataOf(removal!)).toMatchObject({ key: 'draft', action: 'delete', data: { words: 412 } });
    const frame = wsClients[0]!.frames[0]!;
    expect(Object.keys(frame)).toEqual([
      'id',
      'type',
      'scope',
      'scope_id',
      'scopeId',
      'key',
      'action',
      'data',
      'timestamp',
    ]);
    expect(frame).toEqual({ ...dataOf(first!), id: first!.id, scopeId: id });
  });

  it('start with the next change when no id is given: earlier changes are not replayed', async () => {
    const id = unique('sess');
    await apply(cp, { scope: 'session', scope_id: id, key: 'before', action: 'set', data: 1 });
    const stream = await sse(`${cp.base}${SSE}?scope_id=${id}`);
    const ws = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}`));
    await apply(cp, { scope: 'session', scope_id: id, key: 'after', action: 'set', data: 2 });
    expect((await sseChanges(stream, 1)).map((f) => dataOf(f).key)).toEqual(['after']);
    expect((await ws.until(1)).map((f) => f.key)).toEqual(['after']);
  });

  it('resume over SSE with Last-Event-ID or ?last_event_id= (the header wins): exactly the changes missed, then live ones', async () => {
    const id = unique('sess');
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
    const first = await sse(`${cp.base}${SSE}?scope_id=${id}`);
    for (const key of keys.slice(0, 3))
      await apply(cp, { scope: 'session', scope_id: id, key, action: 'set' });
    const seen = await sseChanges(first, 3);
    first.close();
    // Missed while away, among changes of another scope the filter leaves out.
    await apply(cp, { scope: 'session', scope_id: unique('sess'), key: 'k4', action: 'set' });
    for (const key of keys.slice(3, 5))
      await apply(cp, { scope: 'session', scope_id: id, key, action: 'set' });

    const byHeader = await sse(`${cp.base}${SSE}?scope_id=${id}`, { 'Last-Event-ID': seen[2]!.id! });
    const byQuery = await sse(`${cp.base}${SSE}?scope_id=${id}&last_event_id=${seen[1]!.id}`);
    const both = await sse(`${cp.base}${SSE}?scope_id=${id}&last_event_id=${seen[0]!.id}`, {
      'Last-Event-ID': seen[2]!.id!,
    });
    await apply(cp, { scope: 'session', scope_id: id, key: 'k6', action: 'set' });
    expect((await sseChanges(byHeader, 3)).map((f) => dataOf(f).key)).toEqual(['k4', 'k5', 'k6']);
    expect((await sseChanges(byQuery, 4)).map((f) => dataOf(f).key)).toEqual(['k3', 'k4', 'k5', 'k6']);
    expect((await sseChanges(both, 3)).map((f) => dataOf(f).key)).toEqual(['k4', 'k5', 'k6']);
  });

  it('resume over WebSocket with last_event_id: exactly the changes missed, then live ones', async () => {
    const id = unique('sess');
    const first = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}`));
    for (const key of ['a', 'b']) await apply(cp, { scope: 'session', scope_id: id, key, action: 'set' });
    const [, last] = await first.until(2);
    first.close();
    for (const key of ['c', 'd']) await apply(cp, { scope: 'session', scope_id: id, key, action: 'set' });
    const resumed = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}&last_event_id=${last!.id}`));
    await apply(cp, { scope: 'session', scope_id: id, key: 'e', action: 'set' });
    expect((await resumed.until(3)).map((f) => f.key)).toEqual(['c', 'd', 'e']);
    await new Promise((wake) => setTimeout(wake, 100));
    expect(resumed.frames).toHaveLength(3);
  });

  // Regression: an id from before a database reset (ahead of every change kept) used to open
  // a stream that stayed silent until the log's own ids passed it.
  it('start with the next change when the id given lies beyond every change kept', async () => {
    const id = unique('sess');
    const first = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}`));
    await apply(cp, { scope: 'session', scope_id: id, key: 'before', action: 'set' });
    const [tx, row] = (await first.until(1))[0]!.id.split('-').map(BigInt);
    const ahead = `${tx! + 1_000_000n}-${row! + 1_000n}`;
    const ws = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}&last_event_id=${ahead}`));
    const stream = await sse(`${cp.base}${SSE}?scope_id=${id}`, { 'Last-Event-ID': ahead });
    await apply(cp, { scope: 'session', scope_id: id, key: 'after', action: 'set' });
    expect((await ws.until(1)).map((f) => f.key)).toEqual(['after']);
    expect((await sseChanges(stream, 1)).map((f) => dataOf(f).key)).toEqual(['after']);
  });
});

describe('GET /api/v1/memory/events/history', () => {
  const history = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    call(cp.base, 'GET', `${HISTORY}?${query(params)}`, undefined, headers);

  it('pages through past changes oldest first, with has_more, next_cursor and a Link to the next page', async () => {
    const id = unique('sess');
    const keys = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];
    for (const key of keys)
      await apply(cp, { scope: 'session', scope_id: id, key, action: 'set', data: { key } });
    await apply(cp, { scope: 'session', scope_id: id, key: 'p1', action: 'delete' });

    const first = await history({ scope_id: id, limit: '3' });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.events.map((e: any) => e.key)).toEqual(['p1', 'p2', 'p3']);
    expect(first.body.events[0]).toEqual({
      id: expect.stringMatching(/^\d+-\d+$/),
      type: 'memory_change',
      scope: 'session',
      scope_id: id,
      key: 'p1',
      action: 'set',
      data: { key: 'p1' },
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(first.body).toMatchObject({ has_more: true, next_cursor: first.body.events[2].id });
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1];
    expect(link).toBe(
      `${HISTORY}?scope_id=${id}&limit=3&after=${encodeURIComponent(first.body.next_cursor)}`,
    );

    const second = await call(cp.base, 'GET', link!);
    expect(second.body.events.map((e: any) => e.key)).toEqual(['p4', 'p5', 'p6']);
    const third = await history({ scope_id: id, limit: '3', after: second.body.next_cursor });
    expect(third.body.events.map((e: any) => `${e.action} ${e.key}`)).toEqual(['set p7', 'delete p1']);
    expect(third.body.has_more).toBe(false);
    expect(third.headers.get('link')).toBeNull();
    expect(third.body.next_cursor).toBe(third.body.events[1].id);
    // Past the end: nothing yet, and the cursor stays where it was so a poller can come back.
    const empty = await history({ scope_id: id, after: third.body.next_cursor });
    expect(empty.body).toEqual({ events: [], has_more: false, next_cursor: third.body.next_cursor });
    await apply(cp, { scope: 'session', scope_id: id, key: 'p8', action: 'set' });
    const polled = await history({ scope_id: id, after: third.body.next_cursor });
    expect(polled.body.events.map((e: any) => e.key)).toEqual(['p8']);
    // Without any position or filter match: empty, and no cursor to give.
    expect((await history({ scope_id: unique('none') })).body).toEqual({
      events: [],
      has_more: false,
      next_cursor: null,
    });
  });

  it('applies the same filters as the streams, and names changes by the ids the streams sent', async () => {
    const id = unique('sess');
    const stream = await sse(`${cp.base}${SSE}?scope_id=${id}`);
    const changes: Change[] = [
      { scope: 'session', scope_id: id, key: 'draft', action: 'set' },
      { scope: 'workflow', scope_id: id, key: 'draft.v2', action: 'set' },
      { scope: 'session', scope_id: id, key: 'user.7.prefs', action: 'set' },
      { scope: 'session', scope_id: id, key: 'final-draft', action: 'set' },
      { scope: 'session', scope_id: id, key: 'draft', action: 'delete' },
    ];
    for (const change of changes) await apply(cp, change);
    const frames = await sseChanges(stream, changes.length);
    const cases: Array<Record<string, string>> = [
      { scope_id: id },
      { scope: 'session', scope_id: id },
      { scope: 'workflow', scope_id: id },
      { scope_id: id, key: 'draft*' },
      { scope_id: id, key: '*draft' },
      { scope_id: id, key: 'user.*.prefs' },
      { scope_id: id, key: 'draft' },
    ];
    for (const filters of cases) {
      const answer = await history(filters);
      expect(answer.body.events.map(identity), JSON.stringify(filters)).toEqual(
        expectedFor(filters, changes),
      );
    }
    const all = await history({ scope_id: id });
    expect(all.body.events.map((e: any) => e.id)).toEqual(frames.map((f) => f.id));
    // History and streams agree on positions: resuming a stream after a history id continues there.
    const resumed = await sse(`${cp.base}${SSE}?scope_id=${id}&last_event_id=${all.body.events[2].id}`);
    expect((await sseChanges(resumed, 2)).map((f) => f.id)).toEqual(frames.slice(3).map((f) => f.id));
  });

  it('starts at since (inclusive) and combines it with after', async () => {
    const id = unique('sess');
    for (const key of ['s1', 's2', 's3'])
      await apply(cp, { scope: 'session', scope_id: id, key, action: 'set' });
    // When each entry was recorded, to the microsecond (the database's clock).
    const rows = await handle.db.raw(
      `select id::text as id, created_at from event_log where stream = ? and payload->>'scope_id' = ? order by tx, id`,
      [MEMORY_STREAM, id],
    );
    const recorded = (rows.rows as Array<{ created_at: Date | string }>).map((r) => new Date(r.created_at));
    const at = (time: Date) => time.toISOString();
    // Truncated to the millisecond, an entry's own time is at or before it: included.
    const from2 = await history({ scope_id: id, since: at(recorded[1]!) });
    expect(from2.body.events.map((e: any) => e.key)).toEqual(
      recorded[0]!.getTime() === recorded[1]!.getTime() ? ['s1', 's2', 's3'] : ['s2', 's3'],
    );
    const later = await history({ scope_id: id, since: at(new Date(recorded[2]!.getTime() + 1)) });
    expect(later.body.events).toEqual([]);
    const offset = await history({ scope_id: id, since: '2000-01-01T01:00:00+01:00' });
    expect(offset.body.events.map((e: any) => e.key)).toEqual(['s1', 's2', 's3']);
    const both = await history({
      scope_id: id,
      since: '2000-01-01T00:00:00Z',
      after: offset.body.events[0].id,
    });
    expect(both.body.events.map((e: any) => e.key)).toEqual(['s2', 's3']);
  });

  it('answers 100 changes by default and up to 1000 when asked', async () => {
    const id = unique('sess');
    const timestamp = new Date().toISOString();
    await appendEvents(
      handle.db,
      Array.from({ length: 1001 }, (_, n) => ({
        stream: MEMORY_STREAM,
        event: MEMORY_CHANGE,
        payload: { scope: 'session', scope_id: id, key: `n${n}`, action: 'set', data: n, timestamp },
      })),
    );
    const standard = await history({ scope_id: id });
    expect(standard.body.events).toHaveLength(100);
    expect(standard.body.has_more).toBe(true);
    const most = await history({ scope_id: id, limit: '1000' });
    expect(most.body.events).toHaveLength(1000);
    expect(most.body.events.map((e: any) => e.data)).toEqual(Array.from({ length: 1000 }, (_, n) => n));
    expect(most.body.has_more).toBe(true);
    const rest = await history({ scope_id: id, limit: '1000', after: most.body.next_cursor });
    expect(rest.body).toMatchObject({ events: [{ key: 'n1000' }], has_more: false });
  });

  it('never skips a change that commits late: it appears after the changes committed before it ended', async (ctx) => {
    if (databaseKind(handle.db) !== 'postgres') ctx.skip(); // PGlite runs one transaction at a time
    const id = unique('sess');
    const change = (key: string) => ({
      scope: 'session',
      scope_id: id,
      key,
      action: 'set',
      data: null,
      timestamp: new Date().toISOString(),
    });
    await appendEvent(handle.db, MEMORY_STREAM, MEMORY_CHANGE, change('before'));
    const older = await handle.db.transaction();
    try {
      // The older transaction takes its id first and writes its change after a newer one committed.
      await older.raw('select pg_current_xact_id()');
      await appendEvent(handle.db, MEMORY_STREAM, MEMORY_CHANGE, change('newer'));
      const early = await history({ scope_id: id });
      // The newer change is held back while an older transaction could still write before it.
      expect(early.body.events.map((e: any) => e.key)).toEqual(['before']);
      await appendEvent(older, MEMORY_STREAM, MEMORY_CHANGE, change('older'));
      await older.commit();
      const next = await history({ scope_id: id, after: early.body.next_cursor });
      expect(next.body.events.map((e: any) => e.key)).toEqual(['older', 'newer']);
    } finally {
      if (!older.isCompleted()) await older.rollback();
    }
  });
});

describe('refused requests', () => {
  it('answer 400 problem+json for an empty filter, a repeated parameter, a bad cursor, since or limit', async () => {
    const cases: Array<[string, string]> = [
      [SSE, 'scope='],
      [SSE, 'scope=team'],
      [SSE, 'scope_id='],
      [SSE, 'key='],
      [SSE, `key=${'k'.repeat(256)}`],
      [SSE, 'key=a&key=b'],
      [SSE, 'last_event_id=yesterday'],
      [SSE, 'last_event_id=1-99999999999999999999'],
      [HISTORY, 'scope_id='],
      [HISTORY, 'scope_id=a&scope_id=b'],
      [HISTORY, 'key=%01'],
      [HISTORY, 'after=abc'],
      [HISTORY, 'since=yesterday'],
      [HISTORY, 'since=2026-11-22T06:20:00'],
      [HISTORY, 'limit=0'],
      [HISTORY, 'limit=1001'],
      [HISTORY, 'limit=2.5'],
      [HISTORY, 'limit=ten'],
      [HISTORY, 'limit=5&limit=6'],
      [WS, 'scope='],
    ];
    for (const [path, search] of cases) {
      const answer = await call(cp.base, 'GET', `${path}?${search}`);
      expect(answer.status, `${path}?${search}`).toBe(400);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors.length, `${path}?${search}`).toBeGreaterThan(0);
    }
    for (const since of ['0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00']) {
      const answer = await call(cp.base, 'GET', `${HISTORY}?since=${encodeURIComponent(since)}`);
      expect(answer.status, since).toBe(400);
      expect(answer.body.errors).toEqual([
        {
          field: 'since',
          message: `must be a time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (got "${since}")`,
        },
      ]);
    }
    for (const since of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      expect((await call(cp.base, 'GET', `${HISTORY}?since=${since}`)).status, since).toBe(200);
    }
    const header = await call(cp.base, 'GET', SSE, undefined, { 'Last-Event-ID': 'yesterday' });
    expect(header.status).toBe(400);
    expect(header.body.errors).toEqual([{ field: 'Last-Event-ID', message: expect.any(String) }]);
  });

  it('answer a WebSocket handshake with a bad query 400 problem+json, then close the connection', async () => {
    for (const search of ['scope=', 'key=a&key=b', 'last_event_id=abc']) {
      const answer = await refused(cp.base, `${WS}?${search}`);
      expect(answer.status, search).toBe(400);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      expect(answer.body).toMatchObject({ code: 'invalid_request', instance: WS });
    }
  });

  it('answer a plain GET of the WebSocket path 400, telling the client to open a WebSocket', async () => {
    const answer = await call(cp.base, 'GET', WS);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body.detail).toMatch(/WebSocket/);
    expect(answer.body.resolution).toContain(SSE);
    expect(answer.body.errors).toEqual([{ field: 'Upgrade', message: 'must be websocket' }]);
    // Another protocol in Upgrade is not a WebSocket handshake either; the connection ends after.
    const raw = await rawConnection(cp.base);
    raw.tcp.write(handshake(WS, { Upgrade: 'h2c' }));
    await raw.closed;
    expect(raw.received().toString('latin1')).toMatch(
      /^HTTP\/1\.1 400 [\s\S]*connection: close[\s\S]*"must be websocket"/i,
    );
  });

  it('survive clients that reset the connection while a refusal is being written (an upgraded socket has no error listener of its own)', async () => {
    // Without a listener the write's ECONNRESET is an uncaught exception: the run fails with it
    // (in production the process would exit).
    for (let n = 0; n < 100; n++) {
      const raw = await rawConnection(cp.base);
      raw.tcp.write(handshake(`${WS}?scope=`));
      if (n % 2 === 1) await new Promise((wake) => setImmediate(wake));
      raw.tcp.resetAndDestroy();
    }
    await new Promise((wake) => setTimeout(wake, 200));
    expect((await fetch(`${cp.base}/api/v1/health`)).status).toBe(200);
  });

  it('answer a malformed handshake 400 problem+json: version (naming the versions spoken), key, subprotocol', async () => {
    const version = await rawConnection(cp.base);
    version.tcp.write(handshake(WS, { 'Sec-WebSocket-Version': '7' }));
    await version.closed;
    const text = version.received().toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toMatch(/\r\nsec-websocket-version: 13, 8\r\n/i);
    expect(text).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).errors).toEqual([
      { field: 'Sec-WebSocket-Version', message: 'must be 13 (or 8)' },
    ]);
    const malformed: Array<Record<string, string>> = [
      { 'Sec-WebSocket-Key': 'short' },
      { 'Sec-WebSocket-Protocol': 'a,,b' },
    ];
    for (const extra of malformed) {
      const raw = await rawConnection(cp.base);
      raw.tcp.write(handshake(WS, extra));
      await raw.closed;
      const answer = raw.received().toString('latin1');
      expect(answer, JSON.stringify(extra)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ code: 'invalid_request', errors: [{ field: '(handshake)' }] });
    }
  });
});

describe('WebSocket connections', () => {
  it('answer the handshake 101 with the request id, and ignore what the client sends', async () => {
    const client = new WebSocket(wsUrl(cp.base, WS), { headers: { 'X-Request-ID': 'req-ws-test-1' } });
    opened.push({ close: () => client.terminate() });
    const upgraded = once(client, 'upgrade') as Promise<[import('node:http').IncomingMessage]>;
    await once(client, 'open');
    const [response] = await upgraded;
    expect(response.statusCode).toBe(101);
    expect(response.headers['x-request-id']).toBe('req-ws-test-1');
    const ws = await socket(wsUrl(cp.base, `${WS}?scope_id=${unique('sess')}`));
    ws.ws.send('hello');
    await new Promise((wake) => setTimeout(wake, 100));
    expect(ws.ws.readyState).toBe(WebSocket.OPEN);
    // The stream is one-way: a message over 64 KiB is refused by closing with 1009 (message too big).
    ws.ws.send('x'.repeat(64 * 1024 + 1));
    expect((await ws.closed).code).toBe(1009);
  });

  // Regression: Node hands over an upgrade while a request pipelined ahead of it is still
  // answered on the socket; giving it a response of its own threw ERR_HTTP_SOCKET_ASSIGNED from the
  // 'upgrade' listener, an uncaught exception that ended the process (no API key needed).
  it('answer a handshake pipelined behind other requests after their answers, in order', async () => {
    const id = unique('sess');
    const raw = await rawConnection(cp.base);
    const plain = 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    raw.tcp.write(plain + plain + handshake(`${WS}?scope_id=${id}`));
    await waitFor(
      () => raw.received().includes('\r\n\r\n', raw.received().indexOf('HTTP/1.1 101')),
      5_000,
      'the 101',
    );
    const text = raw.received().toString('latin1');
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 200 ', 'HTTP/1.1 101 ']);
    // The connection is a working WebSocket.
    const upgraded = raw.received().indexOf('\r\n\r\n', raw.received().indexOf('HTTP/1.1 101')) + 4;
    await apply(cp, { scope: 'session', scope_id: id, key: 'k', action: 'set' });
    await waitFor(() => opcodes(raw.received().subarray(upgraded)).includes(0x1), 5_000, 'a change frame');
    expect((await fetch(`${cp.base}/api/v1/health`)).status).toBe(200);
  });

  it('ping every keep-alive interval and cut off a peer that does not answer, while answering peers stay', async () => {
    const healthy = await socket(wsUrl(cp.base, WS));
    const silent = await rawConnection(cp.base);
    silent.tcp.write(handshake(WS));
    expect(await silent.head()).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    const started = Date.now();
    // The raw client reads everything but never answers a ping.
    await silent.closed;
    expect(Date.now() - started).toBeLessThan(5_000);
    const body = silent.received().subarray(silent.received().indexOf('\r\n\r\n') + 4);
    expect(opcodes(body)[0]).toBe(0x9);
    // The answering client outlives several pings.
    while (healthy.pings < 4 && Date.now() - started < 5_000)
      await new Promise((wake) => setTimeout(wake, 20));
    expect(healthy.pings).toBeGreaterThanOrEqual(4);
    expect(healthy.ws.readyState).toBe(WebSocket.OPEN);
  });

  // Regression: a client catching up is paced, never dropped by the buffer bound, and one that
  // read nothing held its batch (up to 8 MiB read from the log, and its frames) for as long as it
  // stayed connected: forever over SSE, and over WebSocket while it sent pongs unasked.
  it('cut off a client that stops reading while catching up (SSE, and a WebSocket whose pongs come unasked)', async () => {
    const id = unique('sess');
    const mark = await socket(wsUrl(cp.base, `${WS}?scope_id=${id}`));
    await apply(cp, { scope: 'session', scope_id: id, key: 'mark', action: 'set' });
    const [start] = await mark.until(1);
    mark.close();
    const big = 'x'.repeat(512 * 1024);
    for (let n = 0; n < 24; n++)
      await apply(cp, { scope: 'session', scope_id: id, key: `big-${n}`, action: 'set', data: big });
    const resume = `scope_id=${id}&last_event_id=${start!.id}`;

    const sseClient = await stalledClient(cp, `GET ${SSE}?${resume} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const wsClient = await stalledClient(cp, handshake(`${WS}?${resume}`));
    // The WebSocket client sends an empty masked pong every 50 ms (RFC 6455 allows them unasked).
    const pongs = setInterval(() => wsClient.client.tcp.write(Buffer.from([0x8a, 0x80, 1, 2, 3, 4])), 50);
    try {
      const ends = [sseClient.end, wsClient.end];
      await waitFor(() => ends.every((end) => end.destroyed), 10_000, 'both stuck clients to be cut off');
    } finally {
      clearInterval(pongs);
    }
    expect(cp.errors).toEqual([]);
  });
});

describe('authentication (SERVICE_API_KEY set)', () => {
  let secured: TestControlPlane;

  beforeAll(async () => {
    secured = await startTestControlPlane({
      handle,
      config: (config) => {
        config.api.auth = { apiKey: KEY, skipPaths: [] };
      },
    });
  });

  afterAll(async () => {
    await secured?.close();
  });

  it('refuses SSE, the WebSocket handshake and history without the key: 401 problem+json', async () => {
    for (const path of [SSE, HISTORY, `${SSE}?api_key=wrong`]) {
      const answer = await call(secured.base, 'GET', path);
      expect(answer.status, path).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.body.code).toBe('unauthorized');
    }
    for (const [path, headers] of [
      [WS, {}],
      [`${WS}?api_key=wrong`, {}],
      [WS, { 'X-API-Key': 'wrong' }],
    ] as const) {
      const answer = await refused(secured.base, path, { headers });
      expect(answer.status, path).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      expect(answer.headers.connection).toBe('close');
      expect(answer.body.code).toBe('unauthorized');
    }
  });

  it('accepts the key as X-API-Key, as a bearer token and as ?api_key= on all three', async () => {
    const id = unique('sess');
    const headerStream = await sse(`${secured.base}${SSE}?scope_id=${id}`, { 'X-API-Key': KEY });
    const queryStream = await sse(`${secured.base}${SSE}?scope_id=${id}&api_key=${KEY}`);
    const byQuery = await socket(wsUrl(secured.base, `${WS}?scope_id=${id}&api_key=${KEY}`));
    const byHeader = await socket(wsUrl(secured.base, `${WS}?scope_id=${id}`), {
      headers: { 'X-API-Key': KEY },
    });
    const byBearer = await socket(wsUrl(secured.base, `${WS}?scope_id=${id}`), {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    await apply(
      secured,
      { scope: 'session', scope_id: id, key: 'secret', action: 'set' },
      { 'X-API-Key': KEY },
    );
    for (const stream of [headerStream, queryStream]) {
      expect((await sseChanges(stream, 1)).map((f) => dataOf(f).key)).toEqual(['secret']);
    }
    for (const client of [byQuery, byHeader, byBearer])
      expect((await client.until(1))[0]!.key).toBe('secret');
    const carriers: Array<Record<string, string>> = [
      { 'X-API-Key': KEY },
      { Authorization: `Bearer ${KEY}` },
    ];
    for (const headers of carriers) {
      const answer = await call(secured.base, 'GET', `${HISTORY}?scope_id=${id}`, undefined, headers);
      expect(answer.body.events.map((e: any) => e.key)).toEqual(['secret']);
    }
    const byQueryHistory = await call(secured.base, 'GET', `${HISTORY}?scope_id=${id}&api_key=${KEY}`);
    expect(byQueryHistory.status).toBe(200);
  });
});

describe('slow consumers and shutdown', () => {
  let slow: TestControlPlane;
  let streams: OpenStreams;

  beforeAll(async () => {
    streams = createOpenStreams();
    // Keep-alives far apart, so only the buffer bound can cut a reader off here.
    slow = await startTestControlPlane({ handle, sseKeepAliveMs: 60_000, streams });
    trackConnections(slow);
  });

  afterAll(async () => {
    await slow?.close();
  });

  it('catch a client up on a backlog far over the buffer bound at its own pace, without dropping it', async () => {
    // 24 changes of 192 KiB: 4.5 MiB, read from the log in one batch. Written at once they would
    // exceed the 1 MiB bound and cut the client off; paced, each transport receives them all.
    const id = unique('sess');
    const mark = await socket(wsUrl(slow.base, `${WS}?scope_id=${id}`));
    await apply(slow, { scope: 'session', scope_id: id, key: 'mark', action: 'set' });
    const [start] = await mark.until(1);
    mark.close();
    const big = 'x'.repeat(192 * 1024);
    for (let n = 0; n < 24; n++)
      await apply(slow, { scope: 'session', scope_id: id, key: `big-${n}`, action: 'set', data: big });

    const ws = await socket(wsUrl(slow.base, `${WS}?scope_id=${id}&last_event_id=${start!.id}`));
    const stream = await sse(`${slow.base}${SSE}?scope_id=${id}&last_event_id=${start!.id}`);
    const keys = Array.from({ length: 24 }, (_, n) => `big-${n}`);
    expect((await ws.until(24, 30_000)).map((f) => f.key)).toEqual(keys);
    expect((await sseChanges(stream, 24, 30_000)).map((f) => dataOf(f).key)).toEqual(keys);
    expect(ws.frames.every((f) => f.data === big)).toBe(true);
    expect(ws.ws.readyState).toBe(WebSocket.OPEN);
    expect(slow.errors).toEqual([]);
  });

  it('disconnects a WebSocket client that stops reading, while another keeps receiving everything', async () => {
    const id = unique('sess');
    const reader = await socket(wsUrl(slow.base, `${WS}?scope_id=${id}`));
    const stuck = await rawConnection(slow.base);
    stuck.tcp.write(handshake(`${WS}?scope_id=${id}`));
    expect(await stuck.head()).toMatch(/^HTTP\/1\.1 101 /);
    // From here on the raw client reads nothing: the server's writes pile up for it.
    stuck.tcp.pause();
    expect(streams.size).toBe(2);

    // 64 changes of 128 KiB, one after another: 8 MiB, far more than the socket buffers take.
    const value = 'y'.repeat(128 * 1024);
    const total = 64;
    const health: number[] = [];
    for (let n = 0; n < total; n++) {
      await apply(slow, { scope: 'session', scope_id: id, key: `slow-${n}`, action: 'set', data: value });
      if (n % 16 === 0) health.push((await fetch(`${slow.base}/api/v1/health`)).status);
    }
    const frames = await reader.until(total, 30_000);
    expect(frames.map((f) => f.key)).toEqual(Array.from({ length: total }, (_, n) => `slow-${n}`));
    expect(health.every((status) => status === 200)).toBe(true);
    // The stuck client was dropped (its registration is gone), the reader was not.
    const deadline = Date.now() + 10_000;
    while (streams.size !== 1 && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 20));
    expect(streams.size).toBe(1);
    expect(reader.ws.readyState).toBe(WebSocket.OPEN);
    // Reading again, it finds the connection cut off partway: only some of the changes reached it.
    stuck.tcp.resume();
    await stuck.closed;
    const body = stuck.received().subarray(stuck.received().indexOf('\r\n\r\n') + 4);
    const delivered = opcodes(body).filter((opcode) => opcode === 0x1).length;
    expect(delivered).toBeLessThan(total);
    expect(slow.errors).toEqual([]);
  });

  // Regression: the stream was ended politely, and the end of a response waits behind all
  // the client had not read: the connection and that output stayed for as long as the client did.
  it('cuts the connection of an SSE client that stops reading, with what it had not read', async () => {
    const id = unique('sess');
    const reader = await sse(`${slow.base}${SSE}?scope_id=${id}`);
    const subscribed = streams.size;
    const { end } = await stalledClient(
      slow,
      `GET ${SSE}?scope_id=${id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    await waitFor(() => streams.size === subscribed + 1, 5_000, 'the stuck client to subscribe');
    const value = 'y'.repeat(128 * 1024);
    for (let n = 0; n < 64; n++)
      await apply(slow, { scope: 'session', scope_id: id, key: `slow-${n}`, action: 'set', data: value });
    expect(await sseChanges(reader, 64, 30_000)).toHaveLength(64);
    await waitFor(() => end.destroyed, 10_000, 'the server to cut the stuck connection');
    expect(slow.errors).toEqual([]);
  });

  // Regression: the keep-alive comment went through the buffer bound, and a client still
  // reading a frame larger than the bound (a value near memory.max_value_bytes, which a frame of
  // its own may be) was dropped when a keep-alive fell due, however steadily it read.
  it('catch an SSE client reading steadily up on changes larger than the buffer bound, across keep-alives', async () => {
    const own = await startTestControlPlane({ handle, sseKeepAliveMs: 1_000 });
    try {
      const id = unique('sess');
      const mark = await socket(wsUrl(own.base, `${WS}?scope_id=${id}`));
      await apply(own, { scope: 'session', scope_id: id, key: 'mark', action: 'set' });
      const [start] = await mark.until(1);
      mark.close();
      // Values at the limit: each frame alone is over the 1 MiB bound.
      const big = 'x'.repeat(own.config.memory.maxValueBytes - 2);
      for (let n = 0; n < 6; n++)
        await apply(own, { scope: 'session', scope_id: id, key: `big-${n}`, action: 'set', data: big });
      const client = await rawConnection(own.base);
      // About 1.5 MB/s: a frame takes most of a keep-alive interval to arrive.
      client.tcp.on('data', () => {
        client.tcp.pause();
        setTimeout(() => client.tcp.resume(), 40);
      });
      client.tcp.write(
        `GET ${SSE}?scope_id=${id}&last_event_id=${start!.id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      );
      const frames = () => client.received().toString('latin1').split('"timestamp":"').length - 1;
      let closed = false;
      void client.closed.then(() => {
        closed = true;
      });
      await waitFor(() => frames() === 6 || closed, 30_000, 'the backlog');
      expect(closed).toBe(false);
      expect(frames()).toBe(6);
    } finally {
      await own.close();
    }
  });

  // Regression: a shutdown ended SSE streams politely, and one whose client did not read
  // held the shutdown for its whole grace period (10 s), where a WebSocket is cut after 2 s.
  it('cuts an SSE stream whose client does not read 2 s after a shutdown ends it', async () => {
    const open = createOpenStreams();
    const own = await startTestControlPlane({ handle, sseKeepAliveMs: 60_000, streams: open });
    try {
      trackConnections(own);
      // A backlog the client is caught up on at its own pace: it never reads, so output waits.
      const id = unique('sess');
      const mark = await socket(wsUrl(own.base, `${WS}?scope_id=${id}`));
      await apply(own, { scope: 'session', scope_id: id, key: 'mark', action: 'set' });
      const [start] = await mark.until(1);
      const big = 'x'.repeat(512 * 1024);
      for (let n = 0; n < 24; n++)
        await apply(own, { scope: 'session', scope_id: id, key: `big-${n}`, action: 'set', data: big });
      const { end } = await stalledClient(
        own,
        `GET ${SSE}?scope_id=${id}&last_event_id=${start!.id} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      );
      await waitFor(() => end.writableLength > 0, 5_000, 'output to wait for the client');
      const ended = Date.now();
      open.endAll();
      await waitFor(() => end.destroyed, 5_000, 'the server to cut the stuck stream');
      expect(Date.now() - ended).toBeGreaterThanOrEqual(1_900);
    } finally {
      await own.close();
    }
  });

  it('ends WebSocket and SSE streams at shutdown: sockets close with 1001', async () => {
    const ws = await socket(wsUrl(slow.base, WS));
    const response = await fetch(`${slow.base}${SSE}`);
    // Resolves once the server ends the stream.
    const text = response.text();
    while (streams.size < 2) await new Promise((wake) => setTimeout(wake, 10));
    streams.endAll();
    expect(await ws.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    expect(await text).toMatch(/^retry: \d+\n: connected\n\n/);
    expect(streams.size).toBe(0);
  });
});
