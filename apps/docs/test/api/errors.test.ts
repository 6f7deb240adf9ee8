import { rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { openTestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000 });
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

  it.each<[string, string]>([
    ['garbage', 'GARBAGE\r\n\r\n'],
    ['a 70 kB URL', `GET /api/v1/search?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['a 70 kB header', `GET /llms.txt HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70_000)}\r\n\r\n`],
    ['a bad Content-Length', 'POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'],
  ])(
    'answers %s with a problem document carrying the headers of every response (spec §4)',
    async (_, bytes) => {
      const res = await rawRequest(server.url, bytes);
      expectProblem(res, 400, 'invalid_request');
      expectCommonHeaders(res, 10_000);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    },
  );
});

describe('missing or corrupt generated artifacts', () => {
  const dist = isolatedDist();
  const site = builtSite(dist.dir);
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const original = (name: string) => site.read(name);

  beforeAll(async () => {
    server = await startTestServer({ distDir: dist.dir, sharesEnabled: false, rateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
    dist.remove();
  });

  it('answers 502 upstream_unavailable while the search index is missing or garbled, and recovers when it returns', async () => {
    const indexFile = path.join(dist.clientDir, 'search-index.json');
    const saved = original('search-index.json');
    const page = site.pages[0]!.path;
    expect((await request(`${server.url}/api/v1/search?q=agent`)).status).toBe(200);

    rmSync(indexFile);
    for (const url of [`/api/v1/search?q=agent`, `/api/agent/search?q=agent`, `/api/v1/page?path=${page}`]) {
      const res = await request(`${server.url}${url}`);
      const problem = expectProblem(res, 502, 'upstream_unavailable');
      expect(problem.detail).toContain('search-index.json');
      expectCommonHeaders(res, 10_000);
    }

    for (const garbage of ['{"version": 1, "pages": [', '{"version": 7, "pages": [], "passages": []}', '']) {
      writeFileSync(indexFile, garbage);
      expectProblem(await request(`${server.url}/api/v1/search?q=agent`), 502, 'upstream_unavailable');
    }

    writeFileSync(indexFile, saved);
    const recovered = await request(
      `${server.url}/api/v1/search?q=${encodeURIComponent(site.pages[0]!.title)}`,
    );
    expect(recovered.status).toBe(200);
    expect(recovered.json().results.length).toBeGreaterThan(0);
    // Pages keep being served while the API's artifact is away.
    expect((await request(`${server.url}${page}`)).status).toBe(200);
  });

  it('answers 502 for topics while the manifest is missing or garbled, and recovers', async () => {
    const manifestFile = path.join(dist.clientDir, 'docs-ai.json');
    const saved = original('docs-ai.json');
    rmSync(manifestFile);
    expect(
      expectProblem(await request(`${server.url}/api/v1/topics`), 502, 'upstream_unavailable').detail,
    ).toContain('docs-ai.json');
    writeFileSync(manifestFile, '{"docs": "not a list"}');
    expectProblem(await request(`${server.url}/api/agent/topics`), 502, 'upstream_unavailable');
    writeFileSync(manifestFile, saved);
    expect((await request(`${server.url}/api/v1/topics`)).status).toBe(200);
  });

  it('answers 502 for a page whose markdown variant is missing, and recovers', async () => {
    const page = site.pages[0]!;
    const file = path.join(dist.clientDir, `${page.path}.md`);
    const saved = original(`${page.path}.md`);
    rmSync(file);
    expectProblem(await request(`${server.url}/api/v1/page?path=${page.path}`), 502, 'upstream_unavailable');
    writeFileSync(file, saved);
    expect((await request(`${server.url}/api/v1/page?path=${page.path}`)).json().markdown).toBe(saved);
  });

  it('answers 502, not 406, to Accept: text/markdown on a page whose markdown variant is missing', async () => {
    const page = site.pages[0]!;
    const file = path.join(dist.clientDir, `${page.path}.md`);
    const saved = original(`${page.path}.md`);
    rmSync(file);
    try {
      for (const accept of ['text/markdown', 'text/markdown, text/html;q=0.5']) {
        const res = await request(`${server.url}${page.path}`, { headers: { Accept: accept } });
        const problem = expectProblem(res, 502, 'upstream_unavailable');
        expect(problem.detail).toContain(page.path);
        expect(res.headers.vary).toBe('Accept');
        expect(res.headers['content-location']).toBeUndefined();
        expectCommonHeaders(res, 10_000);
      }
      // The HTML is still there for clients that take it, and 406 stays for clients that take neither.
      expect((await request(`${server.url}${page.path}`, { headers: { Accept: 'text/html' } })).status).toBe(
        200,
      );
      expectProblem(
        await request(`${server.url}${page.path}`, { headers: { Accept: 'application/json' } }),
        406,
        'not_acceptable',
      );
    } finally {
      writeFileSync(file, saved);
    }
    const recovered = await request(`${server.url}${page.path}`, { headers: { Accept: 'text/markdown' } });
    expect(recovered.status).toBe(200);
    expect(recovered.text).toBe(saved);
  });
});

describe('unexpected failures', () => {
  it('answer 500 internal_error as a problem document, without a stack trace, and the server keeps serving', async () => {
    const database = await openTestDatabase();
    const server = await startTestServer({ db: database.db, rateLimit: 10_000 });
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
      expect(server.loggedErrors).toHaveLength(1);
      expect((await request(`${server.url}/api/v1/topics`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
