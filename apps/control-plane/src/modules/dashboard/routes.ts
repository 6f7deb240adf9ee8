import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { send } from '@koa/send';
import { ProblemError } from '@switchyard/shared';
import type { Context, Middleware } from 'koa';

/** Where the dashboard lives; the spec keeps it outside the API key. */
export const DASHBOARD_PREFIX = '/ui';

/**
 * The dashboard runs only its own bundled code and talks only to this origin: no inline script or
 * style, no eval, no framing. Style attributes set from script (React's `style` prop) are CSSOM
 * writes, which style-src does not govern, so 'unsafe-inline' is not needed.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** A `.` or `..` segment, raw or percent-encoded. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i;

/** Vite names every built asset by its content hash, so a name never changes meaning. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.html names the current assets: always revalidated, so a new build is seen at once. */
const REVALIDATE = 'no-cache';

export interface DashboardOptions {
  /** The built dashboard (index.html and assets/), or a function giving it; undefined when none. */
  dir: () => string | undefined;
}

/**
 * Serves the built dashboard at /ui/: hashed assets cached for a year, index.html for every other
 * path under /ui/ (the app routes deep links such as /ui/executions/<id> itself), each answer
 * with a strict Content-Security-Policy. Plain middleware rather than a router: these are pages,
 * not API operations, so they stay out of the OpenAPI document and the 404's endpoint list.
 */
export function dashboardMiddleware(options: DashboardOptions): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== DASHBOARD_PREFIX && !ctx.path.startsWith(`${DASHBOARD_PREFIX}/`)) return next();
    // A path with dot segments is no page of the app, and must not look like one to a proxy
    // that would resolve it elsewhere (/ui/../api/v1/nodes).
    if (DOT_SEGMENT.test(ctx.path)) {
      throw new ProblemError('not_found', `No page at ${ctx.path}: dot segments name no dashboard page.`);
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ProblemError(
        'method_not_allowed',
        `${ctx.method} is not allowed on ${ctx.path}; use GET, HEAD.`,
        {
          headers: { Allow: 'GET, HEAD' },
        },
      );
    }
    if (ctx.path === DASHBOARD_PREFIX) {
      ctx.status = 301;
      ctx.redirect(`${DASHBOARD_PREFIX}/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      return;
    }
    const dir = options.dir();
    if (!dir || !existsSync(join(dir, 'index.html'))) {
      throw new ProblemError('service_unavailable', 'The dashboard is not built on this server.', {
        resolution:
          'Build it with `npm run build -w @switchyard/dashboard` (npm start does), or point dashboard.dir (SWITCHYARD_DASHBOARD_DIR) at a build.',
      });
    }
    ctx.set(SECURITY_HEADERS);
    const file = ctx.path.slice(DASHBOARD_PREFIX.length + 1);
    if (file.startsWith('assets/')) {
      await serve(ctx, dir, file, IMMUTABLE, () => {
        // A missing chunk must not be answered with the app's HTML: the browser would run it as a
        // script and fail obscurely. Usually an old tab asking for a build that was replaced.
        throw new ProblemError('not_found', `No dashboard asset at ${ctx.path}.`, {
          resolution: 'Reload the page: the dashboard was rebuilt since it was opened.',
        });
      });
      return;
    }
    // Files at the build's top level (favicon and the like), else the app for any route.
    await serve(ctx, dir, file === '' ? 'index.html' : file, REVALIDATE, () =>
      serve(ctx, dir, 'index.html', REVALIDATE, () => {
        throw new ProblemError('service_unavailable', 'The dashboard build has no index.html.');
      }),
    );
  };
}

/** Sends one file of the build, or runs `missing` when there is no such file. */
async function serve(
  ctx: Context,
  root: string,
  file: string,
  cacheControl: string,
  missing: () => Promise<void> | void,
): Promise<void> {
  let sent: string | undefined;
  // The answer depends on Accept-Encoding whenever the build holds compressed copies.
  ctx.vary('Accept-Encoding');
  try {
    sent = await send(ctx, file, {
      root,
      index: false,
      hidden: false,
      brotli: true,
      gzip: true,
      setHeaders: (res) => res.setHeader('Cache-Control', cacheControl),
    });
  } catch (error) {
    const status = (error as { status?: number }).status;
    // 404 for a missing file, 400/403 for a path that leaves the root or names a directory.
    if (status === 404 || status === 400 || status === 403) return missing();
    throw error;
  }
  if (sent && ctx.fresh) {
    // The browser's copy is current (If-Modified-Since against the file's Last-Modified).
    (ctx.body as { destroy?: () => void } | null)?.destroy?.();
    ctx.status = 304;
    ctx.body = null;
  }
}
