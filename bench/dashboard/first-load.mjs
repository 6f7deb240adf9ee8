#!/usr/bin/env node
// What a browser downloads and how soon it draws when it first opens the dashboard, against a
// reference built in the same run: the smallest React app Vite builds (one component rendering a
// heading), with the same Vite, React and settings. Both are served by the real control plane
// (startServer with dashboard.dir pointing at each build) and opened in real Chromium.
// Printed: the JavaScript and CSS index.html loads (raw, gzip and brotli, as the control plane
// sends the precompressed copies the build holds), the first contentful paint and the time until
// the overview's heading shows, each as a ratio to the reference.
// Run from the repository root, after `npm run build -w @switchyard/dashboard`:
//   node --import tsx bench/dashboard/first-load.mjs
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { startServer } from '../../apps/control-plane/src/server.ts';

const DASHBOARD = fileURLToPath(new URL('../../apps/dashboard/dist', import.meta.url));
const DASHBOARD_APP = fileURLToPath(new URL('../../apps/dashboard', import.meta.url));
if (!existsSync(join(DASHBOARD, 'index.html'))) {
  console.error('Build the dashboard first: npm run build -w @switchyard/dashboard');
  process.exit(2);
}

/** Builds the reference app inside the dashboard's folder, so it resolves the same packages. */
async function buildReference() {
  const root = mkdtempSync(join(DASHBOARD_APP, '.bench-reference-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(
    join(root, 'index.html'),
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Reference</title></head><body><div id="root"></div><script type="module" src="/src/main.tsx"></script></body></html>',
  );
  writeFileSync(
    join(root, 'src', 'main.tsx'),
    "import { createRoot } from 'react-dom/client';\ncreateRoot(document.getElementById('root')!).render(<h1>Overview</h1>);\n",
  );
  const { default: react } = await import('@vitejs/plugin-react');
  await build({
    root,
    base: '/ui/',
    logLevel: 'warn',
    plugins: [react()],
    build: { outDir: join(root, 'dist'), modulePreload: { polyfill: false } },
  });
  return { dist: join(root, 'dist'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The scripts, preloads and stylesheets index.html names, with their sizes. */
function firstLoadBytes(dist) {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
  const sizes = { js: { raw: 0, gzip: 0, brotli: 0 }, css: { raw: 0, gzip: 0, brotli: 0 } };
  for (const file of new Set(files)) {
    const bytes = readFileSync(join(dist, file));
    const kind = file.endsWith('.js') ? 'js' : 'css';
    sizes[kind].raw += bytes.length;
    sizes[kind].gzip += gzipSync(bytes, { level: 9 }).length;
    sizes[kind].brotli += brotliCompressSync(bytes).length;
  }
  return sizes;
}

async function paint(dist, browser) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-first-load-'));
  const env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir, CONTROL_PLANE_PORT: '0', LOG_LEVEL: 'warn' };
  env.SWITCHYARD_DASHBOARD_DIR = dist;
  delete env.DATABASE_URL;
  const server = await startServer({ env });
  const runs = [];
  try {
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const start = Date.now();
      await page.goto(`${server.url}/ui/`);
      await page.getByRole('heading', { name: 'Overview' }).first().waitFor();
      const heading = Date.now() - start;
      const fcp = await page.evaluate(
        () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
      );
      runs.push({ fcp, heading });
      await context.close();
    }
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { fcp: median(runs.map((r) => r.fcp)), heading: median(runs.map((r) => r.heading)) };
}

const reference = await buildReference();
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
try {
  const sizes = { dashboard: firstLoadBytes(DASHBOARD), reference: firstLoadBytes(reference.dist) };
  const times = {
    reference: await paint(reference.dist, browser),
    dashboard: await paint(DASHBOARD, browser),
  };
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log('build      JS raw      JS gzip    JS brotli  CSS gzip   FCP       heading shown');
  for (const name of ['reference', 'dashboard']) {
    const s = sizes[name];
    const t = times[name];
    console.log(
      `${name.padEnd(10)} ${kib(s.js.raw).padEnd(11)} ${kib(s.js.gzip).padEnd(10)} ${kib(s.js.brotli).padEnd(10)} ${kib(s.css.gzip).padEnd(10)} ${`${t.fcp.toFixed(0)} ms`.padEnd(9)} ${t.heading} ms`,
    );
  }
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
  console.log(
    `dashboard / reference: JS gzip ${ratio(sizes.dashboard.js.gzip, sizes.reference.js.gzip)}, FCP ${ratio(times.dashboard.fcp, times.reference.fcp)}, heading shown ${ratio(times.dashboard.heading, times.reference.heading)}`,
  );
} finally {
  await browser.close();
  reference.remove();
}
