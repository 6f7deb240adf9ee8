import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProblemError } from '@switchyard/shared';
import { LRUCache } from 'lru-cache';
import { SHARE_ID_PATTERN } from '../../contract/site-contract.ts';
import { negotiate } from '../http/accept.ts';
import type { AstroRenderer } from '../http/astro-renderer.ts';
import { endCompressed } from '../http/compression.ts';
import { sendJson } from '../http/responses.ts';
import { sharesDisabled } from './publish-handler.ts';
import { runShareView } from './run-share-view.ts';
import type { ShareService } from './share-service.ts';

const PERMALINK = /^\/(s|share)\/([^/]+)$/;
const SHARE_ID = new RegExp(SHARE_ID_PATTERN);

// Published runs are immutable (there is no update or delete), so an hour of caching is safe.
const SHARE_CACHE_CONTROL = 'public, max-age=3600';

export interface SharePages {
  /** True for `/s/{id}` and `/share/{id}`. */
  owns(pathname: string): boolean;
  /** Answers a permalink; returns false when the share does not exist (the caller sends its 404). */
  handle(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean>;
}

/**
 * The Astro route that renders a share's page; /share/{id} is served by the same route, so the
 * page exists once. It renders the view it is given in `locals.runShare` and nothing else.
 */
const SHARE_PAGE_ROUTE = '/s/';

/**
 * Rendered pages kept, by bytes: the largest bundle renders to about 4 MB of HTML and takes the
 * event loop for most of a second, and shares never change, so a page is rendered once and then
 * served from memory until it is pushed out by newer ones.
 */
export const RENDERED_PAGE_CACHE_BYTES = 64 * 1024 * 1024;

export function createSharePages(deps: {
  service: ShareService | undefined;
  renderer: AstroRenderer | undefined;
  site: string;
  /** Bytes of rendered pages kept; {@link RENDERED_PAGE_CACHE_BYTES} by default, 0 keeps none. */
  cacheBytes?: number;
}): SharePages {
  const maxSize = deps.cacheBytes ?? RENDERED_PAGE_CACHE_BYTES;
  const rendered =
    maxSize > 0
      ? new LRUCache<string, Buffer>({ maxSize, sizeCalculation: (page) => page.length || 1 })
      : undefined;

  async function renderPage(id: string, view: () => Parameters<AstroRenderer['render']>[1]): Promise<Buffer> {
    const cached = rendered?.get(id);
    if (cached) return cached;
    if (!deps.renderer) {
      throw new ProblemError(
        'upstream_unavailable',
        'The server build of the site (share pages) is missing.',
        {
          resolution: 'Request the share with Accept: application/json, or rebuild the site.',
        },
      );
    }
    const page = await deps.renderer.render(`${SHARE_PAGE_ROUTE}${id}`, view());
    if (page?.status !== 200) {
      throw new Error(`the share page for ${id} rendered with status ${page?.status ?? 'none (no route)'}`);
    }
    // A page larger than the whole budget is not kept (lru-cache refuses it).
    rendered?.set(id, page.body);
    return page.body;
  }

  return {
    owns: (pathname) => PERMALINK.test(pathname),
    async handle(req, res, pathname) {
      res.setHeader('Vary', 'Accept');
      const method = req.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD') {
        req.resume();
        throw new ProblemError('method_not_allowed', `${pathname.slice(0, 200)} answers GET and HEAD only.`, {
          headers: { Allow: 'GET, HEAD' },
        });
      }
      if (!deps.service) throw sharesDisabled();
      const representation = negotiate(req.headers.accept, ['text/html', 'application/json'] as const);
      if (!representation) {
        throw new ProblemError(
          'not_acceptable',
          'A run share is available as text/html or application/json.',
          {
            resolution: 'Send Accept: text/html or Accept: application/json (or omit Accept).',
          },
        );
      }
      const id = PERMALINK.exec(pathname)![2]!;
      if (!SHARE_ID.test(id)) return false;
      const stored = await deps.service.find(id);
      if (!stored) return false;
      res.setHeader('Cache-Control', SHARE_CACHE_CONTROL);
      // Shares are public but unlisted: reachable by link, kept out of search engines.
      res.setHeader('X-Robots-Tag', 'noindex');
      if (representation === 'application/json') {
        sendJson(res, 200, stored.bundle);
        return true;
      }
      const body = await renderPage(id, () => ({
        runShare: runShareView({
          id,
          url: `${deps.site}/s/${id}`,
          created_at: stored.created_at,
          bundle: stored.bundle,
        }),
      }));
      res.statusCode = 200;
      endCompressed(res.req, res, body, 'text/html; charset=utf-8');
      return true;
    },
  };
}
