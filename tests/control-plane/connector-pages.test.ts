/**
 * The connector pages show what runs. Each page's ```bash blocks are run in a real
 * shell, in page order, against a control-plane process of its own (a fresh database) started
 * with SERVICE_CONNECTOR_TOKEN set, as the pages say, and each answer must have the shape of the
 * ```json block the page shows after the command (tests/support/page-commands.ts).
 *
 * The reader's fleet is real: two agents (HTTP servers on 127.0.0.1) register `hello-agent`
 * versions 1.0.0 and 1.1.0 the way the pages describe them, heartbeat, answer health probes and
 * implement `POST /_internal/restart`.
 *
 * Substituted: `http://127.0.0.1:8080` (the control plane's default address) becomes the server
 * under test, `http://127.0.0.1:8001` and `:8002` the two agents, and `$SERVICE_CONNECTOR_TOKEN`
 * the token the server was started with. Nothing else is. A `... npm start` command is how the
 * server under test was started.
 *
 * Needs `curl` and `bash` on PATH.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { commandExamples, IdMap } from '../support/doc-examples.ts';
import { createPageRunner } from '../support/page-commands.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_CONTROL_PLANE = 'http://127.0.0.1:8080';
const PAGE_AGENTS = { '1.0.0': 'http://127.0.0.1:8001', '1.1.0': 'http://127.0.0.1:8002' } as const;
const TOKEN = 'c0nnector-pages-token-7d1e';

/** The pages, each with how many commands it shows (a new one must be runnable: raise it then). */
const PAGES = {
  'content/concepts/connector.md': 3,
  'content/api/connector.md': 15,
} as const;

/** One version of hello-agent as the pages describe it. */
interface PageAgent {
  version: keyof typeof PAGE_AGENTS;
  url: string;
  restarts: number;
  server: Server;
  heartbeat?: NodeJS.Timeout;
}

async function startAgent(version: PageAgent['version']): Promise<PageAgent> {
  const agent: PageAgent = { version, url: '', restarts: 0, server: createServer() };
  agent.server.on('request', (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"healthy"}');
      } else if (req.method === 'POST' && req.url === '/_internal/restart') {
        agent.restarts += 1;
        res.writeHead(202, { 'content-type': 'application/json' }).end('{"restarting":true}');
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((done) => agent.server.listen(0, '127.0.0.1', done));
  agent.url = `http://127.0.0.1:${(agent.server.address() as { port: number }).port}`;
  return agent;
}

/** Registers the agent as the pages show hello-agent, reports it ready and keeps it alive. */
async function register(controlPlane: string, agent: PageAgent): Promise<void> {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${controlPlane}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status, `${path}: ${await response.text()}`).toBeLessThan(300);
  };
  await post('/api/v1/nodes/register', {
    id: 'hello-agent',
    version: agent.version,
    base_url: agent.url,
    reasoners: [
      {
        id: 'summarize',
        description: 'Summarises text',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output_schema: { type: 'object', properties: { summary: { type: 'string' } } },
        tags: ['nlp'],
      },
    ],
    skills: [{ id: 'word_count', description: 'Counts words', tags: ['text'] }],
  });
  const beat = () => post('/api/v1/nodes/hello-agent/heartbeat', { version: agent.version, status: 'ready' });
  await beat();
  agent.heartbeat = setInterval(() => void beat().catch(() => {}), 3_000);
}

beforeAll(() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
  } catch {
    throw new Error('the connector pages use curl, which is not on PATH: install it (apt-get install curl)');
  }
});

for (const [page, commands] of Object.entries(PAGES)) {
  describe(page, () => {
    let server: ControlPlaneProcess;
    let database: ThrowawayDatabase;
    let workDir: string;
    const agents: PageAgent[] = [];
    const localize = (text: string) => {
      let out = text.split(PAGE_CONTROL_PLANE).join(server.url).split('$SERVICE_CONNECTOR_TOKEN').join(TOKEN);
      for (const agent of agents) out = out.split(PAGE_AGENTS[agent.version]).join(agent.url);
      return out;
    };
    const runner = createPageRunner({
      page,
      cwd: ROOT,
      localize,
      measured: new Set(['last_check_duration_ms']),
    });
    const examples = commandExamples(readFileSync(join(ROOT, page), 'utf8'));

    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'sy-connector-pages-'));
      database = await throwawayDatabase('sy_connector_pages');
      server = await startControlPlaneProcess({
        dir: workDir,
        databaseUrl: database.url,
        env: { SERVICE_CONNECTOR_TOKEN: TOKEN },
      });
      for (const version of ['1.0.0', '1.1.0'] as const) {
        const agent = await startAgent(version);
        agents.push(agent);
        await register(server.url, agent);
      }
      // Probe both now, as the health monitor soon would, so the pages' health results are there.
      const refreshed = await fetch(`${server.url}/api/v1/nodes/hello-agent/status/refresh`, {
        method: 'POST',
      });
      expect(refreshed.status).toBe(200);
    });

    afterAll(async () => {
      await runner.stop();
      for (const agent of agents) {
        clearInterval(agent.heartbeat);
        agent.server.closeAllConnections();
        await new Promise((done) => agent.server.close(done));
      }
      await server?.stop();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    it(`has ${commands} commands, each followed by the answer it gives`, () => {
      expect(examples).toHaveLength(commands);
      const startsServer = (e: (typeof examples)[number]) => /\bnpm start$/.test(e.command.code.trim());
      expect(examples.filter((e) => !e.shown && !startsServer(e)).map(runner.where)).toEqual([]);
    });

    it('runs every command as the page shows it and gets the answers the page shows', async () => {
      // The reader starts the server this way; the server under test was started so.
      const startsServer = async (_example: unknown, command: string) => {
        if (!/\bnpm start$/.test(command)) return false;
        expect(command).toMatch(/^SERVICE_CONNECTOR_TOKEN=.+ npm start$/);
        return true;
      };
      const problems = await runner.runAll(examples, new IdMap(), startsServer);
      expect(problems, `control plane:\n${server.output()}`).toEqual([]);
      if (page === 'content/api/connector.md') {
        // The restart the page shows reached the agent of 1.1.0, and only it.
        expect(agents.map((a) => [a.version, a.restarts])).toEqual([
          ['1.0.0', 0],
          ['1.1.0', 1],
        ]);
      }
    }, 120_000);
  });
}
