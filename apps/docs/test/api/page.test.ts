import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
} from './support/docs-server.ts';

describe('GET /api/v1/page', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();
  const page = (path: string) => request(`${server.url}/api/v1/page?path=${encodeURIComponent(path)}`);

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers every page with its complete markdown and metadata', async () => {
    for (const [i, indexed] of site.pages.entries()) {
      const res = await page(indexed.path);
      expect(res.status, indexed.path).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json();
      expect(body).toEqual({
        path: indexed.path,
        slug: indexed.slug,
        url: `${server.site}${indexed.path}`,
        markdown_url: `${server.site}${indexed.markdown_url}`,
        title: indexed.title,
        description: indexed.description,
        category: indexed.category,
        keywords: indexed.keywords,
        sections: site.passages
          .filter((p) => p.page === i && p.anchor !== '')
          .map((p) => ({
            title: p.section,
            anchor: p.anchor,
            url: `${server.site}${indexed.path}#${p.anchor}`,
          })),
        markdown: site.read(`${indexed.path}.md`),
      });
      expect(body.markdown.startsWith(`# ${indexed.title}\n\n> `)).toBe(true);
    }
  });

  it('accepts the page URL with a trailing slash, a .md suffix, an anchor or as an absolute URL', async () => {
    const target = site.pages.at(-1)!;
    const expected = (await page(target.path)).json();
    for (const variant of [
      `${target.path}/`,
      `${target.path}.md`,
      `${target.path}#some-section`,
      `${target.path}?utm=x`,
      `${server.site}${target.path}`,
      `https://docs.example.com${target.path}.md`,
      `  ${target.path}  `,
    ]) {
      const res = await page(variant);
      expect(res.status, variant).toBe(200);
      expect(res.json()).toEqual(expected);
    }
  });

  it.each([
    ['missing', ''],
    ['empty', '?path='],
    ['blank', '?path=%20'],
  ])('answers 400 missing_parameter when path is %s', async (_, query) => {
    const res = await request(`${server.url}/api/v1/page${query}`);
    const problem = expectProblem(res, 400, 'missing_parameter');
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'path' })]);
    expectCommonHeaders(res, 10_000);
  });

  it.each([
    '/docs/does-not-exist',
    '/docs/',
    '/docs',
    '/',
    'docs/x',
    '/pricing.md',
    '/docs/../../../etc/passwd',
    '/docs/%2e%2e/%2e%2e/package.json',
    'javascript:alert(1)',
    '/api/v1/page',
  ])('answers 404 not_found for %j, pointing at the topics operation', async (path) => {
    const problem = expectProblem(await page(path), 404, 'not_found');
    expect(problem.available_endpoints).toMatchObject({ topics: 'GET /api/v1/topics' });
  });

  it('refuses an over-long or repeated path with invalid_request', async () => {
    expectProblem(await page(`/docs/${'a'.repeat(600)}`), 400, 'invalid_request');
    const first = site.pages[0]!.path;
    expectProblem(
      await request(`${server.url}/api/v1/page?path=${first}&path=${first}`),
      400,
      'invalid_request',
    );
  });

  it('answers HEAD without a body and refuses other methods with 405', async () => {
    const path = encodeURIComponent(site.pages[0]!.path);
    const head = await request(`${server.url}/api/v1/page?path=${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const del = await request(`${server.url}/api/v1/page?path=${path}`, { method: 'DELETE' });
    expectProblem(del, 405, 'method_not_allowed');
    expect(del.headers.allow).toBe('GET, HEAD');
  });
});
