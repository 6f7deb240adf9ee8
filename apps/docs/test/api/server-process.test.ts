import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMainModule, siteUrlMatches } from '../../server/server.ts';
import { DOCS_APP_DIR } from '../../server/settings.ts';
import { builtDist, type LogLine, startTestServer } from './support/docs-server.ts';

/**
 * A copy of the server's build under a directory whose name has spaces, where `npm start` from a
 * checkout in such a directory would run it. Packages resolve from the app's node_modules above.
 */
function serverUnderSpacedPath(): { entry: string; remove(): void } {
  const scratch = path.join(DOCS_APP_DIR, 'node_modules', '.cache');
  mkdirSync(scratch, { recursive: true });
  const root = path.join(mkdtempSync(path.join(scratch, 'docs server ')), 'my docs app');
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  for (const file of ['front-server.js', 'front-server.js.map']) {
    cpSync(path.join(DOCS_APP_DIR, 'dist', file), path.join(root, 'dist', file));
  }
  return {
    entry: path.join(root, 'dist', 'front-server.js'),
    remove: () => rmSync(path.dirname(root), { recursive: true, force: true }),
  };
}

interface RunningProcess {
  child: ChildProcess;
  url: string;
  lines: LogLine[];
  exited: Promise<number | null>;
  /** Resolves with the first log line `match` accepts, as soon as the process writes it. */
  waitFor(match: (line: LogLine) => boolean): Promise<LogLine>;
}

/** Every server process a test started, so none outlives a failed test. */
const started = new Set<ChildProcess>();

/** Starts the build the way `npm start` does (node, settings from the environment). */
function startProcess(entry: string, env: Record<string, string>): Promise<RunningProcess> {
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    env: { ...process.env, NODE_ENV: 'production', DOCS_PORT: '0', DOCS_DIST_DIR: builtDist(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.on('exit', () => started.delete(child));
  const lines: LogLine[] = [];
  const waiters: Array<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }> = [];
  let pending = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const text of complete) {
      // Every line on stdout is one JSON object: that is the production log format.
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  // 'close', not 'exit': only then has everything the process wrote to stdout been read.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = (match: (line: LogLine) => boolean) =>
    new Promise<LogLine>((resolve) => {
      const found = lines.find(match);
      if (found) resolve(found);
      else waiters.push({ match, resolve });
    });
  return Promise.race([
    waitFor((line) => /^listening on /.test(line.msg)).then((line) => ({
      child,
      url: String(line.url),
      lines,
      exited,
      waitFor,
    })),
    exited.then((code) => {
      throw new Error(`the server exited (${code}) before listening:\n${stderr}`);
    }),
  ]);
}

describe('the docs server as a process', () => {
  let copy: ReturnType<typeof serverUnderSpacedPath>;
  beforeAll(() => {
    copy = serverUnderSpacedPath();
  });
  afterAll(() => {
    for (const child of started) child.kill('SIGKILL');
    copy?.remove();
  });

  it('starts from a path with spaces and logs JSON lines in production', async () => {
    expect(copy.entry).toContain(' ');
    const running = await startProcess(copy.entry, { SHARES_ENABLED: 'false' });
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(running.lines[0]).toMatchObject({ level: 30, name: 'docs', msg: `listening on ${running.url}` });
    } finally {
      running.child.kill('SIGTERM');
      expect(await running.exited).toBe(0);
    }
  });

  it.each([
    [
      'development',
      'readable lines',
      /^\d\d:\d\d:\d\d INFO: +listening on http:\/\/127\.0\.0\.1:\d+ \{"site":/m,
    ],
    ['production', 'JSON lines', /^\{"level":30,.*"msg":"listening on http:\/\/127\.0\.0\.1:\d+"\}/m],
  ])('on a terminal with NODE_ENV=%s logs %s', async (nodeEnv, _, expected) => {
    // `script` gives the server a pseudo-terminal for stdout, as a developer's shell does.
    const command = `${process.execPath} --enable-source-maps '${copy.entry}'`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: {
        ...process.env,
        NODE_ENV: nodeEnv,
        DOCS_PORT: '0',
        DOCS_DIST_DIR: builtDist(),
        SHARES_ENABLED: 'false',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk) => {
          output += chunk;
          if (/listening on http/.test(output)) resolve();
        });
        child.on('exit', (code) => reject(new Error(`exited (${code}) before listening:\n${output}`)));
      });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes, should any slip through
      expect(output.replace(/\r/g, '').replace(/\x1b\[[0-9;]*m/g, '')).toMatch(expected);
    } finally {
      // The terminal and the server under it form their own process group.
      process.kill(-child.pid!, 'SIGTERM');
    }
  });

  it('on SIGTERM finishes the request under way, refuses new connections, then closes the database', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-docs-drain-'));
    try {
      // The embedded database in dataDir, even on a run against PostgreSQL, so the test can open
      // the same files afterwards and find what was stored.
      const running = await startProcess(copy.entry, {
        DATABASE_URL: '',
        SWITCHYARD_DATA_DIR: dataDir,
        DOCS_SHUTDOWN_GRACE: '60s',
      });
      const { port } = new URL(running.url);
      const body = Buffer.from(
        JSON.stringify({
          version: 1,
          workflow_id: 'wf_drain',
          title: 'Published while the server stops',
          generated_at: '2026-11-22T05:00:00Z',
          totals: {},
          nodes: [],
          edges: [],
        }),
      );
      // A publish whose body is half sent when the signal arrives.
      let answered: (value: { status: number; connection: string | undefined; text: string }) => void;
      const answer = new Promise<{ status: number; connection: string | undefined; text: string }>(
        (resolve) => {
          answered = resolve;
        },
      );
      const publish = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/shares', agent: false },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () =>
            answered({ status: res.statusCode!, connection: res.headers.connection, text }),
          );
        },
      );
      publish.setHeader('Content-Length', body.length);
      // The server answers 100 Continue once it holds the request: from then on it is under way.
      publish.setHeader('Expect', '100-continue');
      const invited = new Promise((resolve) => publish.once('continue', resolve));
      publish.flushHeaders();
      await invited;
      publish.write(body.subarray(0, 10));
      running.child.kill('SIGTERM');
      await running.waitFor((line) => /^shutting down/.test(line.msg));

      // No new connections once draining has begun.
      const refused = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');

      publish.end(body.subarray(10));
      const res = await answer;
      expect(res.status).toBe(201);
      const id = JSON.parse(res.text).id as string;
      expect(await running.exited).toBe(0);
      const order = running.lines.map((line) => line.msg);
      expect(order.indexOf('database closed')).toBeGreaterThan(
        order.findIndex((m) => /^shutting down/.test(m)),
      );
      expect(order.at(-1)).toBe('stopped');

      // What was published before the stop is stored: the database was closed, not cut.
      const db = await openDatabase({ dataDir: path.join(dataDir, 'docs') });
      try {
        expect(await db('run_shares').where({ id }).first()).toMatchObject({ id });
      } finally {
        await db.destroy();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('cuts what is still under way when the grace runs out, and stops', async () => {
    const running = await startProcess(copy.entry, { SHARES_ENABLED: 'false', DOCS_SHUTDOWN_GRACE: '500ms' });
    const { port } = new URL(running.url);
    // A request whose head never ends keeps its connection busy.
    const cut = new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /llms.txt HTTP/1.1\r\nHost: x\r\n'),
      );
      socket.on('close', () => resolve());
      socket.on('error', () => {});
    });
    await new Promise((resolve) => setImmediate(resolve));
    running.child.kill('SIGTERM');
    await cut;
    expect(await running.exited).toBe(0);
    expect(running.lines.map((line) => line.msg)).toContain(
      'requests still under way after the shutdown grace; cutting their connections',
    );
  });

  it("takes a terminal's SIGINT and a supervisor's SIGTERM a moment apart as one stop, and a signal later as asking again", async () => {
    const running = await startProcess(copy.entry, { SHARES_ENABLED: 'false', DOCS_SHUTDOWN_GRACE: '60s' });
    const { port } = new URL(running.url);
    // A request whose head never ends keeps the stop waiting for it.
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write('GET /llms.txt HTTP/1.1\r\nHost: x\r\n'),
    );
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    running.child.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 50));
    running.child.kill('SIGTERM');
    await running.waitFor((line) => /^shutting down/.test(line.msg));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(running.child.exitCode).toBeNull();
    expect(running.lines.map((line) => line.msg)).not.toContain(
      'second signal: stopping without waiting for requests under way',
    );
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(1);
    expect(running.lines.map((line) => line.msg)).toContain(
      'second signal: stopping without waiting for requests under way',
    );
    socket.destroy();
  });
});

