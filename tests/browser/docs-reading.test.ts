import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { buildSite, writeCorpus } from '@switchyard/docs/test/support/run-build.ts';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousAxeViolations } from '../support/axe.ts';
import { CHROMIUM_INSTALL_TIMEOUT_MS, launchChromium } from '../support/chromium.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';

/**
 * Reading comfort of the docs site: callouts, titled and tabbed code blocks, the table of contents
 * and the search box on a phone, the edit link and last change, readable code colours. The real
 * site's build shows what content/ uses; a fixture corpus, built with the same `astro build`, shows
 * every element at once (tab groups, titles, and the languages content/ does not use yet).
 */

const repositoryRoot = path.resolve(import.meta.dirname, '../..');
const screenshots =
  process.env.READING_SCREENSHOTS_DIR ?? path.join(repositoryRoot, 'tests/test-results/screenshots');
const READING = '/docs/concepts/reading';
const SECOND = '/docs/concepts/second';

const frontmatter = (title: string, order: number) =>
  `---\ntitle: ${title}\ndescription: A page that shows every reading aid of the site.\ncategory: Concepts\nkeywords: [reading]\norder: ${order}\n---\n\n`;

const tabs = (suffix: string) => `\`\`\`bash tab="curl"
curl -s http://127.0.0.1:8080/api/v1/execute/hello-agent.summarize${suffix} -d '{"input":{}}'
\`\`\`

\`\`\`ts tab="TypeScript"
// Calls the function and prints its result.
const response = await fetch('http://127.0.0.1:8080/api/v1/execute/hello-agent.summarize${suffix}', {
  method: 'POST',
  body: JSON.stringify({ input: {} }),
});
console.log(await response.json());
\`\`\`

\`\`\`python tab="Python"
# Calls the function and prints its result.
import json, urllib.request
body = json.dumps({"input": {}}).encode()
print(urllib.request.urlopen("http://127.0.0.1:8080/api/v1/execute/hello-agent.summarize${suffix}", body).read())
\`\`\`
`;

const readingPage = `${frontmatter('Reading aids', 1)}A page with every element the site adds to markdown.

## Callouts

> [!NOTE]
> A note the reader should know.

> [!TIP]
> A tip that saves time.

> [!WARNING]
> A warning about losing data.

> [!CAUTION]
> A caution about a risky action.

## Titled code

\`\`\`js title="agent.mjs"
// A comment, in the faintest colour of the theme.
import http from 'node:http';
const port = Number(process.env.PORT ?? 8001);
http.createServer((req, res) => res.end('{"ok":true}')).listen(port);
\`\`\`

## Tabs

${tabs('')}
### The same choice further down

${tabs('?again=1')}
## Every language

\`\`\`dockerfile
# The agent's image.
FROM node:20-slim
WORKDIR /app
COPY agent.mjs .
ENV PORT=8001
EXPOSE 8001
CMD ["node", "agent.mjs"]
\`\`\`

\`\`\`nginx
# Proxy the control plane.
server {
  listen 80;
  location / {
    proxy_pass http://127.0.0.1:8080;
    proxy_set_header Host $host;
  }
}
\`\`\`

\`\`\`xml
<?xml version="1.0" encoding="UTF-8"?>
<!-- A discovery answer. -->
<discovery discovered_at="2026-11-22T05:33:38.942Z">
  <agent node_id="hello-agent" version="1.0.0"/>
</discovery>
\`\`\`

\`\`\`json
{ "status": "succeeded", "duration_ms": 12, "result": { "ok": true }, "error": null }
\`\`\`

\`\`\`yaml
# Settings.
server:
  port: 8080
  debug: false
\`\`\`
`;

const secondPage = `${frontmatter('Second page', 2)}Another page with the same tabs, so a choice carries over.

## Calling

${tabs('')}`;

