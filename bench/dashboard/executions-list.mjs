#!/usr/bin/env node
// The dashboard's executions list with 100,000 executions, in real Chromium against the real
// control plane (startServer, the built dashboard at /ui/). Two runs, each on a fresh database:
//   reference  BENCH_REFERENCE_ROWS executions (1,000);
//   large      BENCH_ROWS executions (100,000).
// For each it prints the time until the first rows show, the time to page through the whole list
// by scrolling (the page fetches 100 rows at a time as its end comes near), the most list rows
// ever in the DOM, and the time each scroll step takes to draw (p50/p95/max, a viewport height a
// step, over the whole list once loaded). The figures that matter are the large run's
// first-rows time and p95 step time as ratios to the reference's: a virtualised list draws only
// what is on screen, so both stay near 1× however long the list grows.
// Run from the repository root, after `npm run build -w @switchyard/dashboard`:
//   node --import tsx bench/dashboard/executions-list.mjs
// Settings: DATABASE_URL (a scratch database is created on that server and dropped; unset runs on
// embedded PGlite), BENCH_ROWS (100000), BENCH_REFERENCE_ROWS (1000).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { chromium } from 'playwright-core';
import { startServer } from '../../apps/control-plane/src/server.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const REFERENCE_ROWS = Number(process.env.BENCH_REFERENCE_ROWS ?? 1_000);
const DASHBOARD = fileURLToPath(new URL('../../apps/dashboard/dist', import.meta.url));
if (!existsSync(join(DASHBOARD, 'index.html'))) {
  console.error('Build the dashboard first: npm run build -w @switchyard/dashboard');
  process.exit(2);
}

/** A scratch PostgreSQL database on DATABASE_URL's server, or undefined for embedded PGlite. */
async function scratchDatabase() {
  if (!process.env.DATABASE_URL) return undefined;
  const name = `bench_list_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** Inserts `count` finished executions in one statement, newest first one millisecond apart. */
async function seed(db, count) {
  await db.raw(
    `insert into executions (execution_id, run_id, workflow_id, target, node_id, function_name,
       function_type, lane, status, input, result, available_at, created_at, started_at,
       completed_at, duration_ms, updated_at)
     select 'exec_bench' || lpad(i::text, 16, '0'), 'run_bench' || i, 'run_bench' || i,
       'bench-agent.summarize', 'bench-agent', 'summarize', 'reasoner', 'sync',
       case when i % 50 = 0 then 'failed' else 'succeeded' end, '{}'::jsonb, '{"ok":true}'::jsonb,
       t, t, t, t + interval '12 milliseconds', 12, t
     from generate_series(1, ?) as i,
       lateral (select now() - (i || ' milliseconds')::interval as t) as times`,
    [count],
  );
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function measure(rows) {
  const database = await scratchDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-list-'));
  const env = {
    ...process.env,
    DATABASE_URL: database?.url ?? '',
    SWITCHYARD_DATA_DIR: dataDir,
    CONTROL_PLANE_PORT: '0',
    SWITCHYARD_DASHBOARD_DIR: DASHBOARD,
    LOG_LEVEL: 'warn',
  };
  if (!database) delete env.DATABASE_URL;
  const server = await startServer({ env });
  await seed(server.db, rows);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const started = performance.now();
    await page.goto(`${server.url}/ui/executions`);
    await page.locator('[data-execution-id]').first().waitFor();
    const firstRows = performance.now() - started;

    // Page through the whole list: scroll to the end, wait for the next page, until all shown.
    const loadStart = performance.now();
    const viewport = page.getByTestId('executions-viewport');
    let maxInDom = 0;
    for (;;) {
      const state = await viewport.evaluate((el) => {
        el.scrollTop = el.scrollHeight;
        return {
          inDom: el.querySelectorAll('[data-execution-id]').length,
          foot: el.parentElement.querySelector('.list-foot').textContent,
        };
      });
      maxInDom = Math.max(maxInDom, state.inDom);
      if (state.foot.includes('all shown')) break;
      await page.waitForFunction(
        (before) => document.querySelector('.list-foot').textContent !== before,
        state.foot,
        { timeout: 30_000 },
      );
    }
    const loadAll = performance.now() - loadStart;
    const loaded = Number((await page.locator('.list-foot').textContent()).split(' ')[0]);

    // Scroll the loaded list top to bottom, a viewport a step, timing each step to the next frame
    // drawn after it.
    const steps = await viewport.evaluate(async (el) => {
      el.scrollTop = 0;
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      const times = [];
      let inDom = 0;
      while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
        const at = performance.now();
        el.scrollTop += el.clientHeight;
        await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
        times.push(performance.now() - at);
        inDom = Math.max(inDom, el.querySelectorAll('[data-execution-id]').length);
      }
      return { times, inDom };
    });
    maxInDom = Math.max(maxInDom, steps.inDom);
    return {
      rows,
      loaded,
      firstRows,
      loadAll,
      maxInDom,
      steps: steps.times.length,
      p50: percentile(steps.times, 50),
      p95: percentile(steps.times, 95),
      max: Math.max(...steps.times),
    };
  } finally {
    await browser.close();
    await server.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const reference = await measure(REFERENCE_ROWS);
const large = await measure(ROWS);
const ms = (value) => `${value.toFixed(1)} ms`;
console.log(`database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
console.log(
  'run        rows     loaded  first rows  page all   DOM rows  steps  step p50  step p95  step max',
);
for (const [name, r] of [
  ['reference', reference],
  ['large', large],
]) {
  console.log(
    `${name.padEnd(10)} ${String(r.rows).padEnd(8)} ${String(r.loaded).padEnd(7)} ${ms(r.firstRows).padEnd(11)} ${`${(r.loadAll / 1000).toFixed(1)} s`.padEnd(10)} ${String(r.maxInDom).padEnd(9)} ${String(r.steps).padEnd(6)} ${ms(r.p50).padEnd(9)} ${ms(r.p95).padEnd(9)} ${ms(r.max)}`,
  );
}
console.log(
  `large / reference: first rows ${(large.firstRows / reference.firstRows).toFixed(2)}x, step p95 ${(large.p95 / reference.p95).toFixed(2)}x, DOM rows ${(large.maxInDom / reference.maxInDom).toFixed(2)}x`,
);
if (large.loaded !== ROWS || reference.loaded !== REFERENCE_ROWS) {
  console.error(`the list showed ${large.loaded} of ${ROWS} and ${reference.loaded} of ${REFERENCE_ROWS}`);
  process.exit(1);
}
