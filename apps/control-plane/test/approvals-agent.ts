import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * A real agent on 127.0.0.1 that pauses for approval the way the TypeScript SDK does: its reasoner `publish` answers 202, then asks
 * `POST /api/v1/agents/{node}/executions/{id}/request-approval` with `callback_url` pointing at its
 * own `/webhooks/approval`; when the decision arrives there it answers 200 and reports the
 * execution `succeeded` with `{ decision, feedback }` through the status callback (an `expired`
 * notice ends nothing: the execution already ended).
 *
 * The input names the request: `{ approval_id, hours?, callback? }` (`callback: false` pauses
 * without a callback_url, as polling SDKs do).
 */
export interface ApprovalAgentOptions {
  controlPlaneUrl: string;
  nodeId: string;
  apiKey?: string;
  /** Answer this many decision callbacks 500 before taking one. */
  failCallbacks?: number;
  /** Ask on the documented path (`/api/v1/executions/{id}/…`) instead of the TypeScript SDK's agent path. */
  specPath?: boolean;
}

export interface ReceivedCallback {
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  answered: number;
}

export interface ApprovalAgent {
  url: string;
  nodeId: string;
  /** Every request-approval the agent sent and the control plane's answer. */
  pauses: Array<{ executionId: string; status: number; body: any }>;
  /** Every decision callback received, with the status it was answered. */
  callbacks: ReceivedCallback[];
  /** Status callbacks sent after a decision. */
  reports: Array<{ executionId: string; status: number }>;
  /** Callbacks still to answer 500. */
  failCallbacks: number;
  register(): Promise<void>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

export async function startApprovalAgent(options: ApprovalAgentOptions): Promise<ApprovalAgent> {
  let url = '';
  const cp = options.controlPlaneUrl;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${cp}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  const agent: ApprovalAgent = {
    url: '',
    nodeId: options.nodeId,
    pauses: [],
    callbacks: [],
    reports: [],
    failCallbacks: options.failCallbacks ?? 0,
    async register() {
      const registered = await post('/api/v1/nodes/register', {
        id: options.nodeId,
        version: '1.0.0',
        base_url: url,
        deployment_type: 'long_running',
        reasoners: [
          {
            id: 'publish',
            input_schema: { type: 'object', properties: { approval_id: { type: 'string' } } },
            output_schema: { type: 'object' },
            tags: ['approval'],
          },
        ],
        skills: [],
      });
      if (registered.status >= 300) throw new Error(`register answered ${registered.status}`);
      await post(`/api/v1/nodes/${options.nodeId}/heartbeat`, {
        status: 'starting',
        version: '1.0.0',
        timestamp: new Date().toISOString(),
      });
      const ready = await post(`/api/v1/nodes/${options.nodeId}/lifecycle/status`, { status: 'ready' });
      if (ready.status >= 300) throw new Error(`lifecycle answered ${ready.status}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };

  async function pause(executionId: string, input: any) {
    const path = options.specPath
      ? `/api/v1/executions/${executionId}/request-approval`
      : `/api/v1/agents/${options.nodeId}/executions/${executionId}/request-approval`;
    const answer = await post(path, {
      approval_request_id: input.approval_id,
      approval_request_url: `https://review.example.com/requests/${encodeURIComponent(input.approval_id)}`,
      expires_in_hours: input.hours ?? null,
      callback_url: input.callback === false ? null : `${url}/webhooks/approval`,
    });
    agent.pauses.push({ executionId, ...answer });
  }

  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://agent').pathname;
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', node_id: options.nodeId, version: '1.0.0' }));
      return;
    }
    if (req.method === 'POST' && path === '/reasoners/publish') {
      const input = await readJson(req);
      const executionId = String(req.headers['x-execution-id']);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'processing', execution_id: executionId }));
      void pause(executionId, input);
      return;
    }
    if (req.method === 'POST' && path === '/webhooks/approval') {
      const body = await readJson(req);
      const fail = agent.failCallbacks > 0;
      if (fail) agent.failCallbacks -= 1;
      const answered = fail ? 500 : 200;
      agent.callbacks.push({ body, headers: req.headers, answered });
      res.writeHead(answered, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: !fail }));
      if (!fail && body.decision !== 'expired') {
        const executionId = String(body.execution_id);
        const report = await post(`/api/v1/executions/${executionId}/status`, {
          status: 'succeeded',
          result: { decision: body.decision, feedback: body.feedback },
        });
        agent.reports.push({ executionId, status: report.status });
      }
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `unknown ${req.method} ${path}` }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  agent.url = url;
  return agent;
}

/** Polls `check` until it returns a value (not undefined), for up to `ms`; no timed assertion. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}
