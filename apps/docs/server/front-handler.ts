import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostHeaderProblem, type Problem, ProblemError } from '@switchyard/shared';
import type { ApiRouter } from './api/api-router.ts';
import { availableEndpoints } from './api/route-specs.ts';
import { negotiate } from './http/accept.ts';
import { clientAddress } from './http/client-address.ts';
import { budgetHeaderList, deprecationPolicyLink } from './http/common-headers.ts';
import { chooseEncoding } from './http/compression.ts';
import { type Logger, markFailed, trackRequest } from './http/logger.ts';
import type { BudgetName, RateLimiter, RateLimitState } from './http/rate-limiter.ts';
import { ClientAbortError } from './http/request-body.ts';
import { originForm } from './http/request-target.ts';
import { appendLink, sendProblem } from './http/responses.ts';
import { type BuildFile, type Representation, type StaticSite, sendFile } from './http/static-files.ts';
import type { McpEndpoint } from './mcp/index.ts';
import type { SharePages } from './shares/share-pages.ts';

export const API_VERSION = 'v1';

/**
 * The page that publishes the deprecation policy: every response links it with `rel="deprecation-policy"`
 * (content/reference/versioning.md says how a version is retired).
 */
export const DEPRECATION_POLICY_PATH = '/docs/reference/versioning';

export interface FrontHandlerDeps {
  /** The build output (`dist/client`), listed once at start. */
  files: StaticSite;
  /** Public base URL of the site, without a trailing slash. */
  site: string;
  /** The API's budget (`/api/` and `/mcp`) and the pages' (everything else), per client address. */
  limiters: Record<BudgetName, RateLimiter>;
  trustedProxyHops: number;
  api: ApiRouter;
  sharePages: SharePages;
  /** The MCP server at `/mcp`, which counts against the API's budget. */
  mcp: McpEndpoint;
  logger: Logger;
  /** True once the server is shutting down: answers then ask the client to close the connection. */
  draining: () => boolean;
  /** Called when a response has ended (sent, or its connection closed). */
  onResponseClosed?: () => void;
}

/** Headers the browser may read on cross-origin API calls (agents in web pages use the API). */
const EXPOSED_HEADERS =
  'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-API-Version, X-Request-ID, Link, Location';

/** Representations of a 404, in server preference order: the problem document wins ties. */
const NOT_FOUND_OFFERS = ['application/problem+json', 'application/json', 'text/html'] as const;

/** The representations of a documentation page, HTML first: it wins ties and answers wildcards. */
const PAGE_OFFERS = ['text/html', 'text/markdown'] as const;

/** Headers that describe a representation; an error answer replaces that representation. */
const REPRESENTATION_HEADERS = [
  'ETag',
  'Last-Modified',
  'Content-Location',
  'Content-Encoding',
  'Location',
  'X-Robots-Tag',
];

/**
 * Fingerprinted build assets and Pagefind's fragments do not spend the pages' budget: one page
 * view loads several of them, and a reader typing into the search box fetches dozens. They still
 * carry the RateLimit headers, with the client's current numbers.
 */
function spendsBudget(pathname: string): boolean {
  return !pathname.startsWith('/_astro/') && !pathname.startsWith('/pagefind/');
}

/** How a 429 names the budget that was spent, so a client knows which of its requests to slow. */
const BUDGET_DESCRIPTIONS: Record<BudgetName, string> = {
  api: 'API budget (requests to /api/ and /mcp)',
  pages:
    'page budget (pages, markdown, llms files, manifests and permalinks: everything outside /api/ and /mcp)',
};

interface Target {
  pathname: string;
  search: string;
  /** The parsed query, or undefined when the target has none. */
  query: URLSearchParams | undefined;
}

