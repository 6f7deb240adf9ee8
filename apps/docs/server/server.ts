import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '@switchyard/shared';
import { type Database, migrateLatest, openDatabase } from '@switchyard/shared/db';
import { createApiRouter } from './api/api-router.ts';
import { pageHandler } from './api/page.ts';
import { searchHandler } from './api/search.ts';
import { topicsHandler } from './api/topics.ts';
import { artifactFile } from './artifacts/artifact-file.ts';
import { ManifestFileSchema, parseArtifact, SearchIndexFileSchema } from './artifacts/site-artifacts.ts';
import { API_VERSION, createFrontHandler } from './front-handler.ts';
import { loadAstroRenderer } from './http/astro-renderer.ts';
import { peerAddress } from './http/client-address.ts';
import { budgetHeaders, deprecationPolicyLink } from './http/common-headers.ts';
import { createRateLimiter, type RateLimiter } from './http/rate-limiter.ts';
import { originForm } from './http/request-target.ts';
import { buildBm25Index } from './search/bm25-index.ts';
import { DEFAULT_SETTINGS, type DocsServerSettings, settingsFromEnv } from './settings.ts';
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
  logError?: (error: unknown, context: string) => void;
}

export interface RunningDocsServer {
  /** Where the server listens, e.g. http://127.0.0.1:4321. */
  url: string;
  /** Public base URL used in links (SITE_URL, or `url` when none is configured). */
  site: string;
  server: Server;
  close(): Promise<void>;
}

function resolveSettings(options: DocsServerOptions): DocsServerSettings {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return {
    ...DEFAULT_SETTINGS,
    dataDir: join(process.cwd(), '.data', 'docs'),
    ...defined,
  } as DocsServerSettings;
}

/**
 * Answers requests Node could not even parse with a problem document rather than a bare 400.
 * It carries the headers of every response (spec §4); the budget is only peeked, keyed on the
 * socket's peer, because there are no parsed headers to read a forwarded address from.
 */
function answerClientError(
  socket: Socket,
  deps: { site: string; limiter: RateLimiter; deprecationLink: string },
): void {
  if (!socket.writable) return;
  const body = JSON.stringify(
    buildProblem('invalid_request', {
      detail: 'The request could not be parsed as HTTP/1.1.',
      instance: '/',
      docsBase: deps.site,
    }),
  );
  const headers: Record<string, string | number> = {
    'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-API-Version': API_VERSION,
    Link: deps.deprecationLink,
    ...budgetHeaders(deps.limiter.peek(peerAddress(socket))),
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 400 Bad Request\r\n${head}\r\n${body}`);
}

/**
 * Starts the docs front server: static build, site API, share permalinks. Options default to
 * the documented settings; `npm start` passes the environment's (see settingsFromEnv).
 */
export async function startDocsServer(options: DocsServerOptions = {}): Promise<RunningDocsServer> {
  const settings = resolveSettings(options);
  const logError =
    options.logError ?? ((error: unknown, context: string) => console.error(`[docs] ${context}:`, error));
  const clientDir = join(settings.distDir, 'client');

  let ownDb: Database | undefined;
  let sharesDb: Database | undefined;
  if (settings.sharesEnabled) {
    let db = options.db;
    if (!db) {
      ownDb = await openDatabase({
        url: settings.databaseUrl,
        dataDir: settings.databaseUrl ? undefined : settings.dataDir,
      });
      db = ownDb;
    }
    await migrateLatest(db, docsMigrations);
    sharesDb = db;
  }

  const reportArtifact = (message: string) => logError(message, 'generated artifact');
  const renderer = await loadAstroRenderer(join(settings.distDir, 'server', 'entry.mjs'), reportArtifact);
  const searchIndex = artifactFile(
    join(clientDir, 'search-index.json'),
    (text) => buildBm25Index(parseArtifact(SearchIndexFileSchema, text)),
    { describe: 'search index (search-index.json)', onError: reportArtifact },
  );
  const manifest = artifactFile(
    join(clientDir, 'docs-ai.json'),
    (text) => parseArtifact(ManifestFileSchema, text),
    {
      describe: 'documentation manifest (docs-ai.json)',
      onError: reportArtifact,
    },
  );

  const server = createServer({ keepAliveTimeout: 5000 });
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

  const shares = createSharesFeature({
    db: sharesDb,
    site,
    renderer,
    maxBytes: settings.sharesMaxBytes,
    writeBudget: { bytes: settings.sharesWriteBudgetBytes, windowSeconds: settings.sharesWriteWindowSeconds },
    trustedProxyHops: settings.trustedProxyHops,
    ...(options.now ? { now: options.now } : {}),
  });
  const api = createApiRouter({
    searchDocumentation: searchHandler({ index: searchIndex }),
    listDocumentationTopics: topicsHandler({ manifest }),
    getDocumentationPage: pageHandler({ index: searchIndex, clientDir }),
    createRunShare: shares.publish,
  });
  const limiter = createRateLimiter({
    limit: settings.rateLimit,
    windowSeconds: settings.rateWindowSeconds,
    ...(options.now ? { now: options.now } : {}),
  });
  const handler = createFrontHandler({
    clientDir,
    site,
    limiter,
    trustedProxyHops: settings.trustedProxyHops,
    deprecationPolicyPath: settings.deprecationPolicyPath,
    api,
    sharePages: shares.pages,
    logError,
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
      publishing && (!sharesDb || Number(req.headers['content-length'] ?? 0) > settings.sharesMaxBytes);
    if (!refused) res.writeContinue();
    handler(req, res);
  });
  const deprecationLink = deprecationPolicyLink(site, settings.deprecationPolicyPath);
  server.on('clientError', (_error, socket: Socket) =>
    answerClientError(socket, { site, limiter, deprecationLink }),
  );

  return {
    url,
    site,
    server,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (ownDb) await ownDb.destroy();
    },
  };
}

async function main(): Promise<void> {
  const running = await startDocsServer(settingsFromEnv());
  console.log(`[docs] listening on ${running.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[docs] ${signal}: shutting down`);
    await running.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error('[docs] failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
