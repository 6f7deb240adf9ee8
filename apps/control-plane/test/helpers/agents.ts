import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** How a test agent answers GET /health. */
export type HealthMode = 'ok' | 'fail' | 'hang' | 'unhealthy-body';

/** A real HTTP agent on 127.0.0.1 whose health answer a test can change. */
export interface TestAgent {
  url: string;
  health: HealthMode;
  healthRequests: number;
  shutdownNotices: Array<Record<string, unknown>>;
  /** Every request received, as `METHOD /path?query`, so tests can see which URL was called. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Starts a node:http agent on 127.0.0.1 (port 0) that serves /health per its `health` mode and
 * records `POST /_internal/shutdown` notices, under any base path (`/agents/a1/health` too, for
 * agents registered with a path in their base_url). `hang` never answers, so probes hit their
 * timeout.
 */
export async function startTestAgent(initial: HealthMode = 'ok'): Promise<TestAgent> {
  const hanging = new Set<ServerResponse>();
  const agent: TestAgent = {
    url: '',
    health: initial,
    healthRequests: 0,
    shutdownNotices: [],
    requests: [],
    close: async () => {},
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    agent.requests.push(`${req.method} ${req.url}`);
    const path = req.url ?? '';
    if (req.method === 'GET' && /^(\/[^/?#]+)*\/health$/.test(path)) {
      agent.healthRequests++;
      if (agent.health === 'hang') {
        hanging.add(res);
        return;
      }
      const status = agent.health === 'fail' ? 500 : 200;
      const body =
        agent.health === 'unhealthy-body'
          ? { status: 'unhealthy' }
          : { status: agent.health === 'ok' ? 'healthy' : 'error' };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (req.method === 'POST' && /^(\/[^/?#]+)*\/_internal\/shutdown$/.test(path)) {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk) => {
        text += chunk;
      });
      req.on('end', () => {
        agent.shutdownNotices.push(JSON.parse(text || '{}'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"shutting_down"}');
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  agent.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  agent.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  return agent;
}

/** A base URL where nothing listens: a port that was free a moment ago. */
export async function deadAgentUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return `http://127.0.0.1:${port}`;
}
