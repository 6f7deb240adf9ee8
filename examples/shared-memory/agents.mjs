// Two Switchyard agents that share state through memory, no dependencies (Node 20+, node:http only).
// Run: node agents.mjs researcher   and   node agents.mjs writer
// Settings: CONTROL_PLANE_URL, AGENT_PORT (researcher 8002, writer 8003), SERVICE_API_KEY
import { createServer } from 'node:http';

const ROLE = process.argv[2];
const CONTROL_PLANE_URL = (process.env.CONTROL_PLANE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const API_KEY = process.env.SERVICE_API_KEY || undefined;
const VERSION = '1.0.0';
const HEARTBEAT_MS = 5_000;

// ---- Memory and calls, with the context the control plane sent ------------------------------

/** The context headers of a call; memory calls and child calls pass them on unchanged. */
function contextOf(req) {
  const headers = {};
  for (const name of ['x-workflow-id', 'x-session-id', 'x-actor-id']) {
    if (req.headers[name]) headers[name] = req.headers[name];
  }
  return { headers, executionId: req.headers['x-execution-id'] };
}

/** Writes `data` under `key`. No scope: the most specific scope the headers name (the workflow). */
function remember(context, key, data) {
  return callControlPlane('POST', '/api/v1/memory/set', { key, data }, { headers: context.headers });
}

/** Reads `key` (workflow, then session, then actor, then global); undefined when no scope has it. */
async function recall(context, key) {
  try {
    return await callControlPlane('POST', '/api/v1/memory/get', { key }, { headers: context.headers });
  } catch (error) {
    if (error.status === 404) return undefined;
    throw error;
  }
}

// ---- The two agents -----------------------------------------------------------------------------

/** What the researcher "finds": a small offline library, so that the example runs anywhere. */
const LIBRARY = new Map([
  ['octopus', ['An octopus has three hearts.', 'Its blood is blue.', 'Each arm can taste what it touches.']],
  ['honeybee', ['A honeybee visits up to 100 flowers a trip.', 'Bees dance to show where food is.']],
]);

/** researcher.collect: keeps its notes in workflow memory, then has the writer draft from them. */
async function collect(input, context) {
  const facts = LIBRARY.get(input.topic.toLowerCase()) ?? [];
  await remember(context, 'notes', { topic: input.topic, facts });
  // A child call: same workflow, and this execution as its parent in the workflow's DAG.
  const headers = { ...context.headers, 'x-parent-execution-id': context.executionId };
  const call = await callControlPlane('POST', '/api/v1/execute/writer.draft', { input: {} }, { headers });
  if (call.status !== 'succeeded') throw new Error(`writer.draft ${call.status}: ${call.error_message}`);
  return call.result;
}

/** writer.draft: reads the notes of its workflow and the team's style; nothing comes in its input. */
async function draft(_input, context) {
  const notes = await recall(context, 'notes');
  const style = await recall(context, 'style');
  const { max_facts = 3, sign_off = '' } = style?.data ?? {};
  const text = notes
    ? [`${notes.data.topic}:`, ...notes.data.facts.slice(0, max_facts), sign_off].join(' ').trim()
    : 'No notes in this workflow.';
  return { text, notes_from: notes?.scope ?? null, style_from: style?.scope ?? null };
}

const TOPIC = {
  type: 'object',
  properties: { topic: { type: 'string', minLength: 1 } },
  required: ['topic'],
};
const DRAFT = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    notes_from: { type: ['string', 'null'] },
    style_from: { type: ['string', 'null'] },
  },
  required: ['text', 'notes_from', 'style_from'],
};
const tags = ['memory', 'demo'];
const AGENTS = {
  researcher: {
    port: 8002,
    reasoners: { collect: { run: collect, input_schema: TOPIC, output_schema: DRAFT, tags } },
  },
  writer: {
    port: 8003,
    reasoners: { draft: { run: draft, input_schema: { type: 'object' }, output_schema: DRAFT, tags } },
  },
};

