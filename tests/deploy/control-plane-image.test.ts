/**
 * The control-plane container image: apps/control-plane/Dockerfile, reproduced step by step without a
 * container engine (tests/deploy/image-steps.ts; image-cache.ts reuses a build while its inputs are
 * unchanged), must give an image that holds only runtime files, turns healthy by its own
 * HEALTHCHECK, routes a call to a real agent, and stops cleanly on its STOPSIGNAL. What an engine
 * would do and the harness cannot (the base image, the USER switch, --chown) is checked from the
 * file itself. With DATABASE_URL set the container gets a throwaway
 * PostgreSQL database (as `docker run -e DATABASE_URL=...`); without it, PGlite in its /data volume.
 */
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';
import { type CachedImage, reproduceCachedImage } from './image-cache.ts';
import { type ReproducedContainer, type ReproducedImage, reproduceImage } from './image-steps.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_ID = `image-agent-${randomBytes(3).toString('hex')}`;

let scratch: string;
let image: CachedImage;
let container: ReproducedContainer | undefined;
let database: ThrowawayDatabase | undefined;
let url: string;
let agent: Server | undefined;
/** Calls the agent received, with the headers the control plane sent. */
const agentCalls: Array<{ path: string; body: any; executionId: string | undefined }> = [];

/** A real agent over HTTP: one reasoner that adds two numbers, and the health endpoint. */
async function startAgent(): Promise<string> {
  agent = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') {
      return send(200, { status: 'healthy', node_id: NODE_ID, version: '1.0.0' });
    }
    if (req.method === 'POST' && req.url === '/reasoners/add') {
      const input = text === '' ? {} : JSON.parse(text);
      agentCalls.push({ path: req.url, body: input, executionId: req.headers['x-execution-id'] as string });
      return send(200, { sum: Number(input.a) + Number(input.b) });
    }
    send(404, { error: `no ${req.method} ${req.url}` });
  });
  await new Promise<void>((done) => agent!.listen(0, '127.0.0.1', done));
  const { port } = agent.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sy-control-plane-image-'));
  const started = performance.now();
  image = await reproduceCachedImage({
    context: REPO_ROOT,
    dockerfile: 'apps/control-plane/Dockerfile',
  });
  // Reported, not asserted: how long each step of the image took on this machine.
  console.info(
    [
      image.cached
        ? `control-plane image: built before from the same inputs, reused in ${Math.round(performance.now() - started)} ms; its build:`
        : `control-plane image reproduced in ${Math.round(performance.now() - started)} ms:`,
      ...image.timings.map((t) => `  ${t.stage}: ${t.instruction} ${Math.round(t.ms)} ms`),
    ].join('\n'),
  );
  database = await throwawayDatabase('sy_cp_image');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // As `docker run -p <port>:<port> -e CONTROL_PLANE_PORT=<port> [-e DATABASE_URL=...]`: a free
  // port instead of 8080, since the host is shared; every other setting is the image's.
  container = image.start({
    CONTROL_PLANE_PORT: String(port),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  });
  await container.untilHealthy();
  // Two npm installs and the app's build, on two shared cores: minutes, not the default hook budget.
}, 600_000);

afterAll(async () => {
  await container?.process.stop('SIGKILL');
  await new Promise((done) => (agent ? agent.close(done) : done(undefined)));
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the control-plane Dockerfile, as written', () => {
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
      CONTROL_PLANE_HOST: '0.0.0.0',
      CONTROL_PLANE_PORT: '8080',
      SWITCHYARD_DATA_DIR: '/data',
    });
    expect(image.volumes).toEqual(['/data']);
    expect(image.exposed).toEqual(['8080']);
    expect(image.stopSignal).toBe('SIGTERM');
    expect(image.cmd).toEqual(['node', '--enable-source-maps', 'apps/control-plane/dist/server.js']);
    expect(image.healthcheck?.command[0]).toBe('node');
  });
});

