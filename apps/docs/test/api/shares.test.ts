import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ID_PATTERN } from '@switchyard/shared';
import { openTestDatabase, type TestDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    database = await openTestDatabase();
    server = await startTestServer({ db: database.db, rateLimit: 10_000, sharesMaxBytes: 16 * 1024 });
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
      expect(res.headers.vary).toBe('Accept');
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
      // Spec §7: a client that does not rank HTML first gets the problem document too.
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

  it.each(['GET', 'PUT', 'DELETE'])('answers %s with 405 and Allow: POST', async (method) => {
    const res = await publish({ method });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST');
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
