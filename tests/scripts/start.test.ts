/**
 * `npm start` runs the docs build, then scripts/start.mjs. These tests run start.mjs itself as a
 * child process, as a user would, on free ports, against the docs site already built for the test
 * run (turbo builds it before `npm test`). Which docs URL it picks for each combination of settings
 * is tested in docs-site-url.test.ts, without starting servers.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { seedDataDir } from '../support/data-dir.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DIST_DIR = join(ROOT, 'apps/docs/dist');
/** What start.mjs prints once both apps listen. */
const READY = /Switchyard is running/;

interface Started {
  process: RunningProcess;
  controlPlane: string;
  docs: string;
  cleanup(): Promise<void>;
}

interface StartOptions {
  /** The checkout start.mjs runs from; default this one. */
  root?: string;
  /**
   * On the embedded database, start as on a new machine: both apps create their databases in an
   * empty data directory. Otherwise they start on copies of the run's migrated ones
   * (data-dir.ts), which is all the other tests need.
   */
  firstStart?: boolean;
}

/**
 * Runs `node scripts/start.mjs` from `root` with only the given settings (plus PATH and HOME), so
 * a developer's SITE_URL or SWITCHYARD_DOCS_URL never leaks in, and waits until both apps listen.
 */
async function startSwitchyard(
  settings: Record<string, string>,
  { root = ROOT, firstStart = false }: StartOptions = {},
): Promise<Started> {
  if (!existsSync(join(DIST_DIR, 'client', 'index.html'))) {
    throw new Error(`No built site at ${DIST_DIR}: run \`npm run build -w @switchyard/docs\` first.`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-start-'));
  const database = await throwawayDatabase('sy_start');
  if (!database.url && !firstStart) await seedDataDir(dataDir, ['control-plane', 'docs']);
  const controlPlanePort = await freePort();
  const docsPort = await freePort();
  const child = startNode([join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SWITCHYARD_DATA_DIR: dataDir,
      CONTROL_PLANE_PORT: String(controlPlanePort),
      DOCS_PORT: String(docsPort),
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      ...settings,
    },
  });
  const cleanup = async () => {
    // Longer than start.mjs's own 25 s, so a test that holds the control plane's stop open does
    // not have it killed from here first.
    await child.stop('SIGINT', 40_000);
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await child.waitFor(READY, 90_000);
  } catch (error) {
    await cleanup();
    throw error;
  }
  return {
    process: child,
    controlPlane: `http://127.0.0.1:${controlPlanePort}`,
    docs: `http://127.0.0.1:${docsPort}`,
    cleanup,
  };
}

/** The problem document the control plane answers for a path it does not serve. */
async function unknownPathProblem(controlPlane: string): Promise<any> {
  const response = await fetch(`${controlPlane}/api/v1/no-such-path`);
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return response.json();
}

/** Sends a request to `url` with `id` as its X-Request-ID; the answer's status. */
async function send(url: string, id: string, init: RequestInit = {}): Promise<number> {
  const headers = { 'x-request-id': id, 'content-type': 'application/json', ...init.headers };
  const response = await fetch(url, { ...init, headers });
  await response.arrayBuffer();
  return response.status;
}

/** The output's lines without colours. */
function outputLines(started: Started): string[] {
  return stripVTControlCharacters(started.process.output()).split('\n');
}

/** Waits until a line carries `req=<id>` (readable) or `"req_id":"<id>"` (JSON); the lines that do. */
async function linesOf(started: Started, id: string): Promise<string[]> {
  const mentions = () =>
    outputLines(started).filter((line) => line.endsWith(` req=${id}`) || line.includes(`"req_id":"${id}"`));
  return eventually(
    `a line for request ${id}`,
    async () => {
      const found = mentions();
      return found.length > 0 ? found : undefined;
    },
    () => started.process.output(),
    // A line is relayed as soon as the response ends; this only bounds a wait for one never written.
    20_000,
  );
}

/**
 * An agent on loopback: `GET /health` answers `healthStatus`, and a call to a reasoner is held
 * open (never answered) until the agent closes; `calls` counts the calls it holds.
 */
async function startAgent(healthStatus = 200) {
  let probes = 0;
  let calls = 0;
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/health') {
      probes++;
      res.writeHead(healthStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: healthStatus === 200 ? 'ok' : 'error' }));
      return;
    }
    if (req.method === 'POST' && req.url?.startsWith('/reasoners/')) {
      calls++;
      held.push(res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    probes: () => probes,
    calls: () => calls,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** Registers `nodeId` with a `hold` reasoner at `baseUrl` and reports it ready. */
async function registerNode(controlPlane: string, nodeId: string, baseUrl: string): Promise<void> {
  const body = {
    id: nodeId,
    version: '1.0.0',
    base_url: baseUrl,
    reasoners: [
      { id: 'hold', input_schema: { type: 'object' }, output_schema: { type: 'object' }, tags: [] },
    ],
    skills: [],
  };
  expect(
    await send(`${controlPlane}/api/v1/nodes/register`, `register-${nodeId}`, {
      method: 'POST',
      body: JSON.stringify(body),
    }),
  ).toBe(201);
  expect(
    await send(`${controlPlane}/api/v1/nodes/${nodeId}/heartbeat`, `ready-${nodeId}`, {
      method: 'POST',
      body: JSON.stringify({ status: 'ready', version: '1.0.0' }),
    }),
  ).toBe(200);
}

describe('node scripts/start.mjs', () => {
  describe('with DOCS_PORT and CONTROL_PLANE_PORT set', () => {
    let started: Started;
    beforeAll(async () => {
      started = await startSwitchyard({});
    });
    afterAll(async () => {
      await started?.cleanup();
    });

    it('announces both apps at the ports it was given', () => {
      expect(started.process.output()).toMatch(
        new RegExp(
          `control plane +${started.controlPlane}   health: ${started.controlPlane}/api/v1/health\n`,
        ),
      );
      expect(started.process.output()).toMatch(new RegExp(`docs site +${started.docs}\n`));
    });

    it('links control-plane errors to the docs site it started, which serves the explanation', async () => {
      const problem = await unknownPathProblem(started.controlPlane);
      const expected = `${started.docs}/docs/reference/errors#not_found`;
      expect(problem).toMatchObject({ code: 'not_found', type: expected, documentation_url: expected });

      const page = await fetch(problem.documentation_url, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('id="not_found"');
    });

    it('relays the JSON log lines with every field, and a heartbeat only when it fails', async () => {
      const agent = await startAgent();
      try {
        await registerNode(started.controlPlane, 'json-agent', agent.url);
        const beat = { method: 'POST', body: JSON.stringify({ status: 'ready', version: '1.0.0' }) };
        expect(
          await send(`${started.controlPlane}/api/v1/nodes/json-agent/heartbeat`, 'json-beat', beat),
        ).toBe(200);
        expect(
          await send(`${started.controlPlane}/api/v1/nodes/no-such-node/heartbeat`, 'json-lost', beat),
        ).toBe(404);
        const [lost] = await linesOf(started, 'json-lost');
        expect(JSON.parse(lost!.replace(/^\[control-plane\] /, ''))).toEqual({
          level: 30,
          time: expect.any(Number),
          pid: expect.any(Number),
          hostname: expect.any(String),
          name: 'control-plane',
          req_id: 'json-lost',
          method: 'POST',
          path: '/api/v1/nodes/no-such-node/heartbeat',
          status: 404,
          ms: expect.any(Number),
          msg: 'request',
        });
        // Lines are relayed in the order they were written, so the earlier heartbeat's would be out.
        expect(started.process.output()).not.toContain('"req_id":"json-beat"');
      } finally {
        await agent.close();
      }
    });

    it('stops both apps on Ctrl-C and exits 0', async () => {
      const exit = await started.process.stop('SIGINT');
      expect(exit).toEqual({ code: 0, signal: null });
      await expect(fetch(`${started.controlPlane}/api/v1/health`)).rejects.toThrow();
      await expect(fetch(started.docs)).rejects.toThrow();
    });
  });

  describe('with readable logs, as on a terminal (LOG_FORMAT=pretty)', () => {
    let started: Started;
    let agent: Awaited<ReturnType<typeof startAgent>>;
    let sick: Awaited<ReturnType<typeof startAgent>>;
    beforeAll(async () => {
      agent = await startAgent();
      sick = await startAgent(500);
      started = await startSwitchyard({
        LOG_FORMAT: 'pretty',
        DOCS_LOG_FORMAT: 'pretty',
        // The docs server logs its requests at debug (see apps/docs/README.md).
        DOCS_LOG_LEVEL: 'debug',
        SWITCHYARD_NODE_HEALTH_CHECK_INTERVAL: '1s',
      });
      await registerNode(started.controlPlane, 'pretty-agent', agent.url);
      await registerNode(started.controlPlane, 'sick-agent', sick.url);
    });
    afterAll(async () => {
      await started?.cleanup();
      await agent?.close();
      await sick?.close();
    });

    it('prints the banner on lines of its own, after both apps listen, with a blank line either side', () => {
      const lines = outputLines(started);
      const at = lines.findIndex((line) => line.startsWith('Switchyard is running (data in '));
      expect(at).toBeGreaterThan(0);
      expect(lines[at - 1]).toBe('');
      expect(lines.slice(at + 1, at + 6)).toEqual([
        `  control plane  ${started.controlPlane}   health: ${started.controlPlane}/api/v1/health`,
        `  dashboard      ${started.controlPlane}/ui/`,
        `  docs site      ${started.docs}`,
        'Press Ctrl-C to stop both.',
        '',
      ]);
      const before = lines.slice(0, at - 1);
      expect(before.filter((line) => /\] \d\d:\d\d:\d\d INFO: +listening on http/.test(line))).toHaveLength(
        2,
      );
    });

    it('writes one line per request at the control plane: method, path, status, time and id', async () => {
      const ids = ['one', 'two', 'three', 'four', 'five'].map((n) => `line-${n}`);
      for (const id of ids)
        expect(await send(`${started.controlPlane}/api/v1/nodes/pretty-agent`, id)).toBe(200);
      for (const id of ids) {
        expect(await linesOf(started, id)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^\\[control-plane\\] \\d\\d:\\d\\d:\\d\\d INFO:  GET /api/v1/nodes/pretty-agent 200 [\\d.]+ms req=${id}$`,
            ),
          ),
        ]);
      }
      expect(outputLines(started).filter((line) => line.includes('req=line-'))).toHaveLength(ids.length);
    });

    it('writes no line for heartbeats and health checks that succeed, and one for a heartbeat that fails', async () => {
      const beat = { method: 'POST', body: JSON.stringify({ status: 'ready', version: '1.0.0' }) };
      const status = { method: 'PATCH', body: JSON.stringify({ status: 'ready', version: '1.0.0' }) };
      const cp = started.controlPlane;
      expect(await send(`${cp}/api/v1/nodes/pretty-agent/heartbeat`, 'routine-beat', beat)).toBe(200);
      expect(await send(`${cp}/api/v1/nodes/pretty-agent/status`, 'routine-status', status)).toBe(200);
      expect(await send(`${cp}/api/v1/health`, 'routine-health')).toBe(200);
      expect(await send(`${cp}/metrics`, 'routine-metrics')).toBe(200);
      expect(await send(`${cp}/api/v1/nodes/no-such-node/heartbeat`, 'failed-beat', beat)).toBe(404);
      expect(await linesOf(started, 'failed-beat')).toEqual([
        expect.stringMatching(
          /INFO: {2}POST \/api\/v1\/nodes\/no-such-node\/heartbeat 404 [\d.]+ms req=failed-beat$/,
        ),
      ]);
      // Lines are relayed in the order they were written, so the earlier requests' would be out.
      expect(started.process.output()).not.toMatch(/req=routine-/);
    });

    it('writes no line for the health probes agents pass, and one for each probe an agent fails', async () => {
      // Both agents are probed each round, but a round may reach one before the other: wait for
      // two probes of each, so at least one passing probe has finished and had its chance to log.
      const failed = await eventually(
        'two failed probes of sick-agent and two probes of pretty-agent',
        async () => {
          const lines = outputLines(started).filter((line) => line.includes('health probe of sick-agent'));
          return lines.length >= 2 && agent.probes() >= 2 ? lines : undefined;
        },
        () => started.process.output(),
        30_000,
      );
      for (const line of failed) {
        expect(line).toMatch(
          /^\[control-plane\] \d\d:\d\d:\d\d WARN: {2}health probe of sick-agent@1\.0\.0 failed: health answered 500 \{/,
        );
      }
      expect(agent.probes()).toBeGreaterThanOrEqual(2);
      expect(started.process.output()).not.toContain('health probe of pretty-agent');
    });

    it('writes one line per request at the docs site when its requests are logged', async () => {
      const ids = ['docs-one', 'docs-two', 'docs-three'];
      for (const id of ids) expect(await send(`${started.docs}/docs/reference/errors`, id)).toBe(200);
      for (const id of ids) {
        expect(await linesOf(started, id)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^\\[docs\\] \\d\\d:\\d\\d:\\d\\d DEBUG: GET /docs/reference/errors 200 [\\d.]+ms req=${id}$`,
            ),
          ),
        ]);
      }
      expect(outputLines(started).filter((line) => line.includes('req=docs-'))).toHaveLength(ids.length);
    });

    it('wrote every log line of both apps, requests and probes included, as one line with its time and level', () => {
      const banner = outputLines(started).findIndex((line) => line.startsWith('Switchyard is running'));
      const logLines = outputLines(started).filter(
        (line, i) => line !== '' && (i < banner || i > banner + 4),
      );
      expect(logLines.length).toBeGreaterThan(2);
      for (const line of logLines) {
        expect(line).toMatch(
          /^\[(control-plane|docs)\] \d\d:\d\d:\d\d (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /,
        );
      }
    });
  });

  describe('stopping', () => {
    let started: Started | undefined;
    let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
    afterAll(async () => {
      await started?.cleanup();
      await agent?.close();
    });

    /**
     * Starts Switchyard with an agent that holds every call open, and makes two calls: a
     * synchronous one, a request in flight that the control plane's stop waits 10 s for, and an
     * async one, a call to an agent that it then waits up to 10 s more for.
     */
    async function startHolding(nodeId: string): Promise<Started> {
      await started?.cleanup();
      await agent?.close();
      agent = await startAgent();
      started = await startSwitchyard({});
      await registerNode(started.controlPlane, nodeId, agent.url);
      const call = { method: 'POST', body: JSON.stringify({ input: {} }) };
      void send(`${started.controlPlane}/api/v1/execute/${nodeId}.hold`, 'held-sync', call).catch(() => {});
      expect(
        await send(`${started.controlPlane}/api/v1/execute/async/${nodeId}.hold`, 'held-async', call),
      ).toBe(202);
      await eventually('the agent holds both calls', async () => (agent!.calls() >= 2 ? true : undefined));
      return started;
    }

    it('waits for a control plane that needs more than 10 s to stop, saying what it waits for, and exits 0', {
      timeout: 180_000,
    }, async () => {
      const running = await startHolding('holding-agent');
      const stopAsked = Date.now();
      running.process.child.kill('SIGINT');
      const exit = await running.process.exited;
      const took = Date.now() - stopAsked;
      expect(exit, running.process.output()).toEqual({ code: 0, signal: null });
      // 10 s for the request in flight, then up to 10 s for the call to the agent.
      expect(took).toBeGreaterThan(15_000);
      expect(running.process.output()).toMatch(
        /\nStopping: waiting up to 25 s for the control plane \(requests and calls to agents under way, up to 20 s\) and the docs site \(requests under way, up to 10 s\)\. Press Ctrl-C again to stop at once\.\n/,
      );
      expect(running.process.output()).toContain(
        'The docs site stopped; still waiting for the control plane.',
      );
      expect(running.process.output()).toMatch(/\[control-plane\] \{[^\n]*"msg":"stopped"/);
      expect(running.process.output()).not.toMatch(/killed/);
    });

    it('stops at once on a second Ctrl-C, killing what still runs', { timeout: 180_000 }, async () => {
      const running = await startHolding('holding-agent-2');
      running.process.child.kill('SIGINT');
      await running.process.waitFor(/Press Ctrl-C again to stop at once/, 5_000);
      const forced = Date.now();
      running.process.child.kill('SIGINT');
      const exit = await running.process.exited;
      expect(exit).toEqual({ code: 1, signal: null });
      expect(Date.now() - forced).toBeLessThan(5_000);
      expect(running.process.output()).toContain('Stopping at once: killed the control plane');
      await eventually('the control plane gone', () =>
        fetch(`${running.controlPlane}/api/v1/health`).then(
          () => undefined,
          () => true,
        ),
      );
    });
  });

  // Regression: from a checkout whose path has a space, `npm start` used to print nothing and stop:
  // each server's main-module check compared import.meta.url, where the space is %20, with
  // `file://${process.argv[1]}`, where it is not, so neither server ever listened. A new checkout
  // has no data yet, so this is also the start on a new machine: both databases are created.
  describe('from a checkout whose path has a space', () => {
    let checkout: string;
    let started: Started;
    beforeAll(async () => {
      checkout = join(mkdtempSync(join(tmpdir(), 'sy-space-')), 'my switchyard');
      copyCheckout(checkout);
      started = await startSwitchyard({ DOCS_DIST_DIR: DIST_DIR }, { root: checkout, firstStart: true });
    });
    afterAll(async () => {
      await started?.cleanup();
      if (checkout) rmSync(resolve(checkout, '..'), { recursive: true, force: true });
    });

    it('starts both apps', async () => {
      const health = await fetch(`${started.controlPlane}/api/v1/health`);
      expect(health.status).toBe(200);
      const home = await fetch(started.docs, { headers: { accept: 'text/html' } });
      expect(home.status).toBe(200);
    });
  });
});

/** Directories a checkout does not hold (installed, built, generated or run-time data). */
const NOT_IN_A_CHECKOUT = new Set(['node_modules', 'dist', '.astro', '.turbo', '.data', 'test-results']);

/**
 * Copies what start.mjs runs (the script, both apps' sources and their server builds) to `target`. Installed
 * dependencies are linked, not copied: npm links workspaces the same way, and the main module of
 * each server, whose check is under test, is then a real file under `target`.
 */
function copyCheckout(target: string): void {
  mkdirSync(target, { recursive: true });
  for (const entry of ['package.json', 'tsconfig.base.json', 'scripts', 'apps']) {
    cpSync(join(ROOT, entry), join(target, entry), {
      recursive: true,
      filter: (source) => !NOT_IN_A_CHECKOUT.has(basename(source)),
    });
  }
  for (const modules of ['node_modules', 'apps/control-plane/node_modules', 'apps/docs/node_modules']) {
    if (existsSync(join(ROOT, modules))) symlinkSync(join(ROOT, modules), join(target, modules), 'dir');
  }
  // The servers' builds, which start.mjs runs (`npm start` builds them first); the docs site's
  // pages come from DOCS_DIST_DIR.
  for (const bundle of ['apps/control-plane/dist/server.js', 'apps/docs/dist/front-server.js']) {
    mkdirSync(dirname(join(target, bundle)), { recursive: true });
    for (const file of [bundle, `${bundle}.map`]) copyFileSync(join(ROOT, file), join(target, file));
  }
}
