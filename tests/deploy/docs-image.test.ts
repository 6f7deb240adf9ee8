/**
 * The docs container image: apps/docs/Dockerfile, reproduced step by step without a container
 * engine (tests/deploy/image-steps.ts; its build stage runs the full astro build in the stage's
 * copy; image-cache.ts reuses that build while its inputs are unchanged), must give an image that
 * holds only runtime files, was built for the SITE_URL build argument, turns healthy by its own
 * HEALTHCHECK, serves pages, the llms files and the search API, and stops cleanly on its STOPSIGNAL. With DATABASE_URL set, run shares use a throwaway
 * PostgreSQL database; without it, PGlite in the /data volume.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';
import { type CachedImage, reproduceCachedImage } from './image-cache.ts';
import type { ReproducedContainer } from './image-steps.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The public address the image is built for (`--build-arg SITE_URL=...`); nothing resolves it. */
const SITE_URL = 'https://docs.example.test';

let image: CachedImage;
let container: ReproducedContainer | undefined;
let database: ThrowawayDatabase | undefined;
let url: string;

beforeAll(async () => {
  const started = performance.now();
  image = await reproduceCachedImage({
    context: REPO_ROOT,
    dockerfile: 'apps/docs/Dockerfile',
    buildArgs: { SITE_URL },
  });
  // Reported, not asserted: how long each step of the image took on this machine.
  console.info(
    [
      image.cached
        ? `docs image: built before from the same inputs, reused in ${Math.round(performance.now() - started)} ms; its build:`
        : `docs image reproduced in ${Math.round(performance.now() - started)} ms:`,
      ...image.timings.map((t) => `  ${t.stage}: ${t.instruction} ${Math.round(t.ms)} ms`),
    ].join('\n'),
  );
  database = await throwawayDatabase('sy_docs_image');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // As `docker run -p <port>:<port> -e DOCS_PORT=<port> [-e DATABASE_URL=...]`: a free port
  // instead of 4321, since the host is shared; every other setting is the image's.
  container = image.start({
    DOCS_PORT: String(port),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  });
  await container.untilHealthy();
  // Two npm installs and the app's build, on two shared cores: minutes, not the default hook budget.
}, 900_000);

afterAll(async () => {
  await container?.process.stop('SIGKILL');
  await database?.drop();
});

describe('the docs Dockerfile, as written', () => {
  it('builds on the slim Node 20 image in two stages and runs as the non-root node user', () => {
    expect(image.stages.map((s) => [s.name, s.from])).toEqual([
      ['build', 'node:20-bookworm-slim'],
      ['runtime', 'node:20-bookworm-slim'],
    ]);
    expect(image.final.user).toBe('node');
    expect(image.final.chowns).toEqual([{ destination: '/data', owner: 'node:node' }]);
  });

  it('declares production settings, its port, its data volume, a graceful stop and node as PID 1', () => {
    expect(image.final.env).toMatchObject({
      NODE_ENV: 'production',
      SITE_URL,
      DOCS_HOST: '0.0.0.0',
      DOCS_PORT: '4321',
      SWITCHYARD_DATA_DIR: '/data',
    });
    expect(image.volumes).toEqual(['/data']);
    expect(image.exposed).toEqual(['4321']);
    expect(image.stopSignal).toBe('SIGTERM');
    expect(image.cmd).toEqual(['node', '--enable-source-maps', 'apps/docs/dist/front-server.js']);
    expect(image.healthcheck?.command[0]).toBe('node');
  });
});

