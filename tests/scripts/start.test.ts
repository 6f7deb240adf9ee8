/**
 * `npm start` runs the docs build, then scripts/start.mjs. These tests run start.mjs itself as a
 * child process, as a user would, on free ports, against the docs site already built for the test
 * run (turbo builds it before `npm test`). Which docs URL it picks for each combination of settings
 * is tested in docs-site-url.test.ts, without starting servers.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { freePort } from '../support/free-port.ts';
import { throwawayDatabase } from '../support/throwaway-database.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DIST_DIR = join(ROOT, 'apps/docs/dist');
/** What start.mjs prints once both apps listen. */
const READY = /Switchyard is running/;

interface Started {
  process: RunningProcess;
  controlPlane: string;
  docs: string;
  cleanup(): Promise<void>;
}

/**
 * Runs `node scripts/start.mjs` from `root` with only the given settings (plus PATH and HOME), so
 * a developer's SITE_URL or SWITCHYARD_DOCS_URL never leaks in, and waits until both apps listen.
 */
async function startSwitchyard(settings: Record<string, string>, root = ROOT): Promise<Started> {
  if (!existsSync(join(DIST_DIR, 'client', 'index.html'))) {
    throw new Error(`No built site at ${DIST_DIR}: run \`npm run build -w @switchyard/docs\` first.`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-start-'));
  const database = await throwawayDatabase('sy_start');
  const controlPlanePort = await freePort();
  const docsPort = await freePort();
  const child = startNode([join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SWITCHYARD_DATA_DIR: dataDir,
      CONTROL_PLANE_PORT: String(controlPlanePort),
      DOCS_PORT: String(docsPort),
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      ...settings,
    },
  });
  const cleanup = async () => {
    await child.stop('SIGINT');
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await child.waitFor(READY, 90_000);
  } catch (error) {
    await cleanup();
    throw error;
  }
  return {
    process: child,
    controlPlane: `http://127.0.0.1:${controlPlanePort}`,
    docs: `http://127.0.0.1:${docsPort}`,
    cleanup,
  };
}

/** The problem document the control plane answers for a path it does not serve. */
async function unknownPathProblem(controlPlane: string): Promise<any> {
  const response = await fetch(`${controlPlane}/api/v1/no-such-path`);
  expect(response.status).toBe(404);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return response.json();
}

describe('node scripts/start.mjs', () => {
  describe('with DOCS_PORT and CONTROL_PLANE_PORT set', () => {
    let started: Started;
    beforeAll(async () => {
      started = await startSwitchyard({});
    });
    afterAll(async () => {
      await started?.cleanup();
    });

    it('announces both apps at the ports it was given', () => {
      expect(started.process.output()).toMatch(
        new RegExp(
          `control plane +${started.controlPlane}   health: ${started.controlPlane}/api/v1/health\n`,
        ),
      );
      expect(started.process.output()).toMatch(new RegExp(`docs site +${started.docs}\n`));
    });

    it('links control-plane errors to the docs site it started, which serves the explanation', async () => {
      const problem = await unknownPathProblem(started.controlPlane);
      const expected = `${started.docs}/docs/reference/errors#not_found`;
      expect(problem).toMatchObject({ code: 'not_found', type: expected, documentation_url: expected });

      const page = await fetch(problem.documentation_url, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('id="not_found"');
    });

    it('stops both apps on Ctrl-C and exits 0', async () => {
      const exit = await started.process.stop('SIGINT');
      expect(exit).toEqual({ code: 0, signal: null });
      await expect(fetch(`${started.controlPlane}/api/v1/health`)).rejects.toThrow();
      await expect(fetch(started.docs)).rejects.toThrow();
    });
  });

  // Issue 8: from a checkout whose path has a space, `npm start` used to print nothing and stop:
  // each server's main-module check compared import.meta.url, where the space is %20, with
  // `file://${process.argv[1]}`, where it is not, so neither server ever listened.
  describe('from a checkout whose path has a space', () => {
    let checkout: string;
    let started: Started;
    beforeAll(async () => {
      checkout = join(mkdtempSync(join(tmpdir(), 'sy-space-')), 'my switchyard');
      copyCheckout(checkout);
      started = await startSwitchyard({ DOCS_DIST_DIR: DIST_DIR }, checkout);
    });
    afterAll(async () => {
      await started?.cleanup();
      if (checkout) rmSync(resolve(checkout, '..'), { recursive: true, force: true });
    });

    it('starts both apps', async () => {
      const health = await fetch(`${started.controlPlane}/api/v1/health`);
      expect(health.status).toBe(200);
      const home = await fetch(started.docs, { headers: { accept: 'text/html' } });
      expect(home.status).toBe(200);
    });
  });
});

/** Directories a checkout does not hold (installed, built, generated or run-time data). */
const NOT_IN_A_CHECKOUT = new Set(['node_modules', 'dist', '.astro', '.turbo', '.data', 'test-results']);

/**
 * Copies what start.mjs runs (the script, both apps' sources and their server builds) to `target`. Installed
 * dependencies are linked, not copied: npm links workspaces the same way, and the main module of
 * each server, whose check is under test, is then a real file under `target`.
 */
function copyCheckout(target: string): void {
  mkdirSync(target, { recursive: true });
  for (const entry of ['package.json', 'tsconfig.base.json', 'scripts', 'apps']) {
    cpSync(join(ROOT, entry), join(target, entry), {
      recursive: true,
      filter: (source) => !NOT_IN_A_CHECKOUT.has(basename(source)),
    });
  }
  for (const modules of ['node_modules', 'apps/control-plane/node_modules', 'apps/docs/node_modules']) {
    if (existsSync(join(ROOT, modules))) symlinkSync(join(ROOT, modules), join(target, modules), 'dir');
  }
  // The servers' builds, which start.mjs runs (`npm start` builds them first); the docs site's
  // pages come from DOCS_DIST_DIR.
  for (const bundle of ['apps/control-plane/dist/server.js', 'apps/docs/dist/front-server.js']) {
    mkdirSync(dirname(join(target, bundle)), { recursive: true });
    for (const file of [bundle, `${bundle}.map`]) copyFileSync(join(ROOT, file), join(target, file));
  }
}
