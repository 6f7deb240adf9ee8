import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDir } from '../../src/lib/content-dir.ts';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

describe('GET /api/v1/search', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();
  const search = (query: string, options: Parameters<typeof request>[1] = {}): Promise<TestResponse> =>
    request(`${server.url}/api/v1/search${query}`, options);

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('finds every page by its title, except a page that opts out of search', async () => {
    const listed = new Set(site.passages.map((passage) => passage.page));
    for (const [i, page] of site.pages.entries()) {
      const res = await search(`?q=${encodeURIComponent(page.title)}&limit=20`);
      expect(res.status).toBe(200);
      const paths = res.json().results.map((r: { path: string }) => r.path);
      // A page without passages said `search: false` (test/artifacts.test.ts holds the two together).
      if (listed.has(i)) expect(paths, `searching "${page.title}"`).toContain(page.path);
      else expect(paths, `searching "${page.title}"`).not.toContain(page.path);
    }
  });

  it('answers the example of the site API page as the page shows it, scores aside', async () => {
    const page = readFileSync(path.join(contentDir(), 'api/site-api.md'), 'utf8');
    const section = page.slice(page.indexOf('## GET /api/v1/search'), page.indexOf('## GET /api/v1/topics'));
    const command = /```bash\ncurl '(http:\/\/127\.0\.0\.1:4321)(\/api\/v1\/search\?[^']+)'\n```/.exec(
      section,
    );
    const shown = /```json\n([\s\S]*?)\n```/.exec(section);
    expect(command, 'a curl example of the search').not.toBeNull();
    expect(shown, 'the answer it shows').not.toBeNull();
    const res = await request(`${server.url}${command![2]}`);
    expect(res.status).toBe(200);
    const withoutScores = (body: any) => ({
      ...body,
      results: body.results.map(({ score: _score, ...rest }: any) => rest),
    });
    const documented = JSON.parse(shown![1]!.replaceAll(command![1]!, server.site));
    expect(withoutScores(res.json())).toEqual(withoutScores(documented));
  });

  it('answers ranked passages with the fields the reference documents', async () => {
    const page = site.pages[0]!;
    const res = await search(`?q=${encodeURIComponent(page.title)}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expectCommonHeaders(res, 10_000);
    const body = res.json();
    expect(body.query).toBe(page.title);
    expect(body.limit).toBe(5);
    expect(body.total).toBeGreaterThanOrEqual(body.results.length);
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results.length).toBeLessThanOrEqual(5);
    let previous = Number.POSITIVE_INFINITY;
    body.results.forEach((result: any, i: number) => {
      expect(Object.keys(result).sort()).toEqual(
        [
          'anchor',
          'category',
          'markdown_url',
          'path',
          'rank',
          'score',
          'section',
          'sections',
          'snippet',
          'title',
          'url',
        ].sort(),
      );
      expect(result.rank).toBe(i + 1);
      expect(result.score).toBeGreaterThan(0);
      expect(result.score).toBeLessThanOrEqual(previous);
      previous = result.score;
      const indexed = site.pages.find((p) => p.path === result.path)!;
      expect(indexed).toBeDefined();
      expect(result.title).toBe(indexed.title);
      expect(result.category).toBe(indexed.category);
      expect(result.url).toBe(`${server.site}${indexed.path}${result.anchor ? `#${result.anchor}` : ''}`);
      expect(result.markdown_url).toBe(`${server.site}${indexed.markdown_url}`);
      expect(result.snippet.length).toBeLessThanOrEqual(242);
      expect(result.snippet).not.toMatch(/<\/?[a-z][^>]*>|\n/);
      expect(result.sections.length).toBeLessThanOrEqual(3);
      for (const other of result.sections) {
        expect(Object.keys(other).sort()).toEqual(['anchor', 'section', 'url']);
        expect(other.url).toBe(`${server.site}${indexed.path}${other.anchor ? `#${other.anchor}` : ''}`);
        expect(other.anchor).not.toBe(result.anchor);
      }
    });
    // One result per page.
    const paths = body.results.map((r: { path: string }) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('points every result at an anchor that exists on the rendered page and a path the page operation accepts', async () => {
    const withAnchor = site.passages.find((p) => p.anchor !== '')!;
    const page = site.pages[withAnchor.page]!;
    const res = await search(`?q=${encodeURIComponent(`${withAnchor.section} ${page.title}`)}&limit=20`);
    const results = res.json().results as Array<{ path: string; anchor: string; url: string }>;
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) {
      const html = site.read(`${result.path}/index.html`);
      if (result.anchor) expect(html, result.url).toContain(`id="${result.anchor}"`);
      const follow = await request(`${server.url}/api/v1/page?path=${encodeURIComponent(result.path)}`);
      expect(follow.status).toBe(200);
    }
    expect(results.some((r) => r.path === page.path && r.anchor === withAnchor.anchor)).toBe(true);
  });

  it('keeps code identifiers searchable as written', async () => {
    const identifier = /(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![\w-])/g;
    const seen = new Map<string, number>();
    for (const passage of site.passages) {
      for (const match of new Set(passage.text.match(identifier) ?? [])) {
        seen.set(match.toLowerCase(), (seen.get(match.toLowerCase()) ?? 0) + 1);
      }
    }
    expect(seen.size, 'the corpus mentions no hyphenated or snake_case identifier').toBeGreaterThan(0);
    const rarest = [...seen].sort((a, b) => a[1] - b[1] || b[0].length - a[0].length)[0]![0];
    const res = await search(`?q=${encodeURIComponent(rarest)}`);
    const top = res.json().results[0];
    const passage = site.passages.find(
      (p) => site.pages[p.page]!.path === top.path && p.anchor === top.anchor,
    )!;
    expect(`${passage.section} ${passage.text}`.toLowerCase()).toContain(rarest);
  });

  it('honours limit from 1 to 20 and defaults to 5', async () => {
    const common = site.pages.map((p) => p.title).join(' ');
    const q = encodeURIComponent(common.slice(0, 500));
    const one = (await search(`?q=${q}&limit=1`)).json();
    expect(one.limit).toBe(1);
    expect(one.results).toHaveLength(1);
    const twenty = (await search(`?q=${q}&limit=20`)).json();
    expect(twenty.results.length).toBe(Math.min(20, twenty.total));
    const byDefault = (await search(`?q=${q}`)).json();
    expect(byDefault.results.length).toBe(Math.min(5, byDefault.total));
    expect(byDefault.results).toEqual(twenty.results.slice(0, byDefault.results.length));
  });

  it.each(['0', '21', '-1', '1.5', 'five', '', '1e1', '0x5', ' 5', '99999999999999999999'])(
    'answers 400 invalid_request for limit=%j',
    async (limit) => {
      const res = await search(`?q=agent&limit=${encodeURIComponent(limit)}`);
      const problem = expectProblem(res, 400, 'invalid_request');
      expect(problem.instance).toBe('/api/v1/search');
      expect(problem.errors).toEqual([expect.objectContaining({ field: 'limit' })]);
      expectCommonHeaders(res, 10_000);
    },
  );

  it.each([
    ['missing', ''],
    ['empty', '?q='],
    ['blank', '?q=%20%20%09'],
  ])(
    'answers 400 missing_parameter when q is %s, telling the caller to retry with a non-empty q',
    async (_, query) => {
      const res = await search(query);
      const problem = expectProblem(res, 400, 'missing_parameter');
      expect(problem.resolution).toMatch(/retry with a non-empty q/i);
      expect(problem.errors).toEqual([expect.objectContaining({ field: 'q' })]);
    },
  );

  it('accepts q of 512 characters and refuses 513 with invalid_request', async () => {
    expect((await search(`?q=${'a'.repeat(512)}`)).status).toBe(200);
    const problem = expectProblem(await search(`?q=${'a'.repeat(513)}`), 400, 'invalid_request');
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'q' })]);
  });

  it('refuses a parameter given twice', async () => {
    expectProblem(await search('?q=a&q=b'), 400, 'invalid_request');
    expectProblem(await search('?q=a&limit=2&limit=3'), 400, 'invalid_request');
  });

  it('answers an empty result set for a query with no searchable terms or no match', async () => {
    for (const q of ['!!! ??? ...', 'zzqxjv']) {
      const res = await search(`?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      const body = res.json();
      expect(body.query).toBe(q);
      expect(body).toMatchObject({ total: 0, results: [] });
    }
  });

  it('searches markup in q as its words and echoes it only inside JSON', async () => {
    const q = '<script>alert(1)</script>';
    const res = await search(`?q=${encodeURIComponent(q)}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const body = res.json();
    expect(body.query).toBe(q);
    // The angle brackets and slashes are separators, so the query ranks exactly as its words do.
    const words = (await search(`?q=${encodeURIComponent('script alert 1 script')}`)).json();
    expect({ total: body.total, results: body.results }).toEqual({
      total: words.total,
      results: words.results,
    });
    // A snippet is plain text cut from the docs: the query's markup never comes back inside one.
    for (const result of body.results) expect(result.snippet).not.toContain('<script>');
  });

  it('ignores unknown query parameters', async () => {
    expect((await search('?q=agent&format=xml&lang=fr')).status).toBe(200);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await search('?q=agent');
    const head = await search('?q=agent', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expectCommonHeaders(head, 10_000);
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers %s with 405 and Allow', async (method) => {
    const res = await search('?q=agent', { method, body: '{}' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
    expectCommonHeaders(res, 10_000);
  });
});
