import { rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../support/database.ts';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  isolatedDist,
  rawRequest,
  request,
  startTestServer,
} from './support/docs-server.ts';

describe('errors of the site API', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    '/api',
    '/api/',
    '/api/v1',
    '/api/v1/searches',
    '/api/v2/search',
    '/api/v1/search/',
    '/api/agent/shares',
  ])('answers 404 not_found with available_endpoints for the unknown endpoint %s', async (urlPath) => {
    const res = await request(`${server.url}${urlPath}`, { headers: { Accept: 'text/html' } });
    const problem = expectProblem(res, 404, 'not_found');
    expect(problem.instance).toBe(urlPath);
    expect(problem.available_endpoints).toEqual({
      searchDocumentation: 'GET /api/v1/search?q={terms}&limit={1-20}',
      listDocumentationTopics: 'GET /api/v1/topics?category={category}',
      getDocumentationPage: 'GET /api/v1/page?path=/docs/{slug}',
      createRunShare: 'POST /api/v1/shares with a run bundle as JSON',
      mcp: 'POST /mcp (Model Context Protocol, Streamable HTTP)',
      openapi: 'GET /openapi.json',
      llms: 'GET /llms.txt',
    });
    expectCommonHeaders(res, 10_000);
  });

  it('answers OPTIONS with the allowed methods for CORS preflights', async () => {
    const res = await request(`${server.url}/api/v1/shares`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe('POST, OPTIONS');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-headers']).toContain('X-API-Key');
  });

  it('answers a request line Node cannot parse with a problem document', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write('GET /api/v1/search?q=a HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
      });
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('application/problem+json');
    expect(raw).toContain('"code":"invalid_request"');
    expect(raw).toContain('"instance":"/api/v1/search"');
  });

  describe('absolute-form request targets (RFC 9112 §3.2.2)', () => {
    const send = (target: string, headers = '') =>
      rawRequest(server.url, `GET ${target} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);

    it('answers them exactly like the origin form', async () => {
      for (const target of ['/api/v1/search?q=agent&limit=3', '/llms.txt', '/api/v1/topics']) {
        const absolute = await send(`http://docs.example.com${target}`);
        const origin = await request(`${server.url}${target}`);
        expect(absolute.status, target).toBe(200);
        expect(absolute.headers['content-type']).toBe(origin.headers['content-type']);
        expect(absolute.text).toBe(origin.text);
        expectCommonHeaders(absolute, 10_000);
      }
      const home = await send('HTTPS://X', 'Accept: text/html\r\n');
      expect(home.status).toBe(200);
      expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    });

    it('keeps dot segments unresolved and names the path alone as the instance', async () => {
      const outside = expectProblem(await send('http://x/docs/../../package.json'), 404, 'not_found');
      expect(outside.instance).toBe('/docs/../../package.json');
      const missing = expectProblem(await send('http://x/api/v1/nope?q=1'), 404, 'not_found');
      expect(missing.instance).toBe('/api/v1/nope');
    });

    it('still refuses targets that are neither origin nor absolute form', async () => {
      for (const target of ['*', 'ftp://x/llms.txt', 'http:///llms.txt', 'llms.txt']) {
        expectProblem(await send(target), 400, 'invalid_request');
      }
    });
  });

  it.each<[string, string, number]>([
    ['garbage', 'GARBAGE\r\n\r\n', 400],
    ['a bad Content-Length', 'POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n', 400],
    [
      'two framings of one body',
      'POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
      400,
    ],
    ['a 70 kB URL', `GET /api/v1/search?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    ['a 70 kB header', `GET /llms.txt HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`, 431],
  ])(
    'answers %s with a problem document carrying the RateLimit-*, X-API-Version and deprecation-policy Link every response has',
    async (_, bytes, status) => {
      const res = await rawRequest(server.url, bytes);
      expectProblem(res, status, 'invalid_request');
      expectCommonHeaders(res, 10_000);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.connection).toBe('close');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    },
  );

  it.each<[string, string, RegExp]>([
    ['without Host', 'GET /llms.txt HTTP/1.1\r\nConnection: close\r\n\r\n', /no Host header/],
    ['with two Host lines', 'GET /llms.txt HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', /more than one Host/],
  ])(
    'answers an HTTP/1.1 request %s with 400 invalid_request (RFC 9112 §3.2), not a bare 400',
    async (_, bytes, detail) => {
      const res = await rawRequest(server.url, bytes);
      const problem = expectProblem(res, 400, 'invalid_request');
      expect(problem.detail).toMatch(detail);
      expect(problem.instance).toBe('/llms.txt');
      expect(res.headers.connection).toBe('close');
      expectCommonHeaders(res, 10_000);
    },
  );

  it.each([
    [
      'an authority-form target',
      'CONNECT docs.example.com:443 HTTP/1.1\r\nHost: docs.example.com:443\r\n\r\n',
      '/',
    ],
    ['a path target', 'CONNECT /llms.txt HTTP/1.1\r\nHost: x\r\n\r\n', '/llms.txt'],
  ])(
    'answers CONNECT with %s with a problem document, not a silently closed socket',
    async (_, bytes, instance) => {
      const res = await rawRequest(server.url, bytes);
      const problem = expectProblem(res, 400, 'invalid_request');
      expect(problem.detail).toMatch(/CONNECT/);
      expect(problem.instance).toBe(instance);
      expectCommonHeaders(res, 10_000);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.connection).toBe('close');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    },
  );

  it('answers a request with an Expect other than 100-continue as usual, not with a bare 417', async () => {
    const res = await rawRequest(
      server.url,
      'GET /llms.txt HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expectCommonHeaders(res, 10_000);

    const missing = await rawRequest(
      server.url,
      'GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n',
    );
    expectProblem(missing, 404, 'not_found');
    expectCommonHeaders(missing, 10_000);
  });

  it('serves an HTTP/1.0 request without Host', async () => {
    const res = await rawRequest(server.url, 'GET /llms.txt HTTP/1.0\r\n\r\n');
    expect(res.status).toBe(200);
  });
});

describe('a request head that does not arrive in time', () => {
  it('is answered 408 with a problem document, and the connection closed', async () => {
    const server = await startTestServer({
      sharesEnabled: false,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
      headersTimeoutMs: 300,
    });
    try {
      // The head never ends: Node's headers timeout fires and the server answers on the socket.
      const res = await rawRequest(server.url, 'GET /llms.txt HTTP/1.1\r\nHost: x\r\n');
      expectProblem(res, 408, 'invalid_request');
      expectCommonHeaders(res, 10_000);
      expect(res.headers.connection).toBe('close');
      expect(server.logLines.some((line) => line.msg === 'client error answered with 408')).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('missing or corrupt generated artifacts', () => {
  const site = builtSite();
  const page = site.pages[0]!;

  /** Runs `use` against a server on a copy of the build that `breakIt` damaged before the start. */
  async function withBrokenBuild(
    breakIt: (clientDir: string) => void,
    use: (server: Awaited<ReturnType<typeof startTestServer>>) => Promise<void>,
  ): Promise<void> {
    const dist = isolatedDist();
    breakIt(dist.clientDir);
    const server = await startTestServer({
      distDir: dist.dir,
      sharesEnabled: false,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
    });
    try {
      await use(server);
    } finally {
      await server.close();
      dist.remove();
    }
  }

  it('answers 502 upstream_unavailable while the search index is missing, and keeps serving pages', async () => {
    await withBrokenBuild(
      (dir) => rmSync(path.join(dir, 'search-index.json')),
      async (server) => {
        for (const url of [
          '/api/v1/search?q=agent',
          '/api/agent/search?q=agent',
          `/api/v1/page?path=${page.path}`,
        ]) {
          const res = await request(`${server.url}${url}`);
          const problem = expectProblem(res, 502, 'upstream_unavailable');
          expect(problem.detail).toContain('search-index.json');
          expectCommonHeaders(res, 10_000);
        }
        expect((await request(`${server.url}${page.path}`)).status).toBe(200);
        expect((await request(`${server.url}/api/v1/topics`)).status).toBe(200);
        // Logged once, not once per request.
        expect(server.loggedErrors.filter((line) => /search-index\.json/.test(line.msg))).toHaveLength(1);
      },
    );
  });

  it.each(['{"version": 1, "pages": [', '{"version": 7, "pages": [], "passages": []}', ''])(
    'answers 502 for a garbled search index (%j), logging it once',
    async (garbage) => {
      await withBrokenBuild(
        (dir) => writeFileSync(path.join(dir, 'search-index.json'), garbage),
        async (server) => {
          for (let i = 0; i < 3; i++) {
            expectProblem(await request(`${server.url}/api/v1/search?q=agent`), 502, 'upstream_unavailable');
          }
          expect(server.loggedErrors).toHaveLength(1);
          expect(server.loggedErrors[0]!.msg).toMatch(/could not be loaded/);
        },
      );
    },
  );

  it('answers 502 for topics while the manifest is missing or garbled', async () => {
    for (const breakIt of [
      (dir: string) => rmSync(path.join(dir, 'docs-ai.json')),
      (dir: string) => writeFileSync(path.join(dir, 'docs-ai.json'), '{"docs": "not a list"}'),
    ]) {
      await withBrokenBuild(breakIt, async (server) => {
        const res = await request(`${server.url}/api/v1/topics`);
        expect(expectProblem(res, 502, 'upstream_unavailable').detail).toContain('docs-ai.json');
        expectProblem(await request(`${server.url}/api/agent/topics`), 502, 'upstream_unavailable');
      });
    }
  });

  it('answers 502 for a page whose markdown variant is missing', async () => {
    await withBrokenBuild(
      (dir) => rmSync(path.join(dir, `${page.path}.md`)),
      async (server) => {
        expectProblem(
          await request(`${server.url}/api/v1/page?path=${page.path}`),
          502,
          'upstream_unavailable',
        );
      },
    );
  });

  it('answers 502, not 406, to Accept: text/markdown on a page whose markdown variant is missing', async () => {
    await withBrokenBuild(
      (dir) => rmSync(path.join(dir, `${page.path}.md`)),
      async (server) => {
        for (const accept of ['text/markdown', 'text/markdown, text/html;q=0.5']) {
          const res = await request(`${server.url}${page.path}`, { headers: { Accept: accept } });
          const problem = expectProblem(res, 502, 'upstream_unavailable');
          expect(problem.detail).toContain(page.path);
          expect(res.headers.vary).toBe('Accept');
          expect(res.headers['content-location']).toBeUndefined();
          expectCommonHeaders(res, 10_000);
        }
        // The HTML is still there for clients that take it, and 406 stays for clients that take neither.
        expect(
          (await request(`${server.url}${page.path}`, { headers: { Accept: 'text/html' } })).status,
        ).toBe(200);
        expectProblem(
          await request(`${server.url}${page.path}`, { headers: { Accept: 'application/json' } }),
          406,
          'not_acceptable',
        );
      },
    );
  });

  it('reads the build once: a file removed after the start is still served from memory', async () => {
    const dist = isolatedDist();
    const server = await startTestServer({
      distDir: dist.dir,
      sharesEnabled: false,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
    });
    try {
      const first = await request(`${server.url}/llms.txt`);
      rmSync(path.join(dist.clientDir, 'llms.txt'));
      const again = await request(`${server.url}/llms.txt`);
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      // A file listed at the start but gone before its first request is a broken build: 502.
      rmSync(path.join(dist.clientDir, 'agents.md'));
      expectProblem(await request(`${server.url}/agents.md`), 502, 'upstream_unavailable');
    } finally {
      await server.close();
      dist.remove();
    }
  });
});

describe('unexpected failures', () => {
  it('answer 500 internal_error as a problem document, without a stack trace, and the server keeps serving', async () => {
    const database = await openMigratedTestDatabase();
    const server = await startTestServer({ db: database.db, rateLimit: 10_000, pageRateLimit: 10_000 });
    try {
      // The database goes away under the server: storing a share now fails in the driver.
      await database.close();
      const res = await request(`${server.url}/api/v1/shares`, {
        method: 'POST',
        body: JSON.stringify({
          version: 1,
          workflow_id: 'wf',
          title: 't',
          generated_at: '2026-11-22T05:00:00Z',
          totals: {},
          nodes: [],
          edges: [],
        }),
      });
      const problem = expectProblem(res, 500, 'internal_error');
      expect(problem.error).toBe(problem.detail);
      expectCommonHeaders(res, 10_000);
      // One error line for the request, with its id and the stack; the client saw neither.
      expect(server.loggedErrors).toHaveLength(1);
      const logged = server.loggedErrors[0]!;
      expect(logged.reqId).toBe(res.headers['x-request-id']);
      expect(logged.status).toBe(500);
      expect(logged.err?.stack).toMatch(/\n\s+at /);
      expect((await request(`${server.url}/api/v1/topics`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