let browser: Browser;
let site: TestDocsServer;
let fixture: TestDocsServer;
let corpusDir: string;
let fixtureOut: string | undefined;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  corpusDir = writeCorpus({ 'concepts/reading.md': readingPage, 'concepts/second.md': secondPage });
  const build = await buildSite(corpusDir);
  fixtureOut = build.outDir;
  if (build.code !== 0) throw new Error(`The fixture corpus did not build:\n${build.output}`);
  // A page load fetches a dozen files: the per-client budgets are raised out of the way.
  site = await startTestDocsServer({ rateLimit: 100_000, pageRateLimit: 100_000 });
  fixture = await startTestDocsServer({ distDir: build.outDir, rateLimit: 100_000, pageRateLimit: 100_000 });
  browser = await launchChromium();
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await fixture?.close();
  if (corpusDir) rmSync(corpusDir, { recursive: true, force: true });
  if (fixtureOut) rmSync(fixtureOut, { recursive: true, force: true });
  expect(site?.errors).toEqual([]);
  expect(fixture?.errors).toEqual([]);
});

const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
};
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 860 } };
const THEMES = ['light', 'dark'] as const;

const pageProblems = new WeakMap<Page, string[]>();

async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ ...DESKTOP, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  pageProblems.set(page, problems);
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  return page;
}

/** Closes the page's context and asserts that the page reported no error. */
async function closePage(page: Page): Promise<void> {
  await page.context().close();
  expect(pageProblems.get(page), 'uncaught errors and console errors in the page').toEqual([]);
}

/** The selected tab and the visible panels' labels of each tab group of the page. */
function tabState(page: Page) {
  return page.locator('.code-tabs').evaluateAll((groups) =>
    groups.map((group) => ({
      selected: group.querySelector('[role="tab"][aria-selected="true"]')?.textContent,
      visible: Array.from(group.querySelectorAll<HTMLElement>('[role="tabpanel"]'))
        .filter((panel) => panel.checkVisibility())
        .map((panel) => panel.dataset.tab),
    })),
  );
}

