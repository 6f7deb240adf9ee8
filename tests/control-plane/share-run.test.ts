/**
 * Sharing a workflow run from end to end: a real control plane (started as `npm start` starts
 * it, the docs site named by SWITCHYARD_DOCS_URL) runs a workflow through real agents on
 * 127.0.0.1 (a planner whose reasoner calls two functions of a writer through the control plane,
 * one of which fails), publishes it with POST /api/ui/v1/workflows/{id}/share to the real docs
 * front server, and the permalink it answers serves the same bundle as JSON and a page that draws
 * the run. Needs the docs build (`npm run build -w @switchyard/docs`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, startServer } from '@switchyard/control-plane/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDataDir } from '../support/data-dir.ts';
import { startTestDocsServer, type TestDocsServer } from '../support/docs-server.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const KEY = 'share-run-key';
const WORKFLOW = `wf-share-run-${process.pid}`;

let controlPlane: RunningServer;
let docs: TestDocsServer;
let database: ThrowawayDatabase;
let dataDir: string;
const agents: Server[] = [];

const controlPlaneCall = (method: string, path: string, body?: unknown) =>
  fetch(`${controlPlane.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : JSON.parse(text);
}

/**
 * An agent as the agent SDKs build one: it serves POST /reasoners/{id}, registers with the
 * control plane and reports itself ready. `run` answers a call: a result, or a thrown error (500).
 */
async function startAgent(
  nodeId: string,
  reasoners: Record<string, (input: any, req: IncomingMessage) => Promise<unknown>>,
): Promise<void> {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') return answer(200, { status: 'ok' });
    const fn = reasoners[/^\/reasoners\/(\w+)$/.exec(req.url ?? '')?.[1] ?? ''];
    if (req.method !== 'POST' || !fn) return answer(404, { error: 'no such function' });
    try {
      return answer(200, await fn(await readJson(req), req));
    } catch (error) {
      return answer(500, { error: (error as Error).message });
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  agents.push(server);
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const registered = await controlPlaneCall('POST', '/api/v1/nodes/register', {
    id: nodeId,
    version: '1.0.0',
    base_url: baseUrl,
    deployment_type: 'long_running',
    reasoners: Object.keys(reasoners).map((id) => ({ id, input_schema: { type: 'object' } })),
    skills: [],
  });
  expect(registered.status, await registered.text()).toBeLessThan(300);
  const ready = await controlPlaneCall('POST', `/api/v1/nodes/${nodeId}/lifecycle/status`, {
    status: 'ready',
  });
  expect(ready.status, await ready.text()).toBe(200);
}

beforeAll(async () => {
  docs = await startTestDocsServer();
  dataDir = mkdtempSync(join(tmpdir(), 'sy-share-run-'));
  database = await throwawayDatabase('sy_share_run');
  if (!database.url) await seedDataDir(dataDir, ['control-plane']);
  controlPlane = await startServer({
    env: {
      CONTROL_PLANE_PORT: '0',
      CONTROL_PLANE_HOST: '127.0.0.1',
      SWITCHYARD_DATA_DIR: dataDir,
      SERVICE_API_KEY: KEY,
      LOG_LEVEL: 'error',
      SWITCHYARD_DOCS_URL: docs.url,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    },
  });
  await startAgent('share-writer', {
    draft: async (input) => ({ draft: `A few words about ${input.topic}.` }),
    review: async () => {
      throw new Error('reviewer quota exceeded');
    },
  });
  await startAgent('share-planner', {
    // Calls both functions of the writer through the control plane, as an SDK's app.call() does.
    plan: async (input, req) => {
      const child = async (fn: string) => {
        const response = await fetch(`${controlPlane.url}/api/v1/execute/share-writer.${fn}`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-API-Key': KEY,
            'X-Parent-Execution-ID': String(req.headers['x-execution-id']),
          },
          body: JSON.stringify({ input: { topic: input.topic } }),
        });
        return (await response.json()) as Record<string, unknown>;
      };
      const draft = await child('draft');
      const review = await child('review');
      return { draft: draft.result, reviewed: review.status === 'succeeded' };
    },
  });
  const run = await fetch(`${controlPlane.url}/api/v1/execute/share-planner.plan`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY, 'X-Workflow-ID': WORKFLOW },
    body: JSON.stringify({ input: { topic: 'signal boxes' } }),
  });
  expect(run.status, await run.clone().text()).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const agent of agents) {
    agent.closeAllConnections();
    await new Promise((done) => agent.close(done));
  }
  await controlPlane?.close();
  await docs?.close();
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  expect(docs?.errors).toEqual([]);
});

