/**
 * The dashboard's operations pages (memory, discovery, webhooks, observability forwarder,
 * configuration) in Chromium, against the control plane's build run as a process with the docs'
 * example agent and real HTTP receivers on 127.0.0.1. Each page must show live data, act through
 * the API (set, delete, retry, redrive, save), show refusals as the server words them, fit 390 px,
 * read in light and dark, pass axe-core without serious or critical violations, and log no console
 * error (a CSP violation is one). Screenshots go to tests/browser/.screenshots/ (ops-*).
 */
import { randomBytes } from 'node:crypto';
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
import { eventually } from '../support/eventually.ts';

const RUN = randomBytes(3).toString('hex');
const exampleAgent = `ops-${RUN}`;

/**
 * Webhooks and the forwarder post to 127.0.0.1 over http and give up after few, quick attempts,
 * so dead letters and parked batches happen within the test.
 */
const CONTROL_PLANE_ENV = {
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_ATTEMPTS: '2',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_INITIAL_BACKOFF: '100ms',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_MAX_BACKOFF: '200ms',
  SWITCHYARD_OBSERVABILITY_MAX_ATTEMPTS: '1',
  SWITCHYARD_OBSERVABILITY_BATCH_TIMEOUT: '100ms',
  SWITCHYARD_OBSERVABILITY_INITIAL_BACKOFF: '100ms',
};

let session: DashboardSession;
const servers: Server[] = [];

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {}
  return { status: response.status, body: parsed };
}

const api = (method: string, route: string, body?: unknown) => session.api(method, route, body);

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

beforeAll(async () => {
  session = await startDashboardSession({ databasePrefix: 'sy_dashboard_ops', env: CONTROL_PLANE_ENV });
  await session.startExample('first-agent/agent.mjs', exampleAgent);
  await api('POST', '/api/v1/memory/set', {
    key: 'greeting',
    data: { text: 'hello', n: 1 },
    scope: 'global',
  });
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  await session?.stop();
});

const open = (route: string, options: BrowserContextOptions = {}) => session.open(session.ui(route), options);

/** Closes the page; console errors other than the answers the test provoked (`expected`) fail. */
async function close(page: Page, expected: RegExp[] = []): Promise<void> {
  const seen = session.takeProblems(page).filter((line) => !expected.some((pattern) => pattern.test(line)));
  await session.close(page);
  expect(seen, 'uncaught errors and console errors in the page').toEqual([]);
}