describe('reading aids of the documentation site in Chromium', () => {
  it('renders GitHub alert blocks as labelled callouts, in content and in the fixture', async () => {
    const page = await newPage();
    await page.goto(`${site.url}/docs/concepts/vector-memory`);
    const note = page.getByRole('note', { name: 'Note' });
    await expect(note.locator('.callout-title').textContent()).resolves.toBe('Note');
    await expect(note.textContent()).resolves.toContain('Two naming conventions are accepted');
    // The marker is syntax: it shows nowhere on the page.
    await expect(page.locator('main').textContent()).resolves.not.toContain('[!NOTE]');
    await closePage(page);

    // The page's markdown variant keeps GitHub's syntax, which GitHub and agents read.
    const markdown = await (await fetch(`${site.url}/docs/concepts/vector-memory.md`)).text();
    expect(markdown).toContain('> [!NOTE]\n> Two naming conventions are accepted');

    const fixturePage = await newPage();
    await fixturePage.goto(`${fixture.url}${READING}`);
    for (const label of ['Note', 'Tip', 'Warning', 'Caution']) {
      const callout = fixturePage.getByRole('note', { name: label });
      await expect(callout.isVisible(), label).resolves.toBe(true);
      await expect(callout.locator('.callout-title svg').count(), label).resolves.toBe(1);
      await expect(callout.getAttribute('class'), label).resolves.toContain(`callout-${label.toLowerCase()}`);
    }
    await closePage(fixturePage);
  });

  it('shows a fence title in the bar of its block, whose copy button still copies the code', async () => {
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fixture.url });
    await page.goto(`${fixture.url}${READING}`);
    const block = page.locator('.code-block.has-title');
    await expect(block.locator('.code-block-title').textContent()).resolves.toBe('agent.mjs');
    await block.getByRole('button', { name: 'Copy code to clipboard' }).click();
    const code = await block.locator('pre').textContent();
    expect(code).toContain("import http from 'node:http';");
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(code);

    // A block inside a tab panel copies its own code, not another tab's.
    const python = page.locator('.code-tabs').first().getByRole('tab', { name: 'Python' });
    await python.click();
    const panel = page.locator(`#${await python.getAttribute('aria-controls')}`);
    await panel.getByRole('button', { name: 'Copy code to clipboard' }).click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(
      await panel.locator('pre').textContent(),
    );
    await closePage(page);
  });

  it('switches code tabs by click and arrow keys, in step across groups, and remembers the choice', async () => {
    const page = await newPage();
    await page.goto(`${fixture.url}${READING}`);
    const first = page.locator('.code-tabs').first();
    await expect(first.getByRole('tablist', { name: 'Code examples' }).isVisible()).resolves.toBe(true);
    await expect(tabState(page)).resolves.toEqual([
      { selected: 'curl', visible: ['curl'] },
      { selected: 'curl', visible: ['curl'] },
    ]);

    await first.getByRole('tab', { name: 'TypeScript' }).click();
    await expect(tabState(page)).resolves.toEqual([
      { selected: 'TypeScript', visible: ['TypeScript'] },
      { selected: 'TypeScript', visible: ['TypeScript'] },
    ]);

    // Arrow keys move the focus and the selection; they wrap at either end; Home and End jump.
    await page.keyboard.press('ArrowRight');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Python');
    await expect(tabState(page)).resolves.toEqual([
      { selected: 'Python', visible: ['Python'] },
      { selected: 'Python', visible: ['Python'] },
    ]);
    await page.keyboard.press('ArrowRight');
    await expect(tabState(page).then((groups) => groups[0]?.selected)).resolves.toBe('curl');
    await page.keyboard.press('ArrowLeft');
    await expect(tabState(page).then((groups) => groups[0]?.selected)).resolves.toBe('Python');
    await page.keyboard.press('Home');
    await expect(tabState(page).then((groups) => groups[0]?.selected)).resolves.toBe('curl');
    await page.keyboard.press('End');
    await expect(tabState(page).then((groups) => groups[0]?.selected)).resolves.toBe('Python');
    // Only the selected tab is in the Tab order; the panel comes next.
    const tabStops = await first
      .getByRole('tab')
      .evaluateAll((all) => all.map((tab) => (tab as HTMLElement).tabIndex));
    expect(tabStops).toEqual([-1, -1, 0]);

    await page.reload();
    await expect(tabState(page)).resolves.toEqual([
      { selected: 'Python', visible: ['Python'] },
      { selected: 'Python', visible: ['Python'] },
    ]);
    // Another page with the same labels opens on the same choice.
    await page.goto(`${fixture.url}${SECOND}`);
    await expect(tabState(page)).resolves.toEqual([{ selected: 'Python', visible: ['Python'] }]);
    await closePage(page);
  });

  it('offers a collapsed "On this page" list above the article on a phone, in place of the column', async () => {
    for (const colorScheme of THEMES) {
      const page = await newPage({ ...PHONE, colorScheme });
      await page.goto(`${site.url}/docs/concepts/vector-memory`);
      await expect(page.locator('nav.toc').isVisible()).resolves.toBe(false);
      const disclosure = page.locator('details.toc-disclosure');
      await expect(disclosure.isVisible()).resolves.toBe(true);
      // It sits between the page's header and its text.
      const order = await page.evaluate(() => {
        const top = (selector: string) => document.querySelector(selector)!.getBoundingClientRect().top;
        return [top('.doc-header'), top('details.toc-disclosure'), top('.prose')];
      });
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      const list = disclosure.getByRole('navigation', { name: 'On this page' });
      await expect(list.isVisible()).resolves.toBe(false);

      await disclosure.locator('summary').click();
      await expect(list.isVisible()).resolves.toBe(true);
      const listed = await list
        .getByRole('link')
        .evaluateAll((links) => links.map((link) => link.textContent));
      const headings = await page
        .locator('.prose h2, .prose h3')
        .evaluateAll((all) => all.map((heading) => heading.textContent));
      expect(listed).toEqual(headings);
      await page.screenshot({ path: path.join(screenshots, `reading-toc-phone-${colorScheme}.png`) });

      await list.getByRole('link').nth(1).click();
      await page.waitForURL((url) => url.hash !== '');
      await closePage(page);
    }
    // A wide screen keeps the column and shows no disclosure.
    const desktop = await newPage();
    await desktop.goto(`${site.url}/docs/concepts/vector-memory`);
    await expect(desktop.locator('nav.toc').isVisible()).resolves.toBe(true);
    await expect(desktop.locator('details.toc-disclosure').isVisible()).resolves.toBe(false);
    await closePage(desktop);
  });

  it('keeps the search box at 16px and its results inside the screen on a phone', async () => {
    for (const colorScheme of THEMES) {
      const page = await newPage({ ...PHONE, colorScheme });
      await page.goto(`${site.url}/docs/concepts/vector-memory`);
      const box = page.getByRole('combobox', { name: 'Search the documentation' });
      const fontSize = await box.evaluate((input) => Number.parseFloat(getComputedStyle(input).fontSize));
      expect(fontSize).toBeGreaterThanOrEqual(16);
      await box.click();
      await box.pressSequentially('heartbeat', { delay: 20 });
      await page.locator('.search-result').first().waitFor();
      const panel = await page.locator('.search-panel').evaluate((element) => {
        const box = element.getBoundingClientRect();
        return {
          left: box.left,
          right: box.right,
          bottom: box.bottom,
          width: window.innerWidth,
          height: window.innerHeight,
        };
      });
      expect(panel.left).toBeGreaterThanOrEqual(0);
      expect(panel.right).toBeLessThanOrEqual(panel.width);
      expect(panel.bottom).toBeLessThanOrEqual(panel.height);
      await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(
        390,
      );
      await page.screenshot({ path: path.join(screenshots, `reading-search-phone-${colorScheme}.png`) });
      await closePage(page);
    }
  });

  it('links each page to its source on GitHub and dates it from git when the history is there', async () => {
    const page = await newPage();
    await page.goto(`${site.url}/docs/concepts/vector-memory`);
    await expect(page.getByRole('link', { name: 'Edit this page' }).getAttribute('href')).resolves.toBe(
      'https://github.com/switchyard-dev/switchyard/edit/main/content/concepts/vector-memory.md',
    );
    await expect(page.getByRole('link', { name: 'Source on GitHub' }).getAttribute('href')).resolves.toBe(
      'https://github.com/switchyard-dev/switchyard',
    );
    let committed = '';
    try {
      const shallow = execFileSync('git', ['rev-parse', '--is-shallow-repository'], {
        cwd: repositoryRoot,
        encoding: 'utf8',
      });
      if (shallow.trim() === 'false') {
        committed = execFileSync(
          'git',
          ['log', '-1', '--format=%cI', '--', 'content/concepts/vector-memory.md'],
          {
            cwd: repositoryRoot,
            encoding: 'utf8',
          },
        ).trim();
      }
    } catch {
      // No git here: the page must then show no date, as checked below.
    }
    const time = page.locator('.doc-updated time');
    if (committed) {
      await expect(time.getAttribute('datetime')).resolves.toBe(committed);
      await expect(page.locator('.doc-updated').textContent()).resolves.toMatch(
        /^\s*Last updated \w+ \d{1,2}, \d{4}\s*$/,
      );
    } else {
      await expect(time.count()).resolves.toBe(0);
    }
    await closePage(page);

    // A corpus outside any git history (the fixture's temporary directory) builds without a date.
    const fixturePage = await newPage();
    await fixturePage.goto(`${fixture.url}${READING}`);
    await expect(fixturePage.locator('.doc-updated').count()).resolves.toBe(0);
    await expect(
      fixturePage.getByRole('link', { name: 'Edit this page' }).getAttribute('href'),
    ).resolves.toBe('https://github.com/switchyard-dev/switchyard/edit/main/content/concepts/reading.md');
    await closePage(fixturePage);
  });

  it('highlights every language and keeps each code token at 4.5:1 against its background in both themes', async () => {
    const targets = [
      {
        url: () => `${fixture.url}${READING}`,
        languages: ['dockerfile', 'nginx', 'xml', 'json', 'bash', 'ts', 'python', 'js', 'yaml'],
      },
      { url: () => `${site.url}/docs/api/mcp`, languages: ['nginx', 'json', 'bash'] },
      { url: () => `${site.url}/docs/getting-started/clients`, languages: ['bash', 'js', 'python', 'json'] },
    ];
    for (const colorScheme of THEMES) {
      const page = await newPage({ colorScheme });
      for (const target of targets) {
        await page.goto(target.url());
        const report = await page.evaluate(() => {
          const canvas = document.createElement('canvas').getContext('2d')!;
          /** Any CSS colour as sRGB channels and alpha, through the canvas's colour parser. */
          const rgba = (colour: string): [number, number, number, number] => {
            canvas.clearRect(0, 0, 1, 1);
            canvas.fillStyle = colour;
            canvas.fillRect(0, 0, 1, 1);
            const [r, g, b, a] = canvas.getImageData(0, 0, 1, 1).data;
            return [r!, g!, b!, a! / 255];
          };
          const luminance = ([r, g, b]: number[]) =>
            [r!, g!, b!]
              .map((v) => v / 255)
              .map((s) => (s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4))
              .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0);
          /** The opaque colour behind an element: its ancestors' backgrounds, composited. */
          const backdrop = (element: Element): number[] => {
            const layers: [number, number, number, number][] = [];
            for (let node: Element | null = element; node; node = node.parentElement) {
              const layer = rgba(getComputedStyle(node).backgroundColor);
              if (layer[3] > 0) layers.push(layer);
              if (layer[3] === 1) break;
            }
            let colour = [255, 255, 255];
            for (const [r, g, b, a] of layers.reverse())
              colour = [
                r * a + colour[0]! * (1 - a),
                g * a + colour[1]! * (1 - a),
                b * a + colour[2]! * (1 - a),
              ];
            return colour;
          };
          const tokens = Array.from(document.querySelectorAll('.astro-code .line span')).filter(
            (span) => span.children.length === 0 && span.textContent!.trim() !== '',
          );
          const failures: string[] = [];
          for (const token of tokens) {
            const background = backdrop(token);
            const [r, g, b, a] = rgba(getComputedStyle(token).color);
            const colour = [
              r * a + background[0]! * (1 - a),
              g * a + background[1]! * (1 - a),
              b * a + background[2]! * (1 - a),
            ];
            const [light, dark] = [luminance(colour), luminance(background)].sort((x, y) => y - x);
            const ratio = (light! + 0.05) / (dark! + 0.05);
            if (ratio < 4.5)
              failures.push(`${token.textContent} (${ratio.toFixed(2)}, ${getComputedStyle(token).color})`);
          }
          return {
            tokens: tokens.length,
            failures,
            languages: Array.from(document.querySelectorAll<HTMLElement>('.astro-code')).map(
              (pre) => pre.dataset.language,
            ),
            // A highlighted block has tokens of at least two colours.
            plain: Array.from(document.querySelectorAll<HTMLElement>('.astro-code'))
              .filter(
                (pre) =>
                  new Set(
                    Array.from(pre.querySelectorAll('.line span')).map((s) => getComputedStyle(s).color),
                  ).size < 2,
              )
              .map((pre) => pre.dataset.language),
          };
        });
        expect(report.tokens, target.url()).toBeGreaterThan(20);
        expect(report.failures, `${target.url()} (${colorScheme})`).toEqual([]);
        for (const language of target.languages) expect(report.languages, target.url()).toContain(language);
        expect(
          report.plain.filter((language) => language !== 'text'),
          target.url(),
        ).toEqual([]);
      }
      await closePage(page);
    }
  });

  it('passes axe at desktop and phone widths in both themes on pages with every reading aid', async () => {
    const targets = [() => `${fixture.url}${READING}`, () => `${site.url}/docs/concepts/vector-memory`];
    for (const [width, options] of [
      ['1280', DESKTOP],
      ['390', PHONE],
    ] as const) {
      for (const colorScheme of THEMES) {
        const page = await newPage({ ...options, colorScheme });
        for (const target of targets) {
          await page.goto(target());
          // The phone's table of contents open, so its links are audited too.
          const disclosure = page.locator('details.toc-disclosure');
          if (await disclosure.isVisible()) await disclosure.locator('summary').click();
          expect(await seriousAxeViolations(page), `${target()} at ${width}px, ${colorScheme}`).toEqual([]);
        }
        await page.goto(targets[0]!());
        await page.screenshot({
          path: path.join(screenshots, `reading-${width}-${colorScheme}.png`),
          fullPage: true,
        });
        await closePage(page);
      }
    }
  });
});
