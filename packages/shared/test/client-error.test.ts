import { createServer, type Server, type ServerOptions } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClientErrorResponse,
  clientErrorResponse,
  createClientErrorHandler,
  hostHeaderProblem,
  isProblem,
  renderProblem,
} from '../src/index.ts';

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Bytes of the body. */
  length: number;
  /** Everything the server sent on the connection. */
  all: string;
}

function parse(all: string): Raw {
  const end = all.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = all.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  // Collected as latin1 (one char per byte) so lengths are byte counts; the body is UTF-8 JSON.
  const bytes = Buffer.from(all.slice(end + 4), 'latin1');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: bytes.toString('utf8'),
    length: bytes.length,
    all,
  };
}

/** Writes raw bytes on a fresh connection and collects everything until the server closes it. */
function send(server: Server, ...parts: string[]): Promise<Raw> {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = connect(port, '127.0.0.1', () => {
      for (const part of parts) socket.write(part);
    });
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
    });
    // A server that closes with unread bytes may reset; what it sent before still counts.
    socket.on('error', (error) => (data ? socket.destroy() : reject(error)));
    socket.on('close', () => resolve(parse(data)));
  });
}

describe('client errors Node rejects before the application sees a request', () => {
  let server: Server;
  const answered: Array<ClientErrorResponse | undefined> = [];

  async function start(options: ServerOptions = {}, handler?: Parameters<typeof createServer>[1]) {
    server = createServer({ requireHostHeader: false, ...options }, (req, res) => {
      const problem = hostHeaderProblem(req);
      if (problem) {
        const rendered = renderProblem(problem, req.url ?? '/', 'http://docs.test');
        const body = JSON.stringify(rendered.body);
        res.writeHead(rendered.status, {
          ...rendered.headers,
          'Content-Type': 'application/problem+json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
        });
        res.end(body);
        return;
      }
      if (handler) handler(req, res);
      else res.end('ok');
    });
    server.on(
      'clientError',
      createClientErrorHandler({
        docsBase: 'http://docs.test',
        headers: () => ({ 'X-Request-ID': 'req-1', 'X-API-Version': 'v1' }),
        onAnswer: ({ response }) => answered.push(response),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }

  afterEach(async () => {
    answered.length = 0;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function expectProblem(res: Raw, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(res.length);
    const problem = JSON.parse(res.body);
    expect(isProblem(problem)).toBe(true);
    expect(problem).toMatchObject({ status, code });
    expect(problem.documentation_url).toBe(`http://docs.test/docs/reference/errors#${code}`);
    return problem;
  }

  it('answers garbage with a 400 problem document carrying the given headers, and closes', async () => {
    await start();
    const res = await send(server, 'GARBAGE\r\n\r\n');
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.detail).toMatch(/could not be parsed as HTTP\/1\.1/);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(res.headers['x-api-version']).toBe('v1');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it.each([
    ['a Content-Length that is not a number', 'Content-Length: ten\r\n'],
    ['both Content-Length and Transfer-Encoding', 'Content-Length: 3\r\nTransfer-Encoding: chunked\r\n'],
    ['two different Content-Length values', 'Content-Length: 3\r\nContent-Length: 4\r\n'],
  ])('answers bad body framing (%s) with 400 naming the request path', async (_, framing) => {
    await start();
    const res = await send(server, `POST /api/v1/shares?x=1 HTTP/1.1\r\nHost: x\r\n${framing}\r\nabc`);
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.instance).toBe('/api/v1/shares');
  });

  it('answers headers over the size limit with 431', async () => {
    await start();
    const res = await send(
      server,
      `GET /llms.txt HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`,
    );
    const problem = expectProblem(res, 431, 'invalid_request');
    expect(problem.resolution).toMatch(/shorter URL/);
  });

  it('answers a request URL over the size limit with 431', async () => {
    await start();
    const res = await send(server, `GET /?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectProblem(res, 431, 'invalid_request');
  });

  it('answers a request head that does not arrive in time with 408', async () => {
    await start({ headersTimeout: 300, requestTimeout: 1000, connectionsCheckingInterval: 50 });
    const res = await send(server, 'GET / HTTP/1.1\r\nHost: x\r\n');
    expectProblem(res, 408, 'invalid_request');
    expect(res.headers.connection).toBe('close');
  });

  it('answers an HTTP/1.1 request without Host, and one with two Host lines, with 400 (RFC 9112 §3.2)', async () => {
    await start();
    const missing = await send(server, 'GET /a HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(expectProblem(missing, 400, 'invalid_request').detail).toMatch(/no Host header/);
    expect(missing.headers.connection).toBe('close');
    const twice = await send(server, 'GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n');
    expect(expectProblem(twice, 400, 'invalid_request').detail).toMatch(/more than one Host/);
    // HTTP/1.0 has no Host requirement.
    const old = await send(server, 'GET /a HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  /** One connection: writes `first`, then `then` once the answer so far contains `after`. */
  function converse(first: string, after: string, then: string): Promise<string> {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return new Promise<string>((resolve) => {
      let data = '';
      let sent = false;
      const socket = connect(port, '127.0.0.1', () => socket.write(first));
      socket.on('data', (chunk) => {
        data += chunk.toString('latin1');
        if (!sent && data.includes(after)) {
          sent = true;
          socket.write(then);
        }
      });
      socket.on('error', () => socket.destroy());
      socket.on('close', () => resolve(data));
    });
  }

  it('answers garbage sent after a completed response on a kept-alive connection', async () => {
    await start();
    const all = await converse('GET / HTTP/1.1\r\nHost: x\r\n\r\n', '\r\n\r\nok', 'NOT HTTP\r\n\r\n');
    expect(all).toMatch(/^HTTP\/1\.1 200 OK/);
    const second = all.slice(all.indexOf('\r\n\r\nok') + 6);
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(second).toContain('"code":"invalid_request"');
  });

  it('writes nothing into a response already under way: the connection is only closed', async () => {
    let release = () => {};
    await start({}, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('part one;');
      release = () => res.end('part two');
    });
    // The first response has started: garbage pipelined behind it must not inject a second one.
    const all = await converse('GET / HTTP/1.1\r\nHost: x\r\n\r\n', 'part one;', 'NOT HTTP\r\n\r\n');
    release();
    expect(all).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(all).not.toContain('400 Bad Request');
    expect(answered).toEqual([undefined]);
  });

  it('builds the raw response with the status line, the headers and an exact Content-Length', () => {
    const response = clientErrorResponse(
      Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_METHOD', reason: 'Invalid method' }),
      { docsBase: 'http://docs.test', headers: { 'RateLimit-Limit': '120' } },
    );
    const raw = parse(response.bytes.toString('latin1'));
    expect(raw.status).toBe(400);
    expect(raw.headers['ratelimit-limit']).toBe('120');
    expect(Number(raw.headers['content-length'])).toBe(raw.length);
    expect(JSON.parse(raw.body).detail).toBe('The request could not be parsed as HTTP/1.1: Invalid method.');
    expect(() =>
      clientErrorResponse(new Error('x'), { headers: { 'X-Evil': 'a\r\nSet-Cookie: b' } }),
    ).toThrow();
  });
});
