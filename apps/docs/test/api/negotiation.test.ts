import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
} from './support/docs-server.ts';

describe('documentation pages and static files', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();
  const page = site.pages[0]!;
  const html = site.read(`${page.path}/index.html`);
  const markdown = site.read(`${page.path}.md`);
  const get = (urlPath: string, accept?: string, method = 'GET') =>
    request(`${server.url}${urlPath}`, { method, headers: accept === undefined ? {} : { Accept: accept } });

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('content negotiation on /docs/{slug}', () => {
    it.each<[string, string | undefined, 'html' | 'markdown']>([
      ['no Accept', undefined, 'html'],
      ['*/*', '*/*', 'html'],
      ['text/html', 'text/html', 'html'],
      ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'html'],
      ['text/*', 'text/*', 'html'],
      ['text/markdown', 'text/markdown', 'markdown'],
      ['text/markdown with a charset parameter', 'text/markdown; charset=utf-8', 'markdown'],
      ['markdown preferred by q', 'text/html;q=0.5, text/markdown', 'markdown'],
      ['html preferred by q', 'text/markdown;q=0.9, text/html', 'html'],
      ['markdown named, everything else by wildcard', 'text/markdown, */*', 'markdown'],
      ['markdown over a low wildcard', 'text/markdown, */*;q=0.1', 'markdown'],
      ['html refused, wildcard left', 'text/html;q=0, */*', 'markdown'],
      ['equal q, listed first wins', 'text/markdown, text/html', 'markdown'],
      ['garbled header ignored', ';;; ,,, nonsense', 'html'],
      ['upper case', 'TEXT/MARKDOWN', 'markdown'],
    ])('%s → %s', async (_, accept, expected) => {
      const res = await get(page.path, accept);
      expect(res.status).toBe(200);
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expectCommonHeaders(res, 10_000);
      if (expected === 'html') {
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toBe(html);
        expect(res.headers.link).toContain(`<${page.path}.md>; rel="alternate"; type="text/markdown"`);
      } else {
        expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
        expect(res.text).toBe(markdown);
        expect(res.headers['content-location']).toBe(`${page.path}.md`);
      }
    });

    it.each([
      ['application/json', 'application/json'],
      ['text/plain', 'text/plain'],
      ['image/*', 'image/*'],
      ['*/*;q=0', '*/*;q=0'],
      ['both refused', 'text/html;q=0, text/markdown;q=0, */*'],
      ['text/* refused', 'text/*;q=0, application/json'],
    ])('answers 406 not_acceptable for %s', async (_, accept) => {
      const res = await get(page.path, accept);
      expectProblem(res, 406, 'not_acceptable');
      expect(res.headers.vary).toBe('Accept');
      expectCommonHeaders(res, 10_000);
    });

    it('negotiates the home page too', async () => {
      expect((await get('/', 'text/markdown')).text).toBe(site.read('index.md'));
      expect((await get('/')).text).toBe(site.read('index.html'));
    });

    it('answers HEAD with the negotiated headers and no body', async () => {
      const res = await get(page.path, 'text/markdown', 'HEAD');
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(markdown));
    });

    it('serves the .md variant at its own URL', async () => {
      const res = await get(`${page.path}.md`);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(res.text).toBe(markdown);
    });

    it('revalidates with ETag: 304 for a matching If-None-Match', async () => {
      const first = await get(page.path, 'text/markdown');
      expect(first.headers['cache-control']).toBe('public, max-age=0, must-revalidate');
      const again = await request(`${server.url}${page.path}`, {
        headers: { Accept: 'text/markdown', 'If-None-Match': first.headers.etag! },
      });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expectCommonHeaders(again, 10_000);
      const htmlVariant = await get(page.path);
      expect(htmlVariant.headers.etag).not.toBe(first.headers.etag);
    });

    it('redirects a trailing slash to the canonical URL', async () => {
      const res = await get(`${page.path}/?x=1`);
      expect(res.status).toBe(301);
      expect(res.headers.location).toBe(`${page.path}?x=1`);
      expectCommonHeaders(res, 10_000);
    });

    it('leads /docs, with or without a trailing slash, to the home page and its list of every page in one hop', async () => {
      for (const [target, location] of [
        ['/docs', '/'],
        ['/docs/', '/'],
        ['/docs//', '/'],
        ['/docs?x=1', '/?x=1'],
        ['/docs/?x=1', '/?x=1'],
      ]) {
        const res = await get(target!);
        expect(res.status, target).toBe(301);
        expect(res.headers.location, target).toBe(location);
        expectCommonHeaders(res, 10_000);
      }
      expect((await get('/')).text).toContain(`href="${page.path}"`);
      const post = await request(`${server.url}/docs`, { method: 'POST', body: 'x' });
      expectProblem(post, 405, 'method_not_allowed');
      expect(post.headers.allow).toBe('GET, HEAD');
    });

    it('answers other methods with 405 and Allow', async () => {
      const res = await request(`${server.url}${page.path}`, { method: 'POST', body: 'x' });
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD');
    });
  });

  describe('static files', () => {
    const assets = readdirSync(path.join(site.client, '_astro'));

    it('serves fingerprinted assets with their type and an immutable cache policy', async () => {
      const css = assets.find((name) => name.endsWith('.css'));
      expect(css).toBeDefined();
      const res = await get(`/_astro/${css}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expectCommonHeaders(res, 10_000);
    });

    it.each([
      ['/llms.txt', 'text/plain; charset=utf-8'],
      ['/docs-ai.json', 'application/json; charset=utf-8'],
      ['/openapi.json', 'application/json; charset=utf-8'],
      ['/.well-known/ai-catalog.json', 'application/json; charset=utf-8'],
      ['/agents.md', 'text/markdown; charset=utf-8'],
      ['/sitemap.xml', 'application/xml; charset=utf-8'],
      ['/favicon.svg', 'image/svg+xml'],
    ])('serves %s as %s', async (urlPath, type) => {
      const res = await get(urlPath);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.text).toBe(site.read(urlPath));
    });
  });

  describe('unknown paths', () => {
    it('answers the built 404 page with status 404 for browsers', async () => {
      for (const urlPath of [
        '/docs/nope',
        '/nope',
        '/docs/x/y/z',
        '/..%2f..%2fetc%2fpasswd',
        '/docs//x',
        '/%zz',
      ]) {
        const res = await get(urlPath, 'text/html');
        expect(res.status, urlPath).toBe(404);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toBe(site.read('404.html'));
        expect(res.headers.vary).toBe('Accept, Accept-Encoding');
        expectCommonHeaders(res, 10_000);
      }
    });

    it('answers a problem document with available_endpoints for clients that prefer JSON', async () => {
      for (const accept of [
        'application/json',
        'application/problem+json',
        'application/json, text/html;q=0.5',
      ]) {
        const problem = expectProblem(await get('/docs/nope', accept), 404, 'not_found');
        expect(problem.available_endpoints).toMatchObject({ searchDocumentation: expect.any(String) });
      }
    });

    it.each<[string, string | undefined]>([
      ['no Accept', undefined],
      ['*/*', '*/*'],
      ['text/markdown', 'text/markdown'],
      ['a type the site cannot produce', 'image/png'],
      ['HTML refused', 'text/html;q=0'],
    ])('answers a problem document, not the HTML page, for %s (HTML not first)', async (_, accept) => {
      const res = await get('/docs/nope', accept);
      const problem = expectProblem(res, 404, 'not_found');
      expect(problem.available_endpoints).toMatchObject({ searchDocumentation: expect.any(String) });
      expect(res.headers.vary).toBe('Accept');
      expectCommonHeaders(res, 10_000);
    });

    it('answers the HTML 404 page to the Accept header real browsers send', async () => {
      for (const accept of [
        'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
      ]) {
        const res = await get('/docs/nope', accept);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toBe(site.read('404.html'));
      }
    });

    it('never serves index.html by name or files outside the build', async () => {
      expect((await get(`${page.path}/index.html`)).status).toBe(404);
      expect((await get('/../package.json')).status).toBe(404);
      expect((await get('/%2e%2e/%2e%2e/package.json')).status).toBe(404);
    });
  });
});
