import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, startNode } from '../support/child-process.ts';
import { seedDataDir } from '../support/data-dir.ts';
import { type BackgroundCommand, runShell, shellEnv, startShell } from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { NGINX_INSTALL_TIMEOUT_MS, NGINX_PACKAGES, nginxExecutable } from '../support/nginx.ts';
import { operationsPage, ROOT, runPageCommand, whereOf } from '../support/operations-pages.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

/**
 * deploy/nginx against the real build (apps/docs/dist/client) and the real front server: for a
 * table of paths × Accept headers × methods, nginx's status, content type, Vary, redirect target,
 * cache policy and body must be the front server's; through docs-with-api.conf the API answers
 * from the front server; and every command of content/operations/static-hosting.md runs as shown.
 */

const CONFIG_DIR = join(ROOT, 'deploy/nginx');
const CLIENT_DIR = join(ROOT, 'apps/docs/dist/client');
const FRONT_SERVER_JS = 'apps/docs/dist/front-server.js';

/** How long a server may take to answer its first request. */
const START_TIMEOUT_MS = 120_000;
/** For hooks that start a front server and nginx, one after the other. */
const HOOK_TIMEOUT_MS = 2 * START_TIMEOUT_MS + 10_000;

let nginx: string;
let scratch: string;
/** The copy of the build nginx serves (see beforeAll). */
let siteCopy: string;

/** One HTTP exchange as it went over the wire: no Accept-Encoding unless the request names one. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', agent: false });
    // setHeader with an array sends the field once per value, as a client repeating Accept does.
    for (const [name, value] of Object.entries(options.headers ?? {})) req.setHeader(name, value);
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    // A server may answer before reading a large body and close: the body's last writes then fail
    // (EPIPE, ECONNRESET) while the answer is already here, and the answer is what a client sees.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (answered && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      reject(error);
    });
    req.end(options.body);
  });
}

/** Waits until something answers HTTP on the port; fails with `output()` when `exited()` first. */
async function waitForHttp(port: number, what: string, output: () => string, exited: () => boolean) {
  // A bound, not a measurement: a front server creating its embedded database on two busy cores
  // has taken over 30 s to listen.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await send(port, '/robots.txt');
      return;
    } catch (error) {
      if (exited() || Date.now() > deadline)
        throw new Error(
          `${what} did not answer on port ${port} (${(error as Error).message}); it printed:\n${output()}`,
        );
      await new Promise((done) => setTimeout(done, 50));
    }
  }
}

/**
 * Whether a background command has exited, for waitForHttp: BackgroundCommand only tells through
 * waitFor, which rejects once the command exits before printing the text (one it never prints).
 * Without it an nginx that stops at once on a broken configuration was waited for two minutes.
 */
function exitedOf(command: BackgroundCommand): () => boolean {
  let exited = false;
  // Past waitForHttp's own deadline, so a rejection before it can only be the exit.
  command.waitFor('\u0000never printed\u0000', START_TIMEOUT_MS + 60_000).catch(() => {
    exited = true;
  });
  return () => exited;
}

/** A front server from the build, as production runs it; its budget is raised for the tables. */
async function startFrontServer(port: number, env: Record<string, string> = {}): Promise<RunningProcess> {
  const dataDir = mkdtempSync(join(scratch, 'front-data-'));
  if (!env.DATABASE_URL) await seedDataDir(dataDir, ['docs']);
  const server = startNode(['--enable-source-maps', FRONT_SERVER_JS], {
    cwd: ROOT,
    env: {
      ...shellEnv(),
      DOCS_HOST: '127.0.0.1',
      DOCS_PORT: String(port),
      SWITCHYARD_DATA_DIR: dataDir,
      DOCS_RATE_LIMIT: '1000000',
      DOCS_PAGE_RATE_LIMIT: '1000000',
      DOCS_LOG_LEVEL: 'warn',
      ...env,
    },
  });
  let exited = false;
  void server.exited.then(() => {
    exited = true;
  });
  await waitForHttp(port, 'the front server', server.output, () => exited);
  return server;
}

