import { buildProblem, type ErrorCode, PROBLEM_CONTENT_TYPE, ProblemError } from '@switchyard/shared';
import type { Context, Middleware } from 'koa';

export interface ProblemMiddlewareOptions {
  /** Called with every error that is not a ProblemError (these become 500 internal_error). */
  onUnexpected?: (error: unknown, ctx: Context) => void;
}

/** Sends a problem document as the response, with any extra headers. */
export function sendProblem(ctx: Context, error: ProblemError): void {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = error.toProblem(ctx.path);
}

// Errors that Koa itself and its body readers raise carry an HTTP status; map the ones a client
// can cause to catalogue codes so nothing leaves the server without a problem document.
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
};

/**
 * The outermost middleware: renders every thrown error as application/problem+json. A
 * ProblemError keeps its code; anything unexpected is logged and becomes 500 internal_error
 * without leaking a stack trace.
 */
export function problemMiddleware(options: ProblemMiddlewareOptions = {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof ProblemError) return sendProblem(ctx, error);
      const status = (error as { status?: number; expose?: boolean }).status;
      const code = status ? STATUS_CODES[status] : undefined;
      if (code && (error as { expose?: boolean }).expose !== false) {
        return sendProblem(ctx, new ProblemError(code, (error as Error).message || 'request rejected'));
      }
      options.onUnexpected?.(error, ctx);
      ctx.status = 500;
      ctx.type = PROBLEM_CONTENT_TYPE;
      ctx.body = buildProblem('internal_error', {
        detail: 'The server failed to handle this request.',
        instance: ctx.path,
      });
    }
  };
}
