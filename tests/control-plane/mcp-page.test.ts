/**
 * The MCP server page (content/api/mcp.md) shows what runs. Against a real control-plane server
 * with an API key and the first-agent example (examples/first-agent/agent.mjs, unmodified, as
 * `hello-agent`):
 * - the page's `mcp-client.mjs` runs as written with `node` and prints the ```text block the page
 *   shows after it (the tool list, the call's result, the refused call's JSON-RPC error), and the
 *   refused call recorded nothing;
 * - the client settings the page gives (Cursor's and VS Code's JSON, Claude Code's command) name
 *   the endpoint and the key header in a way the official SDK client connects with;
 * - the nginx block is the sticky routing the page describes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToEnd } from '../support/child-process.ts';
import { fencedBlocks } from '../support/doc-examples.ts';
import { type HelloAgentServer, startHelloAgentServer } from '../support/hello-agent-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'content/api/mcp.md';
const PAGE_URL = 'http://127.0.0.1:8080';
const KEY = 'mcp-page-key-5b1c';

const blocks = fencedBlocks(readFileSync(join(ROOT, PAGE), 'utf8'));
let running: HelloAgentServer;

async function executionsOfHelloAgent(): Promise<any[]> {
  const response = await fetch(`${running.url}/api/v1/executions?node_id=hello-agent`, {
    headers: { 'X-API-Key': KEY },
  });
  return ((await response.json()) as any).executions;
}

beforeAll(async () => {
  running = await startHelloAgentServer('mcp-page', KEY);
}, 60_000);

afterAll(async () => {
  await running?.close();
});

describe(PAGE, () => {
  it('runs mcp-client.mjs as written and prints what the page shows', async () => {
    const script = blocks.find((b) => b.lang === 'js');
    const command = blocks.find((b) => b.lang === 'bash' && b.code.trim() === 'node mcp-client.mjs');
    const shown = blocks.find((b, i) => b.lang === 'text' && command && i > blocks.indexOf(command));
    expect(script?.code).toContain("new URL('/mcp', controlPlane)");
    expect(shown, 'the page shows the output after `node mcp-client.mjs`').toBeDefined();
    // Written inside the repository, where `@modelcontextprotocol/sdk` resolves as it does after
    // the page's `npm install`.
    const dir = mkdtempSync(join(ROOT, 'tests', '.mcp-page-'));
    try {
      writeFileSync(join(dir, 'mcp-client.mjs'), script!.code);
      const result = await runToEnd('node', ['mcp-client.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH, SWITCHYARD_URL: running.url, SERVICE_API_KEY: KEY },
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd()).toBe(shown!.code.trimEnd());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // One recorded execution: the call that succeeded. The refused one recorded nothing.
    const executions = await executionsOfHelloAgent();
    expect(executions.map((e) => [e.target, e.status])).toEqual([['hello-agent.summarize', 'succeeded']]);
  });

  it('gives client settings the SDK client connects with', async () => {
    const settings = blocks.filter((b) => b.lang === 'json').map((b) => JSON.parse(b.code));
    const cursor = settings.find((s) => s.mcpServers)?.mcpServers.switchyard;
    const vscode = settings.find((s) => s.servers)?.servers.switchyard;
    expect(cursor).toEqual({ url: `${PAGE_URL}/mcp`, headers: { 'X-API-Key': expect.any(String) } });
    expect(vscode).toMatchObject({ type: 'http', url: `${PAGE_URL}/mcp` });
    const claude = blocks.find((b) => b.lang === 'bash' && b.code.startsWith('claude mcp add'))!.code;
    const [, url, header] = /--transport http switchyard (\S+) --header "([^"]+)"/.exec(claude) ?? [];
    expect(url).toBe(`${PAGE_URL}/mcp`);
    expect(header).toBe('X-API-Key: $SERVICE_API_KEY');
    for (const configured of [cursor, vscode]) {
      const client = new Client({ name: 'settings-check', version: '1.0.0' });
      const headerName = Object.keys(configured.headers)[0]!;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(configured.url.replace(PAGE_URL, running.url)), {
          requestInit: { headers: { [headerName]: KEY } },
        }),
      );
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('hello-agent.summarize');
      await client.close();
    }
  });

  it('routes sessions by their header in the nginx example', () => {
    const nginx = blocks.find((b) => b.lang === 'nginx')!.code;
    expect(nginx).toMatch(/hash \$http_mcp_session_id consistent;/);
  });
});
