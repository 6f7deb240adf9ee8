/**
 * Sharing a workflow run from the dashboard: the run bundle of a real workflow (a parent agent
 * calling two functions of a child agent through the control plane), its redaction and bounds,
 * and publishing it to the docs site, with every way that can fail. The docs site's own answers
 * (its permalink page) are checked against the real docs front server in
 * tests/control-plane/share-run.test.ts; here the site is a loopback server that answers the way
 * a refusing, silent or absent docs site does.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  MAX_JSON_DEPTH,
  RUN_BUNDLE_LIMITS,
  RUN_PREVIEW_CHARS,
  RUN_PREVIEW_REDACTED,
  RUN_PREVIEW_TRUNCATED,
} from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

const KEY = 'shares-test-key';
const AUTH = { 'X-API-Key': KEY };
const WORKFLOW = `wf-share-${process.pid}`;
const TIMEOUT_MS = 400;
const LONG_TEXT = 'All work and no play. '.repeat(200);

let cp: TestControlPlane;
const agents: ExecutionAgent[] = [];
const sites: Server[] = [];
let root: { execution_id: string };
let plannerId: string;
let writerId: string;

/** A docs site stand-in on 127.0.0.1 that answers every request with `answer`; its requests are kept. */
async function docsSite(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const received: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> =
    [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      answer(req, res, body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  sites.push(server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received };
}

/** A port nothing listens on: a server is opened and closed on it. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return `http://127.0.0.1:${port}`;
}

const share = (workflow: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(cp.base, 'POST', `/api/ui/v1/workflows/${encodeURIComponent(workflow)}/share`, body, {
    ...AUTH,
    ...headers,
  });
const bundle = (workflow: string, query = '') =>
  call(
    cp.base,
    'GET',
    `/api/ui/v1/workflows/${encodeURIComponent(workflow)}/bundle${query}`,
    undefined,
    AUTH,
  );

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => {
      config.api.auth = { apiKey: KEY, skipPaths: [] };
      config.shares.publishTimeoutMs = TIMEOUT_MS;
    },
  });
  writerId = uniqueNodeId('writer');
  plannerId = uniqueNodeId('planner');
  const writer = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: writerId,
    apiKey: KEY,
    heartbeatMs: 60_000,
    reasoners: {
      draft: { kind: 'answer', result: (input: { topic: string }) => ({ draft: `About ${input.topic}` }) },
      review: { kind: 'error', status: 500, error: 'model quota exceeded' },
    },
  });
  // The parent calls both functions of the child through the control plane, as an SDK's
  // app.call() does: the sync endpoint with X-Parent-Execution-ID, so each is an edge of the DAG.
  const planner = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: plannerId,
    apiKey: KEY,
    heartbeatMs: 60_000,
    reasoners: {
      plan: {
        kind: 'answer',
        result: async (input: { topic: string }, ctx) => {
          const child = (fn: string) =>
            fetch(`${cp.base}/api/v1/execute/${writerId}.${fn}`, {
              method: 'POST',
              headers: {
                'Content-Type': 'application/json',
                'X-Parent-Execution-ID': ctx.executionId!,
                ...AUTH,
              },
              body: JSON.stringify({ input: { topic: input.topic } }),
            }).then((response) => response.json() as Promise<Record<string, unknown>>);
          const draft = await child('draft');
          const review = await child('review');
          return { draft: draft.result, review: review.code };
        },
      },
    },
  });
  agents.push(writer, planner);
  await writer.register();
  await planner.register();
  const answer = await call(
    cp.base,
    'POST',
    `/api/v1/execute/${plannerId}.plan`,
    { input: { topic: 'trains', notes: LONG_TEXT } },
    { ...AUTH, 'X-Workflow-ID': WORKFLOW },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  root = answer.body;
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  for (const site of sites) {
    site.closeAllConnections();
    await new Promise((done) => site.close(done));
  }
  await cp.close();
});

describe('GET /api/ui/v1/workflows/{workflow_id}/bundle', () => {
  it('answers the run bundle: every execution with agent, function, status, times, previews and errors, and parent → child edges', async () => {
    const res = await bundle(WORKFLOW, '?redact=false&title=Trains%20report');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const dag = (await call(cp.base, 'GET', `/api/v1/workflows/${WORKFLOW}/dag`, undefined, AUTH)).body;
    expect(res.body).toMatchObject({
      version: 1,
      workflow_id: WORKFLOW,
      title: 'Trains report',
      totals: { agents: 2, cost_usd: null },
    });
    expect(Date.parse(res.body.generated_at)).not.toBeNaN();
    expect(res.body.totals.duration_ms).toEqual(expect.any(Number));
    // The same executions as the DAG, in its order.
    expect(res.body.nodes.map((node: { id: string }) => node.id)).toEqual(
      dag.nodes.map((node: { execution_id: string }) => node.execution_id),
    );
    expect(res.body.edges).toEqual(dag.edges);
    // The test's clock stands still, so the three share a creation time: found by function.
    const byFunc = (func: string) => res.body.nodes.find((node: { func: string }) => node.func === func);
    const [parent, draft, review] = [byFunc('plan'), byFunc('draft'), byFunc('review')];
    expect(parent).toMatchObject({
      id: root.execution_id,
      agent: plannerId,
      func: 'plan',
      status: 'succeeded',
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      ended_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      duration_ms: expect.any(Number),
      cost_usd: null,
      model: null,
      error: null,
    });
    expect(res.body.edges).toHaveLength(2);
    expect(res.body.edges).toEqual(
      expect.arrayContaining([
        { from: parent.id, to: draft.id },
        { from: parent.id, to: review.id },
      ]),
    );
    // A long input is pretty JSON cut at 2 KiB and marked.
    expect(parent.input_preview.length).toBe(RUN_PREVIEW_CHARS + RUN_PREVIEW_TRUNCATED.length);
    expect(parent.input_preview.endsWith(RUN_PREVIEW_TRUNCATED)).toBe(true);
    expect(parent.input_preview).toMatch(/^\{\n\s+"notes": "All work and no play\./);
    expect(JSON.parse(parent.output_preview)).toEqual({
      draft: { draft: 'About trains' },
      review: 'execution_failed',
    });
    expect(draft).toMatchObject({ agent: writerId, func: 'draft', status: 'succeeded', error: null });
    expect(JSON.parse(draft.input_preview)).toEqual({ topic: 'trains' });
    expect(draft.input_preview).toContain('\n'); // pretty, not compact
    expect(JSON.parse(draft.output_preview)).toEqual({ draft: 'About trains' });
    expect(review).toMatchObject({
      agent: writerId,
      func: 'review',
      status: 'failed',
      output_preview: '',
      error: expect.stringContaining('model quota exceeded'),
    });
  });

  it('redacts every input, output and error unless redact=false, keeping the graph, statuses and times', async () => {
    const open = (await bundle(WORKFLOW, '?redact=false')).body;
    for (const query of ['', '?redact=true']) {
      const res = await bundle(WORKFLOW, query);
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('title');
      expect(res.body.edges).toEqual(open.edges);
      expect(res.body.totals).toEqual(open.totals);
      res.body.nodes.forEach((node: Record<string, unknown>, i: number) => {
        const unredacted = open.nodes[i];
        expect(node).toEqual({
          ...unredacted,
          input_preview: RUN_PREVIEW_REDACTED,
          // No output (the failed call) stays empty: there is nothing to withhold.
          output_preview: unredacted.output_preview === '' ? '' : RUN_PREVIEW_REDACTED,
          error: unredacted.error === null ? null : RUN_PREVIEW_REDACTED,
        });
      });
      expect(JSON.stringify(res.body)).not.toContain('trains');
      expect(JSON.stringify(res.body)).not.toContain('quota');
    }
  });

  it('is shown on the API page with every member the real answer has', async () => {
    const page = readFileSync(new URL('../../../content/api/events-and-ui.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('### GET /api/ui/v1/workflows/{workflow_id}/bundle'));
    const sample = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!);
    const real = (await bundle(WORKFLOW, '?redact=false&title=x')).body;
    expect(Object.keys(sample).sort()).toEqual(Object.keys(real).sort());
    expect(Object.keys(sample.totals).sort()).toEqual(Object.keys(real.totals).sort());
    expect(Object.keys(sample.nodes[0]).sort()).toEqual(Object.keys(real.nodes[0]).sort());
    expect(Object.keys(sample.edges[0]).sort()).toEqual(Object.keys(real.edges[0]).sort());
  });

  it('answers 404 for a workflow without executions, 400 for a bad parameter, 401 without the key', async () => {
    expect((await bundle('wf-nobody-ran')).body).toMatchObject({ status: 404, code: 'not_found' });
    for (const query of [
      '?redact=yes',
      '?redact=true&redact=false',
      '?format=svg',
      `?title=${'t'.repeat(201)}`,
    ]) {
      const res = await bundle(WORKFLOW, query);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
    expect((await bundle('w'.repeat(257))).status).toBe(400);
    const anonymous = await call(cp.base, 'GET', `/api/ui/v1/workflows/${WORKFLOW}/bundle`);
    expect(anonymous.status).toBe(401);
  });

  it(`refuses a workflow of more than ${RUN_BUNDLE_LIMITS.nodes} executions with 409, rather than cutting it`, async () => {
    const huge = `${WORKFLOW}-huge`;
    const [template] = await cp.handle.db('executions').where({ execution_id: root.execution_id });
    const rows = Array.from({ length: RUN_BUNDLE_LIMITS.nodes + 1 }, (_, i) => ({
      ...template,
      execution_id: `exec_huge_${i}`,
      workflow_id: huge,
      parent_execution_id: null,
      input: JSON.stringify(template.input),
      result: JSON.stringify(template.result),
    }));
    await cp.handle.db.batchInsert('executions', rows, 500);
    const res = await bundle(huge);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'conflict',
      executions: RUN_BUNDLE_LIMITS.nodes + 1,
      limit: RUN_BUNDLE_LIMITS.nodes,
    });
    expect(res.body.detail).toContain(`at most ${RUN_BUNDLE_LIMITS.nodes}`);
    const site = await docsSite((_req, res) => res.writeHead(500).end());
    cp.config.shares.docsUrl = site.url;
    expect((await share(huge, {})).status).toBe(409);
    expect(site.received).toEqual([]);
  });
});

describe('POST /api/ui/v1/workflows/{workflow_id}/share', () => {
  it('publishes the bundle to the docs site and answers 201 with the id and permalink it gave', async () => {
    const site = await docsSite((_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 'run_01', url: 'https://docs.example/s/run_01', title: 'ignored' }));
    });
    cp.config.shares.docsUrl = site.url;
    const res = await share(WORKFLOW, { title: '  Trains  ', redact: false });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 'run_01', url: 'https://docs.example/s/run_01' });
    expect(res.headers.get('location')).toBe('https://docs.example/s/run_01');
    const [sent] = site.received;
    expect(sent).toMatchObject({ method: 'POST', url: '/api/v1/shares' });
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(sent!.headers.accept).toBe('application/json');
    const published = JSON.parse(sent!.body);
    const expected = (await bundle(WORKFLOW, '?redact=false&title=Trains')).body;
    expect({ ...published, generated_at: 'x' }).toEqual({ ...expected, generated_at: 'x' });
  });

  it('publishes redacted by default', async () => {
    const site = await docsSite((_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 'run_02', url: 'http://docs/s/run_02' }));
    });
    cp.config.shares.docsUrl = site.url;
    expect((await share(WORKFLOW, {})).status).toBe(201);
    const published = JSON.parse(site.received[0]!.body);
    expect(published).not.toHaveProperty('title');
    expect(published.nodes.map((node: { input_preview: string }) => node.input_preview)).toEqual([
      RUN_PREVIEW_REDACTED,
      RUN_PREVIEW_REDACTED,
      RUN_PREVIEW_REDACTED,
    ]);
  });

  it('publishes through shares.publish_url when the public docs address is not reachable from here', async () => {
    const site = await docsSite((_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 'run_03', url: 'https://docs.example/s/run_03' }));
    });
    cp.config.shares.docsUrl = await closedPort();
    cp.config.shares.publishUrl = site.url;
    try {
      const res = await share(WORKFLOW, {});
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: 'run_03', url: 'https://docs.example/s/run_03' });
      expect(site.received).toHaveLength(1);
    } finally {
      cp.config.shares.publishUrl = undefined;
    }
  });

  it('answers 503 naming the variable to set when no docs site is configured', async () => {
    cp.config.shares.docsUrl = undefined;
    const res = await share(WORKFLOW, {});
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    expect(res.body.resolution).toContain('SWITCHYARD_DOCS_URL');
  });

  it('answers 502 quoting the docs site when it refuses the bundle', async () => {
    const site = await docsSite((_req, res) => {
      res.writeHead(413, { 'Content-Type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          status: 413,
          code: 'payload_too_large',
          detail: 'The body exceeds the limit of 1048576 bytes.',
        }),
      );
    });
    cp.config.shares.docsUrl = site.url;
    const res = await share(WORKFLOW, {});
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('upstream_unavailable');
    expect(res.body.detail).toBe(
      `The docs site at ${site.url} refused the run bundle with 413: payload_too_large: The body exceeds the limit of 1048576 bytes.`,
    );
    expect(res.body.upstream).toEqual({
      url: `${site.url}/api/v1/shares`,
      status: 413,
      said: 'payload_too_large: The body exceeds the limit of 1048576 bytes.',
    });
  });

  it('answers 502 when the docs site answers without a permalink, or with a redirect it does not follow', async () => {
    const garbled = await docsSite((_req, res) => res.writeHead(201).end('<html>welcome</html>'));
    cp.config.shares.docsUrl = garbled.url;
    const first = await share(WORKFLOW, {});
    expect(first.status).toBe(502);
    expect(first.body.detail).toContain('without a share id and url');
    expect(first.body.detail).toContain('<html>welcome</html>');
    const moved = await docsSite((_req, res) => res.writeHead(308, { Location: 'https://elsewhere/' }).end());
    cp.config.shares.docsUrl = moved.url;
    const second = await share(WORKFLOW, {});
    expect(second.status).toBe(502);
    expect(second.body.detail).toContain('refused the run bundle with 308');
  });

  it('answers 502 naming the docs site when it cannot be reached, or does not answer in time', async () => {
    cp.config.shares.docsUrl = await closedPort();
    const refused = await share(WORKFLOW, {});
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toMatch(
      new RegExp(`^The docs site at ${cp.config.shares.docsUrl} could not be reached: .*ECONNREFUSED`),
    );
    const silent = await docsSite(() => {
      // Never answers.
    });
    cp.config.shares.docsUrl = silent.url;
    const started = Date.now();
    const slow = await share(WORKFLOW, {});
    expect(slow.status).toBe(502);
    expect(slow.body.detail).toContain(`timed out after ${TIMEOUT_MS} ms`);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('answers 404 for an unknown workflow without calling the docs site', async () => {
    const site = await docsSite((_req, res) => res.writeHead(500).end());
    cp.config.shares.docsUrl = site.url;
    const res = await share('wf-nobody-ran', {});
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect(site.received).toEqual([]);
  });

  it('refuses a missing, malformed, oversized, deeply nested or hostile body with a problem, publishing nothing', async () => {
    const site = await docsSite((_req, res) => res.writeHead(500).end());
    cp.config.shares.docsUrl = site.url;
    const nested = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    const cases: Array<[string, unknown, Record<string, string>?]> = [
      ['missing', undefined],
      ['not JSON', '{"title": '],
      ['an array', [{ title: 'x' }]],
      ['a string', '"share it"'],
      ['redact as a string', { redact: 'false' }],
      ['a title of 201 characters', { title: 't'.repeat(201) }],
      ['a title with a control character', { title: 'bell\u0007' }],
      ['a title with a lone surrogate', '{"title": "\\ud800"}'],
      ['an unknown member', { title: 'x', public: true }],
      ['a __proto__ member', '{"__proto__": {"redact": false}}'],
      ['deeply nested', nested],
      ['text/plain', '{}', { 'content-type': 'text/plain' }],
    ];
    for (const [what, body, headers] of cases) {
      const res = await share(WORKFLOW, body, headers);
      expect(res.status, what).toBe(400);
      expect(res.headers.get('content-type'), what).toContain('application/problem+json');
      expect(res.body.code, what).toBe('invalid_request');
      expect(res.body.errors?.length, what).toBeGreaterThan(0);
    }
    const oversized = await share(WORKFLOW, { title: 'x'.repeat(20 * 1024) });
    expect(oversized.status).toBe(413);
    expect(oversized.body.code).toBe('payload_too_large');
    expect((await share('w'.repeat(257), {})).status).toBe(400);
    expect(site.received).toEqual([]);
  });

  it('answers 401 without the API key, publishing nothing', async () => {
    const site = await docsSite((_req, res) => res.writeHead(500).end());
    cp.config.shares.docsUrl = site.url;
    const res = await call(cp.base, 'POST', `/api/ui/v1/workflows/${WORKFLOW}/share`, {});
    expect(res.status).toBe(401);
    expect(site.received).toEqual([]);
  });
});
