import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isProblem } from '@switchyard/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_CAPABILITIES } from '../src/modules/connector/index.ts';
import { deadAgentUrl } from './helpers/agents.ts';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

/*
 * POST /connector/reasoners/:id/versions/:version/restart against real agents on 127.0.0.1: one
 * that implements POST {base_url}/_internal/restart, ones that do not (404, 405, 501), one that
 * fails, redirects, hangs, or is not there at all.
 */

const TOKEN = 'restart-test-token';
const API_KEY = 'restart-test-api-key';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const KEY = { 'X-API-Key': API_KEY };
const TIMEOUT_MS = 300;

interface RestartRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A minimal agent: answers health probes, and restart requests with `answer` (202 by default). */
interface RestartAgent {
  url: string;
  requests: RestartRequest[];
  answer: (res: ServerResponse) => void;
  close(): Promise<void>;
}

const servers: Server[] = [];
const agents: ExecutionAgent[] = [];
let cp: TestControlPlane;

async function restartAgent(basePath = ''): Promise<RestartAgent> {
  const agent: RestartAgent = {
    url: '',
    requests: [],
    answer: (res) => res.writeHead(202, { 'content-type': 'application/json' }).end('{"restarting":true}'),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === `${basePath}/health`) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
        return;
      }
      if (req.method === 'POST' && req.url === `${basePath}/_internal/restart`) {
        const text = Buffer.concat(chunks).toString('utf8');
        agent.requests.push({
          path: req.url,
          headers: req.headers,
          body: text ? JSON.parse(text) : undefined,
        });
        agent.answer(res);
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  agent.url = `http://127.0.0.1:${(server.address() as { port: number }).port}${basePath}`;
  return agent;
}

/** Registers `baseUrl` as nodeId@version and reports it ready. */
async function registerReady(nodeId: string, version: string, baseUrl: string): Promise<void> {
  const registered = await call(
    cp.base,
    'POST',
    '/api/v1/nodes/register',
    registration(nodeId, baseUrl, { version }),
    KEY,
  );
  expect(registered.status).toBe(201);
  const ready = await call(
    cp.base,
    'POST',
    `/api/v1/nodes/${nodeId}/heartbeat`,
    { version, status: 'ready' },
    KEY,
  );
  expect(ready.body.lifecycle_status ?? ready.body.status).toBe('ready');
}

async function versionOf(nodeId: string, version: string) {
  return (await call(cp.base, 'GET', `/connector/reasoners/${nodeId}/versions/${version}`, undefined, BEARER))
    .body;
}

function restart(nodeId: string, version: string, prefix = '/connector') {
  return call(
    cp.base,
    'POST',
    `${prefix}/reasoners/${nodeId}/versions/${version}/restart`,
    undefined,
    BEARER,
  );
}

function expectProblem(response: { status: number; body: any }, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(isProblem(response.body)).toBe(true);
  expect(response.body.code).toBe(code);
}

beforeAll(async () => {
  cp = await startTestControlPlane({
    health: { checkTimeoutMs: TIMEOUT_MS },
    config: (config) => {
      config.api.auth = { apiKey: API_KEY, skipPaths: [] };
      config.connector.token = TOKEN;
      config.connector.capabilities = [...CONNECTOR_CAPABILITIES];
    },
  });
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await cp?.close();
});