describe('the reproduced docs image', () => {
  it('holds only runtime files: manifests, a production install, the built site and the server bundle', () => {
    const app = image.hostPath('/app');
    expect(readdirSync(app).sort()).toEqual([
      'apps',
      'node_modules',
      'package-lock.json',
      'package.json',
      'packages',
      'tests',
    ]);
    const withoutInstalls = (dir: string) =>
      readdirSync(join(app, dir))
        .filter((f) => f !== 'node_modules')
        .sort();
    expect(withoutInstalls('apps/docs')).toEqual(['dist', 'package.json']);
    expect(withoutInstalls('apps/docs/dist')).toEqual([
      'client',
      'front-server.js',
      'front-server.js.map',
      'server',
    ]);
    expect(withoutInstalls('apps/control-plane')).toEqual(['package.json']);
    expect(withoutInstalls('packages/shared')).toEqual(['package.json']);
    // npm nests a package in a workspace's own node_modules when versions differ: that is an install too.
    // (tsx and typescript are there, as optional peers of astro's vite and tsconfck that the lock
    // file satisfies; nothing the server runs imports them. The control-plane image has neither.)
    const installs = ['node_modules', 'apps/docs/node_modules', 'packages/shared/node_modules'];
    for (const tool of ['vitest', '@biomejs/biome', 'turbo', 'playwright-core', 'fast-check', 'autocannon']) {
      for (const install of installs) {
        expect(existsSync(join(app, install, tool)), `${tool} is installed in ${install}`).toBe(false);
      }
    }
  });

  it('passes its HEALTHCHECK, with the shares database where the settings put it', async () => {
    expect(await container!.checkHealth()).toEqual({ exitCode: 0, output: '' });
    // Embedded PGlite lives in the /data volume; with PostgreSQL nothing is written there.
    expect(existsSync(image.hostPath('/data/docs'))).toBe(database!.url === undefined);
  });

  it('serves a page, in HTML and as markdown', async () => {
    const html = await fetch(`${url}/docs/getting-started/quickstart`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await html.text()).toContain(
      `<link rel="canonical" href="${SITE_URL}/docs/getting-started/quickstart"`,
    );
    const markdown = await fetch(`${url}/docs/getting-started/quickstart`, {
      headers: { accept: 'text/markdown' },
    });
    expect(markdown.status).toBe(200);
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
  });

  it('serves /llms-full.txt built for its SITE_URL', async () => {
    const response = await fetch(`${url}/llms-full.txt`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain(`${SITE_URL}/docs/getting-started/quickstart`);
  });

  it('answers the search API with links on its SITE_URL', async () => {
    const response = await fetch(`${url}/api/v1/search?q=webhook&limit=3`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { total: number; results: Array<{ url: string }> };
    expect(body.total).toBeGreaterThan(0);
    expect(body.results.length).toBeGreaterThan(0);
    for (const result of body.results) expect(result.url.startsWith(`${SITE_URL}/docs/`)).toBe(true);
  });

  it("publishes a run share and renders its page (the build's server entry runs on the production install)", async () => {
    const publish = await fetch(`${url}/api/v1/shares`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        version: 1,
        workflow_id: 'wf_image',
        title: 'Published to the reproduced image',
        generated_at: '2026-11-22T05:00:00Z',
        totals: {},
        nodes: [],
        edges: [],
      }),
    });
    const share = (await publish.json()) as { id: string; url: string };
    expect(publish.status, JSON.stringify(share)).toBe(201);
    expect(share.url).toBe(`${SITE_URL}/s/${share.id}`);
    const page = await fetch(`${url}/s/${share.id}`);
    const html = await page.text();
    expect(page.status, `${html.slice(0, 500)}\n${container!.process.output().slice(-2000)}`).toBe(200);
    expect(html).toContain('Published to the reproduced image');
  });

  it('ends with exit code 0 on its STOPSIGNAL', async () => {
    const status = await container!.stop();
    expect(status, container!.process.output()).toEqual({ code: 0, signal: null });
    // The HEALTHCHECK is no formality: with the server gone it fails.
    expect((await container!.checkHealth()).exitCode).not.toBe(0);
    // It wrote only where its non-root user may (the /data volume it owns), or it would fail in
    // the image with EACCES, which running as this host's user cannot show.
    expect(container!.writtenWithoutPermission()).toEqual([]);
    container = undefined;
  });
});
