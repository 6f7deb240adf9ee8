import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteUrl } from '../src/lib/content-dir.ts';
import { expectCommonHeaders, request, startTestServer } from './api/support/docs-server.ts';
import { assertBuilt, readBuilt } from './support/built-site.ts';
import { type BuildResult, buildSite, page, writeCorpus } from './support/run-build.ts';

/** robots.txt as RFC 9309 reads it: groups of user agents with their rules, and Sitemap lines. */
function parseRobots(text: string) {
  const records = text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean)
    .map((line) => {
      const colon = line.indexOf(':');
      return { field: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() };
    });
  return {
    userAgents: records.filter((r) => r.field === 'user-agent').map((r) => r.value),
    allow: records.filter((r) => r.field === 'allow').map((r) => r.value),
    disallow: records.filter((r) => r.field === 'disallow').map((r) => r.value),
    sitemaps: records.filter((r) => r.field === 'sitemap').map((r) => r.value),
  };
}

describe('robots.txt', () => {
  beforeAll(() => assertBuilt());

  it('lets every crawler fetch everything and names the absolute sitemap URL of the site', () => {
    const robots = parseRobots(readBuilt('robots.txt'));
    expect(robots.userAgents).toEqual(['*']);
    expect(robots.allow).toEqual(['/']);
    expect(robots.disallow).toEqual([]);
    expect(robots.sitemaps).toEqual([`${siteUrl()}/sitemap.xml`]);
    // The sitemap it names is one the build wrote.
    expect(readBuilt('sitemap.xml')).toContain(`<loc>${siteUrl()}/</loc>`);
  });

  it('is served as text/plain with the headers of every response', async () => {
    const server = await startTestServer({ sharesEnabled: false });
    try {
      const res = await request(`${server.url}/robots.txt`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.text).toBe(readBuilt('robots.txt'));
      expectCommonHeaders(res, 1200); // robots.txt is a file of the site: it spends the pages budget
    } finally {
      await server.close();
    }
  });
});

describe('robots.txt of a site built for another address', () => {
  let build: BuildResult;
  let corpus: string;

  beforeAll(async () => {
    corpus = writeCorpus({ 'concepts/nodes.md': page('Nodes', '## Registering\n\nText.') });
    // The build reads SITE_URL from its environment, which buildSite passes on.
    const previous = process.env.SITE_URL;
    process.env.SITE_URL = 'https://docs.example.com/';
    try {
      build = await buildSite(corpus);
    } finally {
      if (previous === undefined) delete process.env.SITE_URL;
      else process.env.SITE_URL = previous;
    }
  });
  afterAll(() => {
    rmSync(corpus, { recursive: true, force: true });
    if (build) rmSync(build.outDir, { recursive: true, force: true });
  });

  it('names the sitemap under SITE_URL', () => {
    expect(build.code, build.output.slice(-2000)).toBe(0);
    const robots = parseRobots(readFileSync(path.join(build.outDir, 'client', 'robots.txt'), 'utf8'));
    expect(robots.sitemaps).toEqual(['https://docs.example.com/sitemap.xml']);
  });
});
