import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
} from './support/docs-server.ts';

describe('GET /api/v1/topics', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();
  const topics = (query = '') => request(`${server.url}/api/v1/topics${query}`);

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists every page of the manifest with title, description, URL, category and keywords', async () => {
    const res = await topics();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expectCommonHeaders(res, 10_000);
    const body = res.json();
    expect(body.total).toBe(site.manifest.docs.length);
    expect(body.category).toBeNull();
    expect(body.topics).toEqual(
      site.manifest.docs.map((doc) => ({
        title: doc.title,
        description: doc.description,
        url: `${server.site}/docs/${doc.slug}`,
        path: `/docs/${doc.slug}`,
        markdown_url: `${server.site}/docs/${doc.slug}.md`,
        category: doc.category,
        keywords: doc.keywords,
      })),
    );
    expect(new Set(body.categories)).toEqual(new Set(site.manifest.docs.map((d) => d.category)));
  });

  it('lists paths that the page operation accepts', async () => {
    for (const topic of (await topics()).json().topics) {
      const page = await request(`${server.url}/api/v1/page?path=${encodeURIComponent(topic.path)}`);
      expect(page.status, topic.path).toBe(200);
      expect(page.json().title).toBe(topic.title);
    }
  });

  it('filters by category, matched case-insensitively and in slug form', async () => {
    for (const category of new Set(site.manifest.docs.map((d) => d.category))) {
      const expected = site.manifest.docs
        .filter((d) => d.category === category)
        .map((d) => `/docs/${d.slug}`);
      for (const spelling of [category, category.toUpperCase(), category.toLowerCase().replace(/ /g, '-')]) {
        const body = (await topics(`?category=${encodeURIComponent(spelling)}`)).json();
        expect(body.category).toBe(category);
        expect(body.total).toBe(expected.length);
        expect(body.topics.map((t: { path: string }) => t.path)).toEqual(expected);
      }
    }
  });

  it('treats an empty category as no filter', async () => {
    expect((await topics('?category=')).json().total).toBe(site.manifest.docs.length);
  });

  it('answers 400 invalid_request naming the valid categories for an unknown category', async () => {
    const res = await topics('?category=Astrology');
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.valid_categories).toEqual(expect.arrayContaining(['Getting started', 'API reference']));
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'category' })]);
    expectCommonHeaders(res, 10_000);
  });

  it('refuses an over-long or repeated category', async () => {
    expectProblem(await topics(`?category=${'x'.repeat(101)}`), 400, 'invalid_request');
    expectProblem(await topics('?category=Concepts&category=Reference'), 400, 'invalid_request');
  });

  it('answers HEAD without a body and refuses other methods with 405', async () => {
    const head = await request(`${server.url}/api/v1/topics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const post = await request(`${server.url}/api/v1/topics`, { method: 'POST', body: '{}' });
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});