/** The path part of the request target, or undefined when the target is not a usable path. */
function parseTarget(rawTarget: string): Target | undefined {
  const rawUrl = originForm(rawTarget);
  if (rawUrl === undefined) return undefined;
  const queryAt = rawUrl.indexOf('?');
  // The raw path is kept, dot segments unresolved, so `/a/../b` is not a way around rules.
  const pathEnd = queryAt < 0 ? rawUrl.length : queryAt;
  const hashAt = rawUrl.indexOf('#');
  const pathname = rawUrl.slice(0, hashAt >= 0 && hashAt < pathEnd ? hashAt : pathEnd);
  if (queryAt < 0) return { pathname, search: '', query: undefined };
  try {
    // The URL parser percent-encodes what a header may not carry (the search goes into Location).
    const url = new URL(rawUrl, 'http://docs.invalid');
    return { pathname, search: url.search, query: url.searchParams };
  } catch {
    return undefined;
  }
}

interface FileOptions {
  status?: number;
  /** The file is one representation of a negotiated page (Vary: Accept). */
  varyAccept?: boolean;
  /** A link-value to send besides the deprecation-policy link. */
  link?: string;
  contentLocation?: string;
}

/** One request and what every answer to it carries. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /**
   * The headers every response carries (RateLimit-*, X-API-Version; content/api/site-api.md) except Link,
   * as name/value pairs. They go out with the build file in one `writeHead` on the fast path, or are set on
   * `res` (applyCommon) before any other kind of answer.
   */
  common: string[];
  applied: boolean;
  target: Target | undefined;
  budget: RateLimitState;
}

/**
 * The request handler of the docs site: request id and log line, the headers every response
 * carries, the rate limit, then the API, share permalinks and the static build (with content
 * negotiation on pages), in that order. Every failure is rendered by the shared problem renderer.
 */
