import { PROBLEM_CONTENT_TYPE, renderProblem } from '@switchyard/shared';
import type Koa from 'koa';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../logger.ts';

/**
 * Socket errors that mean the client went away (reset, closed in the middle of its request, or
 * stopped reading): routine on any server, never a failure of ours.
 */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

function clientWentAway(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // llhttp's HPE_* errors reach a request in flight when its socket ends mid-body.
  return typeof code === 'string' && (CLIENT_GONE.has(code) || code.startsWith('HPE_'));
}

/**
 * Renders an error as application/problem+json through the one renderer both apps share, and logs
 * it with its stack when it was unexpected.
 */
function sendProblem(ctx: Context, error: unknown, log: Logger | undefined): void {
  const rendered = renderProblem(error, ctx.path);
  if (rendered.unexpected) log?.error({ err: error }, `${ctx.method} ${ctx.path} failed`);
  ctx.status = rendered.status;
  for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = rendered.body;
}

/**
 * The error middleware: renders every thrown error as application/problem+json. A ProblemError
 * keeps its code; a library error with a client status maps to its code; anything unexpected is
 * logged with its stack and becomes 500 internal_error without revealing it.
 */
export function problemMiddleware(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      sendProblem(ctx, error, ctx.state.log);
    }
  };
}

/**
 * Koa's own error path, for what the middleware cannot catch: an error on the response after the
 * chain finished (the client went away mid-request), or one thrown outside the problem middleware.
 * Koa's default would print the stack to the console and answer text/plain; this answers a
 * problem document while headers can still be sent, and logs through the app's logger: a client
 * that went away at debug (it is routine), anything else at error.
 */
export function handleEscapedErrors(app: Koa, log: Logger): void {
  app.context.onerror = function onerror(this: Context, error: Error | null) {
    if (error == null) return;
    const requestLog: Logger = this.state?.log ?? log;
    if (clientWentAway(error)) {
      requestLog.debug({ code: (error as { code?: string }).code }, 'client went away');
      return;
    }
    if (this.headerSent || !this.writable) {
      requestLog.error({ err: error }, `${this.method} ${this.path} failed after its answer started`);
      return;
    }
    // Headers set for the answer that failed (its type, length, encoding) do not describe this one.
    const requestId = this.response.get('X-Request-ID');
    for (const name of this.res.getHeaderNames()) this.res.removeHeader(name);
    if (requestId) this.set('X-Request-ID', requestId);
    sendProblem(this, error, requestLog);
    const text = JSON.stringify(this.body);
    this.length = Buffer.byteLength(text);
    this.res.end(text);
  };
}
