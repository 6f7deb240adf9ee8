import { PROBLEM_CONTENT_TYPE, renderProblem } from '@switchyard/shared';
import type { Middleware } from 'koa';

/**
 * The error middleware: renders every thrown error as application/problem+json through the one
 * renderer both apps share. A ProblemError keeps its code; a library error with a client status
 * maps to its code; anything unexpected is logged with its stack and becomes 500 internal_error
 * without revealing it.
 */
export function problemMiddleware(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const rendered = renderProblem(error, ctx.path);
      if (rendered.unexpected) ctx.state.log?.error({ err: error }, `${ctx.method} ${ctx.path} failed`);
      ctx.status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
      ctx.type = PROBLEM_CONTENT_TYPE;
      ctx.body = rendered.body;
    }
  };
}
