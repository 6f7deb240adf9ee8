// What the start-up benches share: starting a built control plane until it is healthy, and the CPU
// a process has used, read from Linux /proc.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** CPU ms (user + system) a live process has used so far, from Linux /proc (ticks of 1/100 s). */
export function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the built server `entry` with node `flags` in `dir` (its data directory; `env` adds
 * settings such as DATABASE_URL) and resolves once it answers its health check: its process, the
 * time that took and the CPU it used.
 */
export async function startBuiltServer(entry, { flags = [], dir, env = {} }) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, entry], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_PORT: String(port),
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exit;
  child.on('exit', (code, signal) => {
    exit = signal ?? code;
  });
  for (;;) {
    if (exit !== undefined) throw new Error(`the control plane exited (${exit}) before it was healthy`);
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (answer.status === 200) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { child, ms: performance.now() - started, cpuMs: processCpuMs(child.pid) };
}

export async function stopProcess(child, signal) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * A migrated embedded data directory under `work`: the server `entry` started once on an empty one
 * and stopped gracefully.
 */
export async function migratedDataDir(entry, work) {
  const dir = join(work, 'template');
  mkdirSync(dir);
  const { child } = await startBuiltServer(entry, { dir });
  await stopProcess(child, 'SIGTERM');
  return join(dir, 'control-plane');
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
