import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ID_PATTERN, jsonTextDepth, MAX_JSON_DEPTH } from '@switchyard/shared';
import { openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../support/database.ts';
import {
  expectCommonHeaders,
  expectProblem,
  parseRawResponse,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

function bundle(overrides: Record<string, unknown> = {}) {
  return {
    version: 1,
    workflow_id: 'wf_support_42',
    title: 'Refund triage <for> "ACME"',
    generated_at: '2026-11-22T05:00:00.000Z',
    totals: { nodes: 3, succeeded: 2, failed: 1, duration_ms: 4830 },
    nodes: [
      {
        execution_id: 'ex_triage',
        node_id: 'support-agent',
        target: 'support-agent.triage',
        status: 'succeeded',
        duration_ms: 830,
        input_preview: { ticket: 42, text: 'I was charged twice' },
        output_preview: 'route: billing',
      },
      {
        execution_id: 'ex_refund',
        target: 'billing-agent.refund',
        status: 'failed',
        duration_ms: 3000,
        error_message: 'card declined by issuer',
      },
      { execution_id: 'ex_notify', target: 'notify-agent.email', status: 'succeeded', duration_ms: 1000 },
    ],
    edges: [
      { from: 'ex_triage', to: 'ex_refund' },
      { from: 'ex_triage', to: 'ex_notify' },
    ],
    ...overrides,
  };
}

/**
 * A bundle exactly as the platform CLI publishes it:
 * `id`, `agent` and `func` per node, `ended_at: ""` while a node runs, nulls for what was not
 * measured, previews as clipped strings, and no title.
 */
function cliBundle() {
  return {
    version: 1,
    workflow_id: 'wf_cli_7',
    generated_at: '2026-11-22T05:00:03Z',
    totals: { agents: 2, duration_ms: 1830, cost_usd: null },
    nodes: [
      {
        id: 'exec_20261122_050000_a1b2c3d4',
        agent: 'support-agent',
        func: 'triage',
        status: 'succeeded',
        started_at: '2026-11-22T05:00:00Z',
        ended_at: '2026-11-22T05:00:01.830Z',
        duration_ms: 1830,
        cost_usd: null,
        model: null,
        input_preview: '{\n  "ticket": 42,\n  "text": "I was charged twice"\n}',
        output_preview: `{\n  "route": "${'b'.repeat(40)}"\n}\n… [truncated]`,
        error: null,
      },
      {
        id: 'exec_20261122_050001_e5f6a7b8',
        agent: 'billing-agent',
        func: 'refund_payment',
        status: 'running',
        started_at: '2026-11-22T05:00:01Z',
        ended_at: '',
        duration_ms: null,
        cost_usd: null,
        model: null,
        input_preview: '[redacted]',
        output_preview: '',
        error: null,
      },
      {
        id: 'exec_20261122_050001_c9d0e1f2',
        agent: 'notify-agent',
        func: 'email',
        status: 'failed',
        started_at: '2026-11-22T05:00:01Z',
        ended_at: '2026-11-22T05:00:02Z',
        duration_ms: 1000,
        cost_usd: null,
        model: null,
        input_preview: '',
        output_preview: '',
        error: 'smtp relay refused the message',
      },
    ],
    edges: [
      { from: 'exec_20261122_050000_a1b2c3d4', to: 'exec_20261122_050001_e5f6a7b8' },
      { from: 'exec_20261122_050000_a1b2c3d4', to: 'exec_20261122_050001_c9d0e1f2' },
    ],
  };
}

/** The text a reader sees in the page's article (tags dropped, entities of quotes decoded). */
function articleText(html: string): string {
  const start = html.indexOf('<article');
  const end = html.indexOf('</article>', start);
  expect(start, 'the page has an article').toBeGreaterThanOrEqual(0);
  return html
    .slice(start, end)
    .replace(/<[^>]*>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');
}

/** A bundle whose first node's input preview nests arrays so that the whole body is `depth` deep. */
function bundleOfDepth(depth: number): string {
  // The body object, `nodes` and the node itself are three levels; the preview holds the rest.
  const inner = depth - 3;
  const preview = `${'['.repeat(inner)}1${']'.repeat(inner)}`;
  const text = JSON.stringify(bundle({ nodes: [], edges: [] })).replace(
    '"nodes":[]',
    `"nodes":[{"execution_id":"deep","target":"a.b","status":"succeeded","input_preview":${preview}}]`,
  );
  expect(jsonTextDepth(text)).toBe(depth);
  return text;
}

const json = (value: unknown) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(value),
});

/**
 * A POST with `Expect: 100-continue` on a raw socket: the body is sent only once the server
 * answers 100 Continue, as curl and other clients do.
 */
function postExpectingContinue(
  url: string,
  contentLength: number,
  body: string,
): Promise<{ invited: boolean; final: TestResponse }> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    let raw = '';
    let invited = false;
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        `POST /api/v1/shares HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${contentLength}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('utf8');
      const interim = /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.exec(raw);
      if (interim && !invited) {
        invited = true;
        raw = raw.slice(interim[0].length);
        socket.write(body);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve({ invited, final: parseRawResponse(raw) });
      } catch (error) {
        reject(error);
      }
    });
  });
}

describe('POST /api/v1/shares', () => {
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  const publish = (options: Parameters<typeof request>[1]) => request(`${server.url}/api/v1/shares`, options);

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({
      db: database.db,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
      sharesMaxBytes: 16 * 1024,
    });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('publishes a run bundle: 201 with id, absolute url and Location', async () => {
    const res = await publish({
      ...json(bundle()),
      headers: { 'Content-Type': 'application/json', 'X-API-Key': 'sk-ignored' },
    });
    expect(res.status).toBe(201);
    expectCommonHeaders(res, 10_000);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(ID_PATTERN),
      url: `${server.site}/s/${body.id}`,
      workflow_id: 'wf_support_42',
      title: 'Refund triage <for> "ACME"',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      node_count: 3,
      edge_count: 2,
    });
    expect(body.id.startsWith('run_')).toBe(true);
    expect(res.headers.location).toBe(body.url);
  });

  it('serves the permalink as the bundle on Accept: application/json, at /s/{id} and /share/{id}', async () => {
    const { id } = (await publish(json(bundle()))).json();
    for (const permalink of [`/s/${id}`, `/share/${id}`]) {
      const res = await request(`${server.url}${permalink}`, { headers: { Accept: 'application/json' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.vary).toBe('Accept');
      expectCommonHeaders(res, 10_000);
      expect(res.json()).toEqual(bundle());
    }
  });

  it('renders a readable page of the run: title, totals, executions with statuses and durations, edges, previews', async () => {
    const { id } = (await publish(json(bundle()))).json();
    for (const permalink of [`/s/${id}`, `/share/${id}`]) {
      const res = await request(`${server.url}${permalink}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      // The page is compressed when the client asks for it, so it varies by both.
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expect(res.headers['x-robots-tag']).toBe('noindex');
      expectCommonHeaders(res, 10_000);
      const html = res.text;
      expect(html).toContain('<h1');
      // The title is escaped, never injected as markup.
      const body = html.slice(html.indexOf('<body'));
      expect(body).toContain('Refund triage &lt;for&gt; &quot;ACME&quot;');
      expect(body).not.toContain('<for>');
      for (const text of [
        'wf_support_42',
        'support-agent.triage',
        'billing-agent.refund',
        'notify-agent.email',
        'succeeded',
        'failed',
        '830 ms',
        '3.00 s',
        '4.83 s',
        'card declined by issuer',
        'route: billing',
        'I was charged twice',
        'ex_triage',
        'ex_refund',
      ]) {
        expect(html, text).toContain(text);
      }
      expect(html).toMatch(/<meta name="robots" content="noindex"/);
    }
  });

  it('draws the run as a graph: one box per execution linking to its section, one arrow per call, no script', async () => {
    const { url } = (await publish(json(bundle()))).json();
    const html = (await request(url)).text;
    const graph = /<svg[^>]*class="run-graph-svg"[\s\S]*?<\/svg>/.exec(html)?.[0];
    expect(graph, 'an SVG graph').toBeDefined();
    const links = [...graph!.matchAll(/<a href="#([^"]+)" class="run-graph-node status-(\w+)"/g)];
    expect(links.map((link) => [link[1], link[2]])).toEqual([
      ['node-ex_triage', 'succeeded'],
      ['node-ex_refund', 'failed'],
      ['node-ex_notify', 'succeeded'],
    ]);
    for (const [, anchor] of links) expect(html).toContain(`id="${anchor}"`);
    expect(graph!.match(/class="run-graph-edge"/g)).toHaveLength(2);
    // Each status is written out, not only coloured.
    expect(graph).toContain('✗ failed');
    expect(graph).not.toContain('<script');
  });

  it('compresses the permalink page for a client that accepts brotli or gzip', async () => {
    const { id } = (await publish(json(bundle()))).json();
    for (const coding of ['br', 'gzip'] as const) {
      const res = await fetch(`${server.url}/s/${id}`, { headers: { 'Accept-Encoding': coding } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBe(coding);
      // fetch decodes the body: what arrives is the whole page.
      expect(await res.text()).toContain('billing-agent.refund');
    }
  });

  it('answers 404 for an unknown share: the HTML 404 page for browsers, a problem for every other client', async () => {
    for (const id of ['run_0000000000000000000000000a', 'nope', 'run_../../etc']) {
      const html = await request(`${server.url}/s/${encodeURIComponent(id)}`, {
        headers: { Accept: 'text/html' },
      });
      expect(html.status).toBe(404);
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      const problem = await request(`${server.url}/share/${encodeURIComponent(id)}`, {
        headers: { Accept: 'application/json' },
      });
      expectProblem(problem, 404, 'not_found');
      // Every error is a problem document unless the client ranks HTML first: no Accept and `*/*` get it too.
      for (const headers of [{}, { Accept: '*/*' }] as Record<string, string>[]) {
        const res = await request(`${server.url}/s/${encodeURIComponent(id)}`, { headers });
        expectProblem(res, 404, 'not_found');
        expect(res.headers.vary).toBe('Accept');
      }
    }
  });

  it('answers 406 when the client accepts neither HTML nor JSON, and 405 for other methods', async () => {
    const { id } = (await publish(json(bundle()))).json();
    expectProblem(
      await request(`${server.url}/s/${id}`, { headers: { Accept: 'text/markdown' } }),
      406,
      'not_acceptable',
    );
    const del = await request(`${server.url}/s/${id}`, { method: 'DELETE' });
    expectProblem(del, 405, 'method_not_allowed');
    expect(del.headers.allow).toBe('GET, HEAD');
  });

  it.each<[string, unknown, string]>([
    ['version 2', bundle({ version: 2 }), 'version'],
    ['no workflow_id', { ...bundle(), workflow_id: undefined }, 'workflow_id'],
    ['an empty title', bundle({ title: '  ' }), 'title'],
    ['a generated_at that is not a timestamp', bundle({ generated_at: 'yesterday' }), 'generated_at'],
    ['a negative total', bundle({ totals: { nodes: -1 } }), 'totals.nodes'],
    ['a total that is not a number', bundle({ totals: { nodes: '3' } }), 'totals.nodes'],
    ['nodes that are not an array', bundle({ nodes: {} }), 'nodes'],
    [
      'a node without execution_id',
      bundle({ nodes: [{ target: 'a.b', status: 'succeeded' }], edges: [] }),
      'nodes[0].execution_id',
    ],
    [
      'an unknown status',
      bundle({ nodes: [{ execution_id: 'x', target: 'a.b', status: 'done' }], edges: [] }),
      'nodes[0].status',
    ],
    [
      'a negative duration',
      bundle({ nodes: [{ execution_id: 'x', target: 'a.b', status: 'failed', duration_ms: -5 }], edges: [] }),
      'nodes[0].duration_ms',
    ],
    ['an edge to an unknown node', bundle({ edges: [{ from: 'ex_triage', to: 'ex_ghost' }] }), 'edges[0].to'],
    [
      'a duplicate execution id',
      bundle({ nodes: [...bundle().nodes, bundle().nodes[0]] }),
      'nodes[3].execution_id',
    ],
  ])('answers 400 invalid_request naming the field for %s', async (_, body, field) => {
    const res = await publish(json(body));
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(problem.detail).toContain(field);
    // The CLI reads `error` from a failed publish.
    expect(problem.error).toBe(problem.detail);
    expectCommonHeaders(res, 10_000);
  });

  it.each([
    ['an empty body', ''],
    ['malformed JSON', '{"version": 1,'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"bundle"'],
    ['null', 'null'],
  ])('answers 400 invalid_request for %s', async (_, body) => {
    expectProblem(
      await publish({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body }),
      400,
      'invalid_request',
    );
  });

  it('keeps a "__proto__" key inside a preview (found by the property test, seed 1534569615)', async () => {
    const preview = '{"__proto__":null,"ok":[1,{"__proto__":"x"}]}';
    const body = JSON.stringify(bundle({ nodes: [], edges: [] })).replace(
      '"nodes":[]',
      `"nodes":[{"execution_id":"p1","target":"a.b","status":"succeeded","output_preview":${preview}}]`,
    );
    const res = await publish({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(res.status).toBe(201);
    const stored = (await request(res.json().url, { headers: { Accept: 'application/json' } })).text;
    expect(JSON.parse(stored).nodes[0].output_preview).toEqual(JSON.parse(preview));
    expect(Object.keys(JSON.parse(stored).nodes[0].output_preview)).toContain('__proto__');
  });

  it('accepts id as a synonym of execution_id and drops unknown members', async () => {
    const nodes = [{ id: 'a1', target: 'a.b', status: 'running', duration_ms: null, extra: 1 }];
    const res = await publish(json({ ...bundle({ nodes, edges: [] }), cli_version: '1.2.3' }));
    expect(res.status).toBe(201);
    const stored = (await request(res.json().url, { headers: { Accept: 'application/json' } })).json();
    expect(stored.nodes).toEqual([
      { execution_id: 'a1', target: 'a.b', status: 'running', duration_ms: null },
    ]);
    expect(stored).not.toHaveProperty('cli_version');
  });

  it('answers 413 payload_too_large when Content-Length exceeds the limit', async () => {
    const big = JSON.stringify(
      bundle({ title: 'x'.repeat(100), nodes: [], edges: [], padding: 'y'.repeat(20_000) }),
    );
    const res = await publish({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big });
    const problem = expectProblem(res, 413, 'payload_too_large');
    expect(problem.detail).toContain('16384');
    expectCommonHeaders(res, 10_000);
  });

  it('answers 413 payload_too_large for a chunked body that passes the limit as it streams', async () => {
    const res = await publish({
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.alloc(200 * 1024, 'a'),
      chunked: true,
    });
    expect(res.headers['content-length']).toBeDefined();
    expectProblem(res, 413, 'payload_too_large');
  });

  it('answers 413 to Expect: 100-continue with an oversized Content-Length without inviting the body', async () => {
    const { invited, final } = await postExpectingContinue(
      server.url,
      16 * 1024 + 1,
      'z'.repeat(16 * 1024 + 1),
    );
    expect(invited).toBe(false);
    const problem = expectProblem(final, 413, 'payload_too_large');
    expect(problem.error).toBe(problem.detail);
    expect(final.headers.connection).toBe('close');
    expect(final.headers['access-control-allow-origin']).toBe('*');
    expectCommonHeaders(final, 10_000);
  });

  it('invites the body of an Expect: 100-continue publish within the limit and stores it', async () => {
    const body = JSON.stringify(bundle());
    const { invited, final } = await postExpectingContinue(server.url, Buffer.byteLength(body), body);
    expect(invited).toBe(true);
    expect(final.status).toBe(201);
    const { id } = final.json();
    expect(
      (await request(`${server.url}/s/${id}`, { headers: { Accept: 'application/json' } })).json(),
    ).toEqual(bundle());
  });

  it('accepts a chunked body under the limit', async () => {
    const res = await publish({ ...json(bundle()), chunked: true });
    expect(res.status).toBe(201);
  });

  describe("the platform CLI's run bundle", () => {
    it('accepts it as the CLI sends it and answers with url and id', async () => {
      const res = await publish({
        ...json(cliBundle()),
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'User-Agent': 'switchyard-cli/share',
          'X-API-Key': 'sk-ignored',
        },
      });
      expect(res.status, res.text).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({
        id: expect.stringMatching(ID_PATTERN),
        url: `${server.site}/s/${body.id}`,
        workflow_id: 'wf_cli_7',
        title: 'Workflow wf_cli_7',
        node_count: 3,
        edge_count: 2,
      });
    });

    it('serves it as JSON in the canonical form, losing nothing the CLI sent', async () => {
      const { url } = (await publish(json(cliBundle()))).json();
      const stored = (await request(url, { headers: { Accept: 'application/json' } })).json();
      expect(stored).not.toHaveProperty('title');
      expect(stored.totals).toEqual({ agents: 2, duration_ms: 1830, cost_usd: null });
      expect(stored.edges).toEqual(cliBundle().edges);
      const [triage, refund, notify] = cliBundle().nodes;
      expect(stored.nodes).toEqual([
        {
          execution_id: triage!.id,
          target: 'support-agent.triage',
          node_id: 'support-agent',
          status: 'succeeded',
          duration_ms: 1830,
          started_at: triage!.started_at,
          finished_at: triage!.ended_at,
          cost_usd: null,
          model: null,
          input_preview: triage!.input_preview,
          output_preview: triage!.output_preview,
        },
        {
          execution_id: refund!.id,
          target: 'billing-agent.refund_payment',
          node_id: 'billing-agent',
          status: 'running',
          duration_ms: null,
          started_at: refund!.started_at,
          cost_usd: null,
          model: null,
          input_preview: '[redacted]',
          output_preview: '',
        },
        {
          execution_id: notify!.id,
          target: 'notify-agent.email',
          node_id: 'notify-agent',
          status: 'failed',
          duration_ms: 1000,
          started_at: notify!.started_at,
          finished_at: notify!.ended_at,
          cost_usd: null,
          model: null,
          input_preview: '',
          output_preview: '',
          error_message: 'smtp relay refused the message',
        },
      ]);
    });

    it('renders its page: agents and functions, the running node, previews and errors, never "null"', async () => {
      const { url } = (await publish(json(cliBundle()))).json();
      for (const permalink of [url, url.replace('/s/', '/share/')]) {
        const res = await request(permalink);
        expect(res.status).toBe(200);
        const text = articleText(res.text);
        for (const expected of [
          'Workflow wf_cli_7',
          'support-agent triage',
          'billing-agent refund_payment',
          'notify-agent email',
          'running',
          'in progress',
          '1.83 s',
          'Agents 2',
          'Duration 1.83 s',
          'Cost (USD) —',
          '"text": "I was charged twice"',
          '… [truncated]',
          '[redacted]',
          'smtp relay refused the message',
          'exec_20261122_050001_e5f6a7b8',
        ]) {
          expect(text, expected).toContain(expected);
        }
        expect(text).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b|\[object Object\]/);
      }
    });

    it('still accepts the documented node spelling in the same bundle', async () => {
      const mixed = cliBundle();
      mixed.nodes.push({
        execution_id: 'ex_documented',
        target: 'audit-agent.record',
        status: 'succeeded',
      } as never);
      const res = await publish(json(mixed));
      expect(res.status, res.text).toBe(201);
    });

    it('names agent and func when neither they nor a target are given', async () => {
      const partial = cliBundle();
      delete (partial.nodes[0] as Partial<(typeof partial.nodes)[0]>).func;
      const problem = expectProblem(await publish(json(partial)), 400, 'invalid_request');
      expect(problem.errors).toEqual([expect.objectContaining({ field: 'nodes[0].func' })]);
      expect(problem.error).toBe(problem.detail);
    });
  });

  describe('nesting depth', () => {
    it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels with 400 invalid_request, storing nothing`, async () => {
      const before = await database.db('run_shares').count({ n: '*' }).first();
      for (const body of [bundleOfDepth(MAX_JSON_DEPTH + 1), bundleOfDepth(5000)]) {
        const res = await publish({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
        const problem = expectProblem(res, 400, 'invalid_request');
        expect(problem.errors).toEqual([
          { field: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
        ]);
        expect(problem.detail).toContain(String(MAX_JSON_DEPTH));
        expect(problem.error).toBe(problem.detail);
      }
      expect(await database.db('run_shares').count({ n: '*' }).first()).toEqual(before);
    });

    it('serves the permalink of the deepest bundle it accepts, as HTML and as JSON', async () => {
      const body = bundleOfDepth(MAX_JSON_DEPTH);
      const created = await publish({
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(created.status, created.text).toBe(201);
      const { url } = created.json();
      const asJson = await request(url, { headers: { Accept: 'application/json' } });
      expect(asJson.status).toBe(200);
      expect(asJson.json()).toEqual(JSON.parse(body));
      const page = await request(url);
      expect(page.status).toBe(200);
      expect(articleText(page.text)).toContain('[ [ [');
      expect(server.loggedErrors).toEqual([]);
    });

    it('clips a large nested preview on the page instead of pretty-printing it into megabytes', async () => {
      // 60 levels around 4,000 numbers: compact it is small, indented it would be half a megabyte.
      const preview = `${'['.repeat(60)}${Array.from({ length: 4000 }, (_, i) => i % 10).join(',')}${']'.repeat(60)}`;
      const body = JSON.stringify(bundle({ nodes: [], edges: [] })).replace(
        '"nodes":[]',
        `"nodes":[{"execution_id":"wide","target":"a.b","status":"succeeded","output_preview":${preview}}]`,
      );
      const created = await publish({
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(created.status, created.text).toBe(201);
      const page = await request(created.json().url);
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThan(100_000);
      expect(articleText(page.text)).toContain(
        'clipped on this page; the full value is in the JSON permalink',
      );
    });
  });

  it('refuses a "__proto__" key in totals instead of dropping it', async () => {
    const before = await database.db('run_shares').count({ n: '*' }).first();
    const body = JSON.stringify(bundle()).replace('"totals":{', '"totals":{"__proto__":7,');
    expect(Object.keys(JSON.parse(body).totals)).toContain('__proto__');
    const problem = expectProblem(
      await publish({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body }),
      400,
      'invalid_request',
    );
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'totals.__proto__' })]);
    expect(await database.db('run_shares').count({ n: '*' }).first()).toEqual(before);
  });

  it('keeps every snake_case total as sent, in the JSON and on the page', async () => {
    const totals = { nodes: 3, proto: 1, constructor_calls: 2, duration_ms: 4830 };
    const { url } = (await publish(json(bundle({ totals })))).json();
    expect((await request(url, { headers: { Accept: 'application/json' } })).json().totals).toEqual(totals);
    const text = articleText((await request(url)).text);
    for (const shown of ['Nodes 3', 'Proto 1', 'Constructor calls 2', 'Duration 4.83 s']) {
      expect(text).toContain(shown);
    }
  });

  it.each(['GET', 'PUT', 'DELETE'])('answers %s with 405 and Allow: POST', async (method) => {
    const res = await publish({ method });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST');
  });
});

describe('the write budget of publishing', () => {
  const windowSeconds = 600;
  let clock = Date.parse('2026-11-22T06:00:00Z');
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  // About 12 KB stored per publish: three fit the budget of 40,000 bytes, a fourth does not.
  const padded = () =>
    bundle({ nodes: [{ ...bundle().nodes[0], output_preview: 'p'.repeat(12_000) }], edges: [] });
  const publishFrom = (localAddress: string) =>
    request(`${server.url}/api/v1/shares`, { ...json(padded()), localAddress });
  const stored = async () => (await database.db('run_shares').count({ n: '*' }).first())?.n;

  beforeAll(async () => {
    database = await openMigratedTestDatabase();
    server = await startTestServer({
      db: database.db,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
      sharesMaxBytes: 16 * 1024,
      sharesWriteBudgetBytes: 40_000,
      sharesWriteWindowSeconds: windowSeconds,
      now: () => clock,
    });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('answers 429 rate_limited with Retry-After once an address has stored its budget, and stores nothing', async () => {
    for (let i = 0; i < 3; i++) expect((await publishFrom('127.0.0.2')).status).toBe(201);
    const count = await stored();
    const res = await publishFrom('127.0.0.2');
    const problem = expectProblem(res, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBe(String(windowSeconds));
    expect(problem.detail).toMatch(/write budget/);
    // The CLI prints `error` from a failed publish.
    expect(problem.error).toBe(problem.detail);
    expect(await stored()).toBe(count);
  });

  it('keeps the budget of every other address whole', async () => {
    expect((await publishFrom('127.0.0.3')).status).toBe(201);
  });

  it('slides: the wait shrinks as time passes, and the budget returns when old writes leave the window', async () => {
    clock += 200_000;
    const waiting = await publishFrom('127.0.0.2');
    expectProblem(waiting, 429, 'rate_limited');
    expect(waiting.headers['retry-after']).toBe(String(windowSeconds - 200));
    clock += (windowSeconds - 200) * 1000;
    expect((await publishFrom('127.0.0.2')).status).toBe(201);
  });

  it('counts concurrent publishes from one address one after the other', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () => publishFrom('127.0.0.5').then((res) => res.status)),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(3);
  });

  it('refuses a bundle larger than the whole budget as too large, not with a wait', async () => {
    const small = await startTestServer({
      db: database.db,
      rateLimit: 10_000,
      pageRateLimit: 10_000,
      sharesMaxBytes: 16 * 1024,
      sharesWriteBudgetBytes: 8000,
      now: () => clock,
    });
    try {
      const res = await request(`${small.url}/api/v1/shares`, {
        ...json(padded()),
        localAddress: '127.0.0.4',
      });
      const problem = expectProblem(res, 413, 'payload_too_large');
      expect(problem.detail).toMatch(/write budget of 8000 bytes/);
      expect(res.headers['retry-after']).toBeUndefined();
    } finally {
      await small.close();
    }
  });
});

describe('run shares switched off (SHARES_ENABLED=false)', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 503 service_unavailable to a publish and to a permalink', async () => {
    const res = await request(`${server.url}/api/v1/shares`, json(bundle()));
    const problem = expectProblem(res, 503, 'service_unavailable');
    expect(problem.error).toBe(problem.detail);
    expectCommonHeaders(res);
    expectProblem(
      await request(`${server.url}/s/run_0000000000000000000000000a`),
      503,
      'service_unavailable',
    );
  });

  it('does not invite the body of an Expect: 100-continue publish it will refuse', async () => {
    const body = JSON.stringify(bundle());
    const { invited, final } = await postExpectingContinue(server.url, Buffer.byteLength(body), body);
    expect(invited).toBe(false);
    expectProblem(final, 503, 'service_unavailable');
    expectCommonHeaders(final);
  });
});

describe('run shares are durable', () => {
  it('keeps a published run across a server restart', async () => {
    const url = process.env.DATABASE_URL;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-docs-data-'));
    // On PostgreSQL a throwaway database of its own; on PGlite a data directory on disk.
    const database = url ? await openTestDatabase() : undefined;
    const target = database ? { db: database.db } : { dataDir };
    try {
      const first = await startTestServer(target);
      const created = (await request(`${first.url}/api/v1/shares`, json(bundle()))).json();
      await first.close();
      const second = await startTestServer(target);
      try {
        const res = await request(`${second.url}/s/${created.id}`, {
          headers: { Accept: 'application/json' },
        });
        expect(res.status).toBe(200);
        expect(res.json()).toEqual(bundle());
      } finally {
        await second.close();
      }
    } finally {
      await database?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
