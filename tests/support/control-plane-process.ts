import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ExitStatus, type RunningProcess, startNode } from './child-process.ts';
import { seedDataDir } from './data-dir.ts';
import { freePort } from './free-port.ts';

/**
 * The control plane's build, run the way its `npm start` and its container run it. turbo builds it
 * before `npm test`; after changing its code, `npm run build -w @switchyard/control-plane`.
 */
const SERVER_ENTRY = fileURLToPath(new URL('../../apps/control-plane/dist/server.js', import.meta.url));

export interface ControlPlaneProcessOptions {
  /**
   * The directory the server runs in: its working directory (it has no switchyard.yaml, so no
   * file layer applies) and SWITCHYARD_DATA_DIR (PGlite keeps its files in `<dir>/control-plane`).
   */
  dir: string;
  /** PostgreSQL; undefined means the embedded PGlite database in `dir`. */
  databaseUrl: string | undefined;
  /** A fixed port, so a restarted server answers where the first one did; default: a free one. */
  port?: number;
  /** Further settings (environment variables), e.g. SWITCHYARD_EXECUTION_QUEUE_ORPHAN_GRACE. */
  env?: Record<string, string>;
  /** How long to wait for it to answer GET /api/v1/health with 200; 60 s. */
  readyTimeoutMs?: number;
  /**
   * On PGlite, a `dir` without a database starts from a copy of the run's migrated template
   * (global-setup.ts); true leaves it empty, for tests of what the server does on first start.
   */
  emptyDatabase?: boolean;
}

export interface ControlPlaneProcess {
  url: string;
  port: number;
  pid: number;
  process: RunningProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL: no shutdown, no lease released, nothing flushed, as when a machine dies. */
  kill(): Promise<ExitStatus>;
  /** SIGTERM: the graceful shutdown of `npm start` (leases released, database closed). */
  stop(): Promise<ExitStatus>;
}

/**
 * Starts the control plane's build (`dist/server.js`) as a real process with only the given settings (a
 * developer's SERVICE_API_KEY or DATABASE_URL must not leak in) and resolves once it answers its
 * health check. Rejects, quoting its output, if it exits or never answers.
 */
export async function startControlPlaneProcess(
  options: ControlPlaneProcessOptions,
): Promise<ControlPlaneProcess> {
  if (!existsSync(SERVER_ENTRY)) {
    throw new Error(`No build at ${SERVER_ENTRY}: run \`npm run build -w @switchyard/control-plane\` first.`);
  }
  const port = options.port ?? (await freePort());
  if (!options.databaseUrl && !options.emptyDatabase) await seedDataDir(options.dir, ['control-plane']);
  const child = startNode(['--enable-source-maps', SERVER_ENTRY], {
    cwd: options.dir,
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_PORT: String(port),
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: options.dir,
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      // Warnings and errors only (JSON lines): a request line per call would bury what matters.
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      ...options.env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let last = 'no answer yet';
  for (;;) {
    if (child.child.exitCode !== null || child.child.signalCode !== null) {
      const how = child.child.signalCode ?? `code ${child.child.exitCode}`;
      throw new Error(
        `the control plane exited (${how}) before it was ready; its output:\n${child.output()}`,
      );
    }
    try {
      const response = await fetch(`${url}/api/v1/health`, { signal: AbortSignal.timeout(2_000) });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) break;
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) {
      await child.stop('SIGKILL');
      throw new Error(
        `the control plane did not turn healthy (last: ${last}); its output:\n${child.output()}`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    url,
    port,
    pid: child.child.pid!,
    process: child,
    output: child.output,
    kill: () => child.stop('SIGKILL'),
    stop: () => child.stop('SIGTERM'),
  };
}

/** Status records of executions by id, through POST /api/v1/executions/batch-status (100 ids a call). */
export async function executionStatuses(url: string, ids: string[]): Promise<Map<string, any>> {
  const chunks: string[][] = [];
  for (let start = 0; start < ids.length; start += 100) chunks.push(ids.slice(start, start + 100));
  const answers = await Promise.all(
    chunks.map(async (chunk) => {
      const response = await fetch(`${url}/api/v1/executions/batch-status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ execution_ids: chunk }),
      });
      if (response.status !== 200) {
        throw new Error(`batch-status answered ${response.status}: ${await response.text()}`);
      }
      return (await response.json()) as Record<string, any>;
    }),
  );
  return new Map(answers.flatMap((answer) => Object.entries(answer)));
}

/** Submits `count` async executions of `target`, `concurrency` at a time; the ids in order. */
export async function submitAsync(
  url: string | ((index: number) => string),
  target: string,
  count: number,
  concurrency = 50,
): Promise<Array<{ id: string; index: number; url: string }>> {
  const submitted: Array<{ id: string; index: number; url: string }> = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - start) }, (_, k) => start + k);
    submitted.push(
      ...(await Promise.all(
        batch.map(async (index) => {
          const base = typeof url === 'function' ? url(index) : url;
          const response = await fetch(`${base}/api/v1/execute/async/${target}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ input: { n: index } }),
          });
          const body = (await response.json()) as { execution_id?: string };
          if (response.status !== 202 || !body.execution_id) {
            throw new Error(`submission ${index} answered ${response.status}: ${JSON.stringify(body)}`);
          }
          return { id: body.execution_id, index, url: base };
        }),
      )),
    );
  }
  return submitted;
}
