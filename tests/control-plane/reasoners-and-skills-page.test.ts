/**
 * content/concepts/reasoners-and-skills.md shows what runs. The page has no command of its own:
 * it shows a fragment of a registration body (```json) and how a router prefix shapes a
 * function's id (```text).
 *
 * - The fragment is sent as the functions of a real registration to a control-plane process (a
 *   fresh database): it must be accepted, and the functions must come back as the page declares
 *   them.
 * - The prefix is joined by the platform's SDKs (a router's prefix + `_` + the function's name)
 *   before the registration is sent; that SDK cannot run here, and the repository documents no
 *   router API of it (content/getting-started/sdk-agents.md shows `new Agent(...)` and
 *   `agent.reasoner(...)` only), so nothing here pretends to run it. What the control plane does
 *   with the joined name is checked for real: a node `invoice-agent`, a real HTTP agent on
 *   127.0.0.1, registers `billing_extract`, and the page's target `invoice-agent.billing_extract`
 *   calls it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { fencedBlocks } from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const PAGE = 'content/concepts/reasoners-and-skills.md';
const MARKDOWN = readFileSync(fileURLToPath(new URL(`../../${PAGE}`, import.meta.url)), 'utf8');

let workDir: string;
let database: ThrowawayDatabase;
let server: ControlPlaneProcess;

async function register(body: object): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/api/v1/nodes/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'sy-reasoners-skills-page-'));
  database = await throwawayDatabase('sy_reasoners_skills_page');
  server = await startControlPlaneProcess({ dir: workDir, databaseUrl: database.url });
});

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe(PAGE, () => {
  it('shows functions a registration accepts, and they come back as declared', async () => {
    const shown = fencedBlocks(MARKDOWN).filter((block) => block.lang === 'json');
    expect(shown, 'the page shows one registration fragment').toHaveLength(1);
    const functions = JSON.parse(shown[0]!.code);
    const answer = await register({
      id: 'hello-agent',
      version: '1.0.0',
      base_url: `http://127.0.0.1:${await freePort()}`,
      ...functions,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.reasoners).toEqual(functions.reasoners);
    expect(answer.body.skills).toEqual(functions.skills);
  });

  it('calls a function registered with a joined router prefix by the target the page shows', async () => {
    const shown = fencedBlocks(MARKDOWN).find(
      (block) => block.lang === 'text' && block.code.includes('prefix'),
    );
    expect(shown, 'the page shows how a prefix is joined').toBeDefined();
    const id = /id "([^"]+)"/.exec(shown!.code)?.[1];
    const target = /target\s+→\s+(\S+)/.exec(shown!.code)?.[1];
    expect(id).toBe('billing_extract');
    expect(target).toBe('invoice-agent.billing_extract');
    const nodeId = target!.slice(0, target!.indexOf('.'));

    // The agent: answers its one reasoner at the path the page's table gives, POST /reasoners/{id}.
    const calls: string[] = [];
    const agent: Server = createServer(async (req, res) => {
      for await (const _chunk of req) {
        // Read the whole call before answering it.
      }
      calls.push(`${req.method} ${req.url}`);
      if (req.method === 'POST' && req.url === `/reasoners/${id}`) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ invoice_total: 42 }));
      } else if (req.url === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'ok' }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((done) => agent.listen(0, '127.0.0.1', done));
    try {
      const port = (agent.address() as { port: number }).port;
      const registered = await register({
        id: nodeId,
        version: '1.0.0',
        base_url: `http://127.0.0.1:${port}`,
        reasoners: [{ id, input_schema: { type: 'object' }, output_schema: { type: 'object' } }],
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      const ready = await fetch(`${server.url}/api/v1/nodes/${nodeId}/lifecycle/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'ready' }),
      });
      expect(ready.status).toBe(200);

      const response = await fetch(`${server.url}/api/v1/execute/${target}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { invoice: 'INV-7' } }),
      });
      const result = (await response.json()) as any;
      expect(response.status, JSON.stringify(result)).toBe(200);
      expect(result).toMatchObject({ status: 'succeeded', result: { invoice_total: 42 } });
      expect(calls).toContain(`POST /reasoners/${id}`);
    } finally {
      agent.closeAllConnections();
      await new Promise((done) => agent.close(done));
    }
  });
});
