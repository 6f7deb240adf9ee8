import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';

const distDir = path.resolve(import.meta.dirname, '../../apps/docs/dist');
const clientDir = path.join(distDir, 'client');
const screenshots = path.resolve(import.meta.dirname, '../test-results/screenshots');

interface IndexedPage {
  slug: string;
  path: string;
  title: string;
  markdown_url: string;
}

let browser: Browser;
let site: TestDocsServer;
let pages: IndexedPage[];

beforeAll(async () => {
  if (!existsSync(path.join(clientDir, 'index.html'))) {
    throw new Error(`No built site at ${clientDir}: run \`npm run build -w @switchyard/docs\` first.`);
  }
  pages = JSON.parse(readFileSync(path.join(clientDir, 'search-index.json'), 'utf8')).pages;
  mkdirSync(screenshots, { recursive: true });
  // The real front server, as `npm start` runs it; a page load fetches a dozen files, so the
  // per-client budget is raised to keep the API's rate limit out of a browser test.
  site = await startTestDocsServer({ rateLimit: 100_000, pageRateLimit: 100_000 });
  // On a fresh machine this installs Debian's Chromium first, hence the long timeout.
  browser = await launchChromium();
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  expect(site?.errors).toEqual([]);
});

/** What went wrong inside each open page: uncaught exceptions and console errors. */
const pageProblems = new WeakMap<Page, string[]>();

async function newPage(options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  pageProblems.set(page, problems);
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error')
      problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  return page;
}

/**
 * Closes the page's context, then asserts what the page reported. It runs inside the test, so an
 * error in the page fails that test (an expect in a 'close' handler fails nothing).
 */
async function closePage(page: Page, expected: string[] = []): Promise<void> {
  await page.context().close();
  expect(pageProblems.get(page), 'uncaught errors and console errors in the page').toEqual(expected);
}