describe('POST /connector/reasoners/:id/versions/:version/restart', () => {
  it('asks the agent to restart and takes the version out of routing until it reports ready', async () => {
    const agent = await restartAgent();
    const nodeId = uniqueNodeId('restart');
    await registerReady(nodeId, '1.0.0', agent.url);

    const response = await restart(nodeId, '1.0.0');
    expect(response.status).toBe(202);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toEqual({
      node_id: nodeId,
      version: '1.0.0',
      accepted: true,
      agent_status: 202,
      status: 'starting',
      status_reason: 'started',
      admin_state: 'active',
    });
    expect(agent.requests).toHaveLength(1);
    expect(agent.requests[0]!.body).toEqual({
      node_id: nodeId,
      version: '1.0.0',
      reason: 'connector restart request',
    });
    expect(agent.requests[0]!.headers['content-type']).toBe('application/json');
    // Agents hold the same API key as the control plane (content/concepts/authentication.md), so the
    // restart call carries it; the connector token never leaves the control plane.
    expect(agent.requests[0]!.headers['x-api-key']).toBe(API_KEY);
    expect(JSON.stringify(agent.requests[0]!.headers)).not.toContain(TOKEN);

    expect(await versionOf(nodeId, '1.0.0')).toMatchObject({
      status: 'starting',
      routable: false,
      traffic_share: 0,
    });
    // The restarted agent's first ready heartbeat puts it back.
    await call(
      cp.base,
      'POST',
      `/api/v1/nodes/${nodeId}/heartbeat`,
      { version: '1.0.0', status: 'ready' },
      KEY,
    );
    expect(await versionOf(nodeId, '1.0.0')).toMatchObject({
      status: 'ready',
      routable: true,
      traffic_share: 1,
    });
  });

  it('brings the version back on a healthy probe too, when the agent does not heartbeat first', async () => {
    const agent = await restartAgent();
    const nodeId = uniqueNodeId('restart-probe');
    await registerReady(nodeId, '1.0.0', agent.url);
    expect((await restart(nodeId, '1.0.0')).status).toBe(202);
    cp.clock.advance(60_000);
    await cp.runtime.health.runOnce();
    expect(await versionOf(nodeId, '1.0.0')).toMatchObject({
      status: 'ready',
      status_reason: 'health_check_passed',
    });
  });

  it('calls {base_url}/_internal/restart under the base path, on both prefixes, by node or function id', async () => {
    const agent = await restartAgent('/agents/a1');
    const nodeId = uniqueNodeId('restart-path');
    await registerReady(nodeId, '2.0.0', agent.url);
    expect((await restart(nodeId, '2.0.0', '/api/v1/connector')).status).toBe(202);
    await call(
      cp.base,
      'POST',
      `/api/v1/nodes/${nodeId}/heartbeat`,
      { version: '2.0.0', status: 'ready' },
      KEY,
    );
    expect((await restart(`${nodeId}.summarize`, '2.0.0')).status).toBe(202);
    expect(agent.requests.map((r) => r.path)).toEqual([
      '/agents/a1/_internal/restart',
      '/agents/a1/_internal/restart',
    ]);
  });

  it('keeps an operator stop: a stopped version is asked to restart but stays out of routing', async () => {
    const agent = await restartAgent();
    const nodeId = uniqueNodeId('restart-stopped');
    await registerReady(nodeId, '1.0.0', agent.url);
    expect(
      (await call(cp.base, 'POST', `/api/v1/nodes/${nodeId}/stop`, { version: '1.0.0' }, KEY)).status,
    ).toBe(200);
    const response = await restart(nodeId, '1.0.0');
    expect(response.body).toMatchObject({ accepted: true, status: 'offline', admin_state: 'stopped' });
    expect(agent.requests).toHaveLength(1);
  });

  it('answers 409 conflict when the agent does not implement restarts (404, 405, 501), changing nothing', async () => {
    // The SDK-like execution agent answers 404 to /_internal/restart.
    const nodeId = uniqueNodeId('restart-unsupported');
    const sdk = await startExecutionAgent({
      controlPlaneUrl: cp.base,
      nodeId,
      apiKey: API_KEY,
      heartbeatMs: 60_000,
      reasoners: { work: { kind: 'answer' } },
    });
    agents.push(sdk);
    await sdk.register();
    const response = await restart(nodeId, '1.0.0');
    expectProblem(response, 409, 'conflict');
    expect(response.body).toMatchObject({ agent_status: 404 });
    expect(response.body.detail).toMatch(/does not support restarts/);
    expect(await versionOf(nodeId, '1.0.0')).toMatchObject({ status: 'ready', routable: true });

    for (const status of [405, 501]) {
      const agent = await restartAgent();
      agent.answer = (res) => res.writeHead(status).end();
      const id = uniqueNodeId(`restart-${status}`);
      await registerReady(id, '1.0.0', agent.url);
      const refused = await restart(id, '1.0.0');
      expectProblem(refused, 409, 'conflict');
      expect(refused.body.agent_status).toBe(status);
      expect(await versionOf(id, '1.0.0')).toMatchObject({ status: 'ready' });
    }
  });

  it('answers 502 when the agent fails the request or redirects it, and follows no redirect', async () => {
    const elsewhere = await restartAgent();
    for (const answer of [
      (res: ServerResponse) => res.writeHead(500).end('boom'),
      (res: ServerResponse) => res.writeHead(307, { location: `${elsewhere.url}/_internal/restart` }).end(),
    ]) {
      const agent = await restartAgent();
      agent.answer = answer;
      const nodeId = uniqueNodeId('restart-failing');
      await registerReady(nodeId, '1.0.0', agent.url);
      const response = await restart(nodeId, '1.0.0');
      expectProblem(response, 502, 'upstream_unavailable');
      expect(response.body.agent_status).toBeGreaterThanOrEqual(300);
      expect(await versionOf(nodeId, '1.0.0')).toMatchObject({ status: 'ready' });
    }
    expect(elsewhere.requests).toEqual([]);
  });

  it('answers 502 when nothing listens at the base_url, naming the network error', async () => {
    const nodeId = uniqueNodeId('restart-dead');
    await registerReady(nodeId, '1.0.0', await deadAgentUrl());
    const response = await restart(nodeId, '1.0.0');
    expectProblem(response, 502, 'upstream_unavailable');
    expect(response.body).toMatchObject({ agent_status: null });
    expect(response.body.detail).toMatch(/ECONNREFUSED/);
  });

  it('answers 504 when the agent does not answer within the timeout', async () => {
    const agent = await restartAgent();
    agent.answer = () => {}; // never answers
    const nodeId = uniqueNodeId('restart-hang');
    await registerReady(nodeId, '1.0.0', agent.url);
    const response = await restart(nodeId, '1.0.0');
    expectProblem(response, 504, 'upstream_timeout');
    expect(response.body.detail).toContain(`${TIMEOUT_MS} ms`);
    expect(agent.requests).toHaveLength(1);
    expect(await versionOf(nodeId, '1.0.0')).toMatchObject({ status: 'ready' });
  });

  it('answers 404 for an unknown node or version without calling any agent', async () => {
    const agent = await restartAgent();
    const nodeId = uniqueNodeId('restart-404');
    await registerReady(nodeId, '1.0.0', agent.url);
    for (const [id, version] of [
      [`nobody-${nodeId}`, '1.0.0'],
      [nodeId, '1.0.1'],
      [`${nodeId}.nothing`, '1.0.0'],
      ['..%2F..', '1.0.0'],
      [nodeId, 'v'.repeat(101)],
    ]) {
      expectProblem(await restart(id!, version!), 404, 'not_found');
    }
    expect(agent.requests).toEqual([]);
  });

  it('sends no X-API-Key when the control plane has none', async () => {
    const open = await startTestControlPlane({
      handle: cp.handle,
      config: (config) => {
        config.connector.token = TOKEN;
        config.connector.capabilities = ['restart'];
      },
    });
    try {
      const agent = await restartAgent();
      const nodeId = uniqueNodeId('restart-nokey');
      await registerReady(nodeId, '1.0.0', agent.url);
      const response = await call(
        open.base,
        'POST',
        `/connector/reasoners/${nodeId}/versions/1.0.0/restart`,
        undefined,
        BEARER,
      );
      expect(response.status).toBe(202);
      expect(agent.requests[0]!.headers).not.toHaveProperty('x-api-key');
    } finally {
      await open.close();
    }
  });
});
