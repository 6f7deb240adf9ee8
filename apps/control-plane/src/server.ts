import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type Database, migrateLatest, openDatabase } from '@switchyard/shared/db';
import { createApp } from './app.ts';
import type { Config } from './config/config.ts';
import { loadConfig } from './config/load-config.ts';
import { createEventBusFor, type EventBus } from './events/index.ts';
import { createServiceMetrics } from './metrics/service-metrics.ts';
import { controlPlaneMigrations } from './migrations/index.ts';
import { createNodeRuntime, type NodeRuntime } from './services/nodes-runtime.ts';

export interface StartOptions {
  /** A complete configuration to use as is; without it the configuration is loaded from `env`. */
  config?: Config;
  /** The environment to load the configuration from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The YAML config file; defaults to SERVICE_CONFIG_FILE, then ./switchyard.yaml if present. */
  filePath?: string;
  /** Where start-up notes go; defaults to stdout. */
  log?: (line: string) => void;
}

export interface RunningServer {
  server: Server;
  db: Database;
  events: EventBus;
  config: Config;
  /** The node service; its background loops run from start until close(). */
  nodeRuntime: NodeRuntime;
  url: string;
  /** Stops background loops, closes the HTTP server, the event bus and the database, in that order. */
  close(): Promise<void>;
}

/**
 * Loads the configuration, opens and migrates the database, wires the app and listens. With
 * config_source `db` the configuration is loaded twice: first without the database (storage is
 * never read from it, so this is where the database is), then with the stored config applied.
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => console.log(`[control-plane] ${line}`));
  const env = options.env ?? process.env;
  let config = options.config ?? (await loadConfig({ env, filePath: options.filePath, log }));
  const { databaseUrl, dataDir } = config.storage;
  const db = await openDatabase({
    url: databaseUrl,
    dataDir: databaseUrl ? undefined : join(dataDir, 'control-plane'),
  });
  let events: EventBus | undefined;
  try {
    await migrateLatest(db, controlPlaneMigrations);
    if (!options.config && config.configSource === 'db') {
      config = await loadConfig({ env, filePath: options.filePath, db, log });
    }
    events = createEventBusFor(databaseUrl);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const nodeRuntime = createNodeRuntime({ db, events, lifecycle: config.nodes, health: config.nodeHealth });
  const app = createApp({ db, config, events, nodeRuntime, metrics: createServiceMetrics() });
  const server = createServer(app.callback());
  try {
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(config.server.port, config.server.host, done);
    });
  } catch (error) {
    await events.close();
    await db.destroy();
    throw error;
  }
  nodeRuntime.start();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const bus = events;
  let closing: Promise<void> | undefined;
  return {
    server,
    db,
    events: bus,
    config,
    nodeRuntime,
    url: `http://${host}:${port}`,
    close() {
      closing ??= (async () => {
        // Loops first: a sweep or probe in flight finishes before its database goes away.
        await nodeRuntime.stop();
        await new Promise<void>((done) => {
          server.close(() => done());
          // Keep-alive and streaming connections would hold close() open until they time out.
          server.closeAllConnections();
        });
        await bus.close();
        await db.destroy();
      })();
      return closing;
    },
  };
}

async function main(): Promise<void> {
  const running = await startServer();
  const { config } = running;
  console.log(`[control-plane] listening on ${running.url}`);
  console.log(
    `[control-plane] database: ${config.storage.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded, in ${join(config.storage.dataDir, 'control-plane')}`}; config source: ${config.configSource}; API key: ${config.api.auth.apiKey ? 'required' : 'off'}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[control-plane] ${signal}: shutting down`);
    try {
      await running.close();
      process.exit(0);
    } catch (error) {
      console.error('[control-plane] shutdown failed:', error);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error('[control-plane] failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
