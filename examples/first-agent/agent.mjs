// A minimal Switchyard agent: one reasoner, one skill, no dependencies (Node 20+, node:http only).
// Run: node agent.mjs   (settings: CONTROL_PLANE_URL, AGENT_PORT, AGENT_ID, AGENT_VERSION, SERVICE_API_KEY)
import { createServer } from 'node:http';

const CONTROL_PLANE_URL = (process.env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const PORT = Number(process.env.AGENT_PORT ?? 8001);
const NODE_ID = process.env.AGENT_ID ?? 'hello-agent';
const VERSION = process.env.AGENT_VERSION ?? '1.0.0';
const BASE_URL = process.env.AGENT_BASE_URL ?? `http://127.0.0.1:${PORT}`;
const API_KEY = process.env.SERVICE_API_KEY || undefined;

const REGISTER_RETRY_MS = 2_000;
const HEARTBEAT_MS = 5_000;

// ---- The functions this agent offers ------------------------------------------------------

/** Reasoner: keeps the first sentences of a text. */
function summarize(input) {
  const text = String(input.text ?? '').trim();
  const max = Number.isInteger(input.max_sentences) ? input.max_sentences : 2;
  const sentences = (text.match(/[^.!?]+[.!?]*/g) ?? []).map((s) => s.trim()).filter(Boolean);
  return { summary: sentences.slice(0, max).join(' '), sentences: sentences.length };
}

/** Skill: counts words and characters. */
function wordCount(input) {
  const text = String(input.text ?? '');
  const words = text.trim() === '' ? 0 : text.trim().split(/\s+/).length;
  return { words, characters: text.length };
}

const reasoners = {
  summarize: {
    run: summarize,
    input_schema: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1 },
        max_sentences: { type: 'integer', minimum: 1, maximum: 10 },
      },
      required: ['text'],
    },
    output_schema: {
      type: 'object',
      properties: { summary: { type: 'string' }, sentences: { type: 'integer' } },
      required: ['summary', 'sentences'],
    },
    tags: ['text', 'demo'],
  },
};

const skills = {
  word_count: {
    run: wordCount,
    input_schema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    },
    tags: ['text', 'demo'],
  },
};

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

const server = createServer(async (req, res) => {
  const { pathname } = new URL(req.url ?? '/', BASE_URL);

  if (req.method === 'GET' && pathname === '/health') {
    return send(res, 200, { status: 'ok', node_id: NODE_ID, version: VERSION });
  }

  const match = /^\/(reasoners|skills)\/([A-Za-z0-9_-]+)$/.exec(pathname);
  const fn = match && (match[1] === 'reasoners' ? reasoners : skills)[match[2]];
  if (req.method !== 'POST' || !fn) {
    return send(res, 404, { error: `unknown function ${req.method} ${pathname}` });
  }

  let input;
  try {
    input = await readJson(req);
  } catch {
    return send(res, 400, { error: 'the body is not valid JSON' });
  }
  try {
    // The body is the raw input object; the answer body is the result.
    const execution = req.headers['x-execution-id'] ?? '-';
    console.log(`[agent] ${match[1]}/${match[2]} execution=${execution}`);
    return send(res, 200, fn.run(input ?? {}));
  } catch (error) {
    return send(res, 500, { error: error.message });
  }
});

// ---- Talking to the control plane -----------------------------------------------------------

async function callControlPlane(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (API_KEY) headers['x-api-key'] = API_KEY;
  const response = await fetch(`${CONTROL_PLANE_URL}${path}`, {
    method,
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) {
    const detail = await response.text();
    const error = new Error(`${method} ${path} answered ${response.status}: ${detail.slice(0, 300)}`);
    error.status = response.status;
    throw error;
  }
  return response.status === 204 ? null : response.json().catch(() => null);
}

function describe(functions) {
  return Object.entries(functions).map(([id, { run, ...spec }]) => ({ id, ...spec }));
}

let heartbeatTimer;
let state = 'starting';

function heartbeat() {
  const body = { status: state, version: VERSION, timestamp: new Date().toISOString() };
  return callControlPlane('POST', `/api/v1/nodes/${NODE_ID}/heartbeat`, body);
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
      reasoners: describe(reasoners),
      skills: describe(skills),
    });
    console.log(`[agent] registered ${NODE_ID}@${VERSION} at ${CONTROL_PLANE_URL}`);
    await heartbeat(); // first heartbeat says `starting`
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
      // 404: the control plane forgot this node (evicted, or a new database): register again.
      if (error.status === 404) register();
    }
  }, HEARTBEAT_MS);
}

// The usual reason listen fails: the port is held, often by this agent still running in another
// terminal. One line says so, instead of an unhandled error's stack trace.
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
  console.log('[agent] shutting down');
  clearInterval(heartbeatTimer);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
