import { newId } from '@switchyard/shared';
import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';

/** An incoming request id is reused only when it is short and plain enough to log and echo safely. */
const USABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

declare module 'koa' {
  interface DefaultState {
    /** The request's id, echoed as X-Request-ID and attached to every log line about it. */
    requestId: string;
    /** A child of the app logger that carries `req_id`. */
    log: Logger;
  }
}

/**
 * Requests that arrive all day whether anyone uses the control plane or not: agents' heartbeats
 * (every few seconds each) and the health checks and scrapes of load balancers and Prometheus. At
 * `info` three agents made a line every few seconds that buried everything else, so they are
 * logged at `debug` when they succeed; HEAD is answered by the GET routes.
 */
const ROUTINE: ReadonlyArray<{ methods: readonly string[]; path: RegExp }> = [
  { methods: ['POST'], path: /^\/api\/v1\/nodes\/[^/]+\/heartbeat$/ },
  { methods: ['PATCH'], path: /^\/api\/v1\/nodes\/[^/]+\/status$/ },
  { methods: ['GET', 'HEAD'], path: /^\/api\/v1\/health$/ },
  { methods: ['GET', 'HEAD'], path: /^\/metrics$/ },
];

/**
 * The level of a request's line: `debug` for a routine request that succeeded, `info` for
 * everything else, so a heartbeat refused (an unknown node's 404), a failing health check or a
 * request cut off still shows at the default level.
 */
function requestLevel(method: string, path: string, status: number | undefined, finished: boolean) {
  const routine = ROUTINE.some((route) => route.methods.includes(method) && route.path.test(path));
  return routine && finished && status !== undefined && status < 400 ? 'debug' : 'info';
}

/**
 * Gives every request an id (the caller's `X-Request-ID` when usable, a new one otherwise),
 * echoes it on the response, and logs one line when the response is finished: method, path,
 * status and duration, at the level requestLevel gives. It sits outside the problem middleware,
 * so error answers carry the id too.
 */
export function requestLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = USABLE_REQUEST_ID.test(incoming) ? incoming : newId('req');
    ctx.state.requestId = requestId;
    // Made on first use: most requests log nothing but their one line, which is written only
    // when its level is enabled.
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => {
        child ??= log.child({ req_id: requestId });
        return child;
      },
      enumerable: true,
      configurable: true,
    });
    ctx.set('X-Request-ID', requestId);
    const started = performance.now();
    ctx.res.once('close', () => {
      // Koa's status before anything was sent is only its placeholder (404), so it is left out.
      const status = ctx.res.headersSent ? ctx.res.statusCode : undefined;
      // A response that closed before it finished was cut off by the client (or a shutdown).
      const finished = ctx.res.writableFinished;
      const level = requestLevel(ctx.method, ctx.path, status, finished);
      if (!log.isLevelEnabled(level)) return;
      const fields = {
        method: ctx.method,
        path: ctx.path,
        status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...(finished ? {} : { aborted: true }),
      };
      ctx.state.log[level](fields, 'request');
    });
    await next();
  };
}
