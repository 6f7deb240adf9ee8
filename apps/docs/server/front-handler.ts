import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProblemError } from '@switchyard/shared';
import type { ApiRouter } from './api/api-router.ts';
import { availableEndpoints } from './api/route-specs.ts';
import { negotiate } from './http/accept.ts';
import { clientAddress } from './http/client-address.ts';
import { budgetHeaders, deprecationPolicyLink } from './http/common-headers.ts';
import type { RateLimiter, RateLimitState } from './http/rate-limiter.ts';
import { originForm } from './http/request-target.ts';
import { appendLink, sendProblem } from './http/responses.ts';
import { resolveStatic, type StaticFile, sendFile } from './http/static-files.ts';
import type { SharePages } from './shares/share-pages.ts';

export const API_VERSION = 'v1';

export interface FrontHandlerDeps {
  /** `dist/client` of the Astro build. */
  clientDir: string;
  /** Public base URL of the site, without a trailing slash. */
  site: string;
  limiter: RateLimiter;
  trustedProxyHops: number;
  /** Path of the published deprecation policy page. */
  deprecationPolicyPath: string;
  api: ApiRouter;
  sharePages: SharePages;
  logError: (error: unknown, context: string) => void;
}

/** Headers the browser may read on cross-origin API calls (agents in web pages use the API). */
const EXPOSED_HEADERS =
  'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-API-Version, Link, Location';

/** Representations of a 404, in server preference order: the problem document wins ties. */
const NOT_FOUND_OFFERS = ['application/problem+json', 'application/json', 'text/html'] as const;

/**
 * Fingerprinted build assets and Pagefind's fragments do not spend the budget: one page view
 * loads several of them, and a reader typing into the search box fetches dozens. They still
 * carry the RateLimit headers, with the client's current numbers.
 */
function spendsBudget(pathname: string): boolean {
  return !pathname.startsWith('/_astro/') && !pathname.startsWith('/pagefind/');
}

function setBudgetHeaders(res: ServerResponse, state: RateLimitState): void {
  for (const [name, value] of Object.entries(budgetHeaders(state))) res.setHeader(name, value);
}

/** The path part of the request target, or undefined when the target is not a usable path. */
function parseTarget(
  rawTarget: string,
): { pathname: string; search: string; query: URLSearchParams } | undefined {
  const rawUrl = originForm(rawTarget);
  if (rawUrl === undefined) return undefined;
  try {
    const url = new URL(rawUrl, 'http://docs.invalid');
    // The URL parser resolves dot segments; the raw path is kept so `/a/../b` is not a way around rules.
    const pathname = rawUrl.split('?')[0]!.split('#')[0]!;
    return { pathname, search: url.search, query: url.searchParams };
  } catch {
    return undefined;
  }
}

/**
 * The request handler of the docs site: headers every response carries, the rate limit, then the
 * API, share permalinks and the static build (with content negotiation on pages), in that order.
 */
