import { isProblem, MAX_JSON_DEPTH } from '@switchyard/shared';
import type { TestDatabase } from '@switchyard/shared/db';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../support/database.ts';
import { builtSite, request, startTestServer, type TestResponse } from './support/docs-server.ts';

const RUNS = 120;

/**
 * The one spelling of `errors[].field` in both apps (fieldPath in packages/shared): `(body)`, or
 * a name followed by `.name`, `[index]` or `["odd key"]` steps.
 */
const FIELD_PATH =
  /^(\(body\)|([A-Za-z_$][\w$-]*|\["(?:[^"\\]|\\.)*"\])(\.[A-Za-z_$][\w$-]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*)$/;

/** The invariants of every answer: never a 5xx, and a complete problem document for every error. */
function expectWellFormed(res: TestResponse, context: string): void {
  expect(res.status, context).toBeLessThan(500);
  expect(res.headers['x-api-version'], context).toBe('v1');
  expect(res.headers['ratelimit-policy'], context).toBeDefined();
  if (res.status >= 400) {
    expect(res.headers['content-type'], context).toMatch(/^application\/problem\+json/);
    const body = JSON.parse(res.text);
    expect(isProblem(body), `${context}: ${res.text}`).toBe(true);
    expect(body.status, context).toBe(res.status);
    for (const error of body.errors ?? []) expect(error.field, context).toMatch(FIELD_PATH);
  }
}

/** A JSON text nesting arrays `depth` deep (inside whatever holds it). */
const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;

/** Printable ASCII: what an HTTP client can put in a header value. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});
const anyText = fc.string({ unit: 'binary', maxLength: 600 });
const pathSegment = fc.oneof(
  fc.constantFrom(
    'docs',
    'api',
    'v1',
    'agent',
    'search',
    'topics',
    'page',
    'shares',
    's',
    'share',
    '..',
    '.',
    '%2e%2e',
    '%2F',
    '',
    '_astro',
    'index.html',
    'pagefind',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.stringMatching(/^[a-z0-9%._-]{1,12}$/),
);

describe('properties: hostile input never breaks the server', () => {
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const site = builtSite();

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({
      db: database.db,
      rateLimit: 1_000_000,
      pageRateLimit: 1_000_000,
      sharesMaxBytes: 64 * 1024,
    });
  });
  afterAll(async () => {
    expect(server.loggedErrors).toEqual([]);
    await server?.close();
    await database?.close();
  });

  it('search answers 200 or a 400 problem for any q and limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(anyText, { nil: undefined }),
        fc.option(fc.oneof(fc.integer({ min: -50, max: 50 }).map(String), anyText), { nil: undefined }),
        fc.constantFrom('/api/v1/search', '/api/agent/search'),
        async (q, limit, endpoint) => {
          const query = new URLSearchParams();
          if (q !== undefined) query.set('q', q);
          if (limit !== undefined) query.set('limit', limit);
          const res = await request(`${server.url}${endpoint}?${query}`);
          expectWellFormed(res, `${endpoint}?${query}`);
          expect([200, 400]).toContain(res.status);
          if (res.status === 200) {
            const body = res.json();
            expect(body.results.length).toBeLessThanOrEqual(Number(limit ?? 5));
            for (const result of body.results)
              expect(result.url.startsWith(`${server.site}/docs/`)).toBe(true);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('page and topics answer 200, 400 or 404 for any parameter value', async () => {
    const pagePath = fc.oneof(
      anyText,
      fc
        .constantFrom(...site.pages.map((p) => p.path))
        .chain((p) =>
          fc.constantFrom(
            p,
            `${p}/`,
            `${p}.md`,
            `${p}#x`,
            `${p}/../..`,
            `${p}%00`,
            `${p}\n`,
            p.toUpperCase(),
          ),
        ),
    );
    await fc.assert(
      fc.asyncProperty(pagePath, fc.option(anyText, { nil: undefined }), async (path, category) => {
        const page = await request(`${server.url}/api/v1/page?${new URLSearchParams({ path })}`);
        expectWellFormed(page, `page ${JSON.stringify(path)}`);
        expect([200, 400, 404]).toContain(page.status);
        const query = category === undefined ? '' : `?${new URLSearchParams({ category })}`;
        const topics = await request(`${server.url}/api/v1/topics${query}`);
        expectWellFormed(topics, `topics ${query}`);
        expect([200, 400]).toContain(topics.status);
      }),
      { numRuns: RUNS },
    );
  });

  it('any path, method and Accept header gets a well-formed answer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(pathSegment, { minLength: 0, maxLength: 5 }),
        fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        fc.option(
          fc.oneof(
            headerValue,
            fc.constantFrom('application/json', 'text/markdown', 'text/html;q=0', '*/*;q=0.0001'),
          ),
          {
            nil: undefined,
          },
        ),
        async (segments, method, accept) => {
          const urlPath = `/${segments.join('/')}`;
          const headers: Record<string, string> = { Accept: accept ?? 'application/json' };
          const res = await request(`${server.url}${urlPath}`, {
            method,
            headers,
            ...(method === 'POST' || method === 'PUT' ? { body: '{}' } : {}),
          });
          const context = `${method} ${urlPath} Accept: ${headers.Accept}`;
          expect(res.status, context).toBeLessThan(500);
          // The HTML 404 page answers only clients that name text/html; every other error is a
          // problem document.
          const htmlNotFound =
            res.status === 404 &&
            String(res.headers['content-type']).startsWith('text/html') &&
            /text\/html/i.test(headers.Accept ?? '');
          if (!htmlNotFound && method !== 'HEAD') expectWellFormed(res, context);
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it('any headers on a documentation page give 200, 304, 406 or a redirect, always with Vary: Accept', async () => {
    const page = site.pages[0]!.path;
    await fc.assert(
      fc.asyncProperty(
        headerValue,
        headerValue,
        headerValue,
        headerValue,
        async (accept, ifNoneMatch, forwarded, since) => {
          const res = await request(`${server.url}${page}`, {
            headers: {
              Accept: accept,
              'If-None-Match': ifNoneMatch,
              'X-Forwarded-For': forwarded,
              'If-Modified-Since': since,
            },
          });
          expect([200, 304, 406], `Accept: ${accept}`).toContain(res.status);
          // The page itself also varies by coding (it is sent compressed when the client accepts it); the
          // small 406 document does not.
          expect(res.headers.vary).toBe(res.status === 406 ? 'Accept' : 'Accept, Accept-Encoding');
          if (res.status === 406) expectWellFormed(res, `Accept: ${accept}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('any valid run bundle is published and comes back unchanged', async () => {
    const statuses = [
      'queued',
      'pending',
      'running',
      'succeeded',
      'failed',
      'cancelled',
      'timeout',
      'waiting',
    ];
    const validBundle = fc
      .uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), { maxLength: 6 })
      .chain((ids) =>
        fc.record({
          version: fc.constant(1),
          workflow_id: fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
          title: fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }).filter((t) => t.trim() !== ''),
          generated_at: fc
            .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
            .map((d) => d.toISOString()),
          totals: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/), fc.nat(), { maxKeys: 6 }),
          nodes: fc.tuple(
            ...ids.map((execution_id) =>
              fc.record({
                execution_id: fc.constant(execution_id),
                target: fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
                status: fc.constantFrom(...statuses),
                duration_ms: fc.oneof(fc.constant(null), fc.nat(10_000_000)),
                output_preview: fc.jsonValue({ maxDepth: 3 }),
              }),
            ),
          ),
          edges:
            ids.length === 0
              ? fc.constant([])
              : fc.array(fc.record({ from: fc.constantFrom(...ids), to: fc.constantFrom(...ids) }), {
                  maxLength: 6,
                }),
        }),
      )
      // Titles are stored trimmed; keep generated titles already trimmed so the round trip is exact.
      .map((bundle) => ({ ...bundle, title: bundle.title.trim() }));
    await fc.assert(
      fc.asyncProperty(validBundle, async (bundle) => {
        const res = await request(`${server.url}/api/v1/shares`, {
          method: 'POST',
          body: JSON.stringify(bundle),
        });
        expect(res.status, res.text).toBe(201);
        const stored = await request(res.json().url, { headers: { Accept: 'application/json' } });
        expect(stored.json()).toEqual(JSON.parse(JSON.stringify(bundle)));
        expect((await request(res.json().url)).status).toBe(200);
      }),
      { numRuns: 60 },
    );
  });

  it('any bundle the CLI sends is published, stored in canonical form and rendered without "null"', async () => {
    const time = fc
      .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
      .map((d) => d.toISOString());
    const cliBundle = fc
      .uniqueArray(fc.stringMatching(/^exec_[a-z0-9_]{1,20}$/), { minLength: 1, maxLength: 5 })
      .chain((ids) =>
        fc.record(
          {
            version: fc.constant(1),
            workflow_id: fc.stringMatching(/^wf_[a-z0-9]{1,12}$/),
            title: fc
              .string({ unit: 'binary', minLength: 1, maxLength: 60 })
              .filter((t) => t.trim() === t && t !== ''),
            generated_at: time,
            totals: fc.record({
              agents: fc.nat(50),
              duration_ms: fc.oneof(fc.constant(null), fc.nat(10_000_000)),
              cost_usd: fc.constant(null),
            }),
            nodes: fc.tuple(
              ...ids.map((id) =>
                fc.record({
                  id: fc.constant(id),
                  agent: fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
                  func: fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/),
                  status: fc.constantFrom('running', 'succeeded', 'failed', 'waiting'),
                  started_at: fc.oneof(fc.constant(''), time),
                  ended_at: fc.oneof(fc.constant(''), time),
                  duration_ms: fc.oneof(fc.constant(null), fc.nat(10_000_000)),
                  cost_usd: fc.constant(null),
                  model: fc.constant(null),
                  input_preview: fc.oneof(
                    fc.constant(''),
                    fc.constant('[redacted]'),
                    fc.string({ maxLength: 200 }),
                  ),
                  output_preview: fc.oneof(fc.constant(''), fc.string({ maxLength: 200 })),
                  error: fc.oneof(fc.constant(null), fc.string({ minLength: 1, maxLength: 100 })),
                }),
              ),
            ),
            edges: fc.array(fc.record({ from: fc.constantFrom(...ids), to: fc.constantFrom(...ids) }), {
              maxLength: 4,
            }),
          },
          // The CLI leaves the title out when the run has none.
          { requiredKeys: ['version', 'workflow_id', 'generated_at', 'totals', 'nodes', 'edges'] },
        ),
      );
    await fc.assert(
      fc.asyncProperty(cliBundle, async (bundle) => {
        const res = await request(`${server.url}/api/v1/shares`, {
          method: 'POST',
          body: JSON.stringify(bundle),
        });
        expect(res.status, res.text).toBe(201);
        const stored = (await request(res.json().url, { headers: { Accept: 'application/json' } })).json();
        expect(stored.totals).toEqual(bundle.totals);
        bundle.nodes.forEach((node, i) => {
          const kept = stored.nodes[i];
          expect(kept).toMatchObject({
            execution_id: node.id,
            target: `${node.agent}.${node.func}`,
            node_id: node.agent,
          });
          expect(kept.finished_at).toBe(node.ended_at === '' ? undefined : node.ended_at);
          expect(kept.error_message).toBe(node.error ?? undefined);
        });
        const page = await request(res.json().url);
        expect(page.status).toBe(200);
        const article = page.text.slice(page.text.indexOf('<article'), page.text.indexOf('</article>'));
        // Only the generated text is checked: previews and errors are whatever the run produced.
        const generated = article.replace(/<pre>[\s\S]*?<\/pre>/g, '').replace(/<code>[^<]*<\/code>/g, '');
        expect(generated).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
      }),
      { numRuns: 40 },
    );
  });

  it('any body sent to createRunShare gets 201 or a 400/413 problem', async () => {
    const validNode = fc.record(
      {
        execution_id: fc.string({ minLength: 1, maxLength: 10 }),
        target: fc.string({ minLength: 1, maxLength: 20 }),
        status: fc.constantFrom('queued', 'running', 'succeeded', 'failed', 'waiting', 'bogus'),
        duration_ms: fc.oneof(fc.double(), fc.constant(null), fc.integer({ min: 0 })),
        input_preview: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['target', 'status'] },
    );
    const bundleLike = fc.record(
      {
        version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 1 })),
        workflow_id: fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 1 })),
        title: fc.oneof(fc.string({ unit: 'binary', maxLength: 250 }), fc.integer()),
        generated_at: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        totals: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.integer(), fc.double(), fc.string())),
        nodes: fc.array(validNode, { maxLength: 4 }),
        edges: fc.array(fc.record({ from: fc.string({ maxLength: 10 }), to: fc.string({ maxLength: 10 }) }), {
          maxLength: 3,
        }),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      bundleLike.map((b) => JSON.stringify(b)),
      // Nesting around the depth limit, in a preview and in totals.
      fc
        .integer({ min: MAX_JSON_DEPTH - 5, max: MAX_JSON_DEPTH + 200 })
        .map(
          (depth) =>
            `{"version":1,"workflow_id":"w","title":"t","generated_at":"2026-11-22T05:00:00Z","totals":{},"nodes":[{"execution_id":"e","target":"a.b","status":"succeeded","input_preview":${nested(depth - 3)}}],"edges":[]}`,
        ),
      fc.integer({ min: 1, max: 4000 }).map((depth) => `{"totals":${nested(depth)}}`),
      // Keys a plain object would not keep as its own.
      fc
        .constantFrom('__proto__', 'constructor', 'prototype', 'toString')
        .map(
          (key) =>
            `{"version":1,"workflow_id":"w","title":"t","generated_at":"2026-11-22T05:00:00Z","totals":{"${key}":1},"nodes":[],"edges":[]}`,
        ),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.constant('x'.repeat(70 * 1024)),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), headerValue, async (payload, chunked, contentType) => {
        const res = await request(`${server.url}/api/v1/shares`, {
          method: 'POST',
          headers: { 'Content-Type': contentType, 'X-API-Key': contentType },
          body: payload,
          chunked,
        });
        expectWellFormed(res, payload.slice(0, 200));
        expect([201, 400, 413]).toContain(res.status);
        // The CLI prints `error` from a failed publish.
        if (res.status >= 400) expect(typeof res.json().error).toBe('string');
        if (res.status === 201) {
          const stored = await request(res.json().url, { headers: { Accept: 'application/json' } });
          expect(stored.status).toBe(200);
          // What is stored is what the page and the JSON show: nothing kept in one and lost in another.
          const sent = JSON.parse(payload);
          expect(Object.keys(stored.json().totals)).toEqual(Object.keys(sent.totals));
          const page = await request(res.json().url);
          expect(page.status).toBe(200);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