describe('sharing a workflow run to the docs site', () => {
  it('publishes the run and answers 201 with the permalink, which serves the same bundle as JSON', async () => {
    const expected = await (
      await controlPlaneCall(
        'GET',
        `/api/ui/v1/workflows/${WORKFLOW}/bundle?redact=false&title=Signal%20boxes`,
      )
    ).json();
    expect(expected.nodes).toHaveLength(3);
    const shared = await controlPlaneCall('POST', `/api/ui/v1/workflows/${WORKFLOW}/share`, {
      title: 'Signal boxes',
      redact: false,
    });
    expect(shared.status).toBe(201);
    const body = (await shared.json()) as { id: string; url: string };
    expect(body.id).toMatch(/^run_[0-9a-z]{26}$/);
    expect(body.url).toBe(`${docs.url}/s/${body.id}`);
    expect(shared.headers.get('location')).toBe(body.url);

    const permalink = await fetch(body.url, { headers: { Accept: 'application/json' } });
    expect(permalink.status).toBe(200);
    const stored = await permalink.json();
    // The docs site keeps the bundle in its canonical spelling (execution_id, target, ...).
    expect(stored).toMatchObject({ version: 1, workflow_id: WORKFLOW, title: 'Signal boxes' });
    expect(stored.totals).toEqual(expected.totals);
    expect(stored.edges).toEqual(expected.edges);
    expect(stored.nodes.map((node: { execution_id: string }) => node.execution_id)).toEqual(
      expected.nodes.map((node: { id: string }) => node.id),
    );
    const review = stored.nodes.find((node: { target: string }) => node.target === 'share-writer.review');
    expect(review).toMatchObject({ node_id: 'share-writer', status: 'failed' });
    expect(review.error_message).toContain('reviewer quota exceeded');
  });

  it("serves the permalink page drawing the run: one node per execution, each with its status in words, and the shared run's previews", async () => {
    const shared = await controlPlaneCall('POST', `/api/ui/v1/workflows/${WORKFLOW}/share`, {
      redact: false,
    });
    const { url } = (await shared.json()) as { url: string };
    const page = await fetch(url, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`Workflow ${WORKFLOW}`);
    const graph = /<svg[^>]*class="run-graph-svg"[\s\S]*?<\/svg>/.exec(html)?.[0];
    expect(graph, 'the page draws the run as an SVG graph').toBeDefined();
    expect(graph!.match(/class="run-graph-node /g)).toHaveLength(3);
    expect(graph!.match(/class="run-graph-edge"/g)).toHaveLength(2);
    for (const words of ['share-planner', 'plan', 'share-writer', 'draft', 'review', 'succeeded', 'failed']) {
      expect(graph, words).toContain(words);
    }
    expect(html).toContain('A few words about signal boxes.');
    expect(html).toContain('reviewer quota exceeded');
  });

  it('publishes redacted unless asked otherwise: the page shows no input or output', async () => {
    const shared = await controlPlaneCall('POST', `/api/ui/v1/workflows/${WORKFLOW}/share`, {});
    expect(shared.status).toBe(201);
    const { url } = (await shared.json()) as { url: string };
    const stored = await (await fetch(url, { headers: { Accept: 'application/json' } })).json();
    expect(JSON.stringify(stored)).not.toContain('signal boxes');
    const html = await (await fetch(url)).text();
    expect(html).not.toContain('signal boxes');
    expect(html).toContain('[redacted]');
  });
});
