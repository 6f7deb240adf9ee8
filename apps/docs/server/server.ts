import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClientErrorHandler, createConnectHandler } from '@switchyard/shared';
import { type Database, databaseKind, migrateLatest, openDatabase } from '@switchyard/shared/db';
import { createApiRouter } from './api/api-router.ts';
import { createPageReader, pageHandler } from './api/page.ts';
import { searchHandler } from './api/search.ts';
import { topicsHandler } from './api/topics.ts';
import { artifactFile } from './artifacts/artifact-file.ts';
import { ManifestFileSchema, parseArtifact, SearchIndexFileSchema } from './artifacts/site-artifacts.ts';
import { API_VERSION, createFrontHandler, DEPRECATION_POLICY_PATH } from './front-handler.ts';
import { loadAstroRenderer } from './http/astro-renderer.ts';
import { peerAddress } from './http/client-address.ts';
import { budgetHeaders, deprecationPolicyLink } from './http/common-headers.ts';
import { createLogger, type Logger } from './http/logger.ts';
import { type BudgetName, createRateLimiter } from './http/rate-limiter.ts';
import { originForm } from './http/request-target.ts';
import { createSharedRateLimiter } from './http/shared-rate-limiter.ts';
import { createStaticSite } from './http/static-files.ts';
import { createMcpEndpoint, rebindingGuardHostnames } from './mcp/index.ts';
import { buildBm25Index } from './search/bm25-index.ts';
import { type DocsServerSettings, defaultSettings, settingsFromEnv } from './settings.ts';
import { createSharesFeature, docsMigrations } from './shares/index.ts';

export interface DocsServerOptions extends Partial<DocsServerSettings> {
  /**
   * An open database to store shares in (tests pass one from openTestDatabase); the server
   * migrates it and leaves closing it to the caller. Without it the server opens its own from
   * `databaseUrl` / `dataDir`.
   */
  db?: Database;
  /** The clock of the rate limiter (tests move it instead of sleeping). */
  now?: () => number;
  /**
   * Longest wait on PostgreSQL per counted request before this process counts it itself (default
   * 500 ms, see createSharedRateLimiter). Tests of the shared count raise it, so that a slow round
   * trip on a busy machine is not mistaken for a failure of what they test.
   */
  rateLimitStoreTimeoutMs?: number;
  /** Where log lines go; without it, stdout at `logLevel` (see createLogger). */
  logger?: Logger;
}

