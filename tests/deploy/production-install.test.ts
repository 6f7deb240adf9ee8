/**
 * The plain-Node deployment of the built artifacts, without a container. A scratch
 * directory gets only what a production install needs (the root manifest and lock file, every
 * workspace's manifest, each app's build from this checkout), then
 *
 *   npm ci --omit=dev --no-audit --no-fund -w @switchyard/control-plane -w @switchyard/docs
 *   node --enable-source-maps apps/control-plane/dist/server.js
 *   node --enable-source-maps apps/docs/dist/front-server.js
 *
 * and both answer: the control plane's health, a docs page, the search API and a run share's page
 * (the astro server entry of the build, which imports packages of its own). The container images
 * (control-plane-image.test.ts, docs-image.test.ts) build the apps themselves; this is the path
 * for a machine that receives a build. With DATABASE_URL set both use one throwaway PostgreSQL
 * database (their migrations are kept apart); without it, PGlite under the data directory.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MANIFESTS = [
  'package.json',
  'package-lock.json',
  'packages/shared/package.json',
  'packages/client/package.json',
  'apps/control-plane/package.json',
  'apps/dashboard/package.json',
  'apps/docs/package.json',
  'tests/package.json',
];
const BUILDS = [
  'apps/control-plane/dist/server.js',
  'apps/control-plane/dist/server.js.map',
  'apps/docs/dist/client',
  'apps/docs/dist/server',
  'apps/docs/dist/front-server.js',
  'apps/docs/dist/front-server.js.map',
];

let scratch: string;
let database: ThrowawayDatabase | undefined;
let controlPlane: { process: RunningProcess; url: string } | undefined;
let docs: { process: RunningProcess; url: string } | undefined;

/** Starts `node --enable-source-maps <entry>` in the scratch directory; resolves once `path` answers 200. */
async function startApp(
  entry: string,
  env: Record<string, string>,
  port: number,
  path: string,
): Promise<{ process: RunningProcess; url: string }> {
  const child = startNode(['--enable-source-maps', entry], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      SWITCHYARD_DATA_DIR: join(scratch, 'data'),
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  let last = 'no answer yet';
  for (;;) {
    if (child.child.exitCode !== null || child.child.signalCode !== null) {
      throw new Error(`${entry} exited before it answered; its output:\n${child.output()}`);
    }
    try {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(2_000) });
      last = `${response.status}`;
      if (response.status === 200) return { process: child, url };
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) {
      await child.stop('SIGKILL');
      throw new Error(
        `${entry} never answered ${path} with 200 (last: ${last}); its output:\n${child.output()}`,
      );
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

beforeAll(async () => {
  for (const build of BUILDS) {
    if (!existsSync(join(REPO_ROOT, build))) {
      throw new Error(`No build at ${build}: build both apps first (npm run build).`);
    }
  }
  scratch = mkdtempSync(join(tmpdir(), 'sy-production-install-'));
  for (const file of [...MANIFESTS, ...BUILDS]) {
    mkdirSync(join(scratch, file, '..'), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(scratch, file), { recursive: true });
  }
  mkdirSync(join(scratch, 'data'));
  const started = performance.now();
  await run(
    'npm',
    [
      'ci',
      '--omit=dev',
      '--no-audit',
      '--no-fund',
      '-w',
      '@switchyard/control-plane',
      '-w',
      '@switchyard/docs',
    ],
    { cwd: scratch, maxBuffer: 16 * 1024 * 1024 },
  );
  // Reported, not asserted.
  console.info(`production install of both apps: ${Math.round(performance.now() - started)} ms`);

  database = await throwawayDatabase('sy_production_install');
  const databaseEnv: Record<string, string> = database.url ? { DATABASE_URL: database.url } : {};
  const controlPlanePort = await freePort();
  const docsPort = await freePort();
  [controlPlane, docs] = await Promise.all([
    startApp(
      'apps/control-plane/dist/server.js',
      { CONTROL_PLANE_HOST: '127.0.0.1', CONTROL_PLANE_PORT: String(controlPlanePort), ...databaseEnv },
      controlPlanePort,
      '/api/v1/health',
    ),
    startApp(
      'apps/docs/dist/front-server.js',
      { DOCS_HOST: '127.0.0.1', DOCS_PORT: String(docsPort), ...databaseEnv },
      docsPort,
      '/robots.txt',
    ),
  ]);
}, 600_000);

afterAll(async () => {
  await Promise.all([controlPlane?.process.stop('SIGKILL'), docs?.process.stop('SIGKILL')]);
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('a production install from a scratch directory', () => {
  it('installs no development tools, and tsx only as an optional peer of a third-party package', async () => {
    for (const tool of ['vitest', '@biomejs/biome', 'turbo', 'playwright-core', 'autocannon', 'fast-check']) {
      expect(existsSync(join(scratch, 'node_modules', tool)), `${tool} is installed`).toBe(false);
    }
    // astro's vite names tsx as an optional peer, which the lock file satisfies (tsx is a root
    // development tool), so npm keeps it; nothing of ours depends on it, and nothing runs it.
    const { stdout } = await run('npm', ['explain', 'tsx', '--json'], { cwd: scratch });
    const explained = JSON.parse(stdout) as Array<{ dependents: Array<{ type: string; name: string }> }>;
    const productionEdges = explained
      .flatMap((node) => node.dependents)
      .filter((edge) => edge.type !== 'dev');
    expect(productionEdges.length).toBeGreaterThan(0);
    for (const edge of productionEdges) expect(edge.type, JSON.stringify(edge)).toBe('peerOptional');
  });

  it('runs the control plane with node: it reports healthy', async () => {
    const response = await fetch(`${controlPlane!.url}/api/v1/health`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe('healthy');
  });

  it('runs the docs server with node: a page, the search API and a run share page answer', async () => {
    const page = await fetch(`${docs!.url}/docs/getting-started/quickstart`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);

    const search = await fetch(`${docs!.url}/api/v1/search?q=heartbeat&limit=2`);
    expect(search.status).toBe(200);
    expect(((await search.json()) as { total: number }).total).toBeGreaterThan(0);

    const publish = await fetch(`${docs!.url}/api/v1/shares`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        version: 1,
        workflow_id: 'wf_production_install',
        title: 'Published to a production install',
        generated_at: '2026-11-22T05:00:00Z',
        totals: {},
        nodes: [],
        edges: [],
      }),
    });
    const share = (await publish.json()) as { id: string };
    expect(publish.status, JSON.stringify(share)).toBe(201);
    const sharePage = await fetch(`${docs!.url}/s/${share.id}`);
    const html = await sharePage.text();
    expect(sharePage.status, `${html.slice(0, 500)}\n${docs!.process.output().slice(-2000)}`).toBe(200);
    expect(html).toContain('Published to a production install');
  });

  it('stops both on SIGTERM with exit code 0', async () => {
    const [controlPlaneExit, docsExit] = await Promise.all([
      controlPlane!.process.stop('SIGTERM'),
      docs!.process.stop('SIGTERM'),
    ]);
    expect(controlPlaneExit, controlPlane!.process.output()).toEqual({ code: 0, signal: null });
    expect(docsExit, docs!.process.output()).toEqual({ code: 0, signal: null });
  });
});