/** nginx with one of deploy/nginx's configurations, run as the page says, in its own prefix. */
interface Nginx {
  port: number;
  stop(): Promise<void>;
}

async function startNginx(
  config: 'docs-static.conf' | 'docs-with-api.conf',
  options: { port?: number; frontPort?: number } = {},
): Promise<Nginx> {
  const { frontPort } = options;
  const prefix = mkdtempSync(join(scratch, 'nginx-'));
  // Run as root (CI, containers), nginx's workers are `nobody`: they must reach the temp directories.
  chmodSync(prefix, 0o755);
  for (const name of readdirSync(CONFIG_DIR)) copyFileSync(join(CONFIG_DIR, name), join(prefix, name));
  const port = options.port ?? (await freePort());
  writeFileSync(join(prefix, 'site.conf'), `listen 127.0.0.1:${port};\nroot ${siteCopy};\n`);
  if (frontPort) writeFileSync(join(prefix, 'front.conf'), `server 127.0.0.1:${frontPort};\n`);
  const server = startShell(`exec ${nginx} -p ${prefix} -c ${prefix}/${config} -e stderr -g 'daemon off;'`);
  try {
    await waitForHttp(port, `nginx (${config})`, server.output, exitedOf(server));
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { port, stop: () => server.stop() };
}

/** The body as JSON; when it is not, the error shows the whole answer (nginx's own pages are HTML). */
function jsonOf(answer: Answer): any {
  const text = answer.body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `expected a JSON body, got ${answer.status} ${JSON.stringify(answer.headers)}:\n${text.slice(0, 2000)}`,
    );
  }
}

// ---- What must be the same --------------------------------------------------------------------

/** The tokens of a Vary header, lower-cased (Node joins repeated fields with ", "). */
function varyTokens(headers: IncomingHttpHeaders): string[] {
  return String(headers.vary ?? '')
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '');
}

/** The `rel="alternate"` member of a Link header (the front server also sends its policy link). */
function alternateLink(headers: IncomingHttpHeaders): string | undefined {
  return String(headers.link ?? '')
    .split(/,\s*(?=<)/)
    .find((member) => /rel="alternate"/.test(member));
}

/**
 * What a client can tell apart in an answer: status, type, whether it depends on Accept, where it
 * points, how long it may be kept, which methods are allowed, and the body (its hash for files; the
 * problem document for errors, with each server's own address replaced and the front server's list
 * of API endpoints left out).
 */
function observable(answer: Answer, origin: string) {
  const type = String(answer.headers['content-type'] ?? '');
  let body: unknown;
  if (type.startsWith('application/problem+json')) {
    const problem = JSON.parse(answer.body.toString('utf8').replaceAll(origin, 'ORIGIN'));
    delete problem.available_endpoints;
    body = problem;
  } else if (answer.status === 301) {
    body = 'redirect';
  } else {
    body = createHash('sha256').update(answer.body).digest('hex');
  }
  return {
    status: answer.status,
    type: answer.status === 301 ? undefined : type,
    varyAccept: varyTokens(answer.headers).includes('accept'),
    location: answer.headers.location,
    contentLocation: answer.headers['content-location'],
    alternate: alternateLink(answer.headers),
    cacheControl: answer.headers['cache-control'],
    allow: answer.headers.allow,
    nosniff: answer.headers['x-content-type-options'],
    body,
  };
}

/** Accept headers: browsers, agents, wildcards, q-values, parameters, malformed and repeated ones. */
const ACCEPTS: Array<string | string[] | undefined> = [
  undefined,
  '',
  '*/*',
  'text/html',
  'text/markdown',
  'TEXT/Markdown',
  'application/json',
  'application/problem+json',
  'text/plain',
  'text/*',
  'image/*',
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'text/markdown, text/html',
  'text/html, text/markdown',
  'text/markdown;q=0.9, text/html;q=0.8',
  'text/html;q=0.5, text/markdown',
  'text/html;q=0, */*',
  'text/markdown;q=0',
  'text/*;q=0, text/html',
  'text/markdown, */*;q=0.1',
  '*/*;q=0.1, text/markdown;q=0.1',
  '*/*;q=0',
  'text/markdown; charset=utf-8',
  'text/markdown; charset=latin1, text/html;q=0.2',
  'text/html; charset="UTF-8"',
  'text/markdown;q=0.5;charset=utf-8, text/html;q=0.4',
  'text/markdown;q=abc',
  'text/markdown;level=1',
  'application/json, text/html;q=0.1',
  'application/json, text/markdown;q=0.001',
  'nonsense',
  ';;;',
  'text/markdown;q=0.5, text/html;q=0.5',
  'text/html;q=0.5, text/markdown;q=0.5',
  '*/*, text/markdown;q=0.9',
  ['application/json', 'text/markdown'],
  ['text/markdown;q=0.2', 'text/html;q=0.3'],
];