export interface RunningDocsServer {
  /** Where the server listens, e.g. http://127.0.0.1:4321. */
  url: string;
  /** Public base URL used in links (SITE_URL, or `url` when none is configured). */
  site: string;
  server: Server;
  logger: Logger;
  /**
   * Stops taking connections, lets the requests under way finish for up to `graceMs` (default
   * 0: connections are cut at once), cuts what is left, then closes the database it opened.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Whether SITE_URL names the address the server listens on: same scheme (http), same port, and
 * the same host, where the loopback names are one host and a wildcard interface matches any.
 */
export function siteUrlMatches(siteUrl: string, listening: { host: string; port: number }): boolean {
  const site = new URL(siteUrl);
  if (site.protocol !== 'http:' || Number(site.port || 80) !== listening.port) return false;
  const host =
    listening.host.includes(':') && !listening.host.startsWith('[') ? `[${listening.host}]` : listening.host;
  if (WILDCARD_HOSTS.has(host)) return true;
  const name = site.hostname.toLowerCase();
  return name === host.toLowerCase() || (LOOPBACK_NAMES.has(name) && LOOPBACK_NAMES.has(host.toLowerCase()));
}

/**
 * Starts the docs front server: static build, site API, share permalinks. Options default to
 * the declared settings (server/settings.ts); `npm start` passes the environment's.
 */
export async function startDocsServer(options: DocsServerOptions = {}): Promise<RunningDocsServer> {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const settings: DocsServerSettings = { ...defaultSettings(), ...defined };
  const logger = options.logger ?? createLogger(settings.logLevel, undefined, settings.logFormat);
  const clientDir = join(settings.distDir, 'client');

  let ownDb: Database | undefined;
  let db: Database | undefined;
  if (settings.sharesEnabled) {
    db = options.db;
    if (!db) {
      ownDb = await openDatabase({
        url: settings.databaseUrl,
        dataDir: settings.databaseUrl ? undefined : settings.dataDir,
      });
      db = ownDb;
    }
    await migrateLatest(db, docsMigrations);
  }

  const reportArtifact = (message: string) => logger.error({ artifact: true }, message);
  const files = createStaticSite(clientDir);
  if (files.size === 0) reportArtifact(`the build output ${clientDir} is missing or empty; pages answer 404`);
  const renderer = await loadAstroRenderer(join(settings.distDir, 'server', 'entry.mjs'), reportArtifact);
  const searchIndex = artifactFile(
    join(clientDir, 'search-index.json'),
    (text) => buildBm25Index(parseArtifact(SearchIndexFileSchema, text)),
    { describe: 'search index (search-index.json)', onError: reportArtifact },
  );
  const manifest = artifactFile(
    join(clientDir, 'docs-ai.json'),
    (text) => parseArtifact(ManifestFileSchema, text),
    { describe: 'documentation manifest (docs-ai.json)', onError: reportArtifact },
  );

  const server = createServer({
    keepAliveTimeout: 5000,
    // Missing and repeated Host headers are answered by the front handler with a problem
    // document (hostHeaderProblem); Node would answer the first with a bare 400 of its own.
    requireHostHeader: false,
    headersTimeout: settings.headersTimeoutMs,
    // Node refuses a request timeout shorter than the headers timeout; 5 minutes is its default.
    requestTimeout: Math.max(settings.headersTimeoutMs, 300_000),
    // Timeouts are only checked this often, so a short headers timeout needs a short interval.
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(settings.headersTimeoutMs / 4))),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `http://${host}:${port}`;
  const site = settings.siteUrl ?? url;
  if (settings.siteUrl && !siteUrlMatches(settings.siteUrl, { host: settings.host, port })) {
    logger.warn(
      { siteUrl: settings.siteUrl, listening: url },
      `SITE_URL ${settings.siteUrl} is not where this server listens (${url}): links in answers and problem documents point at SITE_URL; right behind a proxy, a mistake otherwise`,
    );
  }

  const shares = createSharesFeature({
    db,
    site,
    renderer,
    maxBytes: settings.sharesMaxBytes,
    writeBudget: { bytes: settings.sharesWriteBudgetBytes, windowSeconds: settings.sharesWriteWindowSeconds },
    trustedProxyHops: settings.trustedProxyHops,
    ...(options.now ? { now: options.now } : {}),
  });
  const pages = createPageReader({ index: searchIndex, clientDir });
  const api = createApiRouter({
    searchDocumentation: searchHandler({ index: searchIndex }),
    listDocumentationTopics: topicsHandler({ manifest }),
    getDocumentationPage: pageHandler({ pages }),
    createRunShare: shares.publish,
  });
  // On PostgreSQL every replica counts in the same rows, so the budgets per address hold however
  // many serve the site; the embedded database belongs to one process, which counts in memory.
  const sharedBudget = db !== undefined && databaseKind(db) === 'postgres';
  const budgetLimiter = (budget: BudgetName, limit: number) => {
    const budgetOptions = {
      budget,
      limit,
      windowSeconds: settings.rateWindowSeconds,
      ...(options.now ? { now: options.now } : {}),
    };
    return sharedBudget
      ? createSharedRateLimiter({
          ...budgetOptions,
          db: db!,
          logger,
          ...(options.rateLimitStoreTimeoutMs ? { timeoutMs: options.rateLimitStoreTimeoutMs } : {}),
        })
      : createRateLimiter(budgetOptions);
  };
  const limiters = {
    api: budgetLimiter('api', settings.rateLimit),
    pages: budgetLimiter('pages', settings.pageRateLimit),
  };
  let draining = false;
  const handler = createFrontHandler({
    files,
    site,
    limiters,
    trustedProxyHops: settings.trustedProxyHops,
    api,
    sharePages: shares.pages,
    mcp: createMcpEndpoint({
      sources: { index: searchIndex, manifest, pages, site },
      logger,
      allowedHostnames: rebindingGuardHostnames(settings.host, site),
    }),
    logger,
    draining: () => draining,
    // While draining, a connection whose last answer is out is closed at once instead of idling
    // until its keep-alive timeout, so close() resolves as soon as the work under way is done.
    onResponseClosed: () => {
      if (draining) server.closeIdleConnections();
    },
  });
  server.on('request', handler);
  // Expect: 100-continue (RFC 9110 §10.1.1): a publish whose declared body is over the limit, or
  // that sharing is off for, is refused without inviting the body; every other request is
  // invited and handled as usual.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const target = originForm(req.url ?? '') ?? '';
    const publishing =
      req.method === 'POST' && api.routeOf(target.split('?')[0]!)?.operationId === 'createRunShare';
    const refused =
      publishing && (!db || Number(req.headers['content-length'] ?? 0) > settings.sharesMaxBytes);
    if (!refused) res.writeContinue();
    server.emit('request', req, res);
  });
  // Any other expectation (RFC 9110 §10.1.1 lets a server ignore it) is handled like a request
  // without one: Node's own answer to it is a bare 417 without the headers of every response.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res);
  });
  const deprecationLink = deprecationPolicyLink(site, DEPRECATION_POLICY_PATH);
  // The headers every response carries (content/api/site-api.md) for answers written straight to a socket;
  // the budget is as this process last saw it (nothing can be awaited there), keyed on the socket's peer,
  // because there are no parsed headers to read a forwarded address from. No path could be read either, so
  // it is the pages' budget: what is not a call to the API.
  const socketHeaders = (socket: Socket) => ({
    'X-Request-ID': randomUUID(),
    'X-API-Version': API_VERSION,
    'X-Content-Type-Options': 'nosniff',
    Link: deprecationLink,
    ...budgetHeaders(limiters.pages.lastKnown(peerAddress(socket))),
  });
  // CONNECT: without a listener Node destroys the socket without answering.
  server.on(
    'connect',
    createConnectHandler({
      docsBase: site,
      headers: socketHeaders,
      onAnswer: ({ headers }) =>
        logger.info({ reqId: headers['X-Request-ID'], status: 400 }, 'CONNECT answered with 400'),
    }),
  );
  server.on(
    'clientError',
    createClientErrorHandler({
      docsBase: site,
      headers: socketHeaders,
      onAnswer: ({ error, response, headers }) => {
        const entry = { reqId: headers['X-Request-ID'], code: error.code, status: response?.status };
        // A reset connection is routine; a malformed or slow request is worth a line.
        if (response) logger.info(entry, `client error answered with ${response.status}`);
        else logger.debug(entry, 'client error: connection closed without an answer');
      },
    }),
  );

  // Where the request budget is counted: `postgres` (shared by every replica) or `memory`.
  logger.info({ url, site, rateLimitStore: sharedBudget ? 'postgres' : 'memory' }, `listening on ${url}`);

  return {
    url,
    site,
    server,
    logger,
    async close({ graceMs = 0 } = {}) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (graceMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<'grace over'>((resolve) => {
          timer = setTimeout(() => resolve('grace over'), graceMs);
        });
        const outcome = await Promise.race([closed, graceOver]);
        clearTimeout(timer);
        if (outcome === 'grace over') {
          logger.warn(
            { graceMs },
            'requests still under way after the shutdown grace; cutting their connections',
          );
        }
      }
      server.closeAllConnections();
      await closed;
      await Promise.all([limiters.api.close(), limiters.pages.close()]);
      if (ownDb) {
        await ownDb.destroy();
        logger.info('database closed');
      }
    },
  };
}

