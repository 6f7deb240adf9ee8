// A Switchyard agent that pauses for a human approval before it acts (Node 20+, node:http only).
// Its reasoner `publish_post` asks for approval, waits without holding any connection, and
// publishes (or not) once a reviewer's decision reaches its /webhooks/approval.
// Run: node examples/approval-agent/agent.mjs
// Settings: CONTROL_PLANE_URL, AGENT_PORT, AGENT_ID, AGENT_BASE_URL, REVIEW_URL, SERVICE_API_KEY

import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const CONTROL_PLANE_URL = (process.env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
// 8004: the tutorials' other agents hold 8001 to 8003 and may still run.
const PORT = Number(process.env.AGENT_PORT ?? 8004);
const NODE_ID = process.env.AGENT_ID ?? 'publisher';
const VERSION = '1.0.0';
const BASE_URL = process.env.AGENT_BASE_URL ?? `http://127.0.0.1:${PORT}`;
const REVIEW_URL = (process.env.REVIEW_URL ?? 'https://review.example.com').replace(/\/+$/, '');
const API_KEY = process.env.SERVICE_API_KEY || undefined;
const HEARTBEAT_MS = 5_000;
const REGISTER_RETRY_MS = 2_000;

// ---- Talking to the control plane -----------------------------------------------------------

async function callControlPlane(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (API_KEY) headers['x-api-key'] = API_KEY;
  const response = await fetch(`${CONTROL_PLANE_URL}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  if (!response.ok) {
    const error = new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    error.status = response.status;
    throw error;
  }
  return text ? JSON.parse(text) : null;
}

/** Reports the outcome of an execution (the status callback), retried a few times like SDKs do. */
async function report(executionId, outcome) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await callControlPlane('POST', `/api/v1/executions/${executionId}/status`, outcome);
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((done) => setTimeout(done, 500 * attempt));
    }
  }
}

// ---- The paused work: what each waiting execution will do once a decision comes -------------

/** execution id -> the post it waits to publish. Kept in memory, as an SDK's pause call does. */
const paused = new Map();

/**
 * Approval ids this process already acted on. Decisions are delivered at least once: a repeat
 * (its first 2xx was lost) must not be taken for a decision about work this process lost.
 */
const decided = new Set();
const DECIDED_KEPT = 10_000;

/**
 * Reasoner `publish_post`: asks a person before publishing. Answers 202 at once (the control
 * plane then waits for the status callback), then asks for approval on the execution. The
 * decision arrives later at POST /webhooks/approval.
 */
async function publishPost(executionId, input) {
  const postId = String(input.post_id);
  // An approval id is used once (a decided request cannot be asked for again), so it names the
  // execution too: asking about the same post again, in a new execution, is a new request.
  const approvalId = `post-${postId}-${executionId}`;
  paused.set(executionId, { postId, title: String(input.title ?? '') });
  await callControlPlane('POST', `/api/v1/agents/${NODE_ID}/executions/${executionId}/request-approval`, {
    approval_request_id: approvalId,
    approval_request_url: `${REVIEW_URL}/posts/${encodeURIComponent(postId)}`,
    expires_in_hours: 24,
    callback_url: `${BASE_URL}/webhooks/approval`,
  });
  console.log(`[agent] ${executionId} waits for approval ${approvalId}`);
}

/** What the agent does with a decision: it alone decides what each one means. */
async function onDecision({
  execution_id: executionId,
  approval_request_id: approvalId,
  decision,
  feedback,
}) {
  if (decided.has(approvalId)) {
    console.log(`[agent] ${approvalId}: repeated delivery of ${decision}, already handled`);
    return;
  }
  decided.add(approvalId);
  if (decided.size > DECIDED_KEPT) decided.delete(decided.values().next().value);
  console.log(`[agent] ${approvalId}: ${decision}${feedback ? ` (${feedback})` : ''}`);
  const post = paused.get(executionId);
  paused.delete(executionId);
  if (decision === 'expired') return; // the control plane already ended the execution (timeout)
  if (!post) {
    // This process restarted while the execution waited: the paused work is gone.
    await report(executionId, { status: 'failed', error: 'the agent restarted while the execution waited' });
    return;
  }
  if (decision === 'approved') {
    await report(executionId, {
      status: 'succeeded',
      result: { post_id: post.postId, published: true, note: feedback ?? null },
    });
  } else if (decision === 'request_changes') {
    await report(executionId, {
      status: 'succeeded',
      result: { post_id: post.postId, published: false, changes_requested: feedback ?? null },
    });
  } else {
    await report(executionId, {
      status: 'failed',
      error: `rejected by the reviewer: ${feedback ?? 'no reason given'}`,
    });
  }
}

// ---- HTTP server: what the control plane calls ----------------------------------------------

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : JSON.parse(text);
}

/** With SERVICE_API_KEY set, the control plane sends it as X-API-Key: only it may decide. */
function fromControlPlane(req) {
  if (!API_KEY) return true;
  const given = Buffer.from(String(req.headers['x-api-key'] ?? ''));
  const expected = Buffer.from(API_KEY);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const reasonerSpec = {
  id: 'publish_post',
  input_schema: {
    type: 'object',
    properties: { post_id: { type: 'string', minLength: 1 }, title: { type: 'string' } },
    required: ['post_id'],
  },
  output_schema: { type: 'object' },
  tags: ['approval', 'demo'],
};

const server = createServer(async (req, res) => {
  const { pathname } = new URL(req.url ?? '/', BASE_URL);
  try {
    if (req.method === 'GET' && pathname === '/health') {
      return send(res, 200, { status: 'ok', node_id: NODE_ID, version: VERSION });
    }
    if (req.method === 'POST' && pathname === '/reasoners/publish_post') {
      const input = await readJson(req);
      const executionId = req.headers['x-execution-id'];
      if (!executionId)
        return send(res, 400, { error: 'publish_post runs as an execution (X-Execution-ID)' });
      send(res, 202, { status: 'processing', execution_id: executionId });
      publishPost(executionId, input).catch(async (error) => {
        console.error(`[agent] could not ask for approval: ${error.message}`);
        paused.delete(executionId);
        await report(executionId, {
          status: 'failed',
          error: `could not ask for approval: ${error.message}`,
        });
      });
      return;
    }
    if (req.method === 'POST' && pathname === '/webhooks/approval') {
      if (!fromControlPlane(req)) return send(res, 401, { error: 'not from the control plane' });
      const decision = await readJson(req);
      // Answer first: the control plane retries until it gets a 2xx, so the decision is ours now.
      send(res, 200, { received: true });
      onDecision(decision).catch((error) => console.error(`[agent] could not report: ${error.message}`));
      return;
    }
    return send(res, 404, { error: `unknown ${req.method} ${pathname}` });
  } catch (error) {
    if (!res.headersSent) send(res, 400, { error: error.message });
  }
});

// ---- Registration and heartbeats ------------------------------------------------------------

let heartbeatTimer;
let state = 'starting';

function heartbeat() {
  return callControlPlane('POST', `/api/v1/nodes/${NODE_ID}/heartbeat`, {
    status: state,
    version: VERSION,
    timestamp: new Date().toISOString(),
  });
}

async function register() {
  clearInterval(heartbeatTimer);
  state = 'starting';
  try {
    await callControlPlane('POST', '/api/v1/nodes/register', {
      id: NODE_ID,
      version: VERSION,
      base_url: BASE_URL,
      deployment_type: 'long_running',
      reasoners: [reasonerSpec],
      skills: [],
    });
    console.log(`[agent] registered ${NODE_ID}@${VERSION} at ${CONTROL_PLANE_URL}`);
    await heartbeat();
    await callControlPlane('POST', `/api/v1/nodes/${NODE_ID}/lifecycle/status`, { status: 'ready' });
    state = 'ready';
    console.log('[agent] ready');
  } catch (error) {
    console.error(
      `[agent] registration failed (${error.message}); retrying in ${REGISTER_RETRY_MS / 1000} s`,
    );
    setTimeout(register, REGISTER_RETRY_MS);
    return;
  }
  heartbeatTimer = setInterval(async () => {
    try {
      await heartbeat();
    } catch (error) {
      console.error(`[agent] heartbeat failed: ${error.message}`);
      if (error.status === 404) register();
    }
  }, HEARTBEAT_MS);
}

// One line, no stack trace, for the usual cause: this agent (or another) still holds the port.
server.on('error', (error) => {
  if (error.code === 'EADDRINUSE') {
    console.error(
      `[agent] 127.0.0.1:${PORT} is in use (${NODE_ID} still running?): stop it, or choose another port with AGENT_PORT`,
    );
  } else {
    console.error(`[agent] cannot listen on 127.0.0.1:${PORT}: ${error.message}`);
  }
  process.exit(1);
});

server.listen(PORT, '127.0.0.1', () => {
  console.log(`[agent] ${NODE_ID} listening on ${BASE_URL}`);
  register();
});

function shutdown() {
  clearInterval(heartbeatTimer);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
