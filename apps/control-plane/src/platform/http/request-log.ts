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
 * Gives every request an id (the caller's `X-Request-ID` when usable, a new one otherwise),
 * echoes it on the response, and logs one line when the response is finished: method, path,
 * status and duration. It sits outside the problem middleware, so error answers carry the id too.
 */
export function requestLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = USABLE_REQUEST_ID.test(incoming) ? incoming : newId('req');
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ req_id: requestId });
    ctx.set('X-Request-ID', requestId);
    const started = performance.now();
    ctx.res.once('close', () => {
      const fields = {
        method: ctx.method,
        path: ctx.path,
        // Koa's status before anything was sent is only its placeholder (404), so it is left out.
        status: ctx.res.headersSent ? ctx.res.statusCode : undefined,
        ms: Math.round((performance.now() - started) * 100) / 100,
        // A response that closed before it finished was cut off by the client (or a shutdown).
        ...(ctx.res.writableFinished ? {} : { aborted: true }),
      };
      ctx.state.log.info(fields, 'request');
    });
    await next();
  };
}