/**
 * Whether this module is the program Node was started with. Compared as file URLs, which is how
 * `import.meta.url` spells the path (`%20` for a space), after resolving links as Node does for
 * the entry module.
 */
export function isMainModule(moduleUrl: string, argv1: string | undefined = process.argv[1]): boolean {
  if (!argv1) return false;
  let entry = argv1;
  try {
    entry = realpathSync(argv1);
  } catch {
    // Not a file on disk (node -e); compare the path as given.
  }
  return moduleUrl === pathToFileURL(entry).href;
}

/** Signals this close together are one request to stop (see onSignal in main). */
const SAME_STOP_MS = 1_000;

async function main(): Promise<void> {
  let settings: DocsServerSettings;
  try {
    settings = settingsFromEnv();
  } catch (error) {
    createLogger('info').fatal(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
    return;
  }
  const logger = createLogger(settings.logLevel, undefined, settings.logFormat);
  // Log lines are written synchronously, so nothing is pending when the process ends.
  const exit = (code: number) => process.exit(code);
  let running: RunningDocsServer | undefined;
  let stopping: NodeJS.Signals | undefined;
  const shutDown = (server: RunningDocsServer, signal: NodeJS.Signals) => {
    // close() stops listening before it first waits, so once this line is out no connection is taken.
    const closing = server.close({ graceMs: settings.shutdownGraceMs });
    logger.info({ signal, graceMs: settings.shutdownGraceMs }, 'shutting down: finishing requests under way');
    closing.then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  // Listening before the server starts: a signal that arrives while the database opens is
  // honoured once the start is complete, instead of killing the process half-way.
  let stoppingAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // One Ctrl-C at a terminal reaches this process twice under a supervisor such as
      // scripts/start.mjs: SIGINT from the terminal to the whole process group, then the
      // supervisor's SIGTERM. Only a signal that comes later is someone asking again.
      if (Date.now() - stoppingAt < SAME_STOP_MS) return;
      logger.warn({ signal }, 'second signal: stopping without waiting for requests under way');
      exit(1);
    }
    stopping = signal;
    stoppingAt = Date.now();
    if (running) shutDown(running, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    running = await startDocsServer({ ...settings, logger });
  } catch (error) {
    logger.fatal({ err: error }, 'failed to start');
    process.exitCode = 1;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    return;
  }
  if (stopping) shutDown(running, stopping);
}

if (isMainModule(import.meta.url)) void main();
