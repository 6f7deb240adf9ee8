import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiProblem,
  createSwitchyardClient,
  problemMessage,
  type SwitchyardClient,
  unwrap,
} from '../src/index.ts';
import { registrationOf, startAgent, type TestAgent, uniqueNodeId } from './helpers/agent.ts';
import { startControlPlane, type TestControlPlane } from './helpers/control-plane.ts';

let cp: TestControlPlane;
let client: SwitchyardClient;
let agent: TestAgent;

beforeAll(async () => {
  cp = await startControlPlane();
  client = createSwitchyardClient({ baseUrl: cp.url });
  agent = await startAgent(uniqueNodeId());
});

afterAll(async () => {
  await agent?.close();
  await cp?.close();
});

/** Expects `promise` to reject with an ApiProblem and returns it. */
async function problemOf(promise: Promise<unknown>): Promise<ApiProblem> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiProblem);
  return error as ApiProblem;
}

describe('typed calls', () => {
  it('reads the health report', async () => {
    const health = await unwrap(client.GET('/api/v1/health'));
    expect(health.status).toBe('healthy');
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('registers a node, lists it, runs its reasoner synchronously and lists the execution', async () => {
    const registered = await client.POST('/api/v1/nodes/register', { body: registrationOf(agent) });
    expect(registered.response.status).toBeLessThan(300);

    const listing = await unwrap(
      client.GET('/api/ui/v1/nodes', { params: { query: { node_id: agent.nodeId } } }),
    );
    expect(listing.nodes.map((node) => node.id)).toEqual([agent.nodeId]);

    // A freshly registered node is `starting` until its first heartbeat makes it routable.
    await unwrap(
      client.POST('/api/v1/nodes/{node_id}/heartbeat', {
        params: { path: { node_id: agent.nodeId } },
        body: { status: 'ready' },
      }),
    );

    const target = `${agent.nodeId}.echo`;
    const result = await unwrap(
      client.POST('/api/v1/execute/{target}', {
        params: { path: { target } },
        body: { input: { text: 'hi' } },
      }),
    );
    expect(result.status).toBe('succeeded');
    expect(result.result).toEqual({ echo: { text: 'hi' } });
    expect(result.execution_id).toMatch(/^\S+$/);
    expect(agent.calls.map((call) => call.input)).toEqual([{ text: 'hi' }]);

    const executions = await unwrap(client.GET('/api/v1/executions', { params: { query: { target } } }));
    expect(executions.executions.map((execution) => execution.execution_id)).toEqual([result.execution_id]);
    expect(executions.executions[0]?.status).toBe('succeeded');
  });
});

describe('problems', () => {
  it('turns a problem answer into an ApiProblem with its detail and resolution', async () => {
    const problem = await problemOf(
      unwrap(client.GET('/api/v1/nodes/{node_id}', { params: { path: { node_id: 'no-such-node' } } })),
    );
    expect(problem.status).toBe(404);
    expect(problem.code).toBe('not_found');
    expect(problem.title).toBeTruthy();
    expect(problem.detail).toContain('no-such-node');
    expect(problem.resolution).toEqual(expect.any(String));
    expect(problem.type).toMatch(/^https?:\/\//);
    expect(problem.instance).toBe('/api/v1/nodes/no-such-node');
    expect(problem.problem).toMatchObject({ status: 404, code: 'not_found' });
    expect(problemMessage(problem)).toBe(`${problem.title} (404): ${problem.detail} ${problem.resolution}`);
  });

  it('keeps the field errors of a refused body on the problem document', async () => {
    const problem = await problemOf(
      unwrap(
        client.POST('/api/v1/nodes/register', {
          // A registration without a base_url, as a buggy caller might send it.
          body: { ...registrationOf(agent), base_url: undefined } as never,
        }),
      ),
    );
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('invalid_request');
    expect(problem.problem?.errors?.map((error) => error.field)).toContain('base_url');
  });

  it('gives a readable ApiProblem, not the body, for an error answer that is not a problem document', async () => {
    // What a reverse proxy in front of the control plane answers when the upstream is down.
    const proxy: Server = createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    try {
      const port = (proxy.address() as { port: number }).port;
      const behindProxy = createSwitchyardClient({ baseUrl: `http://127.0.0.1:${port}` });
      const problem = await problemOf(unwrap(behindProxy.GET('/api/v1/health')));
      expect(problem.status).toBe(502);
      expect(problem.problem).toBeUndefined();
      expect(problem.detail).toBe(
        'The server answered 502 with a body that is not a problem document (text/html).',
      );
      expect(problemMessage(problem)).not.toContain('<html>');
    } finally {
      await new Promise((done) => proxy.close(done));
    }
  });

  it('gives an ApiProblem with status 0 naming the URL when the server cannot be reached', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as { port: number }).port;
    await new Promise((done) => probe.close(done));

    const unreachable = createSwitchyardClient({ baseUrl: `http://127.0.0.1:${port}` });
    const problem = await problemOf(unwrap(unreachable.GET('/api/v1/health')));
    expect(problem.status).toBe(0);
    expect(problem.code).toBe('network_error');
    expect(problem.detail).toBe(
      `Could not reach http://127.0.0.1:${port}/api/v1/health: connect ECONNREFUSED 127.0.0.1:${port} (ECONNREFUSED).`,
    );
    expect(problemMessage(problem)).toBe(`Network error: ${problem.detail}`);
  });
});

describe('problemMessage', () => {
  it('gives one line for any other thrown value', () => {
    expect(problemMessage(new TypeError('Failed to fetch'))).toBe('Failed to fetch');
    expect(problemMessage('plain text')).toBe('plain text');
  });
});
