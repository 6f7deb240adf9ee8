/**
 * The dashboard's workflow pages at /ui/workflows, in Chromium, against the real control plane
 * (its build, run as a process, serving apps/dashboard/dist under its Content-Security-Policy)
 * with real agents on 127.0.0.1: the docs' example agent and a planner agent whose `plan` calls
 * children through the control plane with X-Parent-Execution-ID, the way SDKs do, and whose `step`
 * answers only when the test lets it. The workflow page must draw one graph box per execution with
 * its status, follow a running workflow without a reload, open an execution from its box, lay its
 * graph out in a bundled worker without any CSP violation, fit 390 px, read in light and dark and
 * pass axe-core without serious or critical violations. Screenshots at 1280 and 390 px, light and
 * dark, go to tests/browser/.screenshots/.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS } from '../support/chromium.ts';
import {
  type DashboardSession,
  SCREENSHOTS,
  seriousViolations,
  startDashboardSession,
} from '../support/dashboard-session.ts';
import { keepForDocs } from '../support/docs-screenshots.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';
import { eventually } from '../support/eventually.ts';

const RUN = randomBytes(3).toString('hex');

let session: DashboardSession;
const servers: Server[] = [];

async function api(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
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

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

/**
 * The planner: `plan` calls the example agent's summarize synchronously and its own `step` on the
 * async lane, both as children of the execution it runs (X-Parent-Execution-ID, from the
 * X-Execution-ID the control plane sent it), then answers with their ids. `step` answers only when
 * the test releases it. It registers, heartbeats and reports ready like an SDK would.
 */
