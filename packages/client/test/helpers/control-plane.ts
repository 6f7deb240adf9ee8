import { mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';

/** A real control plane (startServer: config, migrations, loops, listening) on 127.0.0.1. */
export interface TestControlPlane {
  url: string;
  running: RunningServer;
  /** Cuts every open connection from the server's side, as a crash or a proxy timeout would. */
  cutConnections(): void;
  close(): Promise<void>;
}

export interface TestControlPlaneOptions {
  /** SERVICE_API_KEY: when set, every call but the health report needs it. */
  apiKey?: string;
}

/**
 * Starts the control plane the way its server entry does, from environment settings: on a free
 * port, with the embedded database in a fresh directory, or on PostgreSQL when DATABASE_URL is set
 * (so `DATABASE_URL=... npm test` runs the same tests there).
 */
export async function startControlPlane(options: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-client-'));
  const env: NodeJS.ProcessEnv = {
    CONTROL_PLANE_PORT: '0',
    CONTROL_PLANE_HOST: '127.0.0.1',
    SWITCHYARD_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    LOG_FORMAT: 'json',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(options.apiKey ? { SERVICE_API_KEY: options.apiKey } : {}),
  };
  const running = await startServer({ env, shutdownGraceMs: 500 });
  // Tracked here because server.closeAllConnections() leaves event streams alone (Node counts a
  // response that never ends as active, not idle, only until it times out): a cut must destroy them.
  const sockets = new Set<Socket>();
  running.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    url: running.url,
    running,
    cutConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
