import { createServer, type Server } from 'node:http';
import { isProblem } from '@switchyard/shared';
import Koa from 'koa';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handleEscapedErrors, problemMiddleware } from '../src/platform/http/problem-middleware.ts';

/**
 * The one problem renderer, on both of Koa's error paths: the problem middleware, and Koa's own
 * ctx.onerror for what escapes it. A bare Koa app stands in for the control plane so an error can
 * be thrown where the real app never throws one.
 */
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

async function serve(app: Koa): Promise<string> {
  const server = createServer(app.callback());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function capture() {
  const lines: Array<{ level: number; msg: string; err?: { stack?: string } }> = [];
  const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, log };
}

describe('errors that escape the problem middleware', () => {
  it('are answered with a 500 problem document and logged with their stack, never printed to the console', async () => {
    const { lines, log } = capture();
    const app = new Koa();
    handleEscapedErrors(app, log);
    app.use((ctx) => {
      ctx.set('X-Request-ID', 'req_escaped');
      ctx.set('X-Half-Done', 'yes');
      throw new Error('a bug outside the problem middleware');
    });
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    const response = await fetch(await serve(app));
    const calls = printed.mock.calls.length;
    printed.mockRestore();
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    // The request id survives; headers of the answer that failed do not.
    expect(response.headers.get('x-request-id')).toBe('req_escaped');
    expect(response.headers.get('x-half-done')).toBeNull();
    const body = await response.json();
    expect(isProblem(body)).toBe(true);
    expect(body).toMatchObject({ code: 'internal_error', instance: '/' });
    expect(JSON.stringify(body)).not.toContain('a bug');
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        err: expect.objectContaining({ stack: expect.stringContaining('a bug') }),
      }),
    );
    expect(calls).toBe(0);
  });

  it('keep a client error thrown outside it as its own status', async () => {
    const { log } = capture();
    const app = new Koa();
    handleEscapedErrors(app, log);
    app.use(() => {
      throw Object.assign(new Error('Payload Too Large'), { status: 413, expose: true });
    });
    const response = await fetch(await serve(app));
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe('payload_too_large');
  });
});

describe('problemMiddleware', () => {
  it('renders a library error with a client status under its catalogue code, without logging it', async () => {
    const { lines, log } = capture();
    const app = new Koa();
    handleEscapedErrors(app, log);
    app.use(async (ctx, next) => {
      ctx.state.log = log;
      await next();
    });
    app.use(problemMiddleware());
    app.use(() => {
      throw Object.assign(new Error('Unsupported Media Type'), { status: 415, expose: true });
    });
    const response = await fetch(await serve(app));
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ code: 'invalid_request', status: 415 });
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });
});
