import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isProblem, type Problem } from '@switchyard/shared';
import { type LevelWithSilent, type Logger, pino } from 'pino';
import { expect } from 'vitest';
import { type DocsServerOptions, type RunningDocsServer, startDocsServer } from '../../../server/server.ts';
import { DOCS_APP_DIR } from '../../../server/settings.ts';

/**
 * The build the black-box suites run against: the real `astro build` output (tests run after the
 * build, see turbo.json), or another build named by DOCS_TEST_DIST.
 */
export function builtDist(): string {
  const dist = process.env.DOCS_TEST_DIST
    ? path.resolve(process.env.DOCS_TEST_DIST)
    : path.join(DOCS_APP_DIR, 'dist');
  if (
    !existsSync(path.join(dist, 'client', 'search-index.json')) ||
    !existsSync(path.join(dist, 'server', 'entry.mjs'))
  ) {
    throw new Error(`No site build at ${dist}: run \`npm run build -w @switchyard/docs\` before the tests.`);
  }
  return dist;
}

/**
 * A private copy of the build for tests that delete or garble artifacts. The static files are
 * copied; the server build is linked, because its bundle imports packages from the repository's
 * node_modules and Node resolves them from the link's real location.
 */
export function isolatedDist(): { dir: string; clientDir: string; remove(): void } {
  const source = builtDist();
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-docs-dist-'));
  cpSync(path.join(source, 'client'), path.join(dir, 'client'), { recursive: true });
  symlinkSync(path.join(source, 'server'), path.join(dir, 'server'), 'dir');
  return {
    dir,
    clientDir: path.join(dir, 'client'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One line the server logged, as pino wrote it. */
export interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  err?: { message: string; stack: string };
  [field: string]: unknown;
}

/** A pino logger that keeps its lines in memory, so tests can read what the server logged. */
export function memoryLogger(level: LevelWithSilent = 'debug'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** pino's level number for `error`: lines at or above it are failures of the server. */
export const ERROR_LEVEL = 50;

/**
 * Starts the front server on a free loopback port. What it logs is kept, not printed: `logLines`
 * holds every line, `loggedErrors` the error lines (unexpected failures, broken artifacts).
 */
export async function startTestServer(
  options: DocsServerOptions = {},
): Promise<RunningDocsServer & { loggedErrors: LogLine[]; logLines: LogLine[] }> {
  const { logger, lines } = memoryLogger();
  const running = await startDocsServer({
    port: 0,
    host: '127.0.0.1',
    distDir: builtDist(),
    logger,
    ...options,
  });
  // A getter, so it reads the lines logged up to the moment it is used.
  return Object.defineProperties(
    running as RunningDocsServer & { loggedErrors: LogLine[]; logLines: LogLine[] },
    {
      logLines: { value: lines },
      loggedErrors: { get: () => lines.filter((line) => line.level >= ERROR_LEVEL) },
    },
  );
}

export interface TestResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as received (still compressed when Content-Encoding says so). */
  body: Buffer;
  text: string;
  json<T = any>(): T;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | number | string[]>;
  body?: string | Buffer;
  /** Source address of the connection, e.g. 127.0.0.2, to act as a distinct client. */
  localAddress?: string;
  /** Send the body in chunks without Content-Length (chunked transfer coding). */
  chunked?: boolean;
}

/** One HTTP request with a fresh connection (so source addresses and limits are per request). */
export function request(url: string, options: RequestOptions = {}): Promise<TestResponse> {
  const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
  const headers = { ...options.headers };
  // Node only frames bodies of POST-like methods by itself; say the length for the others too.
  if (body && !options.chunked && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
    headers['Content-Length'] = body.length;
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text,
            json: () => JSON.parse(text),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) {
      if (options.chunked) {
        // Several writes without a declared length: Node sends Transfer-Encoding: chunked.
        const size = 64 * 1024;
        for (let at = 0; at < body.length; at += size) req.write(body.subarray(at, at + size));
      } else {
        req.write(body);
      }
    }
    req.end();
  });
}

/**
 * Sends raw bytes on a fresh connection and parses the first response, for requests an HTTP
 * client will not produce (garbage, absolute-form targets, oversized lines).
 */
export function rawRequest(url: string, bytes: string | Buffer): Promise<TestResponse> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close before reading everything sent; what it answered still counts.
    socket.on('error', (error) => (chunks.length > 0 ? socket.destroy() : reject(error)));
    socket.on('close', () => {
      try {
        resolve(parseRawResponse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Parses one HTTP/1.1 response (head and the rest as its body) received on a raw socket. */
export function parseRawResponse(raw: string): TestResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const headers: IncomingHttpHeaders = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const text = raw.slice(end + 4);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0),
    headers,
    body: Buffer.from(text),
    text,
    json: () => JSON.parse(text),
  };
}

/** Asserts a complete problem document with the status and code. */
export function expectProblem(res: TestResponse, status: number, code: string): Problem {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(isProblem(body), `not a complete problem document: ${res.text}`).toBe(true);
  expect(body.status).toBe(status);
  expect(body.code).toBe(code);
  expect(body.documentation_url).toMatch(/\/docs\/reference\/errors#/);
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.resolution.length).toBeGreaterThan(0);
  // Never a stack trace or an internal file path in what a client sees.
  expect(res.text).not.toMatch(/\bat .+\.(ts|js|mjs):\d+|node_modules|\/work\//);
  return body;
}

/** Asserts the headers every response of the site carries. */
export function expectCommonHeaders(res: TestResponse, limit = 120, windowSeconds = 60): void {
  expect(res.headers['x-api-version']).toBe('v1');
  expect(res.headers.link).toMatch(
    /<https?:\/\/[^>]+\/docs\/reference\/versioning>; rel="deprecation-policy"/,
  );
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
  expect(Number(res.headers['ratelimit-remaining'])).toBeLessThanOrEqual(limit);
  expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
  expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers['ratelimit-policy']).toBe(`${limit};w=${windowSeconds}`);
}

export interface BuiltPage {
  slug: string;
  path: string;
  title: string;
  description: string;
  category: string;
  keywords: string[];
  order: number;
  markdown_url: string;
}

export interface BuiltPassage {
  page: number;
  section: string;
  anchor: string;
  text: string;
}

/** What the build says about itself: the expectations of content-agnostic tests come from here. */
export function builtSite(dist = builtDist()) {
  const client = path.join(dist, 'client');
  const index = JSON.parse(readFileSync(path.join(client, 'search-index.json'), 'utf8')) as {
    pages: BuiltPage[];
    passages: BuiltPassage[];
  };
  const manifest = JSON.parse(readFileSync(path.join(client, 'docs-ai.json'), 'utf8')) as {
    site: string;
    docs: Array<{ slug: string; title: string; description: string; category: string; keywords: string[] }>;
  };
  if (index.pages.length === 0) {
    throw new Error(`The build at ${dist} has no documentation pages; the API suites need a corpus.`);
  }
  return {
    client,
    pages: index.pages,
    passages: index.passages,
    manifest,
    read: (sitePath: string) => readFileSync(path.join(client, sitePath), 'utf8'),
  };
}