export function createFrontHandler(
  deps: FrontHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const deprecationLink = deprecationPolicyLink(deps.site, deps.deprecationPolicyPath);

  function sendNotFound(req: IncomingMessage, res: ServerResponse, pathname: string): void {
    res.setHeader('Vary', 'Accept');
    // Every non-2xx is a problem document (spec §7) unless the client ranks HTML above it, as
    // browsers do; no Accept, `*/*` and types the site cannot produce all get the problem.
    const preferred = negotiate(req.headers.accept, NOT_FOUND_OFFERS);
    const page = preferred === 'text/html' ? resolveStatic(deps.clientDir, '/404.html', '') : undefined;
    if (page?.kind === 'file') {
      sendFile(req, res, page.file, '/404.html', 404);
      return;
    }
    sendProblem(
      req,
      res,
      new ProblemError('not_found', `Nothing is published at ${pathname.slice(0, 200)}.`, {
        available_endpoints: availableEndpoints(),
      }),
      deps.site,
    );
  }

  function sendPage(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    html: StaticFile,
    markdown: StaticFile | undefined,
  ): void {
    res.setHeader('Vary', 'Accept');
    // Every page is built with a markdown variant, so both are always on offer: a variant missing
    // from dist is a broken build (502, as /api/v1/page answers), not a client asking wrongly.
    const chosen = negotiate(req.headers.accept, ['text/html', 'text/markdown'] as const);
    if (!chosen) {
      throw new ProblemError(
        'not_acceptable',
        `${pathname.slice(0, 200)} is available as text/html or text/markdown.`,
      );
    }
    const markdownPath = pathname === '/' ? '/index.md' : `${pathname}.md`;
    if (chosen === 'text/markdown') {
      if (!markdown) {
        throw new ProblemError(
          'upstream_unavailable',
          `The generated markdown of ${pathname.slice(0, 200)} is missing on this server.`,
          {
            resolution:
              'Request the page as text/html, or retry shortly; if it persists, the site build is incomplete and must be rebuilt.',
          },
        );
      }
      res.setHeader('Content-Location', markdownPath);
      sendFile(req, res, markdown, markdownPath);
      return;
    }
    if (markdown) appendLink(res, `<${markdownPath}>; rel="alternate"; type="text/markdown"`);
    sendFile(req, res, html, pathname);
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseTarget(req.url ?? '');
    const pathname = target?.pathname ?? '';
    const client = clientAddress(req, deps.trustedProxyHops);
    const budget = spendsBudget(pathname) ? deps.limiter.take(client) : deps.limiter.peek(client);
    res.setHeader('X-API-Version', API_VERSION);
    res.setHeader('Link', deprecationLink);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    setBudgetHeaders(res, budget);
    const isApi = deps.api.owns(pathname);
    if (isApi) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    if (!budget.allowed) {
      req.resume();
      throw new ProblemError(
        'rate_limited',
        `The budget of ${budget.limit} requests per ${budget.windowSeconds} seconds is spent for this client.`,
        { headers: { 'Retry-After': String(budget.resetSeconds) } },
      );
    }
    if (!target) {
      throw new ProblemError('invalid_request', 'The request target is not a valid path.');
    }
    if (isApi) {
      await deps.api.handle({ req, res, query: target.query, site: deps.site }, pathname);
      return;
    }
    if (deps.sharePages.owns(pathname)) {
      if (!(await deps.sharePages.handle(req, res, pathname))) sendNotFound(req, res, pathname);
      return;
    }
    const resolved = resolveStatic(deps.clientDir, pathname, target.search);
    const method = req.method ?? 'GET';
    if (resolved.kind === 'none') {
      req.resume();
      sendNotFound(req, res, pathname);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      req.resume();
      throw new ProblemError('method_not_allowed', `${pathname.slice(0, 200)} answers GET and HEAD only.`, {
        headers: { Allow: 'GET, HEAD' },
      });
    }
    switch (resolved.kind) {
      case 'redirect':
        res.statusCode = 301;
        res.setHeader('Location', resolved.location);
        res.setHeader('Cache-Control', 'public, max-age=3600');
        res.end();
        return;
      case 'page':
        sendPage(req, res, pathname, resolved.html, resolved.markdown);
        return;
      case 'file':
        sendFile(req, res, resolved.file, pathname);
        return;
    }
  }

  return (req, res) => {
    dispatch(req, res).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) {
        if (!(error instanceof ProblemError)) deps.logError(error, `${req.method} ${req.url}`);
        res.destroy();
        return;
      }
      const problem =
        error instanceof ProblemError
          ? error
          : new ProblemError('internal_error', 'The server failed to answer this request.');
      if (!(error instanceof ProblemError)) deps.logError(error, `${req.method} ${req.url}`);
      // Whatever the failed answer had prepared describes a representation that is not being sent.
      for (const name of ['ETag', 'Last-Modified', 'Content-Location', 'Location', 'X-Robots-Tag']) {
        res.removeHeader(name);
      }
      const route = deps.api.routeOf(parseTarget(req.url ?? '')?.pathname ?? '');
      // The platform CLI reads `error` from a failed publish; other clients read `detail`.
      const extra = route?.operationId === 'createRunShare' ? { error: problem.message } : {};
      sendProblem(req, res, problem, deps.site, extra);
    });
  };
}
