import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** How a test agent answers GET /health. */
export type HealthMode = 'ok' | 'fail' | 'hang' | 'unhealthy-body';

/** A real HTTP agent on 127.0.0.1 whose health answer a test can change. */
export interface TestAgent {
  url: string;
  health: HealthMode;
  healthRequests: number;
  shutdownNotices: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * Starts a node:http agent on 127.0.0.1 (port 0) that serves /health per its `health` mode and
 * records `POST /_internal/shutdown` notices. `hang` never answers, so probes hit their timeout.
 */
export async function startTestAgent(initial: HealthMode = 'ok'): Promise<TestAgent> {
  const hanging = new Set<ServerResponse>();
  const agent: TestAgent = {
    url: '',
    health: initial,
    healthRequests: 0,
    shutdownNotices: [],
    close: async () => {},
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/health') {
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
    if (req.method === 'POST' && req.url === '/_internal/shutdown') {
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