describe('the reproduced control-plane image', () => {
  it('holds only runtime files: manifests, a production install and the bundle', () => {
    const app = image.hostPath('/app');
    expect(readdirSync(app).sort()).toEqual([
      'apps',
      'node_modules',
      'package-lock.json',
      'package.json',
      'packages',
      'tests',
    ]);
    // npm nests a package in a workspace's own node_modules when versions differ: that is an install too.
    const installs = ['node_modules', 'apps/control-plane/node_modules', 'packages/shared/node_modules'];
    expect(
      readdirSync(join(app, 'apps/control-plane'))
        .filter((f) => f !== 'node_modules')
        .sort(),
    ).toEqual(['dist', 'package.json']);
    expect(readdirSync(join(app, 'apps/control-plane/dist')).sort()).toEqual(['server.js', 'server.js.map']);
    // The dashboard is its built files alone: its packages are bundled into them.
    expect(
      readdirSync(join(app, 'apps/dashboard'))
        .filter((f) => f !== 'node_modules')
        .sort(),
    ).toEqual(['dist', 'package.json']);
    expect(readdirSync(join(app, 'apps/dashboard/dist'))).toContain('index.html');
    expect(readdirSync(join(app, 'packages/shared')).filter((f) => f !== 'node_modules')).toEqual([
      'package.json',
    ]);
    for (const tool of [
      'tsx',
      'typescript',
      'vitest',
      'esbuild',
      '@biomejs/biome',
      'turbo',
      'astro',
      'vite',
      'react',
    ]) {
      for (const install of installs) {
        expect(existsSync(join(app, install, tool)), `${tool} is installed in ${install}`).toBe(false);
      }
    }
    // The packages the bundle imports are there.
    for (const runtime of ['koa', 'pg', '@electric-sql/pglite', 'pino']) {
      expect(existsSync(join(app, 'node_modules', runtime, 'package.json')), `${runtime} is missing`).toBe(
        true,
      );
    }
  });

  it('serves the dashboard at /ui/ with its CSP, deep links included', async () => {
    for (const path of ['/ui/', '/ui/executions/exec_image']) {
      const page = await fetch(`${url}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      const html = await page.text();
      const script = /<script[^>]+src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script, html).toBeDefined();
      const asset = await fetch(`${url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toContain('immutable');
    }
  });

  it('passes its HEALTHCHECK, with its database where the settings put it', async () => {
    expect(await container!.checkHealth()).toEqual({ exitCode: 0, output: '' });
    const health = await fetch(`${url}/api/v1/health`);
    expect(health.status).toBe(200);
    // Embedded PGlite lives in the /data volume; with PostgreSQL nothing is written there.
    expect(existsSync(image.hostPath('/data/control-plane'))).toBe(database!.url === undefined);
  });

  it('routes a call to a real agent and answers its result', async () => {
    const base = await startAgent();
    const register = await fetch(`${url}/api/v1/nodes/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: NODE_ID,
        version: '1.0.0',
        base_url: base,
        reasoners: [
          {
            id: 'add',
            input_schema: {
              type: 'object',
              properties: { a: { type: 'number' }, b: { type: 'number' } },
              required: ['a', 'b'],
            },
            output_schema: { type: 'object', properties: { sum: { type: 'number' } } },
            tags: [],
          },
        ],
        skills: [],
      }),
    });
    expect(register.status, await register.clone().text()).toBeLessThan(300);
    const heartbeat = await fetch(`${url}/api/v1/nodes/${NODE_ID}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'ready', version: '1.0.0', timestamp: new Date().toISOString() }),
    });
    expect(heartbeat.status, await heartbeat.clone().text()).toBeLessThan(300);

    const response = await fetch(`${url}/api/v1/execute/${NODE_ID}.add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { a: 19, b: 23 } }),
    });
    const body = (await response.json()) as { status: string; result: unknown; execution_id: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ status: 'succeeded', result: { sum: 42 } });
    // The agent really ran it: the control plane called it with this execution's id.
    expect(agentCalls).toEqual([
      { path: '/reasoners/add', body: { a: 19, b: 23 }, executionId: body.execution_id },
    ]);
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

/** Reproduces a small Dockerfile in a context of its own: how the harness reads what it is given. */
async function reproduceSmall(dockerfile: string, files: Record<string, string>): Promise<ReproducedImage> {
  const context = join(scratch, `small-${randomBytes(3).toString('hex')}`);
  for (const [path, text] of Object.entries({ ...files, Dockerfile: dockerfile })) {
    mkdirSync(join(context, path, '..'), { recursive: true });
    writeFileSync(join(context, path), text);
  }
  return reproduceImage({ context, dockerfile: 'Dockerfile', scratch: join(context, '.stages') });
}

describe('the image harness refuses what it cannot reproduce', () => {
  const base = 'FROM node:20-bookworm-slim AS only\nWORKDIR /app\n';

  it('an instruction it does not know', async () => {
    await expect(reproduceSmall(`${base}ADD a.txt ./\nCMD ["node"]\n`, { 'a.txt': 'a' })).rejects.toThrow(
      /Dockerfile:3 ADD: this instruction is not emulated/,
    );
  });

  it('a RUN line with an absolute path, which would reach the host', async () => {
    await expect(reproduceSmall(`${base}RUN touch /etc/switchyard\nCMD ["node"]\n`, {})).rejects.toThrow(
      /"\/etc\/switchyard" is an absolute path/,
    );
  });

  it('an absolute path after "=" or a redirection, but not a URL', async () => {
    await expect(
      reproduceSmall(`${base}RUN npm install --prefix=/usr/local x\nCMD ["node"]\n`, {}),
    ).rejects.toThrow(/"\/usr\/local" is an absolute path/);
    await expect(reproduceSmall(`${base}RUN echo x >/tmp/y\nCMD ["node"]\n`, {})).rejects.toThrow(
      /"\/tmp\/y" is an absolute path/,
    );
    const url = await reproduceSmall(`${base}RUN echo https://example.test/x > url.txt\nCMD ["node"]\n`, {});
    expect(readFileSync(url.hostPath('/app/url.txt'), 'utf8')).toBe('https://example.test/x\n');
  });

  it('and lists what the running process wrote where its USER could not', async () => {
    const small = await reproduceSmall(
      `${base}RUN mkdir -p data\nUSER node\nCMD ["node", "-e", "require('fs').writeFileSync('beside-the-code.txt', 'x'); require('fs').writeFileSync('data/x.txt', 'x')"]\n`,
      {},
    );
    const run = small.start();
    expect(await run.process.exited).toEqual({ code: 0, signal: null });
    // Neither /app nor /app/data was given to the node user (no COPY --chown): both writes count.
    expect(run.writtenWithoutPermission()).toEqual([
      '/app',
      '/app/beside-the-code.txt',
      '/app/data',
      '/app/data/x.txt',
    ]);
  });

  it('but not what it wrote into a COPY --chown destination of that user', async () => {
    const small = await reproduceSmall(
      `FROM node:20-bookworm-slim AS build\nWORKDIR /app\nRUN mkdir -p data\n${base}COPY --from=build --chown=node:node /app/data data\nUSER node\nCMD ["node", "-e", "require('fs').writeFileSync('data/x.txt', 'x')"]\n`,
      {},
    );
    expect(small.final.chowns).toEqual([{ destination: '/app/data', owner: 'node:node' }]);
    const run = small.start();
    expect(await run.process.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(small.hostPath('/app/data/x.txt'))).toBe(true);
    expect(run.writtenWithoutPermission()).toEqual([]);
  });

  it('a RUN mount other than a cache', async () => {
    await expect(
      reproduceSmall(`${base}RUN --mount=type=secret,id=npm true\nCMD ["node"]\n`, {}),
    ).rejects.toThrow(/--mount=type=secret,id=npm is not emulated/);
  });

  it('a COPY source that .dockerignore keeps out of the context', async () => {
    await expect(
      reproduceSmall(`${base}COPY secret.txt ./\nCMD ["node"]\n`, {
        '.dockerignore': 'secret.txt\n',
        'secret.txt': 's',
      }),
    ).rejects.toThrow(/secret.txt is not in the build context/);
  });

  it('and copies a directory without what .dockerignore excludes, keeping its exceptions', async () => {
    const small = await reproduceSmall(
      `${base}COPY src src\nRUN cat src/keep.txt > seen.txt\nCMD ["node"]\n`,
      {
        '.dockerignore': 'src/node_modules\nsrc/skip/**\n!src/skip/wanted.txt\n',
        'src/keep.txt': 'kept',
        'src/node_modules/x/index.js': 'x',
        'src/skip/other.txt': 'o',
        'src/skip/wanted.txt': 'w',
      },
    );
    expect(readdirSync(small.hostPath('/app/src')).sort()).toEqual(['keep.txt', 'skip']);
    expect(readdirSync(small.hostPath('/app/src/skip'))).toEqual(['wanted.txt']);
    expect(readFileSync(small.hostPath('/app/seen.txt'), 'utf8')).toBe('kept');
  });
});
