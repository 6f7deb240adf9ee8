/**
 * The permalink page of a shared run in Chromium, at a phone's width (390 px) and a desktop's
 * (1280 px), in the light and the dark theme: the run is drawn as a graph (one box per
 * execution, its status in words as well as colour), a box leads to its execution's input, output
 * and error in one click, the page never scrolls sideways (the graph scrolls inside its own box),
 * axe-core finds nothing serious, and the page logs no error. Screenshots are kept in
 * tests/test-results/screenshots/run-share-*.png. Needs the docs build.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from '../support/axe.ts';
import { CHROMIUM_INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';

const screenshots = path.resolve(import.meta.dirname, '../test-results/screenshots');

const T0 = Date.parse('2026-11-27T09:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const pretty = (value: unknown) => JSON.stringify(value, null, 4);

/**
 * A run as the control plane shares it: a planner fanning out to three agents, one of which
 * calls two more; every kind of status, a long id, long previews and an error.
 */
function runBundle() {
  const node = (
    id: string,
    agent: string,
    func: string,
    status: string,
    extra: Record<string, unknown> = {},
  ) => ({
    id,
    agent,
    func,
    status,
    started_at: at(0),
    ended_at: ['running', 'waiting', 'queued'].includes(status) ? '' : at(900),
    duration_ms: ['running', 'waiting', 'queued'].includes(status) ? null : 900,
    cost_usd: null,
    model: null,
    input_preview: pretty({ ticket: 4242, text: 'The customer was charged twice for one order.' }),
    output_preview: '',
    error: null,
    ...extra,
  });
  const nodes = [
    node('exec_root_planner_0000000000000001', 'support-planner', 'triage_ticket', 'succeeded', {
      output_preview: pretty({ route: 'billing', confidence: 0.93, steps: ['refund', 'notify', 'audit'] }),
    }),
    node('exec_billing_refund_00000000000002', 'billing-agent', 'refund_payment_with_a_long_name', 'failed', {
      error: 'card declined by issuer: do_not_honor (the issuing bank refused the refund; retry later)',
    }),
    node('exec_notify_email_000000000000003', 'notify-agent', 'email', 'running'),
    node('exec_audit_log_0000000000000000004', 'audit-agent', 'record', 'succeeded', {
      output_preview: `${pretty({ entries: Array.from({ length: 40 }, (_, i) => `entry ${i}`) }).slice(0, 2048)}\n… [truncated]`,
    }),
    node('exec_audit_archive_000000000000005', 'audit-agent', 'archive', 'timeout'),
    node('exec_audit_approval_00000000000006', 'approvals-agent', 'await_manager_approval', 'waiting', {
      input_preview: '[redacted]',
    }),
    node('exec_audit_cancelled_0000000000007', 'audit-agent', 'notify_legal', 'cancelled', {
      input_preview: '',
    }),
  ];
  const edge = (from: number, to: number) => ({ from: nodes[from]!.id, to: nodes[to]!.id });
  return {
    version: 1,
    workflow_id: 'wf_support_ticket_4242_refund_and_notify',
    title: 'Refund triage for ticket 4242',
    generated_at: at(1000),
    totals: { agents: 5, duration_ms: 900, cost_usd: null },
    nodes,
    edges: [edge(0, 1), edge(0, 2), edge(0, 3), edge(3, 4), edge(3, 5), edge(3, 6)],
  };
}

let browser: Browser;
let site: TestDocsServer;
let permalink: string;
const bundle = runBundle();

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  site = await startTestDocsServer({ rateLimit: 100_000, pageRateLimit: 100_000 });
  const created = await fetch(`${site.url}/api/v1/shares`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(bundle),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  permalink = ((await created.json()) as { url: string }).url;
  browser = await launchChromium();
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  expect(site?.errors).toEqual([]);
});

const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 860 }, isMobile: false, hasTouch: false },
] as const;

async function openPermalink(
  size: (typeof VIEWPORTS)[number],
  colorScheme: 'light' | 'dark',
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: size.viewport,
    isMobile: size.isMobile,
    hasTouch: size.hasTouch,
    colorScheme,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  const response = await page.goto(permalink);
  expect(response?.status()).toBe(200);
  return { page, problems };
}