async function startPlannerAgent(url: string, id: string, summarizer: string) {
  // The step calls the agent holds, by the execution id the control plane sent with each.
  const held = new Map<string, ServerResponse>();
  const baseUrl = await listen(async (req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok' });
    if (req.method === 'POST' && req.url === '/reasoners/plan') {
      const input = await readJson(req);
      const parent = { 'X-Parent-Execution-ID': String(req.headers['x-execution-id']) };
      try {
        const summary = await api(
          'POST',
          `${url}/api/v1/execute/${summarizer}.summarize`,
          { input: { text: String(input.text ?? 'Plan. Act.') } },
          parent,
        );
        const step = await api('POST', `${url}/api/v1/execute/async/${id}.step`, { input: {} }, parent);
        return send(200, { summary: summary.execution_id, step: step.execution_id });
      } catch (error) {
        return send(500, { error: String(error) });
      }
    }
    if (req.method === 'POST' && req.url === '/reasoners/step') {
      req.resume();
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
    version: '1.0.0',
    base_url: baseUrl,
    deployment_type: 'long_running',
    reasoners: [fn('plan'), fn('step')],
    skills: [],
  });
  await api('POST', `${url}/api/v1/nodes/${id}/heartbeat`, { status: 'starting', version: '1.0.0' });
  await api('POST', `${url}/api/v1/nodes/${id}/lifecycle/status`, { status: 'ready' });
  const beat = setInterval(() => {
    void api('POST', `${url}/api/v1/nodes/${id}/heartbeat`, { status: 'ready', version: '1.0.0' }).catch(
      () => {},
    );
  }, 2_000);
  return {
    /** Answers every `step` call waiting so far. */
    release() {
      for (const res of held.values())
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    },
    /** Whether the call of this step execution has reached the agent (and waits for release). */
    holds: (executionId: string) => held.has(executionId),
    stop: () => clearInterval(beat),
  };
}

const summarizer = `hello-${RUN}`;
const plannerId = `planner-${RUN}`;
let planner: Awaited<ReturnType<typeof startPlannerAgent>>;

interface Workflow {
  workflowId: string;
  root: string;
  summary: string;
  step: string;
}

/**
 * Runs `plan` in a workflow of its own and waits until its step child is running and its call has
 * reached the planner: the control plane marks a step running before its call arrives, so a release
 * before the call arrives would leave it held for good.
 */
async function runWorkflow(name: string): Promise<Workflow> {
  const workflowId = `wf-${name}-${RUN}`;
  const root = await api(
    'POST',
    `${session.controlPlane.url}/api/v1/execute/${plannerId}.plan`,
    { input: { text: `Plan ${name}. Then act.` } },
    { 'X-Workflow-ID': workflowId },
  );
  const { summary, step } = root.result;
  await eventually(`precondition: the step of ${name} runs`, async () => {
    const record = await api('GET', `${session.controlPlane.url}/api/v1/executions/${step}`);
    return record.status === 'running' && planner.holds(step) ? true : undefined;
  });
  return { workflowId, root: root.execution_id, summary, step };
}

let finished: Workflow;
let docs: TestDocsServer;

beforeAll(async () => {
  // The docs site a shared run is published to, as npm start runs it beside the control plane.
  docs = await startTestDocsServer();
  session = await startDashboardSession({
    databasePrefix: 'sy_dashboard_flows',
    env: { SWITCHYARD_DOCS_URL: docs.url },
  });
  await session.startExample('first-agent/agent.mjs', summarizer);
  planner = await startPlannerAgent(session.controlPlane.url, plannerId, summarizer);
  // One workflow that has finished, for the screenshots and the index.
  finished = await runWorkflow('done');
  planner.release();
  await eventually('precondition: the finished workflow has finished', async () => {
    const record = await api('GET', `${session.controlPlane.url}/api/v1/executions/${finished.step}`);
    return record.status === 'succeeded' ? true : undefined;
  });
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  planner?.stop();
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  await session?.stop();
  await docs?.close();
});

const open = (url: string, options: BrowserContextOptions = {}) => session.open(url, options);
const close = (page: Page) => session.close(page);

const ui = (route = '') => session.ui(route);

/** Status of every graph box, by execution id. */
async function graphStatuses(page: Page): Promise<Record<string, string>> {
  return page
    .locator('.dag-node')
    .evaluateAll((boxes) =>
      Object.fromEntries(
        boxes.map((box) => [box.getAttribute('data-execution-id'), box.getAttribute('data-status')]),
      ),
    );
}

describe('the workflow page', () => {
  it('draws one box per execution with its status, and a running child that finishes turns succeeded without a reload', async () => {
    const run = await runWorkflow('live');
    const page = await open(ui(`workflows/${encodeURIComponent(run.workflowId)}`));
    await page.locator('.dag-node').nth(2).waitFor();
    expect(await graphStatuses(page)).toEqual({
      [run.root]: 'succeeded',
      [run.summary]: 'succeeded',
      [run.step]: 'running',
    });
    // The status is written, not only coloured, and the box says what ran.
    const stepBox = page.locator(`.dag-node[data-execution-id="${run.step}"]`);
    expect(await stepBox.textContent()).toContain(`${plannerId}.step`);
    expect(await stepBox.locator('.badge').textContent()).toBe('running');
    // Two edges: the root to each child. React Flow draws edges once it has measured the boxes,
    // a frame or more after the boxes appear, so the count is polled.
    await expect.poll(() => page.locator('.react-flow__edge').count()).toBe(2);
    // The timeline has a row per execution, with a bar for each that started.
    const timeline = page.getByTestId('workflow-timeline');
    expect(await timeline.locator('.gantt-row').count()).toBe(3);
    expect(await timeline.locator('.gantt-bar').count()).toBe(3);
    await expect
      .poll(() => timeline.locator(`[data-execution-id="${run.step}"] .gantt-status`).textContent())
      .toMatch(/running · .* so far/);

    await page.evaluate(() => {
      (window as any).notReloaded = true;
    });
    planner.release();
    await page.locator(`.dag-node[data-execution-id="${run.step}"][data-status="succeeded"]`).waitFor({
      timeout: 10_000,
    });
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true);
    expect(await stepBox.locator('.badge').textContent()).toBe('succeeded');
    await timeline.locator(`.gantt-bar[data-status="succeeded"]`).nth(2).waitFor();
    await page.getByTestId('workflow-summary').getByText('finished').waitFor();
    await close(page);
  });

  it('opens an execution from its box, by click and by keyboard', async () => {
    const page = await open(ui(`workflows/${finished.workflowId}`));
    await page.locator(`.dag-node[data-execution-id="${finished.summary}"]`).click();
    await page.waitForURL(`**/ui/executions/${finished.summary}`);
    await page.getByRole('heading', { name: finished.summary }).waitFor();
    // The execution page's workflow id leads back to the graph.
    await page.getByRole('link', { name: finished.workflowId }).click();
    await page.waitForURL(`**/ui/workflows/${finished.workflowId}`);
    await page.locator('.dag-node').nth(2).waitFor();
    // Tab reaches every box in turn; the focused one is outlined, and Enter opens it.
    const focused: string[] = [];
    for (let i = 0; i < 40 && focused.length < 3; i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() =>
        document.activeElement?.classList.contains('dag-node')
          ? document.activeElement.getAttribute('data-execution-id')
          : null,
      );
      if (id) {
        expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe(
          'none',
        );
        focused.push(id);
      }
    }
    expect(new Set(focused)).toEqual(new Set([finished.root, finished.summary, finished.step]));
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/ui/executions/${focused[2]}`);
    await close(page);
  });

  it('says so when no execution belongs to the workflow', async () => {
    const page = await open(ui(`workflows/no-such-workflow-${RUN}`));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(`No execution belongs to workflow "no-such-workflow-${RUN}"`);
    // The 404 the page asked for is the console's one expected error line.
    const seen = session.takeProblems(page);
    await close(page);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((line) => line.includes('404'))).toBe(true);
  });
});

describe('links to the documentation', () => {
  it('point at the docs site the control plane names (SWITCHYARD_DOCS_URL)', async () => {
    const page = await open(ui('approvals'));
    const link = page.getByRole('link', { name: 'How approvals work' });
    await link.waitFor();
    await eventually('the link follows the overview', async () =>
      (await link.getAttribute('href')) === `${docs.url}/docs/concepts/approvals` ? true : undefined,
    );
    await close(page);
  });
});

describe('sharing a run', () => {
  it('publishes the workflow to the docs site, redacted unless asked, and its permalink draws one box per execution', async () => {
    const page = await open(ui(`workflows/${finished.workflowId}`));
    await page.getByText('Share this run').click();
    await page.getByLabel('Title (optional)').fill('A planned run');
    await page.getByRole('button', { name: 'Publish' }).click();
    const link = page.locator('.share-link a');
    await link.waitFor();
    const permalink = (await link.getAttribute('href'))!;
    expect(permalink).toMatch(new RegExp(`^${docs.url}/s/`));
    const shared = await (await fetch(permalink, { headers: { Accept: 'application/json' } })).json();
    expect(shared).toMatchObject({ title: 'A planned run', workflow_id: finished.workflowId });
    expect(shared.nodes.map((node: { input_preview: string }) => node.input_preview)).toEqual([
      '[redacted]',
      '[redacted]',
      '[redacted]',
    ]);
    await page.goto(permalink);
    await expect.poll(() => page.locator('.run-graph-node').count()).toBe(3);
    await close(page);
  });

  it('shows a refused share (a workflow with no executions) as a message, not JSON', async () => {
    const page = await open(ui('workflows/wf-never-ran'));
    await page.getByText('Share this run').click();
    await page.getByRole('button', { name: 'Publish' }).click();
    const message = page.getByText('Could not publish the run');
    await message.waitFor();
    const panel = await page.locator('.share-panel').textContent();
    expect(panel).toContain('wf-never-ran');
    expect(panel).not.toContain('{"');
    // The 404s the page asked for (the graph, then the share) are the console's expected lines.
    const seen = session.takeProblems(page);
    await close(page);
    expect(seen.every((line) => line.includes('404'))).toBe(true);
  });
});

describe('the workflows index', () => {
  it('lists recent workflows by their root target and opens one by id', async () => {
    const page = await open(ui('workflows'));
    const list = page.getByRole('list', { name: 'Recent workflows' });
    const item = list.getByRole('listitem').filter({ hasText: finished.workflowId });
    await item.waitFor();
    expect(await item.textContent()).toContain(`${plannerId}.plan`);
    // A workflow that starts while the page is open joins the list without a reload.
    const late = await runWorkflow('late');
    planner.release();
    await list.getByRole('listitem').filter({ hasText: late.workflowId }).waitFor({ timeout: 10_000 });
    await page.getByLabel('Workflow id').fill(finished.workflowId);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.waitForURL(`**/ui/workflows/${finished.workflowId}`);
    await page.locator('.dag-node').nth(2).waitFor();
    await close(page);
  });

  it('is in the navigation and the Ctrl-K palette', async () => {
    const page = await open(ui('nodes'));
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Workflows' }).click();
    await page.waitForURL('**/ui/workflows');
    await page.keyboard.press('Control+k');
    await page.getByPlaceholder(/node, execution or workflow id/).fill(finished.workflowId);
    await page.getByRole('option', { name: `Workflow ${finished.workflowId}` }).click();
    await page.waitForURL(`**/ui/workflows/${finished.workflowId}`);
    await page.locator('.dag-node').first().waitFor();
    await close(page);
  });
});

describe('a workflow of 500 executions', () => {
  it('lays out in a worker, records how long it took, and draws only the boxes in view', async () => {
    // A running parent and 499 local calls under it (reported the way SDKs report in-process
    // calls), four children each: 500 executions, seven levels deep.
    const run = await runWorkflow('big');
    const ids = [run.step];
    const report = (index: number) => {
      const id = randomUUID();
      ids[index] = id;
      return api('POST', `${session.controlPlane.url}/api/v1/workflow/executions/events`, {
        execution_id: id,
        run_id: run.workflowId,
        workflow_id: run.workflowId,
        reasoner_id: `part_${index % 7}`,
        agent_node_id: plannerId,
        status: 'succeeded',
        parent_execution_id: ids[Math.floor((index - 1) / 4)],
        duration_ms: index,
      });
    };
    // Parents come before their children: index i's parent is (i - 1) / 4, so a group of reports
    // sent together ends before 4 * first + 1, where the first child of its own first index is.
    // (Eight at a time regardless once let a child race its parent: its depth then started over.)
    for (let first = 1; first <= 497; ) {
      const end = Math.min(first + 8, 4 * first + 1, 498);
      await Promise.all(Array.from({ length: end - first }, (_, k) => report(first + k)));
      first = end;
    }
    const { total_nodes } = await api(
      'GET',
      `${session.controlPlane.url}/api/v1/workflows/${run.workflowId}/dag`,
    );
    expect(total_nodes).toBe(500);

    // Opened directly: the page starts the layout worker while it fetches the DAG. Waits of their
    // own length: a CI run once saw no summary within the default 30 s on PostgreSQL, and a
    // failure here says what the page showed instead.
    const page = await open(ui(`workflows/${run.workflowId}`));
    const shown = async () =>
      (
        (await page
          .locator('main')
          .textContent({ timeout: 5_000 })
          .catch(() => '')) ?? ''
      ).slice(0, 500);
    await page
      .getByTestId('workflow-summary')
      .getByText('500 executions, 7 levels deep')
      .waitFor({ timeout: 90_000 })
      .catch(async (error) => {
        throw new Error(`${error}\nthe page showed: ${await shown()}`);
      });
    await page
      .locator('[data-testid="workflow-graph"][aria-busy="false"] .dag-node')
      .first()
      .waitFor({ timeout: 90_000 });
    const layouts = await page.evaluate(() =>
      performance.getEntriesByName('switchyard:workflow-layout').map((entry) => ({
        ms: entry.duration,
        executions: (entry as PerformanceMeasure).detail.executions,
      })),
    );
    const big = layouts.filter((layout) => layout.executions === 500);
    expect(big.length).toBeGreaterThan(0);
    console.info(
      `layout in Chromium: ${layouts.map((l) => `${l.executions} executions ${l.ms.toFixed(0)} ms`).join(', ')}`,
    );
    // How long it took is printed above, for bench/dashboard/dag-layout.mjs to judge: it holds the
    // one-second budget over three shapes and compares with a small layout timed in the same run.
    // A bound here measured the machine: in CI this layout took from 1.9 to 7.4 s while other
    // suites ran beside it, against 0.9 s on a quiet one. What is checked here: only the boxes in
    // view are in the page; the timeline renders only the rows in view.
    expect(await page.locator('.dag-node').count()).toBeLessThan(500);
    expect(await page.locator('.gantt-row').count()).toBeLessThan(60);
    planner.release();
    await close(page);
  }, 240_000);
});

describe('at 1280 and 390 px, light and dark', () => {
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`${scheme} at ${width} px: graph and timeline fit, no horizontal scroll, no serious or critical axe violation`, async () => {
        const page = await open(ui(`workflows/${finished.workflowId}`), {
          viewport: { width, height: 900 },
          colorScheme: scheme,
        });
        await page.locator('.dag-node').nth(2).waitFor();
        await page.locator('.gantt-bar').nth(2).waitFor();
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(overflow, 'the page scrolls sideways').toBe(0);
        const graph = (await page.getByTestId('workflow-graph').boundingBox())!;
        const timeline = (await page.getByTestId('workflow-timeline').boundingBox())!;
        if (width === 1280)
          expect(timeline.x, 'timeline beside the graph').toBeGreaterThan(graph.x + graph.width);
        else expect(timeline.y, 'timeline below the graph').toBeGreaterThan(graph.y + graph.height);
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(background === 'rgb(15, 18, 23)').toBe(scheme === 'dark');
        // The graph's own surface follows the scheme too (xyflow's colours are the theme's).
        const graphBackground = await page
          .locator('.dag-graph .react-flow')
          .evaluate((element) => getComputedStyle(element).backgroundColor);
        expect(graphBackground).toBe(scheme === 'dark' ? 'rgb(23, 27, 34)' : 'rgb(255, 255, 255)');
        expect(await seriousViolations(page), 'axe violations').toEqual([]);
        const shot = path.join(SCREENSHOTS, `workflow-${width}-${scheme}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        keepForDocs(shot);
        await page.goto(ui('workflows'));
        await page.getByRole('list', { name: 'Recent workflows' }).waitFor();
        expect(
          await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          ),
          'the index scrolls sideways',
        ).toBe(0);
        await page.screenshot({
          path: path.join(SCREENSHOTS, `workflows-${width}-${scheme}.png`),
          fullPage: true,
        });
        await close(page);
      });
    }
  }
});
