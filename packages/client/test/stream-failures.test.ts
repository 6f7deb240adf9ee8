/*
 * How streamEvents copes with failures the real control plane cannot be made to show on demand: a
 * connection that goes silent, a 503 from a server that is starting, a handler that throws. The
 * server here is a real HTTP server on 127.0.0.1 that answers each request of the stream the way
 * the test scripts it, with the control plane's framing (retry:, comments, id:, event:, data:).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { streamEvents } from '../src/index.ts';
import { recordStream, until } from './helpers/stream-recorder.ts';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  server = undefined;
});

/** Serves the stream path with `answers[n]` for the n-th request (the last one from then on). */
async function scriptedServer(answers: Answer[]): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  server = createServer((req, res) => {
    requests.push(req);
    answers[Math.min(requests.length, answers.length) - 1]!(req, res);
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server!.address() as { port: number }).port}`, requests };
}

const openStream = (res: ServerResponse, frames: string) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.write(`retry: 50\n: connected\n\n${frames}`);
};

const completed = (id: string, executionId: string) =>
  `id: ${id}\nevent: execution.completed\ndata: ${JSON.stringify({ type: 'execution.completed', execution_id: executionId })}\n\n`;

describe('streamEvents when things go wrong', () => {
  it('replaces a connection that stays silent past idleTimeoutMs, resuming after the last event', async () => {
    const { url, requests } = await scriptedServer([
      (_req, res) => openStream(res, completed('1-1', 'exec_a')), // then nothing, not even keep-alives
      (_req, res) => openStream(res, completed('1-2', 'exec_b')),
    ]);
    const stream = recordStream({ baseUrl: url, path: '/api/ui/v1/executions/events', idleTimeoutMs: 300 });
    await stream.untilEvents(2);
    stream.handle.close();
    await stream.handle.done;

    expect(stream.events.map((e) => e.data.execution_id)).toEqual(['exec_a', 'exec_b']);
    expect(requests[1]!.headers['last-event-id']).toBe('1-1');
    expect(stream.errors.map((e) => [e.error.title, e.retrying])).toEqual([['Stream silent', true]]);
    expect(stream.errors[0]!.error.detail).toBe(
      'Nothing arrived from the server for 0.3 s; connecting again.',
    );
  });

  it('retries a 503 problem answer with backoff and goes live once the server is ready', async () => {
    const unavailable: Answer = (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          type: 'https://docs.example/errors#service_unavailable',
          title: 'Service Unavailable',
          status: 503,
          detail: 'The control plane is starting.',
          code: 'service_unavailable',
          resolution: 'Retry in a moment.',
          instance: '/api/ui/v1/executions/events',
        }),
      );
    };
    const { url, requests } = await scriptedServer([
      unavailable,
      unavailable,
      (_req, res) => openStream(res, completed('1-1', 'exec_a')),
    ]);
    const stream = recordStream({
      baseUrl: url,
      path: '/api/ui/v1/executions/events',
      reconnect: { initialDelayMs: 100 },
    });
    await stream.untilEvents(1);
    stream.handle.close();
    await stream.handle.done;

    expect(requests).toHaveLength(3);
    expect(stream.errors.map((e) => [e.error.status, e.error.detail, e.retrying])).toEqual([
      [503, 'The control plane is starting.', true],
      [503, 'The control plane is starting.', true],
    ]);
    // The second wait is the doubled one: 100 ms, then 200 ms (each jittered over its upper half).
    const gap = stream.requests[2]!.at - stream.requests[1]!.at;
    expect(gap).toBeGreaterThanOrEqual(100);
    expect(stream.states).toEqual(['connecting', 'reconnecting', 'live', 'closed']);
  });

  it('ends the stream, rejecting done with the error, when onEvent throws', async () => {
    const { url, requests } = await scriptedServer([
      (_req, res) => openStream(res, completed('1-1', 'exec_a') + completed('1-2', 'exec_b')),
    ]);
    const seen: string[] = [];
    const states: string[] = [];
    const handle = streamEvents({
      baseUrl: url,
      path: '/api/ui/v1/executions/events',
      onEvent: (event) => {
        seen.push(event.data.execution_id);
        throw new Error('render failed');
      },
      onState: (state) => states.push(state),
    });
    await expect(handle.done).rejects.toThrow('render failed');
    await until(() => states.at(-1) === 'closed', 'closed');
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(seen).toEqual(['exec_a']);
    expect(requests).toHaveLength(1);
    expect(states).toEqual(['connecting', 'live', 'closed']);
  });
});