const describeAccept = (accept: string | string[] | undefined) =>
  accept === undefined ? '(no Accept)' : JSON.stringify(accept);

/** The first file under a build directory, for the fingerprinted assets' cache rules. */
function firstFile(dir: string, ending: string): string {
  const name = readdirSync(join(CLIENT_DIR, dir)).find((entry) => entry.endsWith(ending));
  if (!name) throw new Error(`no *${ending} under ${dir} in the build`);
  return `/${dir}/${name}`;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'switchyard-static-hosting-'));
  chmodSync(scratch, 0o755);
  // nginx serves a copy, as the page says: run as root, its workers are `nobody`, which cannot
  // reach a checkout under a private directory (CI clones into a mktemp -d, mode 0700).
  siteCopy = join(scratch, 'site');
  cpSync(CLIENT_DIR, siteCopy, { recursive: true });
  nginx = await nginxExecutable();
}, NGINX_INSTALL_TIMEOUT_MS);

afterAll(() => {
  // Retried: a front server's embedded database may still be closing its files as it is removed.
  if (scratch) rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

describe('docs-static.conf answers as the front server does', () => {
  let front: RunningProcess;
  let frontPort: number;
  let server: Nginx;

  beforeAll(async () => {
    frontPort = await freePort();
    front = await startFrontServer(frontPort);
    server = await startNginx('docs-static.conf');
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await server?.stop();
    await front?.stop();
  });

  /** Sends the same request to both; returns what each answered, as a client sees it. */
  async function both(path: string, options: Parameters<typeof send>[2] = {}) {
    const [expected, actual] = await Promise.all([
      send(frontPort, path, options),
      send(server.port, path, options),
    ]);
    return {
      expected: observable(expected, `http://127.0.0.1:${frontPort}`),
      actual: observable(actual, `http://127.0.0.1:${server.port}`),
      raw: actual,
    };
  }

  /**
   * `both`, asked again when a large body was cut off: a server that answers without reading the
   * body (405, 404) may close the connection while the client still writes megabytes, and the
   * client then fails with EPIPE or ECONNRESET, often before it has read the answer. Which of the
   * two wins that race depends on the machine's load, not on the server; the answers are compared
   * once both came back.
   */
  async function bothTolerant(path: string, options: Parameters<typeof send>[2] = {}) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await both(path, options);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const cut = code === 'EPIPE' || code === 'ECONNRESET';
        if (!cut || (options.body?.length ?? 0) < 64 * 1024 || attempt === 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** Runs a table and reports every row that differs, with both answers. */
  async function compareTable(
    rows: Array<{ path: string; accept?: string | string[]; method?: string; body?: string }>,
  ) {
    const differences: string[] = [];
    for (const row of rows) {
      const headers: Record<string, string | string[]> = {};
      if (row.accept !== undefined) headers.accept = row.accept;
      const { expected, actual } = await bothTolerant(row.path, {
        headers,
        method: row.method,
        body: row.body,
      });
      try {
        expect(actual).toEqual(expected);
      } catch {
        differences.push(
          `${row.method ?? 'GET'} ${row.path} ${describeAccept(row.accept)}\n  front server: ${JSON.stringify(expected)}\n  nginx:        ${JSON.stringify(actual)}`,
        );
      }
    }
    expect(
      differences,
      `${differences.length} of ${rows.length} requests differ:\n${differences.join('\n')}`,
    ).toEqual([]);
  }

  it('negotiates every page URL as the front server does, for every Accept header of the table', async () => {
    const pages = ['/', '/docs/getting-started/quickstart', '/docs/api/nodes', '/docs/api/nodes?tab=1'];
    const rows = pages.flatMap((path) => ACCEPTS.map((accept) => ({ path, accept })));
    // The page quotes the size of this table: it must stay the table that is run.
    const { markdown } = operationsPage('static-hosting.md');
    expect(markdown).toContain(`${ACCEPTS.length} headers (`);
    expect(markdown).toContain(`all ${rows.length} answered alike`);
    await compareTable(rows);
  });

  it('serves the build files with the front server types, cache rules and bytes', async () => {
    const files = [
      '/docs/api/nodes.md',
      '/index.md',
      '/index.html',
      '/llms.txt',
      '/llms-full.txt',
      '/docs-ai.json',
      '/.well-known/ai-catalog.json',
      '/.well-known/ai-plugin.json',
      '/openapi.json',
      '/agents.md',
      '/pricing.md',
      '/sitemap.xml',
      '/robots.txt',
      '/favicon.svg',
      '/search-index.json',
      '/404.html',
      firstFile('_astro', '.css'),
      firstFile('_astro', '.js'),
      '/pagefind/pagefind-entry.json',
    ];
    const accepts = [undefined, 'text/markdown', 'application/json', ACCEPTS[11]];
    await compareTable(files.flatMap((path) => accepts.map((accept) => ({ path, accept }))));
  });

  it('answers missing paths, trailing slashes and index.html by name as the front server does', async () => {
    const missing = [
      '/nope',
      '/docs',
      '/docs/',
      '/docs/nope',
      '/docs/nope/',
      '/docs/api/nodes/',
      '/docs/api/nodes/?a=b&c=d',
      '/docs/api/nodes//',
      '/docs/api/nodes.md/',
      '/docs/api/nodes/index.html',
      '/_astro/missing.js',
      '/pagefind/missing.json',
      '/404',
      // The raw path as sent: nginx would normalise these into other paths, the front server refuses them.
      '/docs/api/n%6fdes',
      '/docs/api/n%6fdes/?a=b',
      '/docs/api/../api/nodes',
      '/docs/%2e%2e/llms.txt',
      '/docs/api/nodes/.',
      '/docs/./api/nodes',
      '//',
      '/docs//api/nodes',
      '/docs//api/nodes/',
      '/docs/api/nodes%2F',
      '/docs/api%2Fnodes',
      '/docs/api%5Cnodes',
      '/docs/api\\nodes',
      '/docs/api/nodes?next=/../x',
    ];
    expect(operationsPage('static-hosting.md').markdown).toContain(
      `the same ${ACCEPTS.length} headers on ${missing.length} missing or odd paths`,
    );
    await compareTable(missing.flatMap((path) => ACCEPTS.map((accept) => ({ path, accept }))));
  });

  it('leads /docs to the home page in one redirect, as the front server does', async () => {
    const rows = ['/docs', '/docs/', '/docs//', '/docs?a=b&c=d', '/docs/?x=1'].flatMap((path) =>
      [undefined, 'text/markdown', 'application/json'].map((accept) => ({ path, accept })),
    );
    await compareTable(rows);
    for (const [path, location] of [
      ['/docs', '/'],
      ['/docs/', '/'],
      ['/docs/?x=1', '/?x=1'],
    ]) {
      const answer = await send(server.port, path!);
      expect(answer.status, path).toBe(301);
      expect(answer.headers.location, path).toBe(location);
    }
    await compareTable(['/docs', '/docs/'].map((path) => ({ path, method: 'POST' })));
  });

  it('answers other methods with 405 and Allow on what exists, 404 elsewhere', async () => {
    const rows = ['/docs/api/nodes', '/llms.txt', '/', '/nope', '/docs/api/nodes/'].flatMap((path) =>
      ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'].map((method) => ({ path, method })),
    );
    await compareTable(rows);
    // A large body changes nothing: no body is read, so no size is refused (2 MiB, past nginx's default limit).
    const large = 'x'.repeat(2 * 1024 * 1024);
    await compareTable(
      ['/docs/api/nodes', '/llms.txt', '/nope', '/docs/api/nodes/'].map((path) => ({
        path,
        method: 'POST',
        body: large,
      })),
    );
    // HEAD answers the GET's headers without a body.
    const head = await send(server.port, '/docs/api/nodes', {
      method: 'HEAD',
      headers: { accept: 'text/markdown' },
    });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(head.body.length).toBe(0);
  });

  it('differs where the page says: a target nginx cannot parse is 400 invalid_request, where the front server answers 404', async () => {
    for (const path of ['/llms.txt%00', '/docs/%zz']) {
      const { expected, actual } = await both(path, { headers: { accept: 'application/json' } });
      expect(expected, path).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(actual, path).toMatchObject({
        status: 400,
        type: 'application/problem+json; charset=utf-8',
        body: { code: 'invalid_request', instance: path },
      });
    }
  });

  it('revalidates with its own validators: If-None-Match on a negotiated page answers 304', async () => {
    for (const accept of ['text/html', 'text/markdown']) {
      const first = await send(server.port, '/docs/api/nodes', { headers: { accept } });
      expect(first.headers.etag, accept).toBeTruthy();
      const again = await send(server.port, '/docs/api/nodes', {
        headers: { accept, 'if-none-match': String(first.headers.etag) },
      });
      expect(again.status, accept).toBe(304);
      expect(varyTokens(again.headers), accept).toContain('accept');
    }
    // The two representations carry different validators, so a cache never mixes them up.
    const html = await send(server.port, '/docs/api/nodes', { headers: { accept: 'text/html' } });
    const markdown = await send(server.port, '/docs/api/nodes', { headers: { accept: 'text/markdown' } });
    expect(html.headers.etag).not.toBe(markdown.headers.etag);
  });

  it('compresses text for clients that accept gzip, and the bytes are the page', async () => {
    const plain = await send(server.port, '/docs/api/nodes', { headers: { accept: 'text/markdown' } });
    const gzipped = await send(server.port, '/docs/api/nodes', {
      headers: { accept: 'text/markdown', 'accept-encoding': 'gzip' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(varyTokens(gzipped.headers)).toEqual(expect.arrayContaining(['accept', 'accept-encoding']));
    const { gunzipSync } = await import('node:zlib');
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
  });

  it('answers what needs the front server with 503 service_unavailable instead of pretending it is missing', async () => {
    for (const path of ['/api', '/api/v1/search?q=webhook', '/api/agent/topics', '/s/abc', '/share/abc']) {
      const answer = await send(server.port, path);
      expect(answer.status, path).toBe(503);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      const problem = jsonOf(answer);
      expect(problem).toMatchObject({
        status: 503,
        code: 'service_unavailable',
        instance: path.split('?')[0],
      });
    }
  });
});

describe('docs-with-api.conf puts the front server behind the same domain', () => {
  let front: RunningProcess;
  let frontPort: number;
  let server: Nginx;
  let database: ThrowawayDatabase | undefined;

  beforeAll(async () => {
    frontPort = await freePort();
    const nginxPort = await freePort();
    // Shares in PostgreSQL when the run has DATABASE_URL, else in the embedded database.
    database = await throwawayDatabase('static_hosting');
    front = await startFrontServer(frontPort, {
      // Trusting one proxy hop, the front server keys its budget on the address nginx appends.
      DOCS_TRUST_PROXY: '1',
      // The public address is nginx's: share URLs and Location headers name it.
      SITE_URL: `http://127.0.0.1:${nginxPort}`,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    });
    server = await startNginx('docs-with-api.conf', { port: nginxPort, frontPort });
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    await server?.stop();
    await front?.stop();
    await database?.drop();
  });

  it('answers the API, its aliases and share permalinks from the front server, byte for byte', async () => {
    const requests: Array<{ path: string; method?: string; body?: string; accept?: string }> = [
      { path: '/api/v1/search?q=webhook&limit=2' },
      { path: '/api/v1/search' },
      { path: '/api/v1/topics' },
      { path: '/api/v1/topics?category=Operations' },
      { path: '/api/v1/page?path=/docs/api/nodes' },
      { path: '/api/v1/page?path=/docs/nope' },
      { path: '/api/agent/search?q=nodes' },
      { path: '/api/agent/topics' },
      { path: '/api/v1/nope' },
      { path: '/api' },
      { path: '/s/nope' },
      { path: '/share/nope', accept: 'application/json' },
      { path: '/api/v1/shares', method: 'POST', body: '{"not":"a bundle"}' },
      { path: '/api/v1/search', method: 'DELETE' },
    ];
    for (const { path, method, body, accept } of requests) {
      const headers: Record<string, string> = { accept: accept ?? 'application/json' };
      if (body) headers['content-type'] = 'application/json';
      const direct = await send(frontPort, path, { method, body, headers });
      const proxied = await send(server.port, path, { method, body, headers });
      const what = `${method ?? 'GET'} ${path}`;
      expect(proxied.status, what).toBe(direct.status);
      expect(proxied.headers['content-type'], what).toBe(direct.headers['content-type']);
      expect(proxied.headers['x-api-version'], what).toBe(direct.headers['x-api-version']);
      expect(proxied.headers['ratelimit-limit'], what).toBe(direct.headers['ratelimit-limit']);
      expect(proxied.headers.link, what).toBe(direct.headers.link);
      expect(proxied.body.toString('utf8'), what).toBe(direct.body.toString('utf8'));
    }
  });

  it('publishes a run through nginx and serves its permalink at /s/{id} and /share/{id} on the same domain', async () => {
    const bundle = {
      version: 1,
      workflow_id: 'wf_static_hosting',
      title: 'Published through nginx',
      generated_at: '2026-11-22T05:00:00.000Z',
      totals: { nodes: 1, succeeded: 1, failed: 0, duration_ms: 120 },
      nodes: [{ execution_id: 'ex_one', target: 'docs-agent.answer', status: 'succeeded', duration_ms: 120 }],
      edges: [],
    };
    const published = await send(server.port, '/api/v1/shares', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(bundle),
    });
    expect(published.status, published.body.toString('utf8')).toBe(201);
    const { id, url } = jsonOf(published);
    expect(url).toBe(`http://127.0.0.1:${server.port}/s/${id}`);
    expect(published.headers.location).toBe(url);
    for (const permalink of [`/s/${id}`, `/share/${id}`]) {
      const json = await send(server.port, permalink, { headers: { accept: 'application/json' } });
      expect(json.status, permalink).toBe(200);
      expect(jsonOf(json)).toEqual(bundle);
      const page = await send(server.port, permalink, { headers: { accept: 'text/html' } });
      expect(page.status, permalink).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.body.toString('utf8')).toContain('Published through nginx');
    }
    // A body above the share limit is refused with a payload_too_large problem document: by nginx,
    // whose limit is the front server's (see docs-proxy.conf), never with nginx's HTML page.
    const tooLarge = await send(server.port, '/api/v1/shares', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ ...bundle, title: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(tooLarge.status).toBe(413);
    expect(jsonOf(tooLarge).code).toBe('payload_too_large');
  });

  it('still serves the static site and negotiates pages itself', async () => {
    const markdown = await send(server.port, '/docs/api/nodes', { headers: { accept: 'text/markdown' } });
    expect(markdown.status).toBe(200);
    expect(markdown.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(varyTokens(markdown.headers)).toContain('accept');
    const refused = await send(server.port, '/docs/api/nodes', { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(406);
    expect(jsonOf(refused).code).toBe('not_acceptable');
  });

  it('passes the client address on, so a client cannot pick itself a fresh budget with X-Forwarded-For', async () => {
    const remaining = (answer: Answer) => Number(answer.headers['ratelimit-remaining']);
    const first = await send(server.port, '/api/v1/topics', {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    const second = await send(server.port, '/api/v1/topics', {
      headers: { 'x-forwarded-for': '198.51.100.7' },
    });
    // Both count against the address nginx saw (127.0.0.1), whatever the client claimed.
    expect(remaining(second)).toBe(remaining(first) - 1);
    // The front server does honour the entry its trusted hop appends: a direct request naming
    // 203.0.113.9 as that hop's client starts a budget of its own.
    const direct = await send(frontPort, '/api/v1/topics', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(remaining(direct)).toBe(Number(direct.headers['ratelimit-limit']) - 1);
  });

  it('answers 502 upstream_unavailable as a problem document when the front server is down', async () => {
    await front.stop();
    const answer = await send(server.port, '/api/v1/topics');
    expect(answer.status).toBe(502);
    expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(jsonOf(answer)).toMatchObject({
      status: 502,
      code: 'upstream_unavailable',
    });
  });
});

describe('content/operations/static-hosting.md', () => {
  it(
    'runs every command on the page as shown',
    async () => {
      const { page, examples } = operationsPage('static-hosting.md');
      const home = mkdtempSync(join(scratch, 'page-'));
      chmodSync(home, 0o755);
      const prefix = join(home, 'docs-nginx');
      const dataDir = join(home, 'docs-data');
      mkdirSync(dataDir);
      const nginxPort = await freePort();
      const frontPort = await freePort();
      const localize = (text: string) =>
        text
          .replaceAll('/tmp/docs-nginx', prefix)
          .replaceAll('/tmp/docs-data', dataDir)
          .replaceAll('127.0.0.1:8080', `127.0.0.1:${nginxPort}`)
          .replaceAll('127.0.0.1:4321', `127.0.0.1:${frontPort}`)
          .replaceAll('DOCS_PORT=4321', `DOCS_PORT=${frontPort}`);
      // `nginx` on PATH is the one the tests found (NGINX_PATH or Debian's).
      const env = { PATH: `${dirname(nginx)}:${shellEnv().PATH}` };
      const background: BackgroundCommand[] = [];
      let runningNginx: BackgroundCommand | undefined;
      try {
        for (const example of examples) {
          const command = example.command.code.trim();
          const where = whereOf(page, example);
          if (command.startsWith('sudo apt-get install')) {
            // The packages the page installs are the ones the tests install on a fresh machine.
            expect(command.split(/\s+/).slice(-NGINX_PACKAGES.length), where).toEqual([...NGINX_PACKAGES]);
            if (process.getuid?.() === 0) {
              // As root, without sudo, waiting for a concurrent apt-get instead of failing on its lock.
              const run = command.replace('sudo apt-get', 'apt-get -o DPkg::Lock::Timeout=600');
              const result = await runShell(run, {
                env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
                timeoutMs: 600_000,
              });
              expect(result.code, `${where}: ${result.stdout}${result.stderr}`).toBe(0);
            }
            continue;
          }
          if (command.includes("-g 'daemon off;'")) {
            // Another terminal; the page stops the previous nginx (Ctrl-C) before starting the next.
            await runningNginx?.stop();
            const started = startShell(localize(command), { cwd: ROOT, env });
            background.push(started);
            runningNginx = started;
            await waitForHttp(nginxPort, `${where} nginx`, started.output, exitedOf(started));
            continue;
          }
          if (command.includes(FRONT_SERVER_JS)) {
            const started = startShell(localize(command), { cwd: ROOT, env });
            background.push(started);
            await waitForHttp(frontPort, `${where} front server`, started.output, exitedOf(started));
            continue;
          }
          if (example.shown?.lang === 'json') {
            const result = await runShell(localize(command), { cwd: ROOT, env });
            expect(result.code, `${where}: ${result.stderr}`).toBe(0);
            expect(JSON.parse(result.stdout), where).toEqual(JSON.parse(localize(example.shown.code)));
            continue;
          }
          await runPageCommand(page, example, { env, localize });
        }
        // The page ends with the combined configuration answering the API on the pages' address.
        expect(runningNginx, 'the page starts nginx').toBeDefined();
      } finally {
        for (const command of background.reverse()) await command.stop();
      }
      // The page's apt-get may wait for another one's dpkg lock; then two servers start.
    },
    NGINX_INSTALL_TIMEOUT_MS + HOOK_TIMEOUT_MS,
  );
});
