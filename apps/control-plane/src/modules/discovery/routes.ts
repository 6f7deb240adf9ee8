import Router from '@koa/router';
import { parseWith } from '../../platform/http/request-body.ts';
import { DISCOVERY_FORMATS, type DiscoveryFormat, DiscoveryQuerySchema } from './schemas.ts';
import type { DiscoveryService } from './service.ts';

/**
 * The format a request is counted under in the metrics: the one it asked for when that is a
 * format, else json (the default), so a malformed request never creates a new label value.
 */
function countedFormat(raw: unknown): DiscoveryFormat {
  const word = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return (DISCOVERY_FORMATS as readonly string[]).includes(word) ? (word as DiscoveryFormat) : 'json';
}

/** GET /api/v1/discovery/capabilities: registered agents, reasoners and skills (content/api/discovery.md). */
export function discoveryRouter(deps: { discovery: DiscoveryService }): Router {
  const router = new Router();
  router.get('/api/v1/discovery/capabilities', async (ctx) => {
    const started = performance.now();
    const format = countedFormat(ctx.query.format);
    try {
      const query = parseWith(DiscoveryQuerySchema, ctx.query, 'query');
      const answer = await deps.discovery.discover(query);
      ctx.status = 200;
      ctx.set('X-Discovery-Cache', answer.cached ? 'hit' : 'miss');
      ctx.body = answer.body;
      ctx.set('Content-Type', answer.contentType);
      deps.discovery.record(format, 'success', (performance.now() - started) / 1000);
    } catch (error) {
      deps.discovery.record(format, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  });
  return router;
}
