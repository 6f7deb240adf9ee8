import { createServer, type IncomingMessage, type Server } from 'node:http';

/** A real agent on 127.0.0.1, answering the control plane the way the agent wire protocol says. */
export interface TestAgent {
  url: string;
  nodeId: string;
  /** The execute requests the agent received: function name and the headers that came with them. */
  calls: Array<{ fn: string; input: unknown; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : null;
}

/**
 * An agent whose reasoner `echo` answers 200 with `{ echo: input }` at once (the synchronous
 * answer the protocol allows), and whose health probe answers healthy.
 */
export async function startAgent(nodeId: string): Promise<TestAgent> {
  const calls: TestAgent['calls'] = [];
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') {
      return send(200, { status: 'healthy', node_id: nodeId, version: '1.0.0' });
    }
    const match = /^\/(reasoners|skills)\/([^/?]+)/.exec(req.url ?? '');
    if (req.method === 'POST' && match) {
      const input = await readJson(req);
      calls.push({ fn: match[2]!, input, headers: req.headers });
      if (match[2] === 'echo') return send(200, { echo: input });
      return send(404, { error: `unknown function ${match[2]}` });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    nodeId,
    calls,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

let counter = 0;

/** A node id no other test uses, also across runs on one PostgreSQL database. */
export function uniqueNodeId(prefix = 'client'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** The registration an SDK sends for a TestAgent: one reasoner, `echo`. */
export function registrationOf(agent: TestAgent) {
  return {
    id: agent.nodeId,
    version: '1.0.0',
    base_url: agent.url,
    deployment_type: 'long_running' as const,
    reasoners: [
      {
        id: 'echo',
        description: 'Answers with its input',
        input_schema: { type: 'object' },
        output_schema: { type: 'object' },
      },
    ],
    skills: [],
  };
}