if (!Object.hasOwn(AGENTS, ROLE ?? '')) {
  console.error('usage: node agents.mjs researcher|writer');
  process.exit(2);
}
const { reasoners } = AGENTS[ROLE];
const PORT = Number(process.env.AGENT_PORT ?? AGENTS[ROLE].port);
const BASE_URL = process.env.AGENT_BASE_URL ?? `http://127.0.0.1:${PORT}`;

// ---- HTTP server, registration and heartbeats (as in the first agent) ---------------------------

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
    return send(res, 200, { status: 'ok', node_id: ROLE, version: VERSION });
  }
  const name = /^\/reasoners\/([A-Za-z0-9_-]+)$/.exec(pathname)?.[1];
  if (req.method !== 'POST' || !Object.hasOwn(reasoners, name ?? '')) {
    return send(res, 404, { error: `unknown function ${req.method} ${pathname}` });
  }
  let input;
  try {
    input = await readJson(req);
  } catch {
    return send(res, 400, { error: 'the body is not valid JSON' });
  }
  try {
    const context = contextOf(req);
    console.log(
      `[${ROLE}] ${name} workflow=${context.headers['x-workflow-id']} execution=${context.executionId}`,
    );
    return send(res, 200, await reasoners[name].run(input ?? {}, context));
  } catch (error) {
    return send(res, 500, { error: error.message });
  }
});

async function callControlPlane(method, path, body, { headers = {} } = {}) {
  const response = await fetch(`${CONTROL_PLANE_URL}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(API_KEY ? { 'x-api-key': API_KEY } : {}), ...headers },
    body: JSON.stringify(body),
    // Execute calls wait for the called agent: up to the control plane's 60 s synchronous timeout.
    signal: AbortSignal.timeout(path.startsWith('/api/v1/execute/') ? 65_000 : 5_000),
  });
  if (!response.ok) {
    const error = new Error(
      `${method} ${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
    );
    error.status = response.status;
    throw error;
  }
  return response.json();
}

let heartbeatTimer;
let state = 'starting';

function heartbeat() {
  const body = { status: state, version: VERSION, timestamp: new Date().toISOString() };
  return callControlPlane('POST', `/api/v1/nodes/${ROLE}/heartbeat`, body);
}

async function register() {
  clearInterval(heartbeatTimer);
  state = 'starting';
  try {
    await callControlPlane('POST', '/api/v1/nodes/register', {
      id: ROLE,
      version: VERSION,
      base_url: BASE_URL,
      deployment_type: 'long_running',
      reasoners: Object.entries(reasoners).map(([id, { run, ...spec }]) => ({ id, ...spec })),
      skills: [],
    });
    console.log(`[${ROLE}] registered ${ROLE}@${VERSION} at ${CONTROL_PLANE_URL}`);
    await heartbeat();
    await callControlPlane('POST', `/api/v1/nodes/${ROLE}/lifecycle/status`, { status: 'ready' });
    state = 'ready';
    console.log(`[${ROLE}] ready`);
  } catch (error) {
    console.error(`[${ROLE}] registration failed (${error.message}); retrying in 2 s`);
    setTimeout(register, 2_000);
    return;
  }
  heartbeatTimer = setInterval(async () => {
    try {
      await heartbeat();
    } catch (error) {
      console.error(`[${ROLE}] heartbeat failed: ${error.message}`);
      if (error.status === 404) register(); // the control plane forgot this node: register again
    }
  }, HEARTBEAT_MS);
}

// One line, no stack trace, for the usual cause: this agent (or another) still holds the port.
server.on('error', (error) => {
  if (error.code === 'EADDRINUSE') {
    console.error(
      `[${ROLE}] 127.0.0.1:${PORT} is in use (${ROLE} still running?): stop it, or choose another port with AGENT_PORT`,
    );
  } else {
    console.error(`[${ROLE}] cannot listen on 127.0.0.1:${PORT}: ${error.message}`);
  }
  process.exit(1);
});

server.listen(PORT, '127.0.0.1', () => {
  console.log(`[${ROLE}] listening on ${BASE_URL}`);
  register();
});

function shutdown() {
  clearInterval(heartbeatTimer);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