export function createFrontHandler(
  deps: FrontHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  const deprecationLink = deprecationPolicyLink(deps.site, DEPRECATION_POLICY_PATH);

  function applyCommon(x: Exchange): void {
    if (x.applied) return;
    x.applied = true;
    for (let i = 0; i < x.common.length; i += 2) x.res.setHeader(x.common[i]!, x.common[i + 1]!);
    if (!x.res.hasHeader('Link')) x.res.setHeader('Link', deprecationLink);
  }

  /**
   * Sends a build file in the coding the client prefers (compressed once, then from memory).
   * When nothing was set on the response yet, every header goes out in one `writeHead` call:
   * setting a score of headers one by one was a measurable share of a page request.
   */
  function sendBuildFile(
    x: Exchange,
    file: BuildFile,
    urlPath: string,
    options: FileOptions = {},
  ): Promise<void> | undefined {
    const pending = file.representation(chooseEncoding(x.req.headers['accept-encoding']));
    // Synchronous once the form is in memory: no promise, no extra turn of the event loop.
    if (pending instanceof Promise)
      return pending.then((form) => writeBuildFile(x, file, form, urlPath, options));
    writeBuildFile(x, file, pending, urlPath, options);
    return undefined;
  }

  function writeBuildFile(
    x: Exchange,
    file: BuildFile,
    form: Representation,
    urlPath: string,
    options: FileOptions,
  ): void {
    // The common headers are not needed again once they go out with this file: extend them in place.
    const headers = x.applied ? [] : x.common;
    if (!x.applied)
      headers.push('Link', options.link ? `${deprecationLink}, ${options.link}` : deprecationLink);
    else if (options.link) appendLink(x.res, options.link);
    if (options.contentLocation) headers.push('Content-Location', options.contentLocation);
    sendFile(x.req, x.res, file, form, {
      urlPath,
      status: options.status ?? 200,
      varyAccept: options.varyAccept ?? false,
      headers,
    });
  }

  function sendNotFound(x: Exchange, pathname: string): Promise<void> | undefined {
    // Every non-2xx is a problem document (content/reference/errors.md) unless the client ranks HTML above
    // it, as browsers do; no Accept, `*/*` and types the site cannot produce all get the problem.
    const preferred = negotiate(x.req.headers.accept, NOT_FOUND_OFFERS);
    const page = preferred === 'text/html' ? deps.files.file('404.html') : undefined;
    if (page) return sendBuildFile(x, page, '/404.html', { status: 404, varyAccept: true });
    x.res.setHeader('Vary', 'Accept');
    throw new ProblemError('not_found', `Nothing is published at ${pathname.slice(0, 200)}.`, {
      available_endpoints: availableEndpoints(),
    });
  }

  function sendPage(
    x: Exchange,
    pathname: string,
    html: BuildFile,
    markdown: BuildFile | undefined,
  ): Promise<void> | undefined {
    // Every page is built with a markdown variant, so both are always on offer: a variant missing
    // from dist is a broken build (502, as /api/v1/page answers), not a client asking wrongly.
    const chosen = negotiate(x.req.headers.accept, PAGE_OFFERS);
    if (!chosen) {
      x.res.setHeader('Vary', 'Accept');
      throw new ProblemError(
        'not_acceptable',
        `${pathname.slice(0, 200)} is available as text/html or text/markdown.`,
      );
    }
    const markdownPath = pathname === '/' ? '/index.md' : `${pathname}.md`;
    if (chosen === 'text/markdown') {
      if (!markdown) {
        x.res.setHeader('Vary', 'Accept');
        throw new ProblemError(
          'upstream_unavailable',
          `The generated markdown of ${pathname.slice(0, 200)} is missing on this server.`,
          {
            resolution:
              'Request the page as text/html, or retry shortly; if it persists, the site build is incomplete and must be rebuilt.',
          },
        );
      }
      return sendBuildFile(x, markdown, markdownPath, { varyAccept: true, contentLocation: markdownPath });
    }
    return sendBuildFile(x, html, pathname, {
      varyAccept: true,
      ...(markdown ? { link: `<${markdownPath}>; rel="alternate"; type="text/markdown"` } : {}),
    });
  }

  /** The budget a path is counted against: the API's for the API and MCP, the pages' for the rest. */
  function limiterOf(pathname: string): RateLimiter {
    return deps.api.owns(pathname) || deps.mcp.owns(pathname) ? deps.limiters.api : deps.limiters.pages;
  }

  /** The request's budget: counted, or only read for what does not spend it. */
  function budgetOf(
    req: IncomingMessage,
    target: Target | undefined,
  ): RateLimitState | Promise<RateLimitState> {
    const client = clientAddress(req, deps.trustedProxyHops);
    const pathname = target?.pathname ?? '';
    const limiter = limiterOf(pathname);
    return spendsBudget(pathname) ? limiter.take(client) : limiter.peek(client);
  }

  function prepare(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    target: Target | undefined,
    budget: RateLimitState,
  ): Exchange {
    const common = [
      'X-Request-ID',
      requestId,
      'X-API-Version',
      API_VERSION,
      'X-Content-Type-Options',
      'nosniff',
      ...budgetHeaderList(budget),
    ];
    // Keep-alive clients move on to another server instead of sending their next request here.
    if (deps.draining()) common.push('Connection', 'close');
    if (!budget.allowed) common.push('Retry-After', String(budget.resetSeconds));
    return { req, res, common, applied: false, target, budget };
  }

  /** Answers the request; returns a promise only when the answer is not ready at once. */
  function dispatch(x: Exchange): Promise<void> | undefined {
    const { req, res, target, budget } = x;
    const pathname = target?.pathname ?? '';
    const hostProblem = hostHeaderProblem(req);
    if (hostProblem) {
      req.resume();
      throw hostProblem;
    }
    if (!budget.allowed) {
      req.resume();
      throw new ProblemError(
        'rate_limited',
        `The ${BUDGET_DESCRIPTIONS[budget.budget]} of ${budget.limit} requests per ${budget.windowSeconds} seconds is spent for this client.`,
        { extensions: { budget: budget.budget } },
      );
    }
    if (!target) {
      throw new ProblemError('invalid_request', 'The request target is not a valid path.');
    }
    if (deps.api.owns(pathname)) {
      applyCommon(x);
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      const query = target.query ?? new URLSearchParams();
      return deps.api.handle({ req, res, query, site: deps.site }, pathname);
    }
    if (deps.mcp.owns(pathname)) {
      applyCommon(x);
      res.setHeader('Access-Control-Allow-Origin', '*');
      // MCP clients in a browser read Mcp-Session-Id from answers; this stateless server sends none.
      res.setHeader('Access-Control-Expose-Headers', `${EXPOSED_HEADERS}, Mcp-Session-Id`);
      return deps.mcp.handle(req, res);
    }
    if (deps.sharePages.owns(pathname)) {
      applyCommon(x);
      return deps.sharePages.handle(req, res, pathname).then((found) => {
        if (!found) return sendNotFound(x, pathname);
      });
    }
    // Discovery documents (the AI catalog, the MCP server card) are public metadata that browser
    // clients read from other origins; the MCP server card proposal requires this header.
    if (pathname.startsWith('/.well-known/')) x.common.push('Access-Control-Allow-Origin', '*');
    const resolved = deps.files.resolve(pathname, target.search);
    const method = req.method ?? 'GET';
    if (resolved.kind === 'none') {
      req.resume();
      return sendNotFound(x, pathname);
    }
    if (method !== 'GET' && method !== 'HEAD') {
      req.resume();
      throw new ProblemError('method_not_allowed', `${pathname.slice(0, 200)} answers GET and HEAD only.`, {
        headers: { Allow: 'GET, HEAD' },
      });
    }
    switch (resolved.kind) {
      case 'redirect':
        applyCommon(x);
        res.statusCode = 301;
        res.setHeader('Location', resolved.location);
        res.setHeader('Cache-Control', 'public, max-age=3600');
        res.end();
        return;
      case 'page':
        return sendPage(x, pathname, resolved.html, resolved.markdown);
      case 'file':
        return sendBuildFile(x, resolved.file, pathname);
    }
  }

  /** The one error handler: a problem document where possible, the unexpected logged with its stack. */
  function fail(x: Exchange, error: unknown): void {
    const { req, res } = x;
    if (error instanceof ClientAbortError) {
      // Nobody is left to read an answer; the request log says "request aborted".
      res.destroy();
      return;
    }
    if (res.headersSent || res.destroyed) {
      // Too late for a problem document; a cut connection tells the client the answer is incomplete.
      if (!(error instanceof ProblemError)) markFailed(res, error);
      res.destroy();
      return;
    }
    applyCommon(x);
    for (const name of REPRESENTATION_HEADERS) res.removeHeader(name);
    const route = deps.api.routeOf(parseTarget(req.url ?? '')?.pathname ?? '');
    // The platform CLI reads `error` from a failed publish; other clients read `detail`.
    const extend =
      route?.operationId === 'createRunShare' ? (p: Problem) => ({ error: p.detail }) : undefined;
    sendProblem(req, res, error, deps.site, extend);
  }

  return (req, res) => {
    const requestId = trackRequest(deps.logger, req, res, deps.onResponseClosed);
    const target = parseTarget(req.url ?? '');
    const answer = (budget: RateLimitState) => {
      const exchange = prepare(req, res, requestId, target, budget);
      try {
        dispatch(exchange)?.catch((error: unknown) => fail(exchange, error));
      } catch (error) {
        fail(exchange, error);
      }
    };
    // The limiters do not fail (the shared one falls back to counting in memory); should one
    // ever, the request is answered as any unexpected failure is, never left hanging.
    const failBudget = (error: unknown) => {
      const budget = limiterOf(target?.pathname ?? '').lastKnown(clientAddress(req, deps.trustedProxyHops));
      req.resume();
      fail(prepare(req, res, requestId, target, budget), error);
    };
    let budget: RateLimitState | Promise<RateLimitState>;
    try {
      budget = budgetOf(req, target);
    } catch (error) {
      failBudget(error);
      return;
    }
    // Known at once (in-memory count, reserved place): answered in this turn, without a promise.
    if (budget instanceof Promise) budget.then(answer, failBudget);
    else answer(budget);
  };
}
