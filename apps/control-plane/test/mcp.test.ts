/**
 * The control plane's MCP server (content/api/mcp.md), driven by the official SDK client over
 * Streamable HTTP against the real app on 127.0.0.1, with real agents: tools listed and called,
 * every call an ordinary execution, bad arguments a JSON-RPC error that records nothing, and a
 * list-changed notification when a node arrives.
 */

import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestControlPlane, type TestControlPlane, uniqueNodeId } from './helpers/control-plane.ts';
import { type ExecutionAgent, type FunctionSpec, startExecutionAgent } from './helpers/execution-agent.ts';

const KEY = 'mcp-test-key';
const AUTH = { 'X-API-Key': KEY };
const TEXT_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 } },
  required: ['text'],
};

let cp: TestControlPlane;
const agents: ExecutionAgent[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  cp = await startTestControlPlane({
    config: (config) => {
      config.api.auth = { apiKey: KEY, skipPaths: [] };
      config.executionQueue.syncTimeoutMs = 5_000;
    },
  });
  cp.parts.executions.dispatcher.start();
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const agent of agents.splice(0)) await agent.close();
  await cp.parts.executions.dispatcher.drain();
});

afterAll(async () => {
  await cp.close();
});

async function agentWith(reasoners: Record<string, FunctionSpec>, skills?: Record<string, FunctionSpec>) {
  const agent = await startExecutionAgent({
    controlPlaneUrl: cp.base,
    nodeId: uniqueNodeId('mcp'),
    reasoners,
    skills,
    heartbeatMs: 60_000,
    apiKey: KEY,
  });
  agents.push(agent);
  await agent.register();
  return agent;
}

