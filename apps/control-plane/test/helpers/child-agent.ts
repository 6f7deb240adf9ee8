import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A real agent process (helpers/agent-process.mjs) registered with a control plane. */
export interface ChildAgent {
  process: ChildProcess;
  url: string;
  /** Kills the process with SIGKILL (no goodbye, as when a machine dies) and waits for it to exit. */
  kill(): Promise<void>;
}

export async function startChildAgent(
  controlPlaneUrl: string,
  nodeId: string,
  heartbeatMs = 100,
): Promise<ChildAgent> {
  const script = fileURLToPath(new URL('./agent-process.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      CONTROL_PLANE_URL: controlPlaneUrl,
      NODE_ID: nodeId,
      HEARTBEAT_MS: String(heartbeatMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /ready (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    child.once('exit', (code) => reject(new Error(`agent process exited early (${code}): ${err}`)));
  });
  return {
    process: child,
    url,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
