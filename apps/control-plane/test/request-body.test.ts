import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { isProblem, MAX_JSON_DEPTH } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { call, registration, uniqueNodeId } from './helpers/control-plane.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

/**
 * The platform's JSON body reader, driven through the real app on a real socket: limits, client
 * aborts, nesting depth and the spelling of failing fields. Every log line at every level is kept,
 * and every request's handling is awaited, so a test can say that nothing was logged as a failure.
 */
let handle: TestDatabase;
let server: Server;
let base: string;
let port: number;
const logs: Array<{ level: number; msg: string; err?: { stack?: string } }> = [];
/** Settles when Koa has finished handling a request (its callback's promise). */
const handled: Array<Promise<void>> = [];

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  const log = pino({ level: 'trace' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const callback = createApp({ db: handle.db, log }).callback();
  server = createServer((req, res) => {
    handled.push(callback(req, res).then(() => undefined));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as { port: number }).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  await handle.close();
});

/** Sends raw bytes on a fresh connection and collects everything the server answers until it closes. */
function rawExchange(bytes: string | Buffer, options: { endAfterWrite?: boolean } = {}): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', fail);
    socket.on('close', () => done(answer));
    socket.write(bytes, () => {
      if (options.endAfterWrite) socket.end();
    });
    // A server that answers without closing is done once a complete response has arrived.
    socket.setTimeout(2_000, () => socket.destroy());
  });
}

function statusOf(rawResponse: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(rawResponse)?.[1]);
}

function bodyOf(rawResponse: string): any {
  return JSON.parse(rawResponse.slice(rawResponse.indexOf('\r\n\r\n') + 4));
}

/** JSON text nested `levels` deep: `[[[…]]]`, two bytes a level. */
function nestedArrays(levels: number): string {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`;
}

/** A value nested `levels` deep in objects: {"a":{"a":…{}}}. */
function nestedObjects(levels: number): unknown {
  let value: unknown = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

function expectInvalidRequest(response: { status: number; headers: Headers; body: any }, detail: RegExp) {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(isProblem(response.body)).toBe(true);
  expect(response.body.code).toBe('invalid_request');
  expect(response.body.detail).toMatch(detail);
}

describe('JSON request bodies: size limits', () => {
  it('answers 413 payload_too_large from a declared Content-Length over the limit, without waiting for the body', async () => {
    const head =
      'POST /api/v1/nodes/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${2 * 1024 * 1024}\r\n\r\n`;
    // Only the head is sent: the answer must not depend on a body that never comes.
    const answer = await rawExchange(`${head}{"id":`);
    expect(statusOf(answer)).toBe(413);
    expect(bodyOf(answer)).toMatchObject({
      code: 'payload_too_large',
      detail: expect.stringMatching(/1048576 bytes/),
    });
  });

  it('answers 413 payload_too_large for a chunked body once the counted bytes pass the limit', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    const answer = await rawExchange(
      'POST /api/v1/nodes/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expect(statusOf(answer)).toBe(413);
    expect(bodyOf(answer).code).toBe('payload_too_large');
  });

  it('treats an upload the client aborts as a quiet client abort: no 500, nothing logged as a failure', async () => {
    const body = JSON.stringify(registration(uniqueNodeId('aborted'), 'http://127.0.0.1:9'));
    const received = new Promise<void>((done) => server.once('request', () => done()));
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    const before = handled.length;
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    socket.write(
      'POST /api/v1/nodes/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, body.length >> 1)}`,
    );
    await received;
    // Long enough for the body reader to be waiting for the rest of the body.
    await new Promise((done) => setTimeout(done, 50));
    socket.end();
    // Wait until Koa has finished with the request, then read what it logged about it.
    while (handled.length === before) await new Promise((done) => setTimeout(done, 5));
    await handled[before];
    await new Promise((done) => setTimeout(done, 50));
    const printed = consoleError.mock.calls.map((args) => args.join(' '));
    consoleError.mockRestore();
    // Koa's default error listener prints stacks with console.error; nothing may reach it.
    expect(printed).toEqual([]);
    const failures = logs.filter((line) => line.level >= 40 || line.err !== undefined);
    expect(failures).toEqual([]);
    const requestLine = logs.findLast((line) => line.msg === 'request') as any;
    expect(requestLine).toMatchObject({ path: '/api/v1/nodes/register', aborted: true });
    expect(requestLine.status).not.toBe(500);
  });
});

describe('JSON request bodies: nesting depth', () => {
  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels in a node registration with 400 invalid_request`, async () => {
    // A few thousand levels in 10 KB: JSON.parse takes it, recursive code after it did not (500).
    const deep = nestedArrays(5_000);
    expect(deep.length).toBe(10_000);
    const id = uniqueNodeId('deep');
    const text = JSON.stringify(registration(id, 'http://127.0.0.1:9')).replace(
      '"metadata":{"team":"qa"}',
      `"metadata":{"team":${deep}}`,
    );
    expect(text).toContain(deep);
    const response = await call(base, 'POST', '/api/v1/nodes/register', text);
    expectInvalidRequest(
      response,
      new RegExp(`nested .*deeper than ${MAX_JSON_DEPTH}|limit is ${MAX_JSON_DEPTH}`),
    );
    expect(response.body.errors).toEqual([
      { field: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
    expect((await call(base, 'GET', `/api/v1/nodes/${id}`)).status).toBe(404);
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels in PATCH /api/v1/nodes/{id}/status`, async () => {
    const id = uniqueNodeId('deep-status');
    expect(
      (await call(base, 'POST', '/api/v1/nodes/register', registration(id, 'http://127.0.0.1:9'))).status,
    ).toBe(201);
    const response = await call(
      base,
      'PATCH',
      `/api/v1/nodes/${id}/status`,
      `{"state":"ready","health":{"deep":${nestedArrays(5_000)}}}`,
    );
    expectInvalidRequest(response, new RegExp(`${MAX_JSON_DEPTH}`));
    // Nothing of the refused body was stored.
    const status = await call(base, 'GET', `/api/v1/nodes/${id}/status`);
    expect(status.body.health.custom).toBeNull();
  });

  it(`accepts a body exactly ${MAX_JSON_DEPTH} levels deep and counts brackets inside strings as text`, async () => {
    const id = uniqueNodeId('at-limit');
    // The body object is level 1 and metadata level 2, so the nested value gets the remaining levels.
    const body = registration(id, 'http://127.0.0.1:9', {
      metadata: { deep: nestedObjects(MAX_JSON_DEPTH - 2), text: nestedArrays(500) },
    });
    const response = await call(base, 'POST', '/api/v1/nodes/register', body);
    expect(response.status).toBe(201);
    expect(response.body.metadata.text).toBe(nestedArrays(500));
  });
});

describe('JSON request bodies: failing fields', () => {
  it('spells errors[].field with brackets for array indices: reasoners[0].id', async () => {
    const response = await call(
      base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId(), 'http://127.0.0.1:9', { reasoners: [{ id: 'no spaces allowed' }] }),
    );
    expectInvalidRequest(response, /reasoners\[0\]\.id/);
    expect(response.body.errors).toContainEqual({ field: 'reasoners[0].id', message: expect.any(String) });
  });

  it('names the body as a whole (body) when it is not an object', async () => {
    const response = await call(base, 'POST', '/api/v1/nodes/register', '[1,2]');
    expectInvalidRequest(response, /\(body\)/);
    expect(response.body.errors).toEqual([{ field: '(body)', message: expect.any(String) }]);
  });
});
