import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';
import { copyMigratedDataDir, createScratchDatabase } from '@switchyard/shared/db';
import { inject } from 'vitest';

/** A real control plane (startServer: config, migrations, loops, listening) on 127.0.0.1. */
export interface TestControlPlane {
  url: string;
  readonly running: RunningServer;
  /** Cuts every open connection from the server's side, as a crash or a proxy timeout would. */
  cutConnections(): void;
  /**
   * Shuts the server down gracefully (it ends its event streams) and starts it again on the same
   * port and database, as a deployment does; `running` is the new server afterwards.
   */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TestControlPlaneOptions {
  /** SERVICE_API_KEY: when set, every call but the health report needs it. */
  apiKey?: string;
}

/**
 * Starts the control plane the way its server entry does, from environment settings: on a free
 * port, with the embedded database in a fresh directory (a copy of the run's migrated one,
 * global-setup.ts), or, when DATABASE_URL is set, on a scratch PostgreSQL database of that server
 * (so `DATABASE_URL=... npm test` runs the same tests there).
 */
export async function startControlPlane(options: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-client-'));
  // A database of its own on the PostgreSQL server, as every test file of the repository has.
  const scratch = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'sy_client')
    : undefined;
  if (!scratch) await copyMigratedDataDir(inject('controlPlaneDataTemplate'), dataDir, 'control-plane');
  const env: NodeJS.ProcessEnv = {
    CONTROL_PLANE_HOST: '127.0.0.1',
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    LOG_FORMAT: 'json',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
    ...(options.apiKey ? { SERVICE_API_KEY: options.apiKey } : {}),
  };
  const start = async (port: string) => {
    return startServer({ env: { ...env, CONTROL_PLANE_PORT: port }, shutdownGraceMs: 500 });
  };
  let running = await start('0');
  const port = new URL(running.url).port;
  return {
    url: running.url,
    get running() {
      return running;
    },
    cutConnections() {
      // Every socket, event streams included, destroyed without a word: no graceful end of stream.
      running.server.closeAllConnections();
    },
    async restart() {
      await running.close();
      running = await start(port);
    },
    async close() {
      await running.close();
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
