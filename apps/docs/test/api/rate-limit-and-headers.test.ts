import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../support/database.ts';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

describe('headers on every response', () => {
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({ db: database.db });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('carries RateLimit-*, X-API-Version and the deprecation-policy Link on answers of every kind', async () => {
    const page = site.pages[0]!.path;
    const created = await request(`${server.url}/api/v1/shares`, {
      method: 'POST',
      body: JSON.stringify({
        version: 1,
        workflow_id: 'wf',
        title: 'Headers',
        generated_at: '2026-11-22T05:00:00Z',
        totals: {},
        nodes: [],
        edges: [],
      }),
    });
    const shareUrl: string = created.json().url;
    // API answers spend the API's budget, everything else the pages': each counts down its own.
    const responses: Array<[string, 'api' | 'pages', TestResponse]> = [
      ['201 share', 'api', created],
      ['200 search', 'api', await request(`${server.url}/api/v1/search?q=agent`)],
      ['200 topics', 'api', await request(`${server.url}/api/v1/topics`)],
      ['200 page', 'api', await request(`${server.url}/api/v1/page?path=${page}`)],
      ['200 alias', 'api', await request(`${server.url}/api/agent/search?q=agent`)],
      [
        '200 mcp',
        'api',
        await request(`${server.url}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }),
      ],
      ['200 html page', 'pages', await request(`${server.url}${page}`)],
      [
        '200 markdown page',
        'pages',
        await request(`${server.url}${page}`, { headers: { Accept: 'text/markdown' } }),
      ],
      ['200 static', 'pages', await request(`${server.url}/llms.txt`)],
      ['200 share page', 'pages', await request(shareUrl)],
      ['200 share json', 'pages', await request(shareUrl, { headers: { Accept: 'application/json' } })],
      ['204 options', 'api', await request(`${server.url}/api/v1/search`, { method: 'OPTIONS' })],
      ['301 redirect', 'pages', await request(`${server.url}${page}/`)],
      ['400 search', 'api', await request(`${server.url}/api/v1/search`)],
      ['404 api', 'api', await request(`${server.url}/api/v1/nope`)],
      ['404 page', 'pages', await request(`${server.url}/nope`)],
      ['405 api', 'api', await request(`${server.url}/api/v1/search`, { method: 'DELETE' })],
      [
        '406 page',
        'pages',
        await request(`${server.url}${page}`, { headers: { Accept: 'application/json' } }),
      ],
      [
        '413 share',
        'api',
        await request(`${server.url}/api/v1/shares`, { method: 'POST', body: Buffer.alloc(1024 * 1024 + 1) }),
      ],
    ];
    const previousRemaining = { api: 121, pages: 1201 };
    for (const [what, budget, res] of responses) {
      expectCommonHeaders(res, budget === 'api' ? 120 : 1200);
      const remaining = Number(res.headers['ratelimit-remaining']);
      expect(remaining, what).toBeLessThan(previousRemaining[budget]);
      previousRemaining[budget] = remaining;
    }
  });

  it('sends no Sunset or Deprecation header: nothing is scheduled for removal', async () => {
    const res = await request(`${server.url}/api/v1/search?q=agent`);
    expect(res.headers.sunset).toBeUndefined();
    expect(res.headers.deprecation).toBeUndefined();
  });

  it('points the deprecation-policy link at a published page', async () => {
    const res = await request(`${server.url}/api/v1/topics`);
    const target = /<([^>]+)>; rel="deprecation-policy"/.exec(String(res.headers.link))![1]!;
    expect(target).toBe(`${server.site}/docs/reference/versioning`);
    expect((await request(target.replace(server.site, server.url))).status).toBe(200);
  });
});

describe('rate limit: 120 API requests and 1200 others per 60 seconds per client address', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let clock = 1_000_000;
  const site = builtSite();

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, now: () => clock });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts down the API budget, then answers 429 rate_limited with Retry-After until the window resets', async () => {
    const client = { localAddress: '127.0.0.2' };
    for (let i = 1; i <= 120; i++) {
      const res = await request(`${server.url}/api/v1/search?q=agent`, client);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(120 - i));
    }
    clock += 15_000;
    const limited = await request(`${server.url}/api/v1/topics`, client);
    const problem = expectProblem(limited, 429, 'rate_limited');
    expect(problem.instance).toBe('/api/v1/topics');
    expect(problem.budget).toBe('api');
    expect(problem.detail).toBe(
      'The API budget (requests to /api/ and /mcp) of 120 requests per 60 seconds is spent for this client.',
    );
    expect(limited.headers['retry-after']).toBe('45');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toBe('45');
    expectCommonHeaders(limited);

    // Pages and files have their own budget, untouched by the API's.
    const llms = await request(`${server.url}/llms.txt`, client);
    expect(llms.status).toBe(200);
    expectCommonHeaders(llms, 1200);
    expect(llms.headers['ratelimit-remaining']).toBe('1199');
    // Another address has its own budget.
    const other = await request(`${server.url}/api/v1/search?q=agent`, { localAddress: '127.0.0.3' });
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('119');

    clock += 45_000;
    const again = await request(`${server.url}/api/v1/search?q=agent`, client);
    expect(again.status).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('119');
    expect(again.headers['ratelimit-reset']).toBe('60');
  });

  it('lets one address read every page, its markdown and the generated files without a 429, and still limits its API calls', async () => {
    const client = { localAddress: '127.0.0.6' };
    // Each page as HTML, as markdown and with a trailing slash (a redirect), and every generated file.
    const paths = [
      '/',
      '/index.md',
      ...site.pages.flatMap((page) => [page.path, `${page.path}.md`, `${page.path}/`]),
      '/llms.txt',
      '/llms-full.txt',
      '/docs-ai.json',
      '/agents.md',
      '/pricing.md',
      '/sitemap.xml',
      '/robots.txt',
      '/openapi.json',
      '/.well-known/ai-catalog.json',
      '/.well-known/ai-plugin.json',
      '/.well-known/mcp.json',
      '/.well-known/mcp/server-card.json',
      '/nope',
    ];
    // More than the link check that ran into the API's budget, every path asked for once.
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.length).toBeGreaterThan(113);
    for (const [i, target] of paths.entries()) {
      const res = await request(`${server.url}${target}`, client);
      const expected = target === '/nope' ? 404 : target.length > 1 && target.endsWith('/') ? 301 : 200;
      expect(res.status, target).toBe(expected);
      expectCommonHeaders(res, 1200);
      expect(res.headers['ratelimit-remaining'], target).toBe(String(1200 - i - 1));
    }
    for (let i = 1; i <= 120; i++) {
      const res = await request(`${server.url}/api/v1/topics`, client);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(120 - i));
    }
    expectProblem(await request(`${server.url}/api/v1/topics`, client), 429, 'rate_limited');
  });

  it('does not spend the page budget on fingerprinted assets, but still reports it', async () => {
    const client = { localAddress: '127.0.0.4' };
    const css = readdirSync(path.join(site.client, '_astro')).find((name) => name.endsWith('.css'))!;
    await request(`${server.url}/llms.txt`, client);
    for (let i = 0; i < 3; i++) {
      const res = await request(`${server.url}/_astro/${css}`, client);
      expect(res.status).toBe(200);
      expectCommonHeaders(res, 1200);
      expect(res.headers['ratelimit-remaining']).toBe('1199');
    }
  });

  it('ignores X-Forwarded-For unless the server is told it sits behind a proxy', async () => {
    const a = await request(`${server.url}/api/v1/topics`, {
      localAddress: '127.0.0.5',
      headers: { 'X-Forwarded-For': '203.0.113.1' },
    });
    const b = await request(`${server.url}/api/v1/topics`, {
      localAddress: '127.0.0.5',
      headers: { 'X-Forwarded-For': '203.0.113.2' },
    });
    expect(a.headers['ratelimit-remaining']).toBe('119');
    expect(b.headers['ratelimit-remaining']).toBe('118');
  });
});

describe('rate limit behind a trusted proxy (DOCS_TRUST_PROXY=true)', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    server = await startTestServer({
      sharesEnabled: false,
      trustedProxyHops: 1,
      rateLimit: 2,
      rateWindowSeconds: 30,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('keys the budget on the address the proxy appended to X-Forwarded-For', async () => {
    const from = (forwarded: string) =>
      request(`${server.url}/api/v1/topics`, { headers: { 'X-Forwarded-For': forwarded } });
    expect((await from('203.0.113.7')).headers['ratelimit-remaining']).toBe('1');
    expect((await from('203.0.113.7')).headers['ratelimit-remaining']).toBe('0');
    const limited = await from('203.0.113.7');
    expectProblem(limited, 429, 'rate_limited');
    expectCommonHeaders(limited, 2, 30);
    // A client cannot mint a fresh budget by prepending addresses: only the last hop counts.
    expectProblem(await from('198.51.100.1, 203.0.113.7'), 429, 'rate_limited');
    expect((await from('203.0.113.8')).status).toBe(200);
  });
});

describe('rate limit of pages (DOCS_PAGE_RATE_LIMIT)', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let clock = 2_000_000;
  const page = builtSite().pages[0]!.path;

  beforeAll(async () => {
    server = await startTestServer({
      sharesEnabled: false,
      rateLimit: 3,
      pageRateLimit: 5,
      rateWindowSeconds: 30,
      now: () => clock,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses the request after the page budget with a 429 naming it, while the API budget stays whole', async () => {
    const client = { localAddress: '127.0.0.8' };
    for (let i = 1; i <= 5; i++) {
      const res = await request(`${server.url}${i % 2 ? page : '/llms.txt'}`, client);
      expect(res.status).toBe(200);
      expectCommonHeaders(res, 5, 30);
      expect(res.headers['ratelimit-remaining']).toBe(String(5 - i));
    }
    clock += 10_000;
    const limited = await request(`${server.url}${page}`, {
      ...client,
      headers: { Accept: 'application/json' },
    });
    const problem = expectProblem(limited, 429, 'rate_limited');
    expect(problem.budget).toBe('pages');
    expect(problem.detail).toMatch(/^The page budget \(.+\) of 5 requests per 30 seconds is spent/);
    expectCommonHeaders(limited, 5, 30);
    expect(limited.headers['retry-after']).toBe('20');
    // Assets spend nothing and are not refused; the API has a budget of its own.
    const css = readdirSync(path.join(builtSite().client, '_astro')).find((name) => name.endsWith('.css'))!;
    expect((await request(`${server.url}/_astro/${css}`, client)).status).toBe(200);
    const api = await request(`${server.url}/api/v1/topics`, client);
    expect(api.status).toBe(200);
    expectCommonHeaders(api, 3, 30);
    expect(api.headers['ratelimit-remaining']).toBe('2');

    clock += 20_000;
    expect((await request(`${server.url}${page}`, client)).headers['ratelimit-remaining']).toBe('4');
  });
});