describe('memory', () => {
  it("lists a scope's keys and shows a value in the JSON viewer", async () => {
    const page = await open('memory');
    const keys = page.getByRole('list', { name: 'Keys in the global scope' });
    await keys.getByRole('button', { name: /greeting/ }).click();
    await page.getByRole('heading', { name: 'greeting', exact: true }).waitFor();
    const value = page.locator('.json');
    await value.getByText('"hello"').waitFor();
    await close(page);
  });

  it('shows a change made elsewhere in the watch and the key list without a reload', async () => {
    const page = await open('memory');
    await page.locator('[data-watch="live"]').waitFor();
    const key = `from-api-${RUN}`;
    await api('POST', '/api/v1/memory/set', { key, data: { via: 'curl' }, scope: 'global' });
    const changes = page.getByRole('list', { name: 'Memory changes' });
    await changes.getByText(key).waitFor();
    expect(await changes.locator('li').first().textContent()).toContain('set');
    await page
      .getByRole('list', { name: 'Keys in the global scope' })
      .getByRole('button', { name: new RegExp(key) })
      .waitFor();
    await close(page);
  });

  it('watches only the keys matching a pattern, in the scope chosen', async () => {
    const page = await open('memory');
    await page.getByRole('combobox', { name: /^Scope/ }).selectOption('session');
    await page.getByLabel('Scope id').fill(`sess_${RUN}`);
    await page.getByRole('button', { name: 'Show keys' }).click();
    await page.getByText(`No key in session sess_${RUN}`).waitFor();
    await page.getByLabel('Key pattern').fill('draft*');
    await page.getByRole('button', { name: 'Watch' }).click();
    await page.locator('[data-watch="live"]').waitFor();
    await api('POST', '/api/v1/memory/set', {
      key: 'other',
      data: 1,
      scope: 'session',
      scope_id: `sess_${RUN}`,
    });
    await api('POST', '/api/v1/memory/set', {
      key: 'draft-1',
      data: 2,
      scope: 'session',
      scope_id: `sess_${RUN}`,
    });
    await api('POST', '/api/v1/memory/set', { key: 'draft-2', data: 3, scope: 'global' });
    const changes = page.getByRole('list', { name: 'Memory changes' });
    await changes.getByText('draft-1').waitFor();
    // The key list refreshed with both keys of the session; the watch shows only the match.
    await page
      .getByRole('list', { name: `Keys in session sess_${RUN}` })
      .getByRole('button', { name: /other/ })
      .waitFor();
    expect(await changes.locator('li').count()).toBe(1);
    await close(page);
  });

  it('sets a key from the form and deletes it after confirmation', async () => {
    const key = `ui-${RUN}`;
    const page = await open('memory');
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByLabel('Value (JSON)').fill('{oops');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The value is not JSON').waitFor();
    await page.getByLabel('Value (JSON)').fill('{"colour": "teal", "size": 3}');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText(`Saved ${key} in global global`).waitFor();
    const stored = await api('POST', '/api/v1/memory/get', { key, scope: 'global' });
    expect(stored.data).toEqual({ colour: 'teal', size: 3 });

    await page
      .getByRole('list', { name: 'Keys in the global scope' })
      .getByRole('button', { name: new RegExp(key) })
      .click();
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByText('Delete this key?').waitFor();
    // Nothing is deleted before the confirmation.
    expect(
      (await call('POST', `${session.controlPlane.url}/api/v1/memory/get`, { key, scope: 'global' })).status,
    ).toBe(200);
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Choose a key to see its value.').waitFor();
    expect(
      (await call('POST', `${session.controlPlane.url}/api/v1/memory/get`, { key, scope: 'global' })).status,
    ).toBe(404);
    await close(page);
  });

  it('searches vectors with a pasted embedding and shows scores', async () => {
    await api('POST', '/api/v1/memory/vector', {
      key: 'north',
      embedding: [0, 1, 0],
      metadata: { title: 'North' },
      scope: 'global',
    });
    await api('POST', '/api/v1/memory/vector', {
      key: 'east',
      embedding: [1, 0, 0],
      metadata: { title: 'East' },
      scope: 'global',
    });
    const page = await open('memory');
    await page.getByLabel('Query embedding (JSON array of numbers)').fill('[0.1, 0.9, 0]');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByRole('list', { name: 'Search results' });
    await results.waitFor();
    const items = results.locator(':scope > li');
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).textContent()).toMatch(/north.*score 0\.99/);
    expect(await items.nth(1).textContent()).toMatch(/east.*score 0\.1/);
    // A refused search reads as the server words it.
    await page.getByLabel('Query embedding (JSON array of numbers)').fill('[0, 0, 0]');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.getByText(/has no direction/).waitFor();
    expect(await alert.textContent()).not.toMatch(/[{}]/);
    await close(page, [/400/]);
  });
});

describe('discovery', () => {
  it("shows the agents' functions with their schemas, and filters them", async () => {
    const page = await open('discovery');
    const agent = page.getByRole('region', { name: new RegExp(`Agent ${exampleAgent}`) });
    await agent.getByText(`${exampleAgent}.summarize`, { exact: true }).click();
    await agent.getByRole('heading', { name: `Input schema of ${exampleAgent}.summarize` }).waitFor();
    await page.getByLabel('Reasoner').fill('summ*');
    await page.getByRole('button', { name: 'Apply' }).click();
    // A reasoner filter leaves the skills out. Exact: the skill's schema headings (in the DOM even
    // while its details are closed) also contain its target, until the skill itself goes.
    await agent.getByText(`${exampleAgent}.skill:word_count`, { exact: true }).waitFor({ state: 'detached' });
    await agent.getByText(`${exampleAgent}.summarize`, { exact: true }).waitFor();
    await page.getByLabel('Reasoner').fill('nothing-matches*');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No agent matches these filters').waitFor();
    await close(page);
  });
});

