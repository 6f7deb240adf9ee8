import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { parseWith } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { readConfigText } from './body.ts';
import type { ConfigListSchema, VersionListSchema } from './responses.ts';
import {
  encodeVersionCursor,
  MAX_CONFIG_BYTES,
  NamePathSchema,
  RESERVED_NAME,
  UpdatedByHeaders,
  VersionListQuerySchema,
  VersionPathSchema,
} from './schemas.ts';
import type { ConfigStoreService } from './service.ts';
import { configView, reloadView, summaryView, versionSummaryView, versionView } from './views.ts';

export interface ConfigStoreRouterDeps {
  service: ConfigStoreService;
  /** Where the operations live: `/api/v1/configs`, or the connector's `/connector/configs`. */
  prefix: string;
  /** Runs before every operation (the connector's token and capability check). */
  guard?: Middleware;
}

/** The types a get may answer the raw text in; the first is JSON, the default. */
const ANSWER_TYPES = [
  'application/json',
  'text/plain',
  'application/yaml',
  'text/yaml',
  'application/x-yaml',
];

/** The raw text type the client prefers, or undefined for the JSON record. */
function rawType(ctx: Context): string | undefined {
  const preferred = ctx.accepts(ANSWER_TYPES);
  return typeof preferred === 'string' && preferred !== 'application/json' ? preferred : undefined;
}

function sendRaw(ctx: Context, type: string, text: string, version: number) {
  ctx.set('Content-Type', `${type}; charset=utf-8`);
  ctx.set('X-Config-Version', String(version));
  ctx.body = text;
}

function updatedBy(ctx: Context): string | null {
  const value = ctx.get('x-updated-by');
  return parseWith(UpdatedByHeaders, { 'X-Updated-By': value === '' ? undefined : value }, 'headers')[
    'X-Updated-By'
  ];
}

/**
 * Configuration storage: named texts with their recent versions, and the reload of the
 * control plane's own (`control-plane`). Mounted once per prefix; answers are never cached.
 */
export function configStoreRouter(deps: ConfigStoreRouterDeps): Router {
  const { service, prefix } = deps;
  const guard: Middleware[] = deps.guard ? [deps.guard] : [];
  const router = new Router();
  const noStore: Middleware = async (ctx, next) => {
    await next();
    ctx.set('Cache-Control', 'no-store');
  };

  router.get(prefix, ...guard, noStore, async (ctx) => {
    const configs = await service.list();
    ctx.body = {
      total: configs.length,
      configs: configs.map(summaryView),
    } satisfies ResponseBody<typeof ConfigListSchema>;
  });

  router.post(`${prefix}/${RESERVED_NAME}`, ...guard, noStore, async (ctx) => {
    ctx.body = reloadView(await service.reload());
  });

  router.get(`${prefix}/:config_name`, ...guard, noStore, async (ctx) => {
    const { config_name } = parseWith(NamePathSchema, ctx.params, 'path');
    const config = await service.get(config_name);
    const raw = rawType(ctx);
    if (raw) sendRaw(ctx, raw, config.body, config.version);
    else ctx.body = configView(config);
  });

  router.put(`${prefix}/:config_name`, ...guard, noStore, async (ctx) => {
    const { config_name } = parseWith(NamePathSchema, ctx.params, 'path');
    const by = updatedBy(ctx);
    const text = await readConfigText(ctx, MAX_CONFIG_BYTES);
    const { config, created } = await service.put({ name: config_name, text, updatedBy: by });
    ctx.status = created ? 201 : 200;
    if (created) ctx.set('Location', `${prefix}/${config_name}`);
    ctx.body = summaryView(config);
  });

  router.delete(`${prefix}/:config_name`, ...guard, noStore, async (ctx) => {
    const { config_name } = parseWith(NamePathSchema, ctx.params, 'path');
    await service.delete(config_name, updatedBy(ctx));
    ctx.status = 204;
  });

  router.get(`${prefix}/:config_name/versions`, ...guard, noStore, async (ctx) => {
    const { config_name } = parseWith(NamePathSchema, ctx.params, 'path');
    const { limit, cursor } = parseWith(VersionListQuerySchema, ctx.query, 'query');
    const page = await service.versions(config_name, { limit, after: cursor });
    ctx.body = {
      name: config_name,
      versions: page.versions.map(versionSummaryView),
      next_cursor: page.next === undefined ? null : encodeVersionCursor(page.next),
    } satisfies ResponseBody<typeof VersionListSchema>;
  });

  router.get(`${prefix}/:config_name/versions/:version`, ...guard, noStore, async (ctx) => {
    const { config_name, version } = parseWith(VersionPathSchema, ctx.params, 'path');
    const found = await service.version(config_name, version);
    const raw = rawType(ctx);
    if (raw && found.body !== null) sendRaw(ctx, raw, found.body, found.version);
    else ctx.body = versionView(found);
  });

  return router;
}
