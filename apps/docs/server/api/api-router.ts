import { ProblemError } from '@switchyard/shared';
import { appendLink } from '../http/responses.ts';
import type { ApiContext, ApiHandler } from './api-context.ts';
import { API_ROUTES, availableEndpoints, type RouteSpec } from './route-specs.ts';

export interface ApiRouter {
  /** True when the path belongs to the API (so errors there are always problem documents). */
  owns(pathname: string): boolean;
  handle(ctx: ApiContext, pathname: string): Promise<void>;
  /** The route spec a path names, if any (used to shape error replies). */
  routeOf(pathname: string): RouteSpec | undefined;
}

/** Dispatches `/api/...` requests to the handler of each operation id in {@link API_ROUTES}. */
export function createApiRouter(handlers: Record<string, ApiHandler>): ApiRouter {
  const byPath = new Map<string, { spec: RouteSpec; handler: ApiHandler }>();
  for (const spec of API_ROUTES) {
    // An alias answers exactly as its successor does.
    const operationId = spec.successor
      ? API_ROUTES.find((r) => r.path === spec.successor)?.operationId
      : spec.operationId;
    const handler = operationId ? handlers[operationId] : undefined;
    if (!handler) throw new Error(`no handler for ${spec.operationId}`);
    byPath.set(spec.path, { spec, handler });
  }

  return {
    owns: (pathname) => pathname === '/api' || pathname.startsWith('/api/'),
    routeOf: (pathname) => byPath.get(pathname)?.spec,
    async handle(ctx, pathname) {
      const route = byPath.get(pathname);
      if (!route) {
        throw new ProblemError('not_found', `There is no API endpoint at ${pathname.slice(0, 200)}.`, {
          available_endpoints: availableEndpoints(),
        });
      }
      const { spec, handler } = route;
      if (spec.successor) appendLink(ctx.res, `<${spec.successor}>; rel="successor-version"`);
      const method = ctx.req.method ?? 'GET';
      const allowed = spec.method === 'GET' ? ['GET', 'HEAD'] : [spec.method];
      if (method === 'OPTIONS') {
        // A CORS preflight or a capability probe: the answer is the Allow list, no body.
        ctx.res.statusCode = 204;
        ctx.res.setHeader('Allow', [...allowed, 'OPTIONS'].join(', '));
        ctx.res.setHeader('Access-Control-Allow-Methods', [...allowed, 'OPTIONS'].join(', '));
        ctx.res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Accept, X-API-Key');
        ctx.res.setHeader('Access-Control-Max-Age', '600');
        ctx.res.end();
        return;
      }
      if (!allowed.includes(method)) {
        ctx.req.resume();
        throw new ProblemError('method_not_allowed', `${pathname} does not answer ${method.slice(0, 20)}.`, {
          headers: { Allow: allowed.join(', ') },
        });
      }
      await handler(ctx);
    },
  };
}