describe('the main-module check', () => {
  it('recognises the entry file when its path has spaces or other characters a URL escapes', () => {
    for (const file of ['/tmp/my docs/server.ts', '/tmp/ä#1/server.ts', '/tmp/100%/server.ts']) {
      expect(isMainModule(pathToFileURL(file).href, file), file).toBe(true);
    }
    expect(isMainModule(pathToFileURL('/tmp/a/server.ts').href, '/tmp/b/server.ts')).toBe(false);
    expect(isMainModule(pathToFileURL('/tmp/a/server.ts').href, undefined)).toBe(false);
  });
});

describe('SITE_URL that is not where the server listens', () => {
  it('logs a warning at start naming both addresses', async () => {
    const server = await startTestServer({ sharesEnabled: false, siteUrl: 'https://docs.example.com' });
    try {
      const warning = server.logLines.find((line) => line.level === 40);
      expect(warning).toMatchObject({ siteUrl: 'https://docs.example.com', listening: server.url });
      expect(warning?.msg).toContain('SITE_URL https://docs.example.com is not where this server listens');
    } finally {
      await server.close();
    }
  });

  it('stays quiet without SITE_URL', async () => {
    const server = await startTestServer({ sharesEnabled: false });
    try {
      expect(server.logLines.filter((line) => line.level >= 40)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it.each<[string, string, number, boolean]>([
    ['http://127.0.0.1:4321', '127.0.0.1', 4321, true],
    ['http://localhost:4321/', '127.0.0.1', 4321, true],
    ['http://[::1]:4321', '::1', 4321, true],
    ['http://docs.internal:8080', '0.0.0.0', 8080, true],
    ['http://127.0.0.1:4321/docs', '127.0.0.1', 4321, true],
    ['http://127.0.0.1:4321', '127.0.0.1', 4322, false],
    ['https://127.0.0.1:4321', '127.0.0.1', 4321, false],
    ['http://docs.example.com', '127.0.0.1', 80, false],
    ['http://10.0.0.5:4321', '127.0.0.1', 4321, false],
  ])('%s against %s:%i matches: %s', (siteUrl, host, port, expected) => {
    expect(siteUrlMatches(siteUrl, { host, port })).toBe(expected);
  });
});