describe('the permalink page of a shared run', () => {
  for (const size of VIEWPORTS) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`draws the run as a graph at ${size.viewport.width} px in the ${colorScheme} theme, with nothing wider than the screen and nothing axe calls serious`, async () => {
        const { page, problems } = await openPermalink(size, colorScheme);
        await expect(page.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe(colorScheme);

        // Totals come first, before the graph.
        const order = await page.evaluate(() => {
          const totals = document.querySelector('.run-totals')!.getBoundingClientRect().top;
          const graph = document.querySelector('.run-graph')!.getBoundingClientRect().top;
          return { totals, graph };
        });
        expect(order.totals).toBeLessThan(order.graph);
        const totals = await page.locator('.run-totals').textContent();
        expect(totals!.replace(/\s+/g, ' ')).toContain('Agents 5 Duration 900 ms');

        // One box per execution, each saying its function, agent and status in words.
        const boxes = page.locator('svg.run-graph-svg a.run-graph-node');
        await expect(boxes.count()).resolves.toBe(bundle.nodes.length);
        await expect(page.locator('svg.run-graph-svg .run-graph-edge').count()).resolves.toBe(
          bundle.edges.length,
        );
        const texts = await boxes.evaluateAll((all) =>
          all.map((box) => box.textContent!.replace(/\s+/g, ' ')),
        );
        bundle.nodes.forEach((node, i) => {
          expect(texts[i], node.id).toContain(node.status);
          expect(texts[i], node.id).toContain(node.agent);
        });
        // Boxes of different outcomes are told apart by colour too.
        const fills = await boxes.evaluateAll((all) =>
          all.map((box) => getComputedStyle(box.querySelector('rect')!).fill),
        );
        expect(new Set([fills[0], fills[1], fills[2]]).size).toBe(3);

        const layout = await page.evaluate(() => {
          const box = document.querySelector<HTMLElement>('.run-graph')!;
          return {
            pageWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
            viewport: window.innerWidth,
            graphRight: box.getBoundingClientRect().right,
            graphScrolls: box.scrollWidth <= box.clientWidth || getComputedStyle(box).overflowX === 'auto',
          };
        });
        expect(layout.pageWidth).toBeLessThanOrEqual(layout.viewport);
        expect(layout.graphRight).toBeLessThanOrEqual(layout.viewport);
        expect(layout.graphScrolls).toBe(true);

        expect(await seriousAxeViolations(page)).toEqual([]);
        await page.screenshot({
          path: path.join(screenshots, `run-share-${size.viewport.width}-${colorScheme}.png`),
          fullPage: true,
        });
        await page.screenshot({
          path: path.join(screenshots, `run-share-${size.viewport.width}-${colorScheme}-top.png`),
        });
        await page.locator('.run-graph').screenshot({
          path: path.join(screenshots, `run-share-${size.viewport.width}-${colorScheme}-graph.png`),
        });
        await page.context().close();
        expect(problems).toEqual([]);
      });
    }
  }

  it("takes a reader from a box of the graph to that execution's input, output and error in one click", async () => {
    const { page, problems } = await openPermalink(VIEWPORTS[0], 'light');
    const failed = bundle.nodes[1]!;
    const box = page.locator('a.run-graph-node.status-failed');
    await box.scrollIntoViewIfNeeded();
    await box.click();
    await page.waitForFunction(() => location.hash.length > 1);
    const hash = await page.evaluate(() => location.hash.slice(1));
    const section = page.locator(`[id="${hash}"]`);
    await expect(section.textContent()).resolves.toContain(failed.id);
    const error = section.locator('.run-preview-error pre');
    await expect(error.isVisible()).resolves.toBe(true);
    await expect(error.textContent()).resolves.toBe(failed.error);
    const input = section.locator('details.run-preview pre').first();
    await expect(input.isVisible()).resolves.toBe(true);
    await expect(input.textContent()).resolves.toBe(failed.input_preview);
    // The section sits in the viewport, below the sticky header.
    const top = await section.evaluate((element) => element.getBoundingClientRect().top);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(top).toBeLessThan(844);
    await page.screenshot({ path: path.join(screenshots, 'run-share-390-after-click.png') });
    await page.context().close();
    expect(problems).toEqual([]);
  });
});