describe('webhooks', () => {
  it('lists a dead-lettered webhook and delivers it to the receiver on retry', async () => {
    let answer = 503;
    const received: string[] = [];
    const receiver = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(body);
        res.writeHead(answer).end();
      });
    });
    const { execution_id: id } = await api('POST', `/api/v1/execute/async/${exampleAgent}.summarize`, {
      input: { text: 'Hook.' },
      webhook: { url: `${receiver}/hook` },
    });
    await eventually('precondition: the webhook is dead-lettered', async () => {
      const { dead_letters } = await api('GET', '/api/ui/v1/webhooks/dead-letters');
      return dead_letters.some((letter: any) => letter.execution_id === id) ? true : undefined;
    });
    const page = await open('webhooks');
    const queue = page.getByRole('list', { name: 'Dead-lettered webhooks' });
    const card = queue.locator('.card', { hasText: id });
    await card.waitFor();
    expect(await card.textContent()).toMatch(/Attempts2/);
    expect(await card.textContent()).toContain('503');
    expect(await card.getByRole('link', { name: id }).getAttribute('href')).toBe(`/ui/executions/${id}`);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'ops-webhooks-dead-letter.png'), fullPage: true });
    answer = 200;
    await card.getByRole('button', { name: `Retry the webhook of ${id}` }).click();
    await eventually('the receiver takes the retried delivery', async () =>
      received.length === 3 ? true : undefined,
    );
    expect(JSON.parse(received[2]!).execution_id).toBe(id);
    // Delivered, it leaves the dead-letter queue.
    await eventually('the delivered webhook leaves the list', async () =>
      (await queue.locator('.card', { hasText: id }).count()) === 0 ? true : undefined,
    );
    // The page keeps saying where the retried delivery went.
    const retried = page.getByRole('list', { name: 'Retried from this page' });
    expect(await retried.getByRole('link', { name: id }).getAttribute('href')).toBe(`/ui/executions/${id}`);
    await close(page);
  });
});

describe('observability forwarder', () => {
  it('shows the status and parked batches, and redrives them to the collector', async () => {
    let answer = 500;
    const batches: string[] = [];
    const collector = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        if (answer === 200) batches.push(body);
        res.writeHead(answer).end();
      });
    });
    const page = await open('observability');
    await page.getByText('No collector is configured').waitFor();
    await api('POST', '/api/v1/settings/observability-webhook', { url: `${collector}/events` });
    await api('POST', `/api/v1/execute/${exampleAgent}.summarize`, { input: { text: 'Observed.' } });
    await eventually('precondition: a batch is parked', async () => {
      const status = await api('GET', '/api/v1/settings/observability-webhook/status');
      return status.dlq_batches > 0 ? true : undefined;
    });
    // The page follows without a reload. Status, collector and parked batches are three reads
    // refreshed on their own, so each is awaited: the collector is read only after the status
    // says one is set, and may show a moment after the parked batch.
    const parked = page.getByRole('list', { name: 'Parked batches' });
    await parked.locator('li').first().waitFor();
    const collectorFact = page.getByRole('definition').filter({ hasText: `${collector}/events` });
    await collectorFact.waitFor();
    expect(await collectorFact.count()).toBe(1);
    expect(await parked.locator('li').first().textContent()).toContain('500');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'ops-observability-parked.png'), fullPage: true });
    answer = 200;
    await page.getByRole('button', { name: 'Redrive all' }).click();
    const summary = page.getByRole('status').filter({ hasText: 'Redrive sent' });
    await summary.waitFor();
    expect(await summary.textContent()).toMatch(/0 failed; 0 still parked/);
    expect(batches.length).toBeGreaterThan(0);
    await page.getByText('No parked batch').waitFor();
    await close(page);
  });
});

