import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { DOCS_APP_DIR } from '../../server/settings.ts';
import { contentDir } from '../../src/lib/content-dir.ts';
import {
  builtSite,
  expectCommonHeaders,
  expectProblem,
  request,
  startTestServer,
  type TestResponse,
} from './support/docs-server.ts';

type RunningServer = Awaited<ReturnType<typeof startTestServer>>;

/** What an MCP client sends besides the body: the transport refuses a POST without both types in Accept. */
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

async function connect(server: RunningServer): Promise<Client> {
  const client = new Client({ name: 'docs-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  return client;
}

/** The JSON-RPC error a call was refused with; fails the test when it was answered instead. */
async function rpcErrorOf(call: Promise<unknown>): Promise<McpError> {
  try {
    const answer = await call;
    throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(answer).slice(0, 300)}`);
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    return error;
  }
}

function textOf(result: unknown): string {
  const [first] = (result as { content: Array<{ type: string; text: string }> }).content;
  expect(first?.type).toBe('text');
  return first!.text;
}

function postMcp(server: RunningServer, body: string | Buffer, options: Parameters<typeof request>[1] = {}) {
  return request(`${server.url}/mcp`, {
    method: 'POST',
    ...options,
    headers: { ...MCP_HEADERS, ...options.headers },
    body,
  });
}

/** A JSON-RPC error answer of the endpoint itself (no id), with the status and code. */
function expectRpcRefusal(res: TestResponse, status: number, code: number): string {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code, message: expect.any(String) } });
  return body.error.message;
}

describe('POST /mcp', () => {
  let server: RunningServer;
  let client: Client;
  const site = builtSite();

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
    client = await connect(server);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  describe('initialize and tools/list', () => {
    it('names the server switchyard-docs at the app version, with instructions on search and read', () => {
      expect(client.getServerVersion()).toMatchObject({
        name: 'switchyard-docs',
        version: packageJson.version,
      });
      const instructions = client.getInstructions() ?? '';
      expect(instructions).toContain('search_docs');
      expect(instructions).toContain('read_page');
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    });

    it('lists three read-only tools with titles, descriptions and strict input schemas', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['list_pages', 'read_page', 'search_docs']);
      for (const tool of tools) {
        expect(tool.title, tool.name).toMatch(/\S/);
        expect(tool.description!.length, tool.name).toBeGreaterThan(60);
        expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
        expect(tool.outputSchema).toMatchObject({ type: 'object' });
        expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
      const search = tools.find((tool) => tool.name === 'search_docs')!;
      expect(search.inputSchema.required).toEqual(['query']);
      expect(search.inputSchema.properties).toMatchObject({
        query: { type: 'string', minLength: 1, maxLength: 512 },
        limit: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
      });
    });

    it('publishes a server card whose tools are those tools/list answers, at both well-known paths', async () => {
      const { tools } = await client.listTools();
      const card = await request(`${server.url}/.well-known/mcp/server-card.json`);
      expect(card.status).toBe(200);
      expect(card.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(card.headers['access-control-allow-origin']).toBe('*');
      const body = card.json();
      expect(body.tools).toEqual(
        tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
          name,
          title,
          description,
          inputSchema,
          outputSchema,
          annotations,
        })),
      );
      expect(body.version).toBe(client.getServerVersion()!.version);
      expect(body.remotes).toEqual([
        expect.objectContaining({
          type: 'streamable-http',
          authentication: { required: false, schemes: [] },
        }),
      ]);
      const alias = await request(`${server.url}/.well-known/mcp.json`);
      expect(alias.json()).toEqual(body);
    });
  });

  describe('search_docs', () => {
    it('finds a page despite typos, answering what GET /api/v1/search answers', async () => {
      const query = 'webhok signatre';
      const result = await client.callTool({ name: 'search_docs', arguments: { query, limit: 3 } });
      expect(result.isError).toBeFalsy();
      const api = await request(`${server.url}/api/v1/search?q=${encodeURIComponent(query)}&limit=3`);
      expect(result.structuredContent).toEqual(api.json());
      const results = (result.structuredContent as { results: Array<{ path: string; url: string }> }).results;
      expect(results.map((hit) => hit.path)).toContain('/docs/concepts/webhooks');
      const text = textOf(result);
      for (const hit of results) {
        expect(text).toContain(hit.url);
        expect(text).toContain(`path: ${hit.path}`);
      }
    });

    it('returns 5 results unless asked for another number', async () => {
      const result = await client.callTool({ name: 'search_docs', arguments: { query: 'agent' } });
      expect(result.structuredContent).toMatchObject({ query: 'agent', limit: 5 });
      expect((result.structuredContent as { results: unknown[] }).results).toHaveLength(5);
    });

    it('says so in the text when nothing matches, without failing', async () => {
      const result = await client.callTool({ name: 'search_docs', arguments: { query: 'qqxzv' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ total: 0, results: [] });
      expect(textOf(result)).toMatch(/No page matches "qqxzv".*list_pages/);
    });
  });

  describe('read_page', () => {
    it('answers the markdown GET /api/v1/page answers, its metadata as structured content', async () => {
      const page = site.pages.find((candidate) => candidate.slug === 'concepts/webhooks') ?? site.pages[0]!;
      const api = (await request(`${server.url}/api/v1/page?path=${page.path}`)).json();
      const result = await client.callTool({ name: 'read_page', arguments: { path: page.path } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe(api.markdown);
      const { markdown: _markdown, ...metadata } = api;
      expect(result.structuredContent).toEqual(metadata);
    });

    it('accepts the page URL, its .md URL and a URL with an anchor, as the API does', async () => {
      const page = site.pages[1]!;
      for (const given of [
        `${server.site}${page.path}`,
        `${page.path}.md`,
        `${server.site}${page.path}#intro`,
      ]) {
        const result = await client.callTool({ name: 'read_page', arguments: { path: given } });
        expect(result.structuredContent, given).toMatchObject({ path: page.path });
      }
    });

    it('answers an unknown page with a tool error that says how to find a path', async () => {
      const result = await client.callTool({ name: 'read_page', arguments: { path: '/docs/no-such-page' } });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const text = textOf(result);
      expect(text).toContain('/docs/no-such-page');
      expect(text).toMatch(/search_docs/);
      expect(text).toMatch(/list_pages/);
      expect(text).toMatch(/\/docs\/\{slug\}/);
    });
  });

  describe('list_pages', () => {
    it('lists every page, or one category in any spelling, as GET /api/v1/topics does', async () => {
      const all = await client.callTool({ name: 'list_pages', arguments: {} });
      expect(all.structuredContent).toEqual((await request(`${server.url}/api/v1/topics`)).json());
      expect((all.structuredContent as { total: number }).total).toBe(site.pages.length);
      const text = textOf(all);
      for (const page of site.pages) expect(text).toContain(`(${page.path})`);

      const category = site.pages[0]!.category;
      const loose = category.toLowerCase().replaceAll(' ', '-');
      const one = await client.callTool({ name: 'list_pages', arguments: { category: loose } });
      const api = await request(`${server.url}/api/v1/topics?category=${encodeURIComponent(category)}`);
      expect(one.structuredContent).toEqual(api.json());
      expect(one.structuredContent).toMatchObject({ category });
    });

    it('answers an unknown category with a tool error naming the valid ones', async () => {
      const result = await client.callTool({ name: 'list_pages', arguments: { category: 'Recipes' } });
      expect(result.isError).toBe(true);
      const text = textOf(result);
      expect(text).toContain('"Recipes"');
      for (const category of new Set(site.pages.map((page) => page.category)))
        expect(text).toContain(category);
    });
  });

  describe('refused calls', () => {
    it.each([
      ['an empty query', 'search_docs', { query: '' }],
      ['a query of spaces', 'search_docs', { query: '   ' }],
      ['a query over 512 characters', 'search_docs', { query: 'a'.repeat(513) }],
      ['a number for the query', 'search_docs', { query: 42 }],
      ['an object for the query', 'search_docs', { query: { text: 'webhooks' } }],
      ['no query', 'search_docs', {}],
      ['a limit of 0', 'search_docs', { query: 'agent', limit: 0 }],
      ['a limit of 21', 'search_docs', { query: 'agent', limit: 21 }],
      ['a fractional limit', 'search_docs', { query: 'agent', limit: 2.5 }],
      ['a limit as a string', 'search_docs', { query: 'agent', limit: '5' }],
      ['an argument the tool does not take', 'search_docs', { query: 'agent', category: 'Concepts' }],
      ['a list for the path', 'read_page', { path: ['/docs/concepts/webhooks'] }],
      ['an empty path', 'read_page', { path: '' }],
      ['a category over 100 characters', 'list_pages', { category: 'c'.repeat(101) }],
    ])('refuses %s with the JSON-RPC error -32602 naming the argument', async (_case, name, args) => {
      const error = await rpcErrorOf(client.callTool({ name, arguments: args as Record<string, unknown> }));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain(`Invalid arguments for ${name}`);
      expect(error.data).toMatchObject({
        issues: [expect.objectContaining({ message: expect.any(String) })],
      });
    });

    it('refuses an unknown tool with the JSON-RPC error -32602 listing the tools', async () => {
      const error = await rpcErrorOf(client.callTool({ name: 'delete_docs', arguments: {} }));
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/Unknown tool "delete_docs".*search_docs, read_page, list_pages/);
    });
  });

  describe('resources', () => {
    it('lists every page as a text/markdown resource at its .md URL', async () => {
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri).sort()).toEqual(
        site.pages.map((page) => `${server.site}/docs/${page.slug}.md`).sort(),
      );
      for (const resource of resources) {
        const page = site.pages.find(
          (candidate) => `${server.site}${candidate.markdown_url}` === resource.uri,
        )!;
        expect(resource).toEqual({
          uri: resource.uri,
          name: page.slug,
          title: page.title,
          description: page.description,
          mimeType: 'text/markdown',
        });
      }
    });

    it('reads a page resource as the markdown its .md URL serves', async () => {
      const page = site.pages[2]!;
      const uri = `${server.site}/docs/${page.slug}.md`;
      const { contents } = await client.readResource({ uri });
      const served = await request(uri);
      expect(contents).toEqual([{ uri, mimeType: 'text/markdown', text: served.text }]);
    });

    it('refuses a URI that names no page with the JSON-RPC error -32002', async () => {
      const error = await rpcErrorOf(client.readResource({ uri: `${server.site}/docs/no-such-page.md` }));
      expect(error.code).toBe(-32002);
      const other = await rpcErrorOf(client.readResource({ uri: 'https://elsewhere.example/docs/x.md' }));
      expect(other.code).toBe(-32602);
    });
  });

  describe('HTTP', () => {
    const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

    it('answers a tool call in plain JSON with the common headers and CORS for browser clients', async () => {
      const res = await postMcp(server, toolsList, { headers: { Origin: 'https://app.example' } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: expect.any(Array) } });
      expectCommonHeaders(res, 10_000);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-expose-headers']).toContain('Mcp-Session-Id');
      expect(res.headers['access-control-expose-headers']).toContain('RateLimit-Remaining');
      expect(res.headers['mcp-session-id']).toBeUndefined();
    });

    it('answers a CORS preflight with the methods and the MCP headers a client may send', async () => {
      const res = await request(`${server.url}/mcp`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.allow).toBe('POST, OPTIONS');
      expect(res.headers['access-control-allow-methods']).toBe('POST, OPTIONS');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const allowed = String(res.headers['access-control-allow-headers']);
      for (const name of ['Content-Type', 'Accept', 'Mcp-Session-Id', 'Mcp-Protocol-Version']) {
        expect(allowed).toContain(name);
      }
      expectCommonHeaders(res, 10_000);
    });

    it.each(['GET', 'DELETE', 'PUT'])('answers %s with 405 and Allow: POST, OPTIONS', async (method) => {
      const res = await request(`${server.url}/mcp`, { method, headers: { Accept: 'text/event-stream' } });
      expectRpcRefusal(res, 405, -32000);
      expect(res.headers.allow).toBe('POST, OPTIONS');
      expectCommonHeaders(res, 10_000);
    });

    it('answers a body that is not JSON with 400 and the JSON-RPC parse error', async () => {
      const message = expectRpcRefusal(await postMcp(server, '{"jsonrpc": "2.0", "id": 1,'), 400, -32700);
      expect(message).toMatch(/Parse error/);
      expectRpcRefusal(await postMcp(server, ''), 400, -32700);
      expectRpcRefusal(await postMcp(server, '{"hello": "world"}'), 400, -32700);
    });

    it('refuses a body over 64 KiB with 413, declared or chunked, before reading it whole', async () => {
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_docs', arguments: { query: 'x'.repeat(70_000) } },
      });
      for (const chunked of [false, true]) {
        const res = await postMcp(server, call, { chunked });
        expect(expectRpcRefusal(res, 413, -32000), `chunked: ${chunked}`).toMatch(/65536 bytes/);
        expect(res.headers.connection).toBe('close');
      }
    });

    it('answers what the transport requires of a request: both types in Accept, a JSON body', async () => {
      expectRpcRefusal(
        await postMcp(server, toolsList, { headers: { Accept: 'application/json' } }),
        406,
        -32000,
      );
      expectRpcRefusal(
        await postMcp(server, toolsList, { headers: { 'Content-Type': 'text/plain' } }),
        415,
        -32000,
      );
    });

    it('refuses a Host that is not the server, as a page using DNS rebinding would send', async () => {
      const res = await postMcp(server, toolsList, { headers: { Host: 'attacker.example:4321' } });
      expect(expectRpcRefusal(res, 403, -32000)).toMatch(/Host/);
      const ok = await postMcp(server, toolsList, {
        headers: { Host: `localhost:${new URL(server.url).port}` },
      });
      expect(ok.status).toBe(200);
    });
  });
});

