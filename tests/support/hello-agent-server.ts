import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';
import { type RunningProcess, startNode } from './child-process.ts';
import { seedDataDir } from './data-dir.ts';
import { eventually } from './eventually.ts';
import { freePort } from './free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from './throwaway-database.ts';

const AGENT_SCRIPT = fileURLToPath(new URL('../../examples/first-agent/agent.mjs', import.meta.url));

/** A control-plane server with the API key set and the first-agent example ready as `hello-agent`. */
export interface HelloAgentServer {
  url: string;
  key: string;
  server: RunningServer;
  agent: RunningProcess;
  close(): Promise<void>;
}

/**
 * What a reader of a page that calls `hello-agent` has running: a real control-plane server (on a
 * fresh database, PostgreSQL when DATABASE_URL is set) with `SERVICE_API_KEY`, and the first-agent
 * example (examples/first-agent/agent.mjs, unmodified) registered and ready. Only the given
 * settings reach the server: a developer's own SERVICE_API_KEY or config file must not leak in.
 */
export async function startHelloAgentServer(name: string, key: string): Promise<HelloAgentServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `sy-${name}-`));
  let database: ThrowawayDatabase | undefined;
  let server: RunningServer | undefined;
  let agent: RunningProcess | undefined;
  const close = async () => {
    await agent?.stop();
    await server?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    database = await throwawayDatabase(`sy_${name.replaceAll('-', '_')}`);
    if (!database.url) await seedDataDir(dataDir, ['control-plane']);
    server = await startServer({
      env: {
        CONTROL_PLANE_PORT: '0',
        CONTROL_PLANE_HOST: '127.0.0.1',
        SWITCHYARD_DATA_DIR: dataDir,
        SERVICE_API_KEY: key,
        ...(database.url ? { DATABASE_URL: database.url } : {}),
        LOG_LEVEL: 'silent',
      },
    });
    const url = server.url;
    agent = startNode([AGENT_SCRIPT], {
      env: {
        PATH: process.env.PATH,
        CONTROL_PLANE_URL: url,
        AGENT_PORT: String(await freePort()),
        SERVICE_API_KEY: key,
      },
    });
    const started = agent;
    await eventually(
      'precondition: hello-agent turns ready',
      async () => {
        const response = await fetch(`${url}/api/v1/nodes/hello-agent`, { headers: { 'X-API-Key': key } });
        const body = (await response.json()) as { lifecycle_status?: string };
        return response.status === 200 && body.lifecycle_status === 'ready' ? true : undefined;
      },
      () => `agent output:\n${started.output()}`,
    );
    return { url, key, server, agent, close };
  } catch (error) {
    await close();
    throw error;
  }
}
