import { hostHeaderProblem } from '@switchyard/shared';
import type { Middleware } from 'koa';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without a Host header, and any request with two, is answered
 * 400 invalid_request (a problem document, with `Connection: close`). server.ts creates the server
 * with `requireHostHeader: false` so that a missing Host reaches this middleware instead of
 * getting Node's bare 400; Node lets a repeated Host through on its own.
 */
export function requireOneHostHeader(): Middleware {
  return async (ctx, next) => {
    const problem = hostHeaderProblem(ctx.req);
    if (problem) {
      // The body (if any) is not read; drain it so the answer is not cut off by a reset.
      ctx.req.resume();
      throw problem;
    }
    return next();
  };
}
