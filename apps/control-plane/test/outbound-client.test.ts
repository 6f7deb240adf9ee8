import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createOutboundClient,
  nonPublicReason,
  type OutboundClient,
  OutboundError,
} from '../src/platform/outbound/index.ts';

/**
 * The outbound client against real HTTP servers on 127.0.0.1: what it sends, what it reads, and
 * how each way an exchange can fail comes back as an OutboundError.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server;
let base: string;
let handler: Handler;
/** Every request the server received, with the socket it came on. */
let received: Array<{
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: Socket;
}>;
const clients: OutboundClient[] = [];

function client(options: Parameters<typeof createOutboundClient>[0]): OutboundClient {
  const made = createOutboundClient(options);
  clients.push(made);
  return made;
}

/** The error a request failed with; fails the test when it succeeded. */
async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundError);
    return error as OutboundError;
  }
  throw new Error('the request succeeded');
}

/** A port nothing listens on: a server is opened and closed on it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        socket: req.socket,
      });
      handler(req, res, body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  received = [];
  for (const made of clients.splice(0)) await made.destroy();
  server.closeAllConnections();
});

afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
});

received = [];

describe('outbound client', () => {
  it('sends the method, headers and body, and reads the whole answer', async () => {
    handler = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-answer': 'yes' });
      res.end('{"ok":true}');
    };
    const answer = await client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/in?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k1' },
      body: '{"hello":"world"}',
      timeoutMs: 2000,
      maxBodyBytes: 1024,
      overLimit: 'fail',
    });
    expect(answer).toMatchObject({ status: 201, truncated: false });
    expect(answer.headers['x-answer']).toBe('yes');
    expect(answer.body.toString()).toBe('{"ok":true}');
    expect(answer.durationMs).toBeGreaterThan(0);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/in?x=1', body: '{"hello":"world"}' });
    expect(received[0]!.headers).toMatchObject({ 'content-type': 'application/json', 'x-api-key': 'k1' });
  });

  it('answers a redirect as it came, without following it', async () => {
    handler = (req, res) => {
      if (req.url === '/moved') res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(200).end('followed');
    };
    const answer = await client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/moved`, {
      method: 'GET',
      timeoutMs: 2000,
      maxBodyBytes: 1024,
      overLimit: 'truncate',
    });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('/elsewhere');
    expect(received.map((r) => r.url)).toEqual(['/moved']);
  });

  it('times out when no answer comes within timeoutMs', async () => {
    handler = () => {
      // Never answers.
    };
    const started = Date.now();
    const error = await failure(
      client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/slow`, {
        method: 'POST',
        body: '{}',
        timeoutMs: 200,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'timeout', status: null, message: 'timed out after 200 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts the body in the timeout, keeping the status of an answer that stalled', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('the start, and then nothing');
    };
    const error = await failure(
      client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/stall`, {
        method: 'GET',
        timeoutMs: 200,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'timeout', status: 200 });
  });

  it('refuses a body over the limit when asked to fail, naming the status', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end('x'.repeat(5000));
    };
    const error = await failure(
      client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/big`, {
        method: 'GET',
        timeoutMs: 2000,
        maxBodyBytes: 4096,
        overLimit: 'fail',
      }),
    );
    expect(error).toMatchObject({ kind: 'too_large', status: 200, message: 'the answer exceeds 4096 bytes' });
  });

  it('keeps the first bytes of an oversized body when asked to truncate, and stops reading an endless one', async () => {
    const chunk = 'y'.repeat(16 * 1024);
    let writing = true;
    handler = (_req, res) => {
      res.writeHead(200);
      // An endless answer: only closing the connection stops it.
      const more = () => {
        if (!writing || res.destroyed) return;
        if (res.write(chunk)) setImmediate(more);
        else res.once('drain', more);
      };
      res.on('close', () => {
        writing = false;
      });
      more();
    };
    const answer = await client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/endless`, {
      method: 'GET',
      timeoutMs: 5000,
      maxBodyBytes: 1000,
      overLimit: 'truncate',
    });
    expect(answer).toMatchObject({ status: 200, truncated: true });
    expect(answer.body.toString()).toBe('y'.repeat(1000));
    await expect.poll(() => writing).toBe(false);
  });

  it('reads no body with maxBodyBytes 0, resolving on the answer head', async () => {
    handler = (_req, res) => {
      res.writeHead(202);
      res.write('part');
      // The rest never comes: the request must not wait for it.
    };
    const answer = await client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/head-only`, {
      method: 'POST',
      timeoutMs: 1000,
      maxBodyBytes: 0,
      overLimit: 'truncate',
    });
    expect(answer).toMatchObject({ status: 202, truncated: false });
    expect(answer.body.length).toBe(0);
  });

  it('reports a refused connection as not sent, with the socket code', async () => {
    const port = await closedPort();
    const error = await failure(
      client({ addresses: 'any', keepAliveMs: 1000 }).request(`http://127.0.0.1:${port}/x`, {
        method: 'POST',
        body: '{}',
        timeoutMs: 2000,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'not_sent', code: 'ECONNREFUSED', status: null });
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  it('reports a connection closed before any answer as no answer', async () => {
    handler = (req) => req.socket.destroy();
    const error = await failure(
      client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/hang-up`, {
        method: 'POST',
        body: '{}',
        timeoutMs: 2000,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'no_answer', status: null });
  });

  it("reports the caller's abort as aborted", async () => {
    handler = () => {
      // Never answers.
    };
    const controller = new AbortController();
    const pending = client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/abandoned`, {
      method: 'POST',
      body: '{}',
      signal: controller.signal,
      maxBodyBytes: 1024,
      overLimit: 'fail',
    });
    setTimeout(() => controller.abort(), 50);
    expect(await failure(pending)).toMatchObject({ kind: 'aborted', status: null });
  });

  it('with the public policy, refuses a loopback address before sending anything', async () => {
    const error = await failure(
      client({ addresses: 'public', keepAliveMs: 1000 }).request(`${base}/private`, {
        method: 'POST',
        body: '{}',
        timeoutMs: 2000,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'not_sent', code: 'ERR_ADDRESS_NOT_ALLOWED', status: null });
    expect(error.message).toMatch(/127\.0\.0\.1 is not allowed: it is a loopback address/);
    expect(received).toHaveLength(0);
  });

  it('with the public policy, refuses a name that resolves to a private address (checked after DNS)', async () => {
    const port = (server.address() as AddressInfo).port;
    const error = await failure(
      client({ addresses: 'public', keepAliveMs: 1000 }).request(`http://localhost:${port}/private`, {
        method: 'POST',
        body: '{}',
        timeoutMs: 2000,
        maxBodyBytes: 1024,
        overLimit: 'truncate',
      }),
    );
    expect(error).toMatchObject({ kind: 'not_sent', code: 'ERR_ADDRESS_NOT_ALLOWED' });
    expect(error.message).toMatch(/\(the address of localhost\) is not allowed/);
    expect(received).toHaveLength(0);
  });

  it('with the any policy, reaches the same loopback address', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    const answer = await client({ addresses: 'any', keepAliveMs: 1000 }).request(`${base}/private`, {
      method: 'POST',
      body: '{}',
      timeoutMs: 2000,
      maxBodyBytes: 1024,
      overLimit: 'truncate',
    });
    expect(answer.status).toBe(204);
  });

  it('keeps one connection for consecutive requests, unless keep-alive is off', async () => {
    // One connection per origin, so the second request waits for the first one's connection
    // rather than opening another while the first is being handed back.
    handler = (_req, res) => res.writeHead(200).end('ok');
    const call = (made: OutboundClient) =>
      made.request(`${base}/again`, { method: 'GET', timeoutMs: 2000, maxBodyBytes: 16, overLimit: 'fail' });
    const keeping = client({ addresses: 'any', keepAliveMs: 5000, connections: 1 });
    await call(keeping);
    await call(keeping);
    expect(received[0]!.socket).toBe(received[1]!.socket);
    received = [];
    const closing = client({ addresses: 'any', keepAliveMs: 0, connections: 1 });
    await call(closing);
    await call(closing);
    expect(received[0]!.headers.connection).toBe('close');
    expect(received[0]!.socket).not.toBe(received[1]!.socket);
  });
});

describe('public address rule', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['169.254.169.254', 'a linkLocal address'],
    ['0.0.0.0', 'a unspecified address'],
    ['::1', 'a loopback address'],
    ['fd00::1', 'a uniqueLocal address'],
    ['::ffff:192.168.0.1', 'an IPv4-mapped IPv6 address (192.168.0.1, private)'],
  ])('refuses %s as %s', (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])(
    'accepts the public address %s',
    (address) => {
      expect(nonPublicReason(address)).toBeUndefined();
    },
  );
});
