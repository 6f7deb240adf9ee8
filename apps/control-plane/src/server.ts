import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { type Database, migrateLatest, openDatabase } from '@switchyard/shared/db';
import { createApp } from './app.ts';
import { controlPlaneMigrations } from './migrations/index.ts';

export interface ServerSettings {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
}

/** Reads the process settings the server needs to start. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): ServerSettings {
  const port = Number(env.CONTROL_PLANE_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`CONTROL_PLANE_PORT must be a port number (0-65535), got "${env.CONTROL_PLANE_PORT}"`);
  }
  return {
    port,
    host: env.CONTROL_PLANE_HOST ?? '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.SWITCHYARD_DATA_DIR ?? '.data'),
  };
}

export interface RunningServer {
  server: Server;
  db: Database;
  url: string;
  close(): Promise<void>;
}

/** Opens the database, migrates it, and listens. */
export async function startServer(settings: ServerSettings): Promise<RunningServer> {
  const db = await openDatabase({
    url: settings.databaseUrl,
    dataDir: settings.databaseUrl ? undefined : join(settings.dataDir, 'control-plane'),
  });
  await migrateLatest(db, controlPlaneMigrations);
  const app = createApp({ db });
  const server = createServer(app.callback());
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(settings.port, settings.host, done);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  return {
    server,
    db,
    url: `http://${settings.host}:${port}`,
    async close() {
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await db.destroy();
    },
  };
}

async function main(): Promise<void> {
  const running = await startServer(settingsFromEnv());
  console.log(`[control-plane] listening on ${running.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[control-plane] ${signal}: shutting down`);
    await running.close();
    process.exit(0);
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
