import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import { seriousAxeViolations } from './axe.ts';
import { type RunningProcess, startNode } from './child-process.ts';
import { launchChromium } from './chromium.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from './control-plane-process.ts';
import { eventually, GiveUp } from './eventually.ts';
import { freePort } from './free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from './throwaway-database.ts';

/**
 * What a browser test of the dashboard needs, as the dashboard's browser tests set it up: the
 * control plane's build run as a process (serving apps/dashboard/dist under its CSP) on a
 * throwaway database, example agents from examples/ as processes, Chromium, and pages whose
 * uncaught errors and console errors (a CSP violation is one) are collected and must be none.
 */

const DIST = fileURLToPath(new URL('../../apps/dashboard/dist', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
export const SCREENSHOTS = fileURLToPath(new URL('../browser/.screenshots', import.meta.url));

export interface DashboardSession {
  browser: Browser;
  controlPlane: ControlPlaneProcess;
  /** `http://127.0.0.1:<port>/ui/<route>`. */
  ui(route?: string): string;
  /** A call to the control plane's API; throws, quoting the answer, unless it is 2xx. */
  api(method: string, route: string, body?: unknown): Promise<any>;
  /**
   * Runs `examples/<name>` as the docs show it (CONTROL_PLANE_URL, AGENT_PORT, AGENT_ID, and the
   * settings in `env`, such as AGENT_VERSION) and waits until the control plane reports its
   * instance ready.
   */
  startExample(name: string, nodeId: string, env?: Record<string, string>): Promise<RunningProcess>;
  /** A new browser context at 1280×860 (or as given) on `url`, its problems recorded. */
  open(url: string, options?: BrowserContextOptions): Promise<Page>;
  /** The page's uncaught and console errors so far; they are then forgotten (expected ones). */
  takeProblems(page: Page): string[];
  /** Closes the page's context and expects it logged no error. */
  close(page: Page): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs `examples/<name>` as the docs show it (CONTROL_PLANE_URL, AGENT_PORT, AGENT_ID,
 * SERVICE_API_KEY when given, and any other setting in `env`) and waits until the control plane
 * reports this process's instance ready: another version of the node may be ready already. The
 * caller stops the process.
 */
export async function startExampleAgent(options: {
  controlPlaneUrl: string;
  name: string;
  nodeId: string;
  apiKey?: string;
  env?: Record<string, string>;
}): Promise<RunningProcess> {
  const { controlPlaneUrl, nodeId, apiKey } = options;
  const port = await freePort();
  const agent = startNode([path.join(EXAMPLES, options.name)], {
    env: {
      PATH: process.env.PATH,
      CONTROL_PLANE_URL: controlPlaneUrl,
      AGENT_PORT: String(port),
      AGENT_ID: nodeId,
      ...(apiKey ? { SERVICE_API_KEY: apiKey } : {}),
      ...options.env,
    },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await eventually(
    `precondition: agent ${nodeId} at ${baseUrl} turns ready`,
    async () => {
      if (agent.child.exitCode !== null) throw new GiveUp('the agent exited');
      const response = await fetch(`${controlPlaneUrl}/api/v1/nodes/${nodeId}`, {
        headers: apiKey ? { 'x-api-key': apiKey } : {},
      });
      if (!response.ok) return undefined;
      const node: { instances: { base_url: string; lifecycle_status: string }[] } = await response.json();
      const instance = node.instances.find((candidate) => candidate.base_url === baseUrl);
      return instance?.lifecycle_status === 'ready' ? true : undefined;
    },
    () => agent.output(),
  ).catch(async (error) => {
    await agent.stop('SIGKILL');
    throw error;
  });
  return agent;
}

export async function startDashboardSession(options: {
  databasePrefix: string;
  env?: Record<string, string>;
}): Promise<DashboardSession> {
  if (!existsSync(path.join(DIST, 'index.html'))) {
    throw new Error(`No dashboard build at ${DIST}: run \`npm run build -w @switchyard/dashboard\` first.`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  const dataDir = mkdtempSync(path.join(tmpdir(), `${options.databasePrefix}-`));
  // PostgreSQL when the run has DATABASE_URL (CI's second pass), embedded PGlite otherwise.
  const database: ThrowawayDatabase = await throwawayDatabase(options.databasePrefix);
  const controlPlane = await startControlPlaneProcess({
    dir: dataDir,
    databaseUrl: database.url,
    env: options.env ?? {},
  });
  const processes: RunningProcess[] = [];
  const problems = new WeakMap<Page, string[]>();
  const browser = await launchChromium();

  const session: DashboardSession = {
    browser,
    controlPlane,
    ui: (route = '') => `${controlPlane.url}/ui/${route}`,

    async api(method, route, body) {
      const response = await fetch(`${controlPlane.url}${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : null;
    },

    async startExample(name, nodeId, env) {
      const agent = await startExampleAgent({ controlPlaneUrl: controlPlane.url, name, nodeId, env });
      processes.push(agent);
      return agent;
    },

    async open(url, contextOptions = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...contextOptions });
      const page = await context.newPage();
      const list: string[] = [];
      problems.set(page, list);
      page.on('pageerror', (error) => list.push(`uncaught: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') list.push(`console error: ${message.text()}`);
      });
      // The page reports CSP violations as events too, including those of its workers.
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) =>
          console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
        );
      });
      await page.goto(url);
      return page;
    },

    takeProblems(page) {
      const seen = problems.get(page) ?? [];
      problems.set(page, []);
      return seen;
    },

    async close(page) {
      const seen = problems.get(page);
      await page.context().close();
      expect(seen, 'uncaught errors and console errors in the page').toEqual([]);
    },

    async stop() {
      await browser.close();
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await controlPlane.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return session;
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  return (await seriousAxeViolations(page)).map((v) => `${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** How far the page scrolls sideways (0 when it fits its viewport). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