describe('the API budget on /mcp', () => {
  let server: RunningServer;
  const clientAddress = { localAddress: '127.0.0.7' };
  const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 4, pageRateLimit: 100 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('spends the budget of /api/, and answers 429 rate_limited once /api/ has spent it', async () => {
    const first = await postMcp(server, toolsList, clientAddress);
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-remaining']).toBe('3');
    const api = await request(`${server.url}/api/v1/topics`, clientAddress);
    expect(api.headers['ratelimit-remaining']).toBe('2');
    await request(`${server.url}/api/v1/topics`, clientAddress);
    await postMcp(server, toolsList, clientAddress);
    const refused = await postMcp(server, toolsList, clientAddress);
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(problem.budget).toBe('api');
    expect(problem.detail).toContain('/mcp');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The page budget is the other one: reading pages is still answered.
    expect((await request(`${server.url}/llms.txt`, clientAddress)).status).toBe(200);
  });
});

describe('the examples of the docs MCP server page', () => {
  let server: RunningServer;
  const page = readFileSync(path.join(contentDir(), 'api/site-mcp.md'), 'utf8');
  const documentedBase = 'http://127.0.0.1:4321';

  beforeAll(async () => {
    server = await startTestServer({ sharesEnabled: false, rateLimit: 10_000, pageRateLimit: 10_000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers the curl tool call with what the page shows of the answer', async () => {
    const section = page.slice(
      page.indexOf('## Call it without a client library'),
      page.indexOf('## From TypeScript'),
    );
    const command = /-d '([^']+)'/.exec(section);
    const shown = /```json\n([\s\S]*?)\n```/.exec(section);
    expect(command, 'the curl example').not.toBeNull();
    expect(shown, 'the answer it shows').not.toBeNull();
    const res = await postMcp(server, command![1]!);
    expect(res.status).toBe(200);
    // The page abbreviates the answer: every member it shows is in the real one, as shown.
    expect(res.json()).toMatchObject(JSON.parse(shown![1]!.replaceAll(documentedBase, server.site)));
  });

  it('runs the TypeScript example and prints what the page shows', async () => {
    const section = page.slice(page.indexOf('## From TypeScript'));
    const source = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
    const shown = /It prints:\n\n```text\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(source, 'the TypeScript example').toBeDefined();
    expect(shown, 'its output').toBeDefined();
    // Under the app's node_modules, so that the SDK resolves as it does in a reader's project.
    const scratch = path.join(DOCS_APP_DIR, 'node_modules', '.cache');
    mkdirSync(scratch, { recursive: true });
    const dir = mkdtempSync(path.join(scratch, 'site-mcp-example-'));
    try {
      const file = path.join(dir, 'docs-mcp.mts');
      writeFileSync(file, source!.replaceAll(documentedBase, server.url));
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: DOCS_APP_DIR });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) =>
          code === 0 ? resolve(stdout) : reject(new Error(`example exited with ${code}: ${stderr}`)),
        );
      });
      expect(output.trimEnd()).toBe(shown!.replaceAll(documentedBase, server.url));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
