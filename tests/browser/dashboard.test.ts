/**
 * The web dashboard at /ui/, in Chromium, against the real control plane (its build, run as a
 * process, serving apps/dashboard/dist under its Content-Security-Policy) with real agents on
 * 127.0.0.1: the docs' example agent (examples/first-agent/agent.mjs) and a test agent whose
 * functions can be held open or made to fail. Every page must render live data, take updates
 * without a reload, fit 390 px, read in light and dark, pass axe-core without serious or critical
 * violations, and log no console error (a CSP violation is one). Screenshots of every page at 1280
 * and 390 px, light and dark, go to tests/browser/.screenshots/.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../support/child-process.ts';
import { CHROMIUM_INSTALL_TIMEOUT_MS } from '../support/chromium.ts';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import {
  type DashboardSession,
  SCREENSHOTS,
  seriousViolations,
  startDashboardSession,
  startExampleAgent,
} from '../support/dashboard-session.ts';
import { keepForDocs } from '../support/docs-screenshots.ts';
import { eventually } from '../support/eventually.ts';

const RUN = randomBytes(3).toString('hex');

/** Webhooks to 127.0.0.1 over http, retried quickly, so a dead letter happens within the test. */
const CONTROL_PLANE_ENV = {
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_ATTEMPTS: '2',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF: '100ms',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_BACKOFF: '200ms',
};

let session: DashboardSession;
const processes: RunningProcess[] = [];
const servers: Server[] = [];

async function api(method: string, url: string, body?: unknown, apiKey?: string): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * Runs the docs' example agent against another control plane than the session's (one that needs
 * an API key) and waits until it reports the agent ready.
 */
async function startExample(url: string, id: string, apiKey?: string): Promise<void> {
  processes.push(
    await startExampleAgent({ controlPlaneUrl: url, name: 'first-agent/agent.mjs', nodeId: id, apiKey }),
  );
}

/**
 * An agent of the test's own: `hold` answers only when the test releases it (or the call is
 * cancelled), `fail` answers 500. It registers, heartbeats and reports ready like an SDK would.
 */
async function startTestAgent(url: string, id: string) {
  // The held calls, by the execution id the control plane sent with each.
  const held = new Map<string, ServerResponse>();
  const baseUrl = await listen((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok' });
    if (req.method === 'POST' && req.url === '/reasoners/fail')
      return send(500, { error: 'the model quota is exceeded' });
    if (req.method === 'POST' && req.url === '/reasoners/hold') {
      const executionId = String(req.headers['x-execution-id']);
      held.set(executionId, res);
      res.on('close', () => held.delete(executionId));
      return;
    }
    if (req.method === 'POST' && req.url?.endsWith('/cancel')) return send(200, { cancelled: true });
    return send(404, { error: 'unknown' });
  });
  const fn = (name: string) => ({ id: name, input_schema: { type: 'object' }, tags: ['test'] });
  await api('POST', `${url}/api/v1/nodes/register`, {
    id,
    version: '2.0.0',
    base_url: baseUrl,
    deployment_type: 'long_running',
    reasoners: [fn('hold'), fn('fail')],
    skills: [],
  });
  await api('POST', `${url}/api/v1/nodes/${id}/heartbeat`, { status: 'starting', version: '2.0.0' });
  await api('POST', `${url}/api/v1/nodes/${id}/lifecycle/status`, { status: 'ready' });
  const beat = setInterval(() => {
    void api('POST', `${url}/api/v1/nodes/${id}/heartbeat`, { status: 'ready', version: '2.0.0' }).catch(
      () => {},
    );
  }, 2_000);
  return {
    release() {
      for (const res of held.values())
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    },
    /** Whether the call of this execution has reached the agent (and waits for release). */
    holds: (executionId: string) => held.has(executionId),
    stop() {
      clearInterval(beat);
    },
  };
}

let testAgent: Awaited<ReturnType<typeof startTestAgent>>;
const exampleAgent = `hello-${RUN}`;
const testAgentId = `holder-${RUN}`;

