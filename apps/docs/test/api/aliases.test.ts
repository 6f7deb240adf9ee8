import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
} from './support/docs-server.ts';

describe('unversioned aliases /api/agent/*', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['search', `?q=${encodeURIComponent(site.pages[0]!.title)}&limit=3`],
    ['topics', '?category=Reference'],
    ['page', `?path=${encodeURIComponent(site.pages[0]!.path)}`],
  ])('/api/agent/%s answers what /api/v1 answers, with Link rel="successor-version"', async (name, query) => {
    const versioned = await request(`${server.url}/api/v1/${name}${query}`);
    const alias = await request(`${server.url}/api/agent/${name}${query}`);
    expect(alias.status).toBe(200);
    expect(alias.text).toBe(versioned.text);
    expect(alias.headers['content-type']).toBe(versioned.headers['content-type']);
    expectCommonHeaders(alias, 10_000);
    expect(alias.headers.link).toContain(`</api/v1/${name}>; rel="successor-version"`);
    expect(alias.headers.link).toContain('rel="deprecation-policy"');
    expect(alias.headers.sunset).toBeUndefined();
    expect(alias.headers.deprecation).toBeUndefined();
    expect(versioned.headers.link).not.toContain('successor-version');
  });

  it('answers errors in the same shape, still with the successor link', async () => {
    const res = await request(`${server.url}/api/agent/search`);
    const problem = expectProblem(res, 400, 'missing_parameter');
    expect(problem.instance).toBe('/api/agent/search');
    expect(res.headers.link).toContain('</api/v1/search>; rel="successor-version"');
    const post = await request(`${server.url}/api/agent/page`, { method: 'POST', body: '{}' });
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.link).toContain('</api/v1/page>; rel="successor-version"');
  });
});
