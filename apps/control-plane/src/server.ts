import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createClientErrorHandler, newId } from '@switchyard/shared';
import { type Database, migrateLatest, openDatabase } from '@switchyard/shared/db';
import { createApp } from './app.ts';
import { type Config, loadConfig } from './config.ts';
import { controlPlaneMigrations } from './migrations/index.ts';
import type { NodeRuntime } from './modules/nodes/index.ts';
import { createEventBusFor, type EventBus } from './platform/events/index.ts';
import { createOpenStreams } from './platform/http/open-streams.ts';
import { attachUpgrades } from './platform/http/upgrade.ts';
import { createLogger, type Logger } from './platform/logger.ts';
import { createMetricsRegistry } from './platform/metrics/registry.ts';
import { createRuntime, type Runtime } from './runtime.ts';

export interface StartOptions {
  /** A complete configuration to use as is; without it the configuration is loaded from `env`. */
  config?: Config;
  /** The environment to load the configuration from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The YAML config file; defaults to SERVICE_CONFIG_FILE, then ./switchyard.yaml if present. */
  filePath?: string;
  /** The app's logger; by default one built from the `logging` settings. */
  log?: Logger;
  /** How long close() lets requests in flight finish before cutting their connections; 10 s. */
  shutdownGraceMs?: number;
  /** How long a client may take to send its request head before it is answered 408; 60 s (Node's). */
  headersTimeoutMs?: number;
}

export interface RunningServer {
  server: Server;
  log: Logger;
  db: Database;
  events: EventBus;
  config: Config;
  /** The node service; its background loops run from start until close(). */
  nodeRuntime: NodeRuntime;
  /** Everything stateful behind the routes (executions, webhooks, event log, nodes, replica lease). */
  runtime: Runtime;
  url: string;
  /**
   * Shuts down gracefully: stops accepting connections, ends event streams, lets requests in
   * flight finish (up to `shutdownGraceMs`), then stops background loops and closes the event bus
   * and the database.
   */
  close(): Promise<void>;
}

/**
 * Loads the configuration, opens and migrates the database, wires the app and listens. With
 * config_source `db` the configuration is loaded twice: first without the database (storage is
 * never read from it, so this is where the database is), then with the stored config applied.
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const env = options.env ?? process.env;
  // Notes from loading the config go to the logger once it exists (the config says which).
  const notes: string[] = [];
  const note = (line: string) => (options.log ? options.log.info(line) : notes.push(line));
  let config = options.config ?? (await loadConfig({ env, filePath: options.filePath, log: note }));
  const log = options.log ?? loggerFor(config, env);
  for (const line of notes.splice(0)) log.info(line);
  const { databaseUrl, dataDir } = config.storage;
  const db = await openDatabase({
    url: databaseUrl,
    dataDir: databaseUrl ? undefined : join(dataDir, 'control-plane'),
  });
  let events: EventBus | undefined;
  try {
    await migrateLatest(db, controlPlaneMigrations);
    if (!options.config && config.configSource === 'db') {
      config = await loadConfig({ env, filePath: options.filePath, db, log: (line) => log.info(line) });
    }
    events = createEventBusFor(databaseUrl, log);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const metrics = createMetricsRegistry();
  const runtime = createRuntime({ db, config, events, clock: Date, log, metrics });
  const nodeRuntime = runtime.nodes;
  const streams = createOpenStreams();
  // A reload reads the same environment and file again, with the database (config_source db); a
  // server given a ready-made config has no sources to read again.
  const reloadConfig = options.config
    ? undefined
    : () => loadConfig({ env, filePath: options.filePath, db, log: (line) => log.info(line) });
  const app = createApp({ db, config, events, runtime, metrics, streams, log, reloadConfig });
  const headersTimeoutMs = options.headersTimeoutMs ?? 60_000;
  const server = createServer(
    {
      // A missing Host is answered by the app with a problem document (requireOneHostHeader);
      // Node would answer it with a bare 400 of its own.
      requireHostHeader: false,
      headersTimeout: headersTimeoutMs,
      // Node refuses a request timeout shorter than the headers timeout; 5 minutes is its default.
      requestTimeout: Math.max(headersTimeoutMs, 300_000),
      // Timeouts are only checked this often, so a short headers timeout needs a short interval.
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
    },
    app.callback(),
  );
  // WebSocket handshakes pass through the same middleware as every request (auth, logs, problems).
  attachUpgrades(server, app.callback());
  // Requests Node's parser rejects (bad framing 400, headers too large 431, header timeout 408)
  // never reach the app: they are answered here with the same problem documents, where the socket
  // allows an answer at all.
  server.on(
    'clientError',
    createClientErrorHandler({
      headers: () => ({ 'X-Request-ID': newId('req') }),
      onAnswer: ({ error, response, headers }) => {
        const entry = { req_id: headers['X-Request-ID'], code: error.code, status: response?.status };
        // A reset connection is routine; a malformed or slow request is worth a line.
        if (response) log.info(entry, `client error answered with ${response.status}`);
        else log.debug(entry, 'client error: connection closed without an answer');
      },
    }),
  );
  const inFlight = trackRequests(server);
  const graceMs = options.shutdownGraceMs ?? 10_000;
  // The lease is taken and the loops started before the first request can arrive: a sync call
  // served before this replica had a lease would look abandoned to the others.
  try {
    await runtime.start();
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(config.server.port, config.server.host, done);
    });
    await runtime.acceptingRequests({ embedded: !databaseUrl });
  } catch (error) {
    await runtime.stop(0).catch(() => {});
    await events.close();
    await db.destroy();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const bus = events;
  let closing: Promise<void> | undefined;
  return {
    server,
    log,
    db,
    events: bus,
    config,
    nodeRuntime,
    runtime,
    url: `http://${host}:${port}`,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        // Event streams never finish by themselves; ending them lets clients reconnect elsewhere.
        streams.endAll();
        await inFlight.drained(graceMs);
        // Whatever is still open after the grace period (a stuck request, a keep-alive socket
        // between requests, a connection handed over for an upgrade) would hold server.close()
        // open until it times out, or for as long as its client stays.
        server.closeAllConnections();
        inFlight.cutUpgraded();
        await stopped;
        // The database goes last: requests and background passes still use it until here.
        await runtime.stop(graceMs);
        await bus.close();
        await db.destroy();
      })();
      return closing;
    },
  };
}

/**
 * Counts requests whose responses have not closed, and connections handed over for an upgrade
 * (WebSockets, and answers written on the socket: attachUpgrades) that have not closed, so a
 * shutdown can wait for them.
 */
