import Router from '@koa/router';
import type { Context } from 'koa';
import { readCallerContext } from '../../platform/http/context-headers.ts';
import { DEFAULT_BODY_LIMIT, parseJsonBody, parseWith } from '../../platform/http/request-body.ts';
import { KeyBodySchema, ListQuerySchema, SetBodySchema } from './schemas.ts';
import type { ScopeRequest } from './scopes.ts';
import type { MemoryService } from './service.ts';
import { deletedView, entryView, writtenView } from './views.ts';

export interface MemoryRouterDeps {
  service: MemoryService;
  /** memory.max_value_bytes: a set body may be this, escaped, plus room for the key and scope. */
  maxValueBytes: number;
}

/** Room in a set body for everything besides the value (key, scope, whitespace). */
const BODY_OVERHEAD = 64 * 1024;

/**
 * Bytes a set body may spend on each byte of its value. The limit is on the value as compact JSON,
 * and a client may send any character as a 6-byte `\uXXXX` escape: Python's json.dumps does so for
 * every non-ASCII character by default (2 to 3 times its UTF-8 bytes), Go's for `<`, `>` and `&`.
 */
const ESCAPED_BYTES = 6;

/** The scope part of a request: its context headers and the body's or query's scope fields. */
export function scopeRequest(
  ctx: Context,
  fields: { scope?: ScopeRequest['scope']; scope_id?: string },
): ScopeRequest {
  return {
    context: readCallerContext((name) => ctx.get(name)),
    scope: fields.scope,
    scopeId: fields.scope_id,
  };
}

/**
 * Key-value memory: set, get, delete (all POST: DELETE is not registered for plain
 * memory, so it answers 405 with `Allow`) and list. Answers are never cached: memory changes.
 */
export function memoryRouter(deps: MemoryRouterDeps): Router {
  const { service } = deps;
  const setBodyLimit = Math.max(DEFAULT_BODY_LIMIT, deps.maxValueBytes * ESCAPED_BYTES + BODY_OVERHEAD);
  const router = new Router();

  router.post('/api/v1/memory/set', async (ctx) => {
    const body = await parseJsonBody(ctx, SetBodySchema, setBodyLimit);
    const entry = await service.set(scopeRequest(ctx, body), body.key, body.data);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = writtenView(entry);
  });

  router.post('/api/v1/memory/get', async (ctx) => {
    const body = await parseJsonBody(ctx, KeyBodySchema);
    const entry = await service.get(scopeRequest(ctx, body), body.key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = entryView(entry);
  });

  router.post('/api/v1/memory/delete', async (ctx) => {
    const body = await parseJsonBody(ctx, KeyBodySchema);
    const { ref, deleted } = await service.delete(scopeRequest(ctx, body), body.key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deletedView(body.key, ref, deleted);
  });

  router.get('/api/v1/memory/list', async (ctx) => {
    const query = parseWith(ListQuerySchema, ctx.query, 'query');
    const page = await service.list(scopeRequest(ctx, query), { limit: query.limit, after: query.after });
    ctx.set('Cache-Control', 'no-store');
    const last = page.entries.at(-1);
    if (page.hasMore && last) ctx.set('Link', `<${nextPage(ctx, last.key)}>; rel="next"`);
    // A bare JSON array: agent SDKs read the list as one; paging travels in Link.
    ctx.body = page.entries.map(entryView);
  });

  return router;
}

/** The URL of the page after `key`: this request's query with `after` replaced. */
function nextPage(ctx: Context, key: string): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('after', key);
  return `${ctx.path}?${params.toString()}`;
}
