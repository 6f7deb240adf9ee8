import type Router from '@koa/router';
import { ProblemError } from '@switchyard/shared';
import type { Middleware } from 'koa';

/** What the server answers, as `{ "/path": ["GET", ...] }`, for available_endpoints. */
export function endpointMap(routers: Router[]): Record<string, string[]> {
  const map: Record<string, Set<string>> = {};
  for (const router of routers) {
    for (const layer of router.stack) {
      const methods = layer.methods.filter((m) => m !== 'HEAD');
      if (methods.length === 0) continue;
      const path = String(layer.path);
      map[path] ??= new Set();
      for (const m of methods) map[path].add(m);
    }
  }
  return Object.fromEntries(Object.entries(map).map(([path, set]) => [path, [...set].sort()]));
}

/**
 * Mounts each router and ends the chain with problem documents: 405 method_not_allowed with
 * `Allow` when a path exists for other methods, 404 not_found with available_endpoints otherwise.
 */
export function mountRouters(routers: Router[]): Middleware[] {
  const available = endpointMap(routers);
  const middleware: Middleware[] = [];
  for (const router of routers) middleware.push(router.routes() as unknown as Middleware);
  // Routers call next() only when none of their routes matched, so reaching this is a miss.
  middleware.push(async (ctx) => {
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.stack) {
        if (layer.methods.length > 0 && layer.match(ctx.path)) for (const m of layer.methods) allowed.add(m);
      }
    }
    if (allowed.size > 0) {
      if (allowed.has('GET')) allowed.add('HEAD');
      const allow = [...allowed].sort().join(', ');
      throw new ProblemError(
        'method_not_allowed',
        `${ctx.method} is not allowed on ${ctx.path}; use ${allow}.`,
        {
          headers: { Allow: allow },
        },
      );
    }
    throw new ProblemError('not_found', `No endpoint at ${ctx.method} ${ctx.path}.`, {
      available_endpoints: available,
    });
  });
  return middleware;
}