function trackRequests(server: Server) {
  let active = 0;
  const waiters = new Set<() => void>();
  const upgraded = new Set<Duplex>();
  const finished = () => {
    active--;
    if (active === 0) for (const wake of [...waiters]) wake();
  };
  server.on('request', (_req, res) => {
    active++;
    res.once('close', finished);
  });
  server.on('upgrade', (_req, socket: Duplex) => {
    active++;
    upgraded.add(socket);
    socket.once('close', () => {
      upgraded.delete(socket);
      finished();
    });
  });
  return {
    /** Destroys the upgraded connections still open, which closeAllConnections() does not see. */
    cutUpgraded(): void {
      for (const socket of upgraded) socket.destroy();
    },
    /** Resolves once no request is in flight, or after `limitMs`, whichever comes first. */
    drained(limitMs: number): Promise<void> {
      if (active === 0) return Promise.resolve();
      return new Promise<void>((done) => {
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(finish);
          done();
        };
        const timer = setTimeout(finish, limitMs);
        waiters.add(finish);
      });
    },
  };
}

/** The logger the `logging` settings ask for. */
function loggerFor(config: Config, env: NodeJS.ProcessEnv): Logger {
  const { level, format } = config.logging;
  const pretty =
    format === 'pretty' || (format === 'auto' && process.stdout.isTTY && env.NODE_ENV !== 'production');
  return createLogger({ level, pretty });
}

async function main(): Promise<void> {
  const running = await startServer();
  const { config, log } = running;
  log.info(
    {
      url: running.url,
      database: config.storage.databaseUrl ? 'postgresql' : join(config.storage.dataDir, 'control-plane'),
      config_source: config.configSource,
      api_key: config.api.auth.apiKey ? 'required' : 'off',
    },
    `listening on ${running.url}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    try {
      await running.close();
      // The line a supervisor (scripts/start.mjs, an orchestrator's logs) sees a clean stop by.
      log.info('stopped');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

// Compared as URLs, so a checkout under a path with spaces or non-ASCII names still starts.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    // No logger may exist yet (the configuration itself can be what failed), so this goes to stderr.
    process.stderr.write(
      `control-plane failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