describe('configuration', () => {
  it('saves a configuration that reads back through the API, with its versions', async () => {
    const page = await open('configuration');
    await page.getByText('No configuration is stored').waitFor();
    await page.getByLabel('New configuration name').fill('control-plane');
    await page.getByRole('button', { name: 'Open editor' }).click();
    await page.getByLabel('Text (YAML)').fill('node_health:\n  check_interval: 20s\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved as version 1.').waitFor();
    const stored = await api('GET', '/api/v1/configs/control-plane');
    expect(stored.content).toBe('node_health:\n  check_interval: 20s\n');
    await page
      .getByRole('list', { name: 'Stored configurations' })
      .getByRole('button', { name: /control-plane/ })
      .waitFor();

    await page.getByLabel('Text (YAML)').fill('node_health:\n  check_interval: 25s\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved as version 2.').waitFor();
    expect((await api('GET', '/api/v1/configs/control-plane')).content).toContain('25s');
    await page.getByRole('button', { name: 'Show version 1' }).click();
    await page.locator('pre.config-text').getByText('check_interval: 20s').waitFor();
    await close(page);
  });

  it("shows the server's refusal per setting, and nothing is stored", async () => {
    const page = await open('configuration');
    await page
      .getByRole('list', { name: 'Stored configurations' })
      .getByRole('button', { name: /control-plane/ })
      .click();
    await page.getByLabel('Text (YAML)').fill('node_health:\n  check_interval: banana\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const issues = alert.getByRole('list', { name: 'What the server refused' });
    expect(await issues.textContent()).toContain('node_health.check_interval');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'ops-configuration-refused.png'), fullPage: true });
    expect(await alert.textContent()).not.toMatch(/[{}]|"status"/);
    expect((await api('GET', '/api/v1/configs/control-plane')).content).toContain('25s');
    await close(page, [/400/]);
  });

  it('says readably that reload needs the database as config source', async () => {
    const page = await open('configuration');
    await page.getByRole('button', { name: 'Reload configuration' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('The reload was refused').waitFor();
    expect(await alert.textContent()).toContain('503');
    expect(await alert.textContent()).toMatch(/SERVICE_CONFIG_SOURCE|config_source/i);
    await close(page, [/503/]);
  });
});

describe('operations pages at 1280 and 390 px, light and dark', () => {
  beforeAll(async () => {
    // A stored config of its own to open, whichever tests ran before.
    const response = await fetch(`${session.controlPlane.url}/api/v1/configs/agent-notes`, {
      method: 'PUT',
      headers: { 'content-type': 'text/yaml' },
      body: 'notes:\n  - a line long enough to need wrapping or scrolling on a narrow screen, as configs do\n',
    });
    expect(response.ok).toBe(true);
  });
  const pages = [
    { name: 'memory', ready: 'Keys' },
    { name: 'discovery', ready: 'Discovery' },
    { name: 'webhooks', ready: 'Webhooks' },
    { name: 'observability', ready: 'Parked batches' },
    { name: 'configuration', ready: 'Reload' },
  ] as const;

  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`${scheme} at ${width} px: no horizontal scroll, no serious or critical axe violation`, async () => {
        const page = await open('memory', { viewport: { width, height: 860 }, colorScheme: scheme });
        for (const entry of pages) {
          await page.goto(`${session.controlPlane.url}/ui/${entry.name}`);
          await page.getByRole('heading', { name: entry.ready, exact: true }).first().waitFor();
          await page.locator('.live[data-state="live"]').waitFor();
          if (entry.name === 'memory') {
            await page.getByRole('button', { name: /greeting/ }).click();
            await page.locator('[data-watch="live"]').waitFor();
          }
          if (entry.name === 'configuration') {
            await page.getByRole('button', { name: /agent-notes/ }).click();
            await page.getByRole('heading', { name: 'Versions' }).waitFor();
          }
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          expect(overflow, `${entry.name} scrolls sideways`).toBe(0);
          expect(await seriousViolations(page), `${entry.name}: axe violations`).toEqual([]);
          const dark =
            (await page.evaluate(() => getComputedStyle(document.body).backgroundColor)) ===
            'rgb(15, 18, 23)';
          expect(dark).toBe(scheme === 'dark');
          await page.screenshot({
            path: path.join(SCREENSHOTS, `ops-${entry.name}-${width}-${scheme}.png`),
            fullPage: true,
          });
        }
        // Keyboard: focus is visible on the page's controls.
        await page.getByRole('button', { name: 'Reload configuration' }).focus();
        await page.keyboard.press('Shift+Tab');
        await page.keyboard.press('Tab');
        const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
        expect(outline).not.toBe('none');
        await close(page);
      });
    }
  }
});
