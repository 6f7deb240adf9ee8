/**
 * MCP across replicas (content/api/mcp.md, "Sessions and replicas"). PostgreSQL only: PGlite's
 * files belong to a single process, so there is no second replica to run.
 *
 * Two real control-plane processes on one database. An MCP client holds a session on replica 1;
 * an agent registers and heartbeats through replica 0 only. The client still hears that its tool
 * list changed (node events travel between replicas through PostgreSQL), and calls the new
 * function's tool through replica 1 as a recorded execution. The session itself lives on replica 1:
 * replica 0 answers a request naming it with 404 and JSON-RPC -32001, the answer that makes an MCP
 * client open a new session.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutionAgent,
  startExecutionAgent,
} from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { type ReplicaCluster, startReplicaCluster } from '../support/replica-cluster.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const NOTE = POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process';
const RUN_ID = randomBytes(3).toString('hex');

let cluster: ReplicaCluster | undefined;
let agent: ExecutionAgent | undefined;
let client: Client | undefined;
const url = (n: number) => cluster!.replicas[n]!.url;

beforeAll(async () => {
  if (!POSTGRES) return;
  cluster = await startReplicaCluster('sy_mcp_replicas', 2);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await cluster?.close();
});

describe.skipIf(!POSTGRES)(`MCP on two replicas (${NOTE})`, () => {
  it('tells a session on one replica about a node that registered on the other, and calls it', async () => {
    client = new Client({ name: 'replica-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url(1)}/mcp`));
    await client.connect(transport);
    const before = (await client.listTools()).tools.map((t) => t.name);
    const changed = new Promise<void>((resolve) => {
      client!.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });

    const nodeId = `mcp-replica-${RUN_ID}`;
    agent = await startExecutionAgent({
      controlPlaneUrl: url(0),
      nodeId,
      reasoners: {
        shout: { kind: 'answer', result: (input) => ({ text: String(input.text).toUpperCase() }) },
      },
      heartbeatMs: 1_000,
    });
    await agent.register();
    await changed;

    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools.filter((name) => !before.includes(name))).toEqual([`${nodeId}.shout`]);
    const result = await client.callTool({ name: `${nodeId}.shout`, arguments: { text: 'hello' } });
    const answer = result.structuredContent as Record<string, any>;
    expect(answer).toMatchObject({ status: 'succeeded', result: { text: 'HELLO' } });
    const [row] = await cluster!.db('executions').where({ execution_id: answer.execution_id });
    expect(row).toMatchObject({
      target: `${nodeId}.shout`,
      status: 'succeeded',
      dispatched_by: cluster!.replicaIds[1],
    });

    const elsewhere = await fetch(`${url(0)}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId!,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(elsewhere.status).toBe(404);
    expect(((await elsewhere.json()) as any).error.code).toBe(-32001);
  }, 60_000);
});
