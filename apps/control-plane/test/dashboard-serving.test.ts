import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { isProblem } from '@switchyard/shared';
import { migrateLatest, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { controlPlaneMigrations } from '../src/migrations/index.ts';
import { DASHBOARD_CSP, defaultDashboardDir } from '../src/modules/dashboard/index.ts';
import { silentLogger } from '../src/platform/logger.ts';
import { openMigratedTestDatabase } from './helpers/database.ts';

// A build laid out as Vite writes one: index.html naming hashed files under assets/.
const INDEX =
  '<!doctype html><html><head><script type="module" src="/ui/assets/index-Ab12Cd34.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

let handle: TestDatabase;
let build: string;
const servers: Server[] = [];

async function serve(options: { dir?: string; apiKey?: string }): Promise<string> {
  const config = defaultConfig();
  config.dashboard.dir = options.dir;
  if (options.apiKey) config.api.auth = { apiKey: options.apiKey, skipPaths: [] };
  const server = createServer(createApp({ db: handle.db, config, log: silentLogger() }).callback());
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

let base: string;

beforeAll(async () => {
  handle = await openMigratedTestDatabase();
  await migrateLatest(handle.db, controlPlaneMigrations);
  build = mkdtempSync(join(tmpdir(), 'dashboard-build-'));
  mkdirSync(join(build, 'assets'));
  writeFileSync(join(build, 'index.html'), INDEX);
  writeFileSync(join(build, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  writeFileSync(join(build, 'assets', 'index-Ab12Cd34.js.gz'), gzipSync(SCRIPT));
  writeFileSync(join(build, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(build, '.env'), 'SECRET=1');
  const old = new Date('2026-01-01T00:00:00Z');
  utimesSync(join(build, 'index.html'), old, old);
  base = await serve({ dir: build, apiKey: 'k-dashboard' });
});

afterAll(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  await handle.close();
  rmSync(build, { recursive: true, force: true });
});

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  const body = await response.json();
  expect(isProblem(body)).toBe(true);
  return body as { detail: string; resolution: string; status: number };
}

describe('the dashboard at /ui/', () => {
  it('answers the app with a strict CSP, revalidated on every visit, without the API key', async () => {
    const response = await fetch(`${base}/ui/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toBe(INDEX);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('answers deep links with the app, so a pasted /ui/executions/<id> opens that page', async () => {
    for (const path of [
      '/ui/executions/exec_01J0ABC',
      '/ui/nodes/agent.one',
      '/ui/workflows/wf_1/',
      '/ui/a/b/c?x=1',
    ]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toBe(INDEX);
      expect(response.headers.get('cache-control'), path).toBe('no-cache');
    }
  });

  it('redirects /ui to /ui/, keeping the query', async () => {
    const response = await fetch(`${base}/ui?theme=dark`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/ui/?theme=dark');
  });

  it('caches hashed assets for a year and sends the compressed copy the build holds', async () => {
    const plain = await fetch(`${base}/ui/assets/index-Ab12Cd34.js`, {
      headers: { 'Accept-Encoding': 'identity' },
    });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toMatch(/javascript/);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await plain.text()).toBe(SCRIPT);
    const zipped = await fetch(`${base}/ui/assets/index-Ab12Cd34.js`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toMatch(/Accept-Encoding/i);
    expect(await zipped.text()).toBe(SCRIPT); // fetch decodes it
  });

  it('answers a missing asset 404 with a problem, never the app (a browser would run HTML as script)', async () => {
    const response = await fetch(`${base}/ui/assets/index-Old00000.js`);
    expect(response.status).toBe(404);
    const problem = await problemOf(response);
    expect(problem.detail).toContain('/ui/assets/index-Old00000.js');
    expect(problem.resolution).toMatch(/Reload/);
  });

  it('serves top-level build files and answers 304 to a copy that is still current', async () => {
    const icon = await fetch(`${base}/ui/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/svg/);
    const first = await fetch(`${base}/ui/`);
    const lastModified = first.headers.get('last-modified')!;
    expect(lastModified).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request, which
    // rightly forbids a 304; a browser revalidating a no-cache page does not.
    const again = await new Promise<{ status: number; body: string }>((done, fail) => {
      get(`${base}/ui/`, { headers: { 'If-Modified-Since': lastModified } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
      }).on('error', fail);
    });
    expect(again).toEqual({ status: 304, body: '' });
  });

  it('never leaves the build: dot files, traversal and encoded traversal get the app, not the file', async () => {
    for (const path of [
      '/ui/.env',
      '/ui/../package.json',
      '/ui/%2e%2e/%2e%2e/package.json',
      '/ui/assets/..%2f..%2fpackage.json',
    ]) {
      const response = await fetch(`${base}${path}`);
      const text = await response.text();
      expect(text, path).not.toContain('SECRET');
      expect(text, path).not.toContain('"name"');
    }
  });

  it('refuses other methods with 405 and Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await fetch(`${base}/ui/`, { method, body: method === 'DELETE' ? undefined : 'x' });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      await problemOf(response);
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await fetch(`${base}/ui/nodes`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('says how to build the dashboard when there is no build, and the API still answers', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'dashboard-none-'));
    const bare = await serve({ dir: empty });
    const response = await fetch(`${bare}/ui/`);
    expect(response.status).toBe(503);
    const problem = await problemOf(response);
    expect(problem.resolution).toContain('npm run build -w @switchyard/dashboard');
    expect((await fetch(`${bare}/api/v1/health`)).status).toBe(200);
    rmSync(empty, { recursive: true, force: true });
  });

  it('leaves other paths to the API: /uix is not the dashboard', async () => {
    const response = await fetch(`${base}/uix`, { headers: { 'X-API-Key': 'k-dashboard' } });
    expect(response.status).toBe(404);
    await problemOf(response);
  });
});

describe('finding the build', () => {
  it('finds apps/dashboard/dist from anywhere below the repository root, or nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'dashboard-repo-'));
    const deep = join(root, 'apps', 'control-plane', 'dist');
    mkdirSync(deep, { recursive: true });
    expect(defaultDashboardDir(deep)).toBeUndefined();
    mkdirSync(join(root, 'apps', 'dashboard', 'dist'), { recursive: true });
    writeFileSync(join(root, 'apps', 'dashboard', 'dist', 'index.html'), INDEX);
    expect(defaultDashboardDir(deep)).toBe(join(root, 'apps', 'dashboard', 'dist'));
    rmSync(root, { recursive: true, force: true });
  });
});
