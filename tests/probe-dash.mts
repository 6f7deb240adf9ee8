import { chromium } from 'playwright-core';
const base = process.argv[2];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
for (const scheme of ['light', 'dark'] as const) for (const width of [1280, 390]) {
  const ctx = await browser.newContext({ viewport: { width, height: 860 }, colorScheme: scheme });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.log(`[${scheme} ${width}] console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => console.log('pageerror', e.message));
  for (const path of ['nodes', 'nodes/hello-agent', 'executions']) {
    await page.goto(`${base}/ui/${path}`);
    await page.waitForTimeout(1500);
    await page.screenshot({ path: `/tmp/dash-shots/${path.replace('/', '_')}-${width}-${scheme}.png`, fullPage: true });
  }
  const first = await page.locator('[data-execution-id]').first().getAttribute('data-execution-id');
  await page.goto(`${base}/ui/executions/${first}`);
  await page.waitForTimeout(1500);
  await page.screenshot({ path: `/tmp/dash-shots/execution-${width}-${scheme}.png`, fullPage: true });
  console.log(scheme, width, 'live:', await page.locator('.live').textContent(), 'scrollW', await page.evaluate(() => document.documentElement.scrollWidth));
  await ctx.close();
}
await browser.close();
