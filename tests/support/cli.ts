import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CommandResult, type RunningProcess, runToEnd, startNode } from './child-process.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from './control-plane-process.ts';
import { startExampleAgent } from './dashboard-session.ts';
import { type BackgroundCommand, commandExamples, runShell, shellEnv, startShell } from './doc-examples.ts';
import { eventually } from './eventually.ts';
import { freePort } from './free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from './throwaway-database.ts';

/**
 * The command line as its users get it: the build, apps/cli/dist/switchyard.js, run by Node as a
 * child process. turbo builds it before `npm test` (tests depend on @switchyard/cli); after
 * changing its code, `npm run build -w @switchyard/cli`.
 */
export const CLI_ENTRY = fileURLToPath(new URL('../../apps/cli/dist/switchyard.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type CliResult = CommandResult;

/**
 * Runs `switchyard <args>` with only the given environment (and PATH, HOME), its standard input
 * closed unless `input` is given, and answers its exit status and output. Rejects if it runs
 * longer than `timeoutMs`.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  if (!existsSync(CLI_ENTRY)) {
    throw new Error(`No CLI build at ${CLI_ENTRY}: run \`npm run build -w @switchyard/cli\` first.`);
  }
  return runToEnd(process.execPath, [CLI_ENTRY, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    input: options.input,
    timeoutMs: options.timeoutMs,
  });
}

/** Starts `switchyard <args>` and leaves it running (a `tail`, a `memory watch`). */
export function startCli(args: string[], env: Record<string, string | undefined>): RunningProcess {
  return startNode([CLI_ENTRY, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
}

/**
 * What the CLI tests run against: a control-plane process on a throwaway database (PostgreSQL
 * when DATABASE_URL is set, PGlite otherwise) with an API key and a connector token, example
 * agents started from examples/ on loopback, and a config file of their own.
 */
export interface CliSession {
  controlPlane: ControlPlaneProcess;
  apiKey: string;
  connectorToken: string;
  dir: string;
  /** The environment a user of this control plane sets: SWITCHYARD_URL, SERVICE_API_KEY, a config file. */
  env: Record<string, string>;
  cli(
    args: string[],
    options?: { env?: Record<string, string | undefined>; input?: string },
  ): Promise<CliResult>;
  startExample(name: string, nodeId: string): Promise<RunningProcess>;
  /**
   * Runs `node examples/<file> <args>` as the docs show it (CONTROL_PLANE_URL, AGENT_PORT,
   * SERVICE_API_KEY) and waits until the control plane reports `nodeId` ready.
   */
  startExampleWith(file: string, args: string[], nodeId: string): Promise<RunningProcess>;
  /** A call to the control plane's API with the key; throws, quoting the answer, unless it is 2xx. */
  api(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<any>;
  /** Stops the control plane (SIGTERM) and starts it again on the same port and database. */
  restartControlPlane(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCliSession(options: {
  databasePrefix: string;
  env?: Record<string, string>;
}): Promise<CliSession> {
  const dir = mkdtempSync(path.join(tmpdir(), `${options.databasePrefix}-`));
  const database: ThrowawayDatabase = await throwawayDatabase(options.databasePrefix);
  const apiKey = 'cli-test-key';
  const connectorToken = 'cli-test-connector-token';
  const serverEnv = { SERVICE_API_KEY: apiKey, SERVICE_CONNECTOR_TOKEN: connectorToken, ...options.env };
  let controlPlane = await startControlPlaneProcess({ dir, databaseUrl: database.url, env: serverEnv });
  const processes: RunningProcess[] = [];
  const session: CliSession = {
    get controlPlane() {
      return controlPlane;
    },
    apiKey,
    connectorToken,
    dir,
    get env() {
      return {
        SWITCHYARD_URL: controlPlane.url,
        SERVICE_API_KEY: apiKey,
        SWITCHYARD_CONFIG_FILE: path.join(dir, 'cli-config.json'),
      };
    },
    cli: (args, cliOptions = {}) =>
      runCli(args, { env: { ...session.env, ...cliOptions.env }, input: cliOptions.input }),
    async startExample(name, nodeId) {
      const agent = await startExampleAgent({ controlPlaneUrl: controlPlane.url, name, nodeId, apiKey });
      processes.push(agent);
      return agent;
    },
    async startExampleWith(file, args, nodeId) {
      const agent = startNode([path.join(ROOT, 'examples', file), ...args], {
        env: {
          PATH: process.env.PATH,
          CONTROL_PLANE_URL: controlPlane.url,
          AGENT_PORT: String(await freePort()),
          SERVICE_API_KEY: apiKey,
        },
      });
      processes.push(agent);
      await eventually(
        `precondition: agent ${nodeId} turns ready`,
        async () => {
          const node = await session.api('GET', `/api/v1/nodes/${nodeId}`).catch(() => undefined);
          return node?.lifecycle_status === 'ready' ? true : undefined;
        },
        () => agent.output(),
      );
      return agent;
    },
    async api(method, route, body, headers = {}) {
      const response = await fetch(`${controlPlane.url}${route}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : null;
    },
    async restartControlPlane() {
      const port = controlPlane.port;
      await controlPlane.stop();
      controlPlane = await startControlPlaneProcess({ dir, databaseUrl: database.url, port, env: serverEnv });
    },
    async stop() {
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await controlPlane.stop();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return session;
}

// ---- Running the examples of a CLI docs page ------------------------------------------------

/**
 * A directory holding a `switchyard` command that runs the build, to put first on PATH so a
 * page's commands run as a reader who installed the CLI runs them.
 */
export function cliBinDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-bin-'));
  mkdirSync(dir, { recursive: true });
  const bin = path.join(dir, 'switchyard');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${CLI_ENTRY}" "$@"\n`);
  chmodSync(bin, 0o755);
  return dir;
}

/**
 * Output as a page shows it, so a real run can be compared with it: ages (`4 s ago`), durations
 * (`19 ms`, `2.4 s`), generated ids (`exec_…`), loopback ports and run-to-run column widths vary,
 * everything else must be the same.
 */
export function normalizeOutput(text: string): string {
  return text
    .replace(/\b\d+ (s|m|h|d) ago\b/g, '<ago>')
    .replace(/\b\d+(\.\d+)? (ms|s)\b/g, '<duration>')
    .replace(/\b\d+ m \d+ s\b/g, '<duration>')
    .replace(/"duration_ms": ?\d+(\.\d+)?/g, '"duration_ms": <n>')
    .replace(/\b([a-z]+)_[0-9a-hjkmnp-tv-z]{26}\b/g, '$1_<id>')
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\b/g, '<time>')
    .replace(/\b\d{2}:\d{2}:\d{2}\.\d{3}\b/g, '<clock>')
    .replace(/\b\d+-\d+\b/g, '<event-id>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .split('\n')
    .map((line) => line.replace(/ {2,}/g, '  ').trimEnd())
    .join('\n')
    .trim();
}

export interface PageCommandResult {
  line: number;
  command: string;
  result: CliResult;
  /** The ```text block the page shows after the command, if any. */
  shown: string | undefined;
}

/** Commands that follow a stream until stopped: a page shows what they print meanwhile. */
const FOLLOWS = /^switchyard (tail|memory watch)\b/;

/**
 * Runs every ```bash block of a CLI docs page in order, in a real shell with `switchyard` on
 * PATH and the session's environment (SWITCHYARD_URL, SERVICE_API_KEY, config file), after
 * `prepare` maps page values (ids) to real ones. Answers each result with what the page shows.
 *
 * A `switchyard tail` or `switchyard memory watch` is left running, as in a second terminal, once
 * it says it is live, while the page's next commands run; when the page starts another one, or
 * has no command left, it is given until it printed as many lines as the page shows, then stopped
 * (SIGTERM, as Ctrl-C), and its output is its result.
 */
export async function runPageCommands(
  page: string,
  env: Record<string, string>,
  prepare: (command: string) => string | Promise<string> = (command) => command,
): Promise<PageCommandResult[]> {
  const markdown = readFileSync(path.join(ROOT, page), 'utf8');
  const bin = cliBinDir();
  const results: PageCommandResult[] = [];
  const shellPath = `${bin}:${shellEnv().PATH}`;
  let following:
    | { line: number; command: string; shown: string | undefined; run: BackgroundCommand }
    | undefined;
  const finishFollowing = async () => {
    if (!following) return;
    const { run, shown } = following;
    const wanted = shown === undefined ? 0 : shown.trim().split('\n').length;
    const deadline = Date.now() + 15_000;
    while (run.stdout().trim().split('\n').filter(Boolean).length < wanted && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 100));
    }
    await run.stop();
    const code = await run.exited();
    const stdout = run.stdout();
    results.push({
      line: following.line,
      command: following.command,
      // The page shows what it printed on stdout; its notes on stderr (live, reconnecting) vary.
      result: { code, stdout, stderr: '' },
      shown,
    });
    following = undefined;
  };
  try {
    for (const example of commandExamples(markdown)) {
      const command = await prepare(example.command.code);
      const shown = example.shown?.lang === 'text' ? example.shown.code : undefined;
      if (FOLLOWS.test(command.trim())) {
        await finishFollowing();
        const run = startShell(command, { cwd: ROOT, env: { ...env, PATH: shellPath } });
        await run.waitFor(': live');
        following = { line: example.command.line, command, shown, run };
        continue;
      }
      const result = await runShell(command, {
        cwd: ROOT,
        env: { ...env, PATH: shellPath },
        timeoutMs: 60_000,
      });
      results.push({ line: example.command.line, command, result, shown });
    }
    await finishFollowing();
  } finally {
    await following?.run.stop();
    rmSync(bin, { recursive: true, force: true });
  }
  return results;
}

// ---- Agents written for a test --------------------------------------------------------------

export type AgentFunction = (input: any, headers: IncomingHttpHeaders) => Promise<unknown>;

export interface TestAgent {
  nodeId: string;
  url: string;
  stop(): Promise<void>;
}

/**
 * An agent as the agent SDKs build one, on 127.0.0.1: it serves POST /reasoners/{id} (a
 * function's answer, or 500 with the message of what it threw) and GET /health, registers with
 * the control plane and reports itself ready.
 */
export async function startTestAgent(
  session: Pick<CliSession, 'api'>,
  nodeId: string,
  functions: Record<string, AgentFunction>,
  version = '1.0.0',
): Promise<TestAgent> {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const answer = (status: number, body: unknown) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') return answer(200, { status: 'ok' });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const fn = functions[/^\/reasoners\/([\w-]+)$/.exec(req.url ?? '')?.[1] ?? ''];
    if (req.method !== 'POST' || !fn) return answer(404, { error: 'no such function' });
    try {
      const text = Buffer.concat(chunks).toString('utf8');
      return answer(200, await fn(text ? JSON.parse(text) : {}, req.headers));
    } catch (error) {
      return answer(500, { error: (error as Error).message });
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await session.api('POST', '/api/v1/nodes/register', {
    id: nodeId,
    version,
    base_url: url,
    deployment_type: 'long_running',
    reasoners: Object.keys(functions).map((id) => ({ id, input_schema: { type: 'object' } })),
    skills: [],
  });
  await session.api('POST', `/api/v1/nodes/${nodeId}/lifecycle/status`, { status: 'ready' });
  return {
    nodeId,
    url,
    async stop() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