async function connect(headers: Record<string, string> = AUTH): Promise<Client> {
  const client = new Client({ name: 'switchyard-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${cp.base}/mcp`), { requestInit: { headers } }),
  );
  clients.push(client);
  return client;
}

/** The executions recorded for a node, through the HTTP API. */
async function executionsOf(nodeId: string): Promise<any[]> {
  const answer = await call(cp.base, 'GET', `/api/v1/executions?node_id=${nodeId}`, undefined, AUTH);
  expect(answer.status).toBe(200);
  return answer.body.executions;
}

/** The JSON-RPC error a call rejected with. */
async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('MCP /mcp: tools', () => {
  it('lists the built-in tools and one tool per registered function, with its input_schema', async () => {
    const agent = await agentWith(
      { summarize: { kind: 'answer', inputSchema: TEXT_SCHEMA, description: 'Summarizes a text.' } },
      { lookup: { kind: 'answer' } },
    );
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe('switchyard');
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const builtin of [
      'discover_capabilities',
      'call_function',
      'start_function',
      'get_execution',
      'list_approvals',
      'decide_approval',
    ]) {
      expect(names).toContain(builtin);
    }
    const summarize = tools.find((t) => t.name === `${agent.nodeId}.summarize`);
    expect(summarize?.inputSchema).toEqual(TEXT_SCHEMA);
    expect(summarize?.description).toMatch(/^Summarizes a text\./);
    // A skill's target has a colon, which a tool name may not: it is <node>.skill.<id>.
    expect(names).toContain(`${agent.nodeId}.skill.lookup`);
    const call = tools.find((t) => t.name === 'call_function');
    expect(call?.inputSchema.required).toEqual(['target']);
  });

  it("runs a function's own tool as a recorded synchronous execution", async () => {
    const agent = await agentWith({
      summarize: {
        kind: 'answer',
        inputSchema: TEXT_SCHEMA,
        result: (input) => ({ words: input.text.split(' ').length }),
      },
    });
    const client = await connect({ ...AUTH, 'X-Workflow-ID': 'wf_mcp_test' });
    const result = await client.callTool({
      name: `${agent.nodeId}.summarize`,
      arguments: { text: 'one two three' },
    });
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as Record<string, any>;
    expect(answer).toMatchObject({ status: 'succeeded', result: { words: 3 } });
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(answer);
    const [recorded] = await executionsOf(agent.nodeId);
    expect(recorded).toMatchObject({
      execution_id: answer.execution_id,
      status: 'succeeded',
      workflow_id: 'wf_mcp_test',
    });
    expect(agent.calls[0]?.input).toEqual({ text: 'one two three' });
  });

  it('answers input that breaks the input_schema with a JSON-RPC error (-32602) and records nothing', async () => {
    const agent = await agentWith({ summarize: { kind: 'answer', inputSchema: TEXT_SCHEMA } });
    const client = await connect();
    const error = await rpcError(
      client.callTool({ name: `${agent.nodeId}.summarize`, arguments: { text: 42 } }),
    );
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toMatch(/input_schema/);
    expect((error.data as any).errors[0].field).toBe('input.text');
    const viaCall = await rpcError(
      client.callTool({
        name: 'call_function',
        arguments: { target: `${agent.nodeId}.summarize`, input: {} },
      }),
    );
    expect(viaCall.code).toBe(ErrorCode.InvalidParams);
    expect(await executionsOf(agent.nodeId)).toEqual([]);
    expect(agent.calls).toHaveLength(0);
  });

  it('answers wrong built-in arguments, unknown tools and unknown targets with JSON-RPC errors', async () => {
    const client = await connect();
    const wrongType = await rpcError(
      client.callTool({ name: 'get_execution', arguments: { execution_id: 7 } }),
    );
    expect(wrongType.code).toBe(ErrorCode.InvalidParams);
    expect((wrongType.data as any).errors).toEqual([{ field: 'execution_id', message: expect.any(String) }]);
    const extra = await rpcError(
      client.callTool({ name: 'list_approvals', arguments: { status: 'pending', drop: 'tables' } }),
    );
    expect(extra.code).toBe(ErrorCode.InvalidParams);
    const tooLong = await rpcError(
      client.callTool({ name: 'get_execution', arguments: { execution_id: 'x', wait_seconds: 3600 } }),
    );
    expect(tooLong.message).toMatch(/wait_seconds/);
    const unknown = await rpcError(client.callTool({ name: 'rm_rf', arguments: {} }));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
    const missingNode = await rpcError(client.callTool({ name: 'no-such-node.fn', arguments: {} }));
    expect(missingNode.code).toBe(ErrorCode.InvalidParams);
    const missingExecution = await rpcError(
      client.callTool({ name: 'get_execution', arguments: { execution_id: 'exec_nothing_here' } }),
    );
    expect(missingExecution.code).toBe(ErrorCode.InvalidParams);
    expect((missingExecution.data as any).code).toBe('not_found');
  });

  it('answers hostile arguments with JSON-RPC errors and records nothing', async () => {
    const agent = await agentWith({ echo: { kind: 'answer' } });
    const client = await connect();
    const target = `${agent.nodeId}.echo`;
    const hostile: Array<Record<string, unknown>> = [
      { target: 'x'.repeat(10_000) },
      { target: `${agent.nodeId}.echo\u0000` },
      { target: '../../etc/passwd' },
      { target, input: ['not', 'an', 'object'] },
      { target, input: 'text' },
      { target, input: { text: 'lone \ud800 surrogate' } },
      { target, input: { nul: 'a\u0000b' } },
    ];
    for (const args of hostile) {
      const error = await rpcError(client.callTool({ name: 'call_function', arguments: args }));
      expect(error.code, JSON.stringify(args).slice(0, 80)).toBe(ErrorCode.InvalidParams);
    }
    expect(await executionsOf(agent.nodeId)).toEqual([]);
    expect(agent.calls).toHaveLength(0);
  });

  it("answers a function's failure as a tool error naming the recorded execution", async () => {
    const agent = await agentWith({ flaky: { kind: 'error', error: 'model quota exceeded' } });
    const client = await connect();
    const result = await client.callTool({
      name: 'call_function',
      arguments: { target: `${agent.nodeId}.flaky` },
    });
    expect(result.isError).toBe(true);
    const problem = result.structuredContent as Record<string, any>;
    expect(problem.code).toBe('execution_failed');
    const [recorded] = await executionsOf(agent.nodeId);
    expect(recorded).toMatchObject({ execution_id: problem.execution_id, status: 'failed' });
  });

  it('starts a function and waits for its end with get_execution', async () => {
    const agent = await agentWith({ report: { kind: 'accept', callbackDelayMs: 300, result: { pages: 4 } } });
    const client = await connect();
    const started = await client.callTool({
      name: 'start_function',
      arguments: { target: `${agent.nodeId}.report`, input: { quarter: 'Q3' } },
    });
    const { execution_id: id, status } = started.structuredContent as Record<string, any>;
    expect(status).toBe('queued');
    const waited = await client.callTool({
      name: 'get_execution',
      arguments: { execution_id: id, wait_seconds: 20 },
    });
    expect(waited.structuredContent).toMatchObject({
      execution_id: id,
      status: 'succeeded',
      result: { pages: 4 },
    });
  });

  it('discovers capabilities as the discovery API does', async () => {
    const agent = await agentWith({ summarize: { kind: 'answer', inputSchema: TEXT_SCHEMA } });
    const client = await connect();
    const result = await client.callTool({
      name: 'discover_capabilities',
      arguments: { agent: agent.nodeId },
    });
    const listing = result.structuredContent as Record<string, any>;
    const http = await call(
      cp.base,
      'GET',
      `/api/v1/discovery/capabilities?agent=${agent.nodeId}&include_input_schema=true&include_descriptions=true`,
      undefined,
      AUTH,
    );
    expect(listing.capabilities).toEqual(http.body.capabilities);
    expect(listing.capabilities[0].reasoners[0].input_schema).toEqual(TEXT_SCHEMA);
  });

  it('lists a pending approval and decides it, resuming the execution', async () => {
    const agent = await agentWith({ publish: { kind: 'accept', callbackDelayMs: 60_000 } });
    const started = await call(
      cp.base,
      'POST',
      `/api/v1/execute/async/${agent.nodeId}.publish`,
      { input: { post: 42 } },
      AUTH,
    );
    const id = started.body.execution_id as string;
    // Running at the agent (it accepted the call), which now asks for a person's decision.
    const deadline = Date.now() + 10_000;
    while (
      (await call(cp.base, 'GET', `/api/v1/executions/${id}`, undefined, AUTH)).body.status !== 'running'
    ) {
      if (Date.now() > deadline) throw new Error('the execution never ran');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const requested = await call(
      cp.base,
      'POST',
      `/api/v1/executions/${id}/request-approval`,
      { approval_request_id: `post-${id}` },
      AUTH,
    );
    expect(requested.status).toBe(200);
    const client = await connect();
    const listed = await client.callTool({ name: 'list_approvals', arguments: { node_id: agent.nodeId } });
    expect((listed.structuredContent as any).approvals).toEqual([
      expect.objectContaining({ approval_request_id: `post-${id}`, execution_id: id, status: 'pending' }),
    ]);
    const decided = await client.callTool({
      name: 'decide_approval',
      arguments: { approval_request_id: `post-${id}`, decision: 'approved', feedback: 'Ship it.' },
    });
    expect(decided.structuredContent).toMatchObject({
      status: 'approved',
      feedback: 'Ship it.',
      execution_status: 'running',
    });
    const badDecision = await rpcError(
      client.callTool({
        name: 'decide_approval',
        arguments: { approval_request_id: `post-${id}`, decision: 'maybe' },
      }),
    );
    expect(badDecision.code).toBe(ErrorCode.InvalidParams);
  });

  it('tells a connected client when a node arrives, and offers its functions', async () => {
    const client = await connect();
    const before = (await client.listTools()).tools.length;
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    const agent = await agentWith({ translate: { kind: 'answer' } });
    await changed;
    const { tools } = await client.listTools();
    expect(tools.length).toBe(before + 1);
    expect(tools.map((t) => t.name)).toContain(`${agent.nodeId}.translate`);
  });
});

describe('MCP /mcp: HTTP', () => {
  const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };
  const MCP_ACCEPT = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };

  async function post(body: string, headers: Record<string, string> = {}) {
    return fetch(`${cp.base}/mcp`, { method: 'POST', headers: { ...AUTH, ...MCP_ACCEPT, ...headers }, body });
  }

  it('answers /mcp on loopback names only, as a loopback server must against DNS rebinding', async () => {
    const port = new URL(cp.base).port;
    const withHost = (host: string) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const request = httpRequest(
          `${cp.base}/mcp`,
          { method: 'POST', headers: { ...AUTH, ...MCP_ACCEPT, host } },
          (response) => {
            let text = '';
            response.setEncoding('utf8').on('data', (chunk: string) => {
              text += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
          },
        );
        request.on('error', reject);
        request.end(JSON.stringify(INIT));
      });
    const rebound = await withHost(`attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.body.error.code).toBe(-32000);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await withHost(host)).status, host).toBe(200);
    }
  });

  it('needs the API key like the rest of the API', async () => {
    const response = await post(JSON.stringify(INIT), { 'X-API-Key': 'wrong' });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('opens a session on initialize and ends it on DELETE', async () => {
    const opened = await post(JSON.stringify(INIT));
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id');
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await opened.json()) as any).result.serverInfo.name).toBe('switchyard');
    const ended = await fetch(`${cp.base}/mcp`, {
      method: 'DELETE',
      headers: { ...AUTH, 'Mcp-Session-Id': session! },
    });
    expect(ended.status).toBe(200);
    const after = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
      'Mcp-Session-Id': session!,
    });
    expect(after.status).toBe(404);
    expect(((await after.json()) as any).error.code).toBe(-32001);
  });

  it('refuses a request without a session, malformed JSON, deep nesting and an oversized body', async () => {
    const noSession = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(noSession.status).toBe(400);
    expect(((await noSession.json()) as any).error.code).toBe(-32600);
    const malformed = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error.code).toBe(-32700);
    const deep = await post(`${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as any).error.message).toMatch(/nested 5000 levels/);
    const huge = await post(JSON.stringify({ ...INIT, pad: 'x'.repeat(4 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as any).code).toBe('payload_too_large');
  });
});
