import { connect } from 'node:net';
import type { TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../support/database.ts';
import { builtSite, type LogLine, rawRequest, request, startTestServer } from './support/docs-server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const DEBUG = 20;

/** Resolves with the first log line `match` accepts, as soon as the server writes it. */
function logged(lines: LogLine[], match: (line: LogLine) => boolean): Promise<LogLine> {
  return new Promise((resolve) => {
    const check = () => {
      const found = lines.find(match);
      if (found) resolve(found);
      else setImmediate(check);
    };
    check();
  });
}

describe('request ids and request log lines', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const page = builtSite().pages[0]!.path;

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('gives every answer its own X-Request-ID and logs one line per request with it', async () => {
    const answers = [
      await request(`${server.url}${page}`),
      await request(`${server.url}${page}`, { headers: { Accept: 'text/markdown' } }),
      await request(`${server.url}/llms.txt`),
      await request(`${server.url}/api/v1/topics`),
      await request(`${server.url}/api/v1/search`),
      await request(`${server.url}/nope`),
      await request(`${server.url}${page}`, { headers: { Accept: 'image/png' } }),
      await request(`${server.url}${page}/`),
    ];
    const ids = answers.map((res) => res.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, res] of answers.entries()) {
      const line = await logged(server.logLines, (l) => l.reqId === ids[i]);
      expect(line).toMatchObject({
        level: DEBUG,
        msg: 'request completed',
        status: res.status,
        method: 'GET',
      });
      expect(typeof line.ms).toBe('number');
    }
  });

  it('keeps a sane incoming X-Request-ID and replaces anything else', async () => {
    for (const id of ['abc-123', '01HZX3J5V8T2M4N6P8Q0R2S4T6', 'trace:a1b2/c3=d4+e5@f6.g7_h8']) {
      const res = await request(`${server.url}/llms.txt`, { headers: { 'X-Request-ID': id } });
      expect(res.headers['x-request-id']).toBe(id);
      expect((await logged(server.logLines, (l) => l.reqId === id)).url).toBe('/llms.txt');
    }
    for (const id of ['', 'a'.repeat(129), 'has space', '"quoted"', 'a,b', '<script>']) {
      const res = await request(`${server.url}/llms.txt`, { headers: { 'X-Request-ID': id } });
      expect(res.headers['x-request-id']).toMatch(UUID);
    }
  });

  it('echoes the id on answers to requests Node could not parse, and logs them with it', async () => {
    const res = await rawRequest(server.url, 'GARBAGE\r\n\r\n');
    const id = res.headers['x-request-id'];
    expect(id).toMatch(UUID);
    const line = await logged(server.logLines, (l) => l.reqId === id);
    expect(line).toMatchObject({
      msg: 'client error answered with 400',
      status: 400,
      code: 'HPE_INVALID_METHOD',
    });
  });
});

describe('an upload the client abandons', () => {
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({ db: database.db, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('is a quiet client abort: one debug line, no error, no stack, and the server keeps serving', async () => {
    const { port } = new URL(server.url);
    const id = 'abandoned-upload-1';
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"version":1,"nodes":[`,
        );
        // Part of the body is in; the client goes away before the rest.
        setImmediate(() => socket.destroy());
      });
      socket.on('close', () => resolve());
    });
    const line = await logged(server.logLines, (l) => l.reqId === id);
    expect(line).toMatchObject({ level: DEBUG, msg: 'request aborted' });
    expect(line.err).toBeUndefined();
    expect(server.loggedErrors).toEqual([]);
    expect(server.logLines.some((l) => l.status === 500)).toBe(false);
    expect((await request(`${server.url}/api/v1/topics`)).status).toBe(200);
  });

  it('abandons a chunked upload just as quietly', async () => {
    const { port } = new URL(server.url);
    const id = 'abandoned-upload-2';
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"version":1,"no\r\n`,
        );
        setImmediate(() => socket.destroy());
      });
      socket.on('close', () => resolve());
    });
    expect(await logged(server.logLines, (l) => l.reqId === id)).toMatchObject({ msg: 'request aborted' });
    expect(server.loggedErrors).toEqual([]);
  });
});