describe('documentation site in Chromium', () => {
  it('searches from the header box and follows a result to its page', async () => {
    expect(pages.length).toBeGreaterThan(1);
    const start = pages[0]!;
    const target = pages[pages.length - 1]!;
    const page = await newPage();
    await page.goto(`${site.url}${start.path}`);
    await expect(page.locator('main h1').textContent()).resolves.toBe(start.title);

    const box = page.getByRole('combobox', { name: 'Search the documentation' });
    await box.click();
    await box.pressSequentially(target.title, { delay: 20 });
    // A page's result leads to the page, at its best matching section.
    const option = page.locator(
      `.search-result.page a[href="${target.path}"], .search-result.page a[href^="${target.path}#"]`,
    );
    await option.waitFor({ state: 'visible' });
    await expect(box.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.screenshot({ path: path.join(screenshots, 'search-results.png') });

    await option.click();
    await page.waitForURL((url) => url.pathname === target.path);
    await expect(page.locator('main h1').textContent()).resolves.toBe(target.title);
    await expect(page.locator('.nav-link[aria-current="page"]').textContent()).resolves.toContain(
      target.title,
    );
    await closePage(page);
  });

  it('asks the site API where it is served, so a misspelt word finds its page as agents find it', async () => {
    const page = await newPage();
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/search')) asked.push(new URL(request.url()).search);
    });
    // The page's clock is the test's: a key every 20 ms of the page's time, however slowly a busy
    // machine delivers the keys (on a loaded machine real gaps between keys outgrew the debounce).
    await page.clock.install();
    await page.goto(`${site.url}/`);
    const box = page.getByRole('combobox', { name: 'Search the documentation' });
    await box.click();
    await page.clock.pauseAt(await page.evaluate(() => Date.now() + 1_000));
    for (const key of 'hartbeat') {
      await box.press(key);
      await page.clock.runFor(20);
    }
    expect(asked).toEqual([]);
    await page.clock.resume();
    await page.locator('.search-result.page a[href^="/docs/concepts/node-lifecycle#"]').waitFor();
    // Typing is debounced: one request for the word, not one a key.
    expect(asked).toEqual(['?q=hartbeat&limit=6']);
    // The page's other matching sections are listed under it, as links to their headings.
    const sections = await page
      .locator('.search-result.section a')
      .evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    expect(sections.length).toBeGreaterThan(0);
    for (const href of sections) expect(href).toMatch(/^\/docs\/[a-z-]+\/[a-z-]+(#[a-z0-9_-]+)?$/);
    await page.screenshot({ path: path.join(screenshots, 'search-api-typo.png') });
    await closePage(page);
  });

  it('falls back to Pagefind on a statically hosted site, where a question in words finds pages', async () => {
    const page = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    // As deploy/nginx/docs-static.conf answers everything under /api/ (static-hosting.test.ts
    // checks that configuration's answers).
    let asked = 0;
    await page.route('**/api/v1/search**', (route) => {
      asked += 1;
      return route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503 }),
      });
    });
    await page.goto(`${site.url}/`);
    const box = page.getByRole('combobox', { name: 'Search the documentation' });
    await box.click();
    await box.pressSequentially('why does my agent show offline', { delay: 10 });
    const status = page.locator('.search-status');
    const links = () =>
      page
        .locator('.search-result.page a')
        .evaluateAll((all) => all.map((link) => link.getAttribute('href')));
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/^\d+ pages? found$/);
    const found = await links();
    expect(found.some((href) => /node-lifecycle|troubleshooting/.test(href ?? ''))).toBe(true);
    await page.screenshot({ path: path.join(screenshots, 'search-pagefind-phone.png') });
    // Once, or more when typing paused past the debounce on a busy machine and the box asked for
    // the words so far before the first answer came back.
    const askedWhileTyping = asked;
    expect(askedWhileTyping).toBeGreaterThanOrEqual(1);

    // The site has no API: the next search goes to Pagefind without asking it again.
    await box.fill('');
    await box.pressSequentially('human in the loop', { delay: 10 });
    // Its own answer, not the first search's status still showing.
    await expect
      .poll(async () => (await links()).some((href) => /approvals/.test(href ?? '')), { timeout: 15_000 })
      .toBe(true);
    expect(asked).toBe(askedWhileTyping);
    // Each answer that arrived is logged (an ask cancelled by the next keystroke may not be).
    const refused = pageProblems.get(page)!.filter((line) => line.includes('status of 503'));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThanOrEqual(askedWhileTyping);
    await closePage(page, refused);
  });

  it('reaches a section result with the keyboard', async () => {
    const page = await newPage();
    await page.goto(`${site.url}/`);
    await page.keyboard.press('/');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('site-search');
    const target = pages[0]!;
    await page.keyboard.type(target.title, { delay: 20 });
    await page.locator('.search-result').first().waitFor();
    const first = await page.locator('.search-result[aria-selected="true"] a').getAttribute('href');
    expect(first).toMatch(/^\/docs\//);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${site.url}${first}`);
    await closePage(page);
  });

  it('switches theme, remembers it after a reload, and follows the system preference by default', async () => {
    const page = await newPage({ colorScheme: 'light' });
    const docPage = pages[Math.min(2, pages.length - 1)]!;
    await page.goto(`${site.url}${docPage.path}`);
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    await expect(theme()).resolves.toBe('light');
    await page.screenshot({ path: path.join(screenshots, 'desktop-light.png') });

    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await expect(theme()).resolves.toBe('dark');
    await page.reload();
    await expect(theme()).resolves.toBe('dark');
    await expect(page.getByRole('button', { name: 'Switch to light theme' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(screenshots, 'desktop-dark.png') });
    await closePage(page);

    const system = await newPage({ colorScheme: 'dark' });
    await system.goto(`${site.url}/`);
    await expect(system.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe('dark');
    await closePage(system);
  });

  it('copies the page as markdown and a code block to the clipboard', async () => {
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.url });
    const withCode = pages.find((candidate) =>
      readFileSync(path.join(clientDir, `${candidate.markdown_url}`), 'utf8').includes('```'),
    );
    const target = withCode ?? pages[0]!;
    await page.goto(`${site.url}${target.path}`);
    await page.getByRole('button', { name: 'Copy page as markdown' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    const markdown = readFileSync(path.join(clientDir, target.markdown_url), 'utf8');
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(markdown);

    if (withCode) {
      const block = page.locator('.code-block').first();
      await block.getByRole('button', { name: 'Copy code to clipboard' }).click();
      const code = await block.locator('pre').textContent();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(code);
    }
    await closePage(page);
  });

  it('collapses the sidebar into a drawer on a phone-sized screen', async () => {
    const page = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await page.goto(`${site.url}${pages[0]!.path}`);
    const sidebar = page.locator('#sidebar');
    await expect(sidebar.isVisible()).resolves.toBe(false);
    await page.screenshot({ path: path.join(screenshots, 'mobile.png') });
    const menu = page.locator('.menu-button');
    await expect(menu.getAttribute('aria-label')).resolves.toBe('Open navigation');
    await menu.click();
    await sidebar.waitFor({ state: 'visible' });
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.screenshot({ path: path.join(screenshots, 'mobile-navigation.png'), animations: 'disabled' });
    await page.keyboard.press('Escape');
    await sidebar.waitFor({ state: 'hidden' });
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(pageWidth).toBeLessThanOrEqual(390);
    await closePage(page);
  });

  it('renders a published run permalink inside the site layout, theme included', async () => {
    const bundle = {
      version: 1,
      workflow_id: 'wf_browser',
      title: 'Browser test run',
      generated_at: new Date().toISOString(),
      totals: { nodes: 2 },
      nodes: [
        { execution_id: 'ex_1', target: 'hello-agent.summarize', status: 'succeeded', duration_ms: 12 },
        { execution_id: 'ex_2', target: 'hello-agent.word_count', status: 'failed', error_message: 'boom' },
      ],
      edges: [{ from: 'ex_1', to: 'ex_2' }],
    };
    const created = await fetch(`${site.url}/api/v1/shares`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(bundle),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const page = await newPage({ colorScheme: 'dark' });
    await page.goto(`${site.url}/s/${id}`);
    await expect(page.locator('main').textContent()).resolves.toContain('Browser test run');
    await expect(page.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe('dark');
    await expect(page.locator('.site-header .search-input').isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(screenshots, 'share.png'), fullPage: true });
    await closePage(page);
  });

  it('offers a skip link and answers unknown paths with the 404 page', async () => {
    const page = await newPage();
    const response = await page.goto(`${site.url}/docs/no-such-page`);
    expect(response?.status()).toBe(404);
    await expect(page.locator('main h1').textContent()).resolves.toBe('Page not found');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    // Chromium logs every 404 document as a console error; that one is the point of this test,
    // anything else is not.
    await closePage(page, [
      `console error: Failed to load resource: the server responded with a status of 404 (Not Found) (${site.url}/docs/no-such-page)`,
    ]);
  });

  it('opens the navigation drawer from the home page at phone width, and keeps it out of the desktop home page', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await newPage({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        colorScheme,
      });
      await page.goto(`${site.url}/`);
      const menu = page.locator('.menu-button');
      await expect(menu.isVisible()).resolves.toBe(true);
      await expect(menu.getAttribute('aria-label')).resolves.toBe('Open navigation');
      await page.screenshot({ path: path.join(screenshots, `mobile-home-${colorScheme}.png`) });
      await menu.click();
      const target = pages[1]!;
      const link = page.locator(`#sidebar a[href="${target.path}"]`);
      await link.waitFor({ state: 'visible' });
      await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
      await page.screenshot({
        path: path.join(screenshots, `mobile-home-navigation-${colorScheme}.png`),
        animations: 'disabled',
      });
      await link.click();
      await page.waitForURL(`${site.url}${target.path}`);
      await expect(page.locator('main h1').textContent()).resolves.toBe(target.title);
      await closePage(page);
    }
    const desktop = await newPage();
    await desktop.goto(`${site.url}/`);
    // The home page lists every page itself on a wide screen: no menu button, no drawer.
    await expect(desktop.locator('.menu-button').isVisible()).resolves.toBe(false);
    await expect(desktop.locator('#sidebar').isVisible()).resolves.toBe(false);
    await closePage(desktop);
  });

  it('never scrolls the page sideways at phone width: wide tables and code blocks scroll inside their own box', async () => {
    // The home page, pages with long endpoint paths, wide tables (settings) and the approvals diagram.
    const paths = [
      '/',
      '/docs/api/nodes',
      '/docs/api/approvals',
      '/docs/concepts/approvals',
      '/docs/reference/settings',
    ];
    for (const sitePath of paths)
      expect(sitePath === '/' || pages.some((p) => p.path === sitePath), sitePath).toBe(true);
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await newPage({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        colorScheme,
      });
      for (const sitePath of paths) {
        await page.goto(`${site.url}${sitePath}`);
        const layout = await page.evaluate(() => {
          const column = document.querySelector('.prose')!.getBoundingClientRect();
          const boxes = Array.from(document.querySelectorAll<HTMLElement>('.prose pre, .prose table')).map(
            (box) => ({
              what: `${box.tagName.toLowerCase()} ${box.textContent!.trim().slice(0, 40)}`,
              beyondColumn: box.getBoundingClientRect().right > column.right + 0.5,
              clipped:
                box.scrollWidth > box.clientWidth &&
                !['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
            }),
          );
          return {
            pageWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
            viewport: window.innerWidth,
            misfits: boxes.filter((box) => box.beyondColumn || box.clipped).map((box) => box.what),
          };
        });
        expect(layout.pageWidth, sitePath).toBeLessThanOrEqual(layout.viewport);
        expect(layout.misfits, sitePath).toEqual([]);
      }
      await page.goto(`${site.url}/docs/reference/settings`);
      await page.screenshot({ path: path.join(screenshots, `mobile-wide-table-${colorScheme}.png`) });
      await closePage(page);
    }
  });

  it('wraps long endpoint headings in the table of contents instead of cutting them off', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await newPage({ colorScheme });
      for (const sitePath of ['/docs/api/approvals', '/docs/api/nodes']) {
        await page.goto(`${site.url}${sitePath}`);
        const links = await page.locator('.toc-link').evaluateAll((all) =>
          all.map((link) => ({
            text: link.textContent!.trim(),
            clipped: link.scrollWidth > link.clientWidth,
            visible: link.getBoundingClientRect().right <= document.documentElement.clientWidth,
          })),
        );
        // The headings that were cut: an endpoint path longer than the column is wide.
        expect(
          links.some((link) => link.text.length > 40),
          sitePath,
        ).toBe(true);
        expect(
          links.filter((link) => link.clipped || !link.visible),
          sitePath,
        ).toEqual([]);
      }
      await page.goto(`${site.url}/docs/api/approvals`);
      await page.screenshot({ path: path.join(screenshots, `toc-long-headings-${colorScheme}.png`) });
      await closePage(page);
    }
  });

  it('fits the approvals diagram in its column on a desktop and lets it scroll in its box on a phone', async () => {
    const diagram = (page: Page) =>
      page
        .locator('.prose pre')
        .first()
        .evaluate((pre) => {
          const column = pre.closest('.prose')!.getBoundingClientRect();
          return {
            text: pre.textContent!,
            withinColumn: pre.getBoundingClientRect().right <= column.right + 0.5,
            fits: pre.scrollWidth <= pre.clientWidth,
            scrolls: ['auto', 'scroll'].includes(getComputedStyle(pre).overflowX),
          };
        });
    for (const colorScheme of ['light', 'dark'] as const) {
      const desktop = await newPage({ colorScheme });
      await desktop.goto(`${site.url}/docs/concepts/approvals`);
      const wide = await diagram(desktop);
      expect(wide.text).toContain('request-approval');
      // On a desktop the whole diagram shows: none of it is hidden past the edge of its box.
      expect(wide).toMatchObject({ withinColumn: true, fits: true });
      await desktop.locator('.prose pre').first().scrollIntoViewIfNeeded();
      await desktop.screenshot({ path: path.join(screenshots, `approvals-diagram-${colorScheme}.png`) });
      await closePage(desktop);

      const phone = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, colorScheme });
      await phone.goto(`${site.url}/docs/concepts/approvals`);
      expect(await diagram(phone)).toMatchObject({ withinColumn: true, scrolls: true });
      await phone.locator('.prose pre').first().scrollIntoViewIfNeeded();
      await phone.screenshot({ path: path.join(screenshots, `mobile-approvals-diagram-${colorScheme}.png`) });
      await closePage(phone);
    }
  });
});
