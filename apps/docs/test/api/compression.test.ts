import { readdirSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

/** The body as the client reads it after undoing the coding the server named. */
function decoded(res: TestResponse): string {
  const coding = res.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(res.body).toString('utf8');
  if (coding === 'gzip') return gunzipSync(res.body).toString('utf8');
  expect(coding).toBeUndefined();
  return res.text;
}

describe('compression of pages, markdown, llms files and JSON', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();
  // The largest page (when this was written, the first-agent page: 119 KB of HTML).
  const page = [...site.pages].sort(
    (a, b) => site.read(`${b.path}/index.html`).length - site.read(`${a.path}/index.html`).length,
  )[0]!;
  const html = site.read(`${page.path}/index.html`);
  const markdown = site.read(`${page.path}.md`);
  const get = (urlPath: string, headers: Record<string, string> = {}, method = 'GET') =>
    request(`${server.url}${urlPath}`, { method, headers });

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['br', 'gzip, deflate, br'],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip', 'br;q=0.5, gzip'],
  ])(
    'sends a page as %s to Accept-Encoding %j, with Vary: Accept, Accept-Encoding',
    async (coding, accept) => {
      const res = await get(page.path, { 'Accept-Encoding': accept });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      expect(res.body.length).toBeLessThan(Buffer.byteLength(html) / 2);
      expect(decoded(res)).toBe(html);
      expectCommonHeaders(res, 10_000);
    },
  );

  it('sends the page as it is without Accept-Encoding, or when no offered coding is acceptable', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { 'Accept-Encoding': 'identity' },
      { 'Accept-Encoding': 'deflate' },
      { 'Accept-Encoding': '*;q=0' },
    ]) {
      const res = await get(page.path, headers);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expect(res.text).toBe(html);
    }
  });

  it('compresses the negotiated markdown and the .md variant', async () => {
    const negotiated = await get(page.path, { Accept: 'text/markdown', 'Accept-Encoding': 'br' });
    expect(negotiated.headers['content-encoding']).toBe('br');
    expect(negotiated.headers['content-location']).toBe(`${page.path}.md`);
    expect(decoded(negotiated)).toBe(markdown);
    const variant = await get(`${page.path}.md`, { 'Accept-Encoding': 'gzip' });
    expect(variant.headers['content-encoding']).toBe('gzip');
    expect(variant.headers.vary).toBe('Accept-Encoding');
    expect(decoded(variant)).toBe(markdown);
  });

  it.each(['/llms.txt', '/llms-full.txt', '/docs-ai.json', '/openapi.json', '/sitemap.xml', '/agents.md'])(
    'compresses %s',
    async (urlPath) => {
      const res = await get(urlPath, { 'Accept-Encoding': 'gzip, br' });
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(decoded(res)).toBe(site.read(urlPath));
    },
  );

  it('compresses fingerprinted stylesheets but not images or fonts', async () => {
    const assets = readdirSync(path.join(site.client, '_astro'));
    const css = assets.find((name) => name.endsWith('.css'))!;
    const styles = await get(`/_astro/${css}`, { 'Accept-Encoding': 'gzip' });
    expect(styles.headers['content-encoding']).toBe('gzip');
    const binary = assets.find((name) => /\.(woff2?|png|webp|avif|jpe?g)$/.test(name));
    if (binary) {
      const res = await get(`/_astro/${binary}`, { 'Accept-Encoding': 'gzip, br' });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toBeUndefined();
    }
  });

  it('gives each coding its own ETag and answers 304 to the tag of the coding asked for', async () => {
    const identity = await get(page.path);
    const brotli = await get(page.path, { 'Accept-Encoding': 'br' });
    const gzip = await get(page.path, { 'Accept-Encoding': 'gzip' });
    const tags = [identity.headers.etag, brotli.headers.etag, gzip.headers.etag];
    expect(new Set(tags).size).toBe(3);
    const again = await get(page.path, { 'Accept-Encoding': 'br', 'If-None-Match': brotli.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.headers.vary).toBe('Accept, Accept-Encoding');
    expect(again.body.length).toBe(0);
    // A tag of another coding does not match: the client would be left with bytes it cannot read.
    const other = await get(page.path, { 'Accept-Encoding': 'br', 'If-None-Match': gzip.headers.etag! });
    expect(other.status).toBe(200);
  });

  it('answers HEAD with the length of the coded body and no body', async () => {
    const full = await get(page.path, { 'Accept-Encoding': 'br' });
    const head = await get(page.path, { 'Accept-Encoding': 'br' }, 'HEAD');
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.headers['content-length']).toBe(full.headers['content-length']);
    expect(head.body.length).toBe(0);
  });

  it('compresses the HTML 404 page', async () => {
    const res = await get('/docs/nope', { Accept: 'text/html', 'Accept-Encoding': 'gzip' });
    expect(res.status).toBe(404);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(decoded(res)).toBe(site.read('404.html'));
  });

  it('compresses API answers above the threshold, on the versioned endpoints and the aliases', async () => {
    for (const urlPath of ['/api/v1/topics', '/api/agent/topics', `/api/v1/page?path=${page.path}`]) {
      const plain = await get(urlPath);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toBe('Accept-Encoding');
      for (const coding of ['br', 'gzip']) {
        const res = await get(urlPath, { 'Accept-Encoding': coding });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers.vary).toBe('Accept-Encoding');
        expect(decoded(res)).toBe(plain.text);
        expectCommonHeaders(res, 10_000);
      }
    }
  });

  it('sends small answers as they are, without Vary: Accept-Encoding', async () => {
    const res = await get('/api/v1/search', { 'Accept-Encoding': 'br' });
    expectProblem(res, 400, 'missing_parameter');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBeUndefined();
    const notAcceptable = await get(page.path, { Accept: 'application/json', 'Accept-Encoding': 'br' });
    expectProblem(notAcceptable, 406, 'not_acceptable');
    expect(notAcceptable.headers.vary).toBe('Accept');
  });
});