beforeAll(async () => {
  session = await startDashboardSession({ databasePrefix: 'sy_dashboard', env: CONTROL_PLANE_ENV });
  await session.startExample('first-agent/agent.mjs', exampleAgent);
  testAgent = await startTestAgent(session.controlPlane.url, testAgentId);
  // Some history for every page: successes and a failure.
  for (const text of ['One. Two. Three.', 'Hello there.', 'A. B.']) {
    await api('POST', `${session.controlPlane.url}/api/v1/execute/${exampleAgent}.summarize`, {
      input: { text },
    });
  }
  await api('POST', `${session.controlPlane.url}/api/v1/execute/${testAgentId}.fail`, { input: {} }).catch(
    () => {},
  );
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  testAgent?.stop();
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  await session?.stop();
});

const open = (url: string, options: BrowserContextOptions = {}) => session.open(url, options);
const close = (page: Page) => session.close(page);

const ui = (route = '') => session.ui(route);

async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? '';
}

describe('the dashboard shell', () => {
  it('serves the app at /ui/ under the strict Content-Security-Policy, with nothing inline', async () => {
    const response = await fetch(ui());
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style/);
    expect(html).toMatch(/src="\/ui\/assets\/index-[\w-]+\.js"/);
  });

  it('shows "Live" once both event streams are open', async () => {
    const page = await open(ui('nodes'));
    await page.locator('.live[data-state="live"]').waitFor();
    expect(await textOf(page, '.live')).toBe('Live');
    await close(page);
  });

  it('answers a deep link with the app, which shows the page the address names', async () => {
    const page = await open(ui(`nodes/${exampleAgent}`));
    await page.getByRole('heading', { name: 'Instances' }).waitFor();
    expect(await textOf(page, 'h1')).toBe(exampleAgent);
    await close(page);
  });

  it('jumps to an execution by id from the Ctrl-K palette', async () => {
    const { execution_id: id } = await api(
      'POST',
      `${session.controlPlane.url}/api/v1/execute/${exampleAgent}.summarize`,
      { input: { text: 'Palette.' } },
    );
    const page = await open(ui('nodes'));
    await page.locator('.live[data-state="live"]').waitFor();
    await page.keyboard.press('Control+k');
    await page.getByPlaceholder(/node, execution or workflow id/).fill(id);
    await page.getByRole('option', { name: `Execution ${id}` }).waitFor();
    expect(await seriousViolations(page), 'axe violations with the palette open').toEqual([]);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/ui/executions/${id}`);
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    await close(page);
  });

  it('shows a problem document as a readable message, never as JSON', async () => {
    const page = await open(ui('executions/exec_doesnotexist'));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toContain('Could not load execution exec_doesnotexist');
    expect(text).toContain('No execution "exec_doesnotexist" exists.');
    expect(text).not.toMatch(/[{}]|"status"/);
    // The 404 the page asked for is the console's one expected error line.
    const seen = session.takeProblems(page);
    await close(page);
    expect(seen.every((line) => line.includes('404'))).toBe(true);
  });
});

describe('at 390 px', () => {
  it('folds the sidebar into a menu that opens, navigates and closes', async () => {
    const page = await open(ui('nodes'), { viewport: { width: 390, height: 800 } });
    const nav = page.getByRole('navigation', { name: 'Sections' });
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await nav.getByRole('link', { name: 'Executions' }).click();
    await page.waitForURL('**/ui/executions');
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    await close(page);
  });
});

describe('overview', () => {
  it("shows the nodes by state and the last hour's executions, failure included", async () => {
    const page = await open(ui());
    await page.getByRole('heading', { name: 'Executions, last hour' }).waitFor();
    const stat = (label: string) => page.locator('.stat', { hasText: label }).locator('.stat-value');
    expect(await stat('Instances ready').textContent()).toBe('2');
    expect(Number(await stat('Started').textContent())).toBeGreaterThanOrEqual(4);
    await page.getByRole('table', { name: 'Recent failures' }).getByText(`${testAgentId}.fail`).waitFor();
    // Relative times carry the exact instant for hover.
    const when = page.getByRole('table', { name: 'Recent failures' }).locator('time').first();
    expect(await when.textContent()).toMatch(/ago|now/);
    expect(Date.parse((await when.getAttribute('datetime'))!)).not.toBeNaN();
    expect(await when.getAttribute('title')).toMatch(/\d{1,2}:\d{2}/);
    await close(page);
  });
});

describe('nodes', () => {
  it('lists registered nodes and adds one that registers while the page is open', async () => {
    const page = await open(ui('nodes'));
    const table = page.getByRole('table', { name: 'Nodes' });
    await table.getByRole('link', { name: exampleAgent }).waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    const late = `late-${RUN}`;
    await session.startExample('first-agent/agent.mjs', late);
    await table.getByRole('row', { name: new RegExp(`${late}.*ready`) }).waitFor();
    await close(page);
  });

  it("shows a node's instances and its functions' schemas", async () => {
    const page = await open(ui('nodes'));
    await page.getByRole('link', { name: exampleAgent }).click();
    await page.waitForURL(`**/ui/nodes/${exampleAgent}`);
    const instances = page.getByRole('table', { name: 'Instances' });
    await instances.getByRole('row', { name: /1\.0\.0.*ready.*active.*100/ }).waitFor();
    await page.getByText('summarize', { exact: true }).click();
    await page.getByRole('heading', { name: 'Input schema of summarize' }).waitFor();
    expect(await page.locator('details[open]').textContent()).toContain('max_sentences');
    await close(page);
  });
});

describe('executions', () => {
  it('adds a new execution on top of the list without a reload, and updates its status live', async () => {
    const page = await open(ui('executions'));
    await page.locator('[data-execution-id]').first().waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    const { execution_id: id } = await api(
      'POST',
      `${session.controlPlane.url}/api/v1/execute/async/${testAgentId}.hold`,
      { input: {} },
    );
    const row = page.locator(`[data-execution-id="${id}"]`);
    await row.getByText('running').waitFor();
    expect(await page.locator('[data-execution-id]').first().getAttribute('data-execution-id')).toBe(id);
    // The control plane marks the call running before it reaches the agent: release it once there.
    await eventually('the agent holds the call', async () => (testAgent.holds(id) ? true : undefined));
    testAgent.release();
    await row.getByText('succeeded').waitFor();
    await close(page);
  });

  it('filters by status through the URL', async () => {
    const page = await open(ui('executions'));
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL('**/ui/executions?status=failed');
    await page.locator('[data-execution-id]').first().waitFor();
    const statuses = await page.locator('[data-execution-id] .badge').allTextContents();
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(['failed']));
    // A filter that matches nothing says so and what to change.
    await page.getByLabel('Target').fill('nobody.nothing');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No execution matches these filters').waitFor();
    await close(page);
  });

  it('scrolls through many pages while rendering only the rows in view', async () => {
    const target = `${exampleAgent}.summarize`;
    await Promise.all(
      Array.from({ length: 260 }, (_, i) =>
        api('POST', `${session.controlPlane.url}/api/v1/execute/async/${target}`, {
          input: { text: `Row ${i}.` },
        }),
      ),
    );
    const page = await open(ui(`executions?target=${target}`));
    const viewport = page.getByTestId('executions-viewport');
    await page.locator('[data-execution-id]').first().waitFor();
    await eventually('every page loaded by scrolling', async () => {
      await viewport.evaluate((element) => element.scrollTo(0, element.scrollHeight));
      const foot = await textOf(page, '.list-foot');
      return /all shown/.test(foot) ? foot : undefined;
    });
    const loaded = Number((await textOf(page, '.list-foot')).match(/^(\d+) loaded/)?.[1]);
    expect(loaded).toBeGreaterThanOrEqual(263);
    expect(await page.locator('[data-execution-id]').count()).toBeLessThan(60);
    await close(page);
  });

  it('shows an execution with its logs and notes, and cancels it', async () => {
    const { execution_id: id } = await api(
      'POST',
      `${session.controlPlane.url}/api/v1/execute/async/${testAgentId}.hold`,
      { input: { question: 'hold on' } },
    );
    const page = await open(ui(`executions/${id}`));
    await page.getByRole('button', { name: 'Cancel execution' }).waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    await api('POST', `${session.controlPlane.url}/api/v1/executions/${id}/logs`, [
      { level: 'info', message: 'fetched three sources' },
    ]);
    await fetch(`${session.controlPlane.url}/api/ui/v1/executions/note`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-execution-id': id },
      body: JSON.stringify({ message: 'waiting on the model' }),
    });
    // Log lines and notes show up while the page is open.
    await page.getByText('fetched three sources').waitFor();
    await page.getByText('waiting on the model').waitFor();
    await page.getByRole('button', { name: 'Cancel execution' }).click();
    await page.locator('.page-head .badge', { hasText: 'cancelled' }).waitFor();
    expect((await api('GET', `${session.controlPlane.url}/api/v1/executions/${id}`)).status).toBe(
      'cancelled',
    );
    await close(page);
  });

  it('shows a dead-lettered webhook and delivers it again on retry', async () => {
    let answer = 500;
    const received: string[] = [];
    const receiver = await listen((req, res) => {
      received.push(req.url ?? '');
      req.resume();
      res.writeHead(answer).end();
    });
    const { execution_id: id } = await api(
      'POST',
      `${session.controlPlane.url}/api/v1/execute/async/${exampleAgent}.summarize`,
      { input: { text: 'Hook.' }, webhook: { url: `${receiver}/hook` } },
    );
    await eventually('precondition: the webhook is dead-lettered', async () => {
      const { deliveries } = await api(
        'GET',
        `${session.controlPlane.url}/api/ui/v1/executions/${id}/webhook/deliveries`,
      );
      return deliveries.at(-1)?.status === 'dead' ? true : undefined;
    });
    const page = await open(ui(`executions/${id}`));
    await page.getByText('dead-lettered').waitFor();
    answer = 200;
    await page.getByRole('button', { name: 'Retry delivery' }).click();
    await eventually('the retried delivery shows as delivered', async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
      return (await page.locator('.card', { hasText: 'manual retry' }).textContent())?.includes('delivered')
        ? true
        : undefined;
    });
    expect(received.length).toBe(3);
    await close(page);
  });
});

describe('with SERVICE_API_KEY set', () => {
  const key = `key-${RUN}`;
  let secured: ControlPlaneProcess;
  let securedDir: string;

  beforeAll(async () => {
    securedDir = mkdtempSync(path.join(tmpdir(), 'sy-dashboard-key-'));
    secured = await startControlPlaneProcess({
      dir: securedDir,
      databaseUrl: undefined,
      env: { SERVICE_API_KEY: key },
    });
    await startExample(secured.url, `keyed-${RUN}`, key);
  }, 120_000);

  afterAll(async () => {
    await secured?.stop();
    rmSync(securedDir, { recursive: true, force: true });
  });

  it('asks for the key, keeps it in sessionStorage only and sends it on calls and streams', async () => {
    const page = await open(`${secured.url}/ui/nodes`);
    const dialog = page.getByRole('dialog', { name: 'API key required' });
    await dialog.waitFor();
    expect(await seriousViolations(page), 'axe violations with the key prompt open').toEqual([]);
    await dialog.getByLabel('API key').fill(key);
    await dialog.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('link', { name: `keyed-${RUN}` }).waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('switchyard.apiKey'))).toBe(key);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    // A reload keeps the key for the tab: no prompt, data at once.
    await page.reload();
    await page.getByRole('link', { name: `keyed-${RUN}` }).waitFor();
    expect(await dialog.isVisible()).toBe(false);
    // The 401s before the key was entered are the expected console errors.
    const seen = session.takeProblems(page);
    await close(page);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((line) => line.includes('401'))).toBe(true);
  });
});

describe('a control plane with nothing registered, which then restarts', () => {
  let fresh: ControlPlaneProcess;
  let freshDir: string;

  beforeAll(async () => {
    freshDir = mkdtempSync(path.join(tmpdir(), 'sy-dashboard-empty-'));
    fresh = await startControlPlaneProcess({ dir: freshDir, databaseUrl: undefined });
  }, 120_000);

  afterAll(async () => {
    await fresh?.stop();
    rmSync(freshDir, { recursive: true, force: true });
  });

  it('says what to do next on empty pages, and shows "Reconnecting…" while the server is away', async () => {
    const page = await open(`${fresh.url}/ui/`);
    const empty = page.getByText('No node has registered yet');
    await empty.waitFor();
    const tutorial = page.getByRole('link', { name: 'Follow the first-agent tutorial' });
    expect(await tutorial.getAttribute('href')).toMatch(/\/docs\/getting-started\/first-agent$/);
    await page.getByRole('link', { name: 'Executions' }).click();
    await page.getByText('No execution yet').waitFor();
    await page.locator('.live[data-state="live"]').waitFor();

    await fresh.stop();
    await page.locator('.live[data-state="reconnecting"]', { hasText: 'Reconnecting…' }).waitFor();
    fresh = await startControlPlaneProcess({ dir: freshDir, databaseUrl: undefined, port: fresh.port });
    await page.locator('.live[data-state="live"]').waitFor({ timeout: 30_000 });

    // While the server was down the browser logged refused connections; nothing else.
    const seen = session.takeProblems(page);
    await close(page);
    expect(seen.filter((line) => !line.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
  });
});

describe('every page at 1280 and 390 px, light and dark', () => {
  const pages = [
    { name: 'overview', route: '', ready: 'Executions, last hour' },
    { name: 'nodes', route: 'nodes', ready: 'Nodes' },
    { name: 'node', route: () => `nodes/${exampleAgent}`, ready: 'Instances' },
    { name: 'executions', route: 'executions', ready: 'Executions' },
    { name: 'execution', route: 'execution', ready: 'Result' },
  ] as const;

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`${scheme} at ${width} px: no horizontal scroll, no serious or critical axe violation`, async () => {
        const { executions } = await api('GET', `${session.controlPlane.url}/api/v1/executions?limit=1`);
        const executionId = executions[0].execution_id;
        const page = await open(ui('nodes'), { viewport: { width, height: 860 }, colorScheme: scheme });
        const backgrounds = new Set<string>();
        for (const entry of pages) {
          const route =
            typeof entry.route === 'function'
              ? entry.route()
              : entry.route === 'execution'
                ? `executions/${executionId}`
                : entry.route;
          await page.goto(ui(route));
          await page.getByRole('heading', { name: entry.ready, exact: true }).first().waitFor();
          await page.locator('.live[data-state="live"]').waitFor();
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          expect(overflow, `${entry.name} scrolls sideways`).toBe(0);
          expect(await seriousViolations(page), `${entry.name}: axe violations`).toEqual([]);
          backgrounds.add(await page.evaluate(() => getComputedStyle(document.body).backgroundColor));
          const shot = path.join(SCREENSHOTS, `${entry.name}-${width}-${scheme}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          keepForDocs(shot);
        }
        const [background] = [...backgrounds];
        const dark = background === 'rgb(15, 18, 23)';
        expect(backgrounds.size).toBe(1);
        expect(dark).toBe(scheme === 'dark');
        // Keyboard: the first Tab lands on the skip link, which is visibly outlined.
        await page.keyboard.press('Tab');
        const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
        expect(outline).not.toBe('none');
        await close(page);
      });
    }
  }
});
