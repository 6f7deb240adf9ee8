import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { parseWith, readJsonBody } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { type ConnectorAccess, connectorGuard } from './auth.ts';
import { CONNECTOR_ENDPOINTS, type ConnectorEndpoint } from './endpoints.ts';
import type { ListAnswer } from './listings.ts';
import type { ManifestSchema } from './responses.ts';
import {
  GroupListQuerySchema,
  parseFunctionId,
  parseGroupId,
  parseVersion,
  parseVersionScope,
  ReasonerListQuerySchema,
  WEIGHT_BODY_LIMIT,
  WeightBodySchema,
} from './schemas.ts';
import type { ConnectorService } from './service.ts';
import type { ConnectorCapability } from './settings.ts';

export interface ConnectorRouterDeps {
  service: ConnectorService;
  /** The token and capabilities, read on every request. */
  access: () => ConnectorAccess;
  /** `/connector` or `/api/v1/connector`. */
  prefix: string;
  /** The control plane's version, for the manifest. */
  version: string;
  /** Endpoints mounted by another feature under this prefix (stored configs), for the manifest. */
  extraEndpoints?: readonly ConnectorEndpoint[];
}

const param = (ctx: Context, name: string) => String(ctx.params[name]);

/** Sends a list page as encoded, saying whether it came from the cache. */
function sendList(ctx: Context, answer: ListAnswer): void {
  ctx.set('X-Connector-Cache', answer.cached ? 'hit' : 'miss');
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = answer.body;
}

/**
 * The connector API under one prefix (app.ts mounts it under both). Every route runs the guard
 * (503 disabled, 401 token, 403 capability) before reading anything of the request.
 */
export function connectorRouter(deps: ConnectorRouterDeps): Router {
  const { service } = deps;
  const router = new Router({ prefix: deps.prefix });
  const guard = (capability: ConnectorCapability | null): Middleware =>
    connectorGuard(deps.access, capability);
  const noStore: Middleware = async (ctx, next) => {
    await next();
    ctx.set('Cache-Control', 'no-store');
  };

  router.get('/manifest', guard(null), noStore, (ctx) => {
    const granted = deps.access().capabilities;
    ctx.body = {
      service: 'switchyard-control-plane',
      version: deps.version,
      api_version: 'v1',
      base_path: deps.prefix,
      capabilities: [...granted],
      endpoints: [...CONNECTOR_ENDPOINTS, ...(deps.extraEndpoints ?? [])].map((e) => ({
        method: e.method,
        path: `${deps.prefix}${e.path}`,
        capability: e.capability,
        enabled: e.capability === null || granted.includes(e.capability),
      })),
    } satisfies ResponseBody<typeof ManifestSchema>;
  });

  router.get('/reasoners', guard('reasoners:read'), noStore, async (ctx) => {
    sendList(ctx, await service.listReasoners(parseWith(ReasonerListQuerySchema, ctx.query, 'query')));
  });

  router.get('/reasoners/:id', guard('reasoners:read'), noStore, async (ctx) => {
    ctx.body = await service.reasoner(parseFunctionId(param(ctx, 'id')));
  });

  router.get('/groups', guard('reasoners:read'), noStore, async (ctx) => {
    sendList(ctx, await service.listGroups(parseWith(GroupListQuerySchema, ctx.query, 'query')));
  });

  router.get('/groups/:groupId', guard('reasoners:read'), noStore, async (ctx) => {
    ctx.body = await service.group(parseGroupId(param(ctx, 'groupId')));
  });

  router.get('/reasoners/:id/versions', guard('versions:read'), noStore, async (ctx) => {
    ctx.body = await service.versions(parseVersionScope(param(ctx, 'id')));
  });

  router.get('/reasoners/:id/versions/:version', guard('versions:read'), noStore, async (ctx) => {
    ctx.body = await service.version(
      parseVersionScope(param(ctx, 'id')),
      parseVersion(param(ctx, 'version')),
    );
  });

  router.put('/reasoners/:id/versions/:version/weight', guard('versions:write'), noStore, async (ctx) => {
    const scope = parseVersionScope(param(ctx, 'id'));
    const version = parseVersion(param(ctx, 'version'));
    const { weight } = parseWith(WeightBodySchema, await readJsonBody(ctx, WEIGHT_BODY_LIMIT));
    ctx.body = await service.setWeight(scope, version, weight);
  });

  router.post('/reasoners/:id/versions/:version/restart', guard('restart'), noStore, async (ctx) => {
    const scope = parseVersionScope(param(ctx, 'id'));
    const version = parseVersion(param(ctx, 'version'));
    ctx.status = 202;
    ctx.body = await service.restart(scope, version);
  });

  return router;
}
