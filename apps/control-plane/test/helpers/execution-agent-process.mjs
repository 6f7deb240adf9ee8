// A real test agent that speaks the agent protocol the SDKs speak (content/getting-started/sdk-agents.md;
// their recorded requests are test/fixtures/sdk-requests.jsonl) the way
// the SDKs' agents do, with one scripted behaviour per function. Plain JavaScript without dependencies:
// it is both the core of test/helpers/execution-agent.ts (imported, in the test process) and a
// standalone child-process agent (run with node), so the two variants behave identically.
//
// ── Running it as a child process ──────────────────────────────────────────────────────────────────
//   node execution-agent-process.mjs '<options JSON>'
//   (or the same JSON in the EXECUTION_AGENT_OPTIONS environment variable)
// The options are ExecutionAgentOptions of execution-agent.ts in JSON, so `result` is a fixed value
// rather than a function, plus:
//   register  (default true)  register + heartbeat at start, like an SDK agent does
//   port      (default 0)     a fixed port lets a restarted agent keep its base_url
//   logFile   (optional)      every stdout line is also appended here (survives restarts)
// `crash` kills the process with SIGKILL after logging the receipt. SIGTERM closes it cleanly.
//
// ── stdout: one JSON object per line, each with an `event` field ───────────────────────────────────
//   {"event":"listening","url":"http://127.0.0.1:PORT[/base]","node_id":"…","version":"…","pid":123}
//       once, as soon as the server listens (before registration)
//   {"event":"registered","node_id":"…","version":"…"}
//       once registration, the first heartbeat and the lifecycle report answered 2xx
//   {"event":"register_failed","error":"…"}            then the process exits with code 1
//   {"event":"received","execution_id":"…"|null,"fn":"…","kind":"reasoner"|"skill","pid":123}
//       every execute request, written synchronously before the agent answers (or crashes)
//   {"event":"cancel","execution_id":"…","pending":true|false}
//   {"event":"callback","execution_id":"…","status":"succeeded","http_status":200|"error","attempt":1,"took_ms":3}
//       every status-callback attempt, retries included, once it is answered or fails
// Each line also carries `at`, the agent's clock (ms since the epoch) when it was written.
import { setMaxListeners } from 'node:events';
import { appendFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** SDKs retry a failed status callback up to 5 times (6 attempts in all). */
export const DEFAULT_CALLBACK_RETRY = { retries: 5, backoffMs: 100, maxBackoffMs: 2000 };

/** Behaviours answered with 202 + a status callback when the request carries run and execution ids. */
const ASYNC_KINDS = new Set(['accept', 'fail-callback', 'progress']);

/**
 * Starts the agent's HTTP server on 127.0.0.1. `hooks.onEvent` receives the same objects the child
 * process prints; `hooks.crash(req)` replaces the default crash (destroying the socket).
 */
export async function startExecutionAgent(options, hooks = {}) {
  const emit = hooks.onEvent ?? (() => {});
  const version = options.version ?? '1.0.0';
  const basePath = normaliseBasePath(options.basePath);
  const reasoners = options.reasoners ?? {};
  const skills = options.skills ?? {};
  const retry = { ...DEFAULT_CALLBACK_RETRY, ...options.callbackRetry };
  // close() aborts every wait and request this signal is given to, so nothing outlives the agent.
  const closing = new AbortController();
  // Every pending wait and request listens to it: a thousand queued executions are not a leak.
  setMaxListeners(0, closing.signal);
  const timers = new Set();
  /** Execution id -> how to cancel it while its answer or callback is still pending. */
  const pending = new Map();
  /** Background callback jobs, so settled() and close() can wait for them. */
  const jobs = new Set();
  /** Responses held open (`slow`, `hang`), destroyed on close. */
  const held = new Set();

  const agent = {
    url: '',
    nodeId: options.nodeId,
    version,
    calls: [],
    cancels: [],
    callbacks: [],
    heartbeats: [],
    receivedCount: (executionId) => agent.calls.filter((c) => c.executionId === executionId).length,
    register: async () => {},
    stopHeartbeats: () => {},
    settled: async () => {
      // Jobs may start further jobs (none do today), so loop until the set stays empty.
      while (jobs.size > 0) await Promise.allSettled([...jobs]);
    },
    close: async () => {},
  };

  const later = (ms, fn) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const sleep = (ms) =>
    new Promise((resolve) => {
      if (closing.signal.aborted) return resolve();
      const timer = later(ms, resolve);
      closing.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  const track = (promise) => {
    jobs.add(promise);
    promise.finally(() => jobs.delete(promise));
    return promise;
  };

  /** POSTs one status callback, retrying a non-2xx answer or a network error like the SDKs do. */
  async function deliver(executionId, body) {
    const url = `${options.controlPlaneUrl}/api/v1/executions/${encodeURIComponent(executionId)}/status`;
    for (let attempt = 1; attempt <= retry.retries + 1; attempt++) {
      if (closing.signal.aborted) return false;
      let httpStatus;
      const sentAt = Date.now();
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: jsonHeaders(options.apiKey),
          body: JSON.stringify(body),
          signal: closing.signal,
        });
        await response.arrayBuffer();
        httpStatus = response.status;
      } catch {
        httpStatus = 'error';
      }
      // An attempt cut short by close() is not something the agent reported.
      if (closing.signal.aborted) return false;
      const record = { executionId, status: body.status, httpStatus, attempt };
      agent.callbacks.push(record);
      emit({
        event: 'callback',
        execution_id: executionId,
        status: body.status,
        http_status: httpStatus,
        attempt,
        took_ms: Date.now() - sentAt,
      });
      if (typeof httpStatus === 'number' && httpStatus >= 200 && httpStatus < 300) return true;
      if (attempt <= retry.retries) {
        await sleep(Math.min(retry.backoffMs * 2 ** (attempt - 1), retry.maxBackoffMs));
      }
    }
    return false;
  }

  /** A terminal status-callback body, timed from when the call arrived. */
  const terminal = (executionId, status, started, fields) => ({
    execution_id: executionId,
    status,
    ...fields,
    duration_ms: Date.now() - started,
    completed_at: new Date().toISOString(),
  });

  /** 202 path: answer now, report through the status callback after `callbackDelayMs`. */
  function acceptAndReport(call, spec, ctx, res) {
    const { executionId } = call;
    send(res, call, 202, { status: 'processing', execution_id: executionId });
    const started = call.at;
    let cancelled = false;
    let timer;
    let wake;
    const job = new Promise((resolve) => {
      wake = resolve;
      timer = later(spec.callbackDelayMs ?? 0, resolve);
      closing.signal.addEventListener('abort', () => resolve(), { once: true });
    }).then(async () => {
      if (cancelled || closing.signal.aborted) return;
      if (spec.kind === 'progress') {
        await deliver(executionId, { execution_id: executionId, status: 'running', progress: 50 });
      }
      // From here the terminal callback is on its way: a cancel now is too late, as with an SDK.
      if (cancelled || closing.signal.aborted) return;
      pending.delete(executionId);
      let body;
      if (spec.kind === 'fail-callback') {
        body = terminal(executionId, 'failed', started, {
          error: spec.error ?? 'agent failed',
          ...(spec.details === undefined ? {} : { error_details: spec.details }),
        });
      } else {
        try {
          body = terminal(executionId, 'succeeded', started, {
            result: await resultOf(spec, call.input, ctx),
          });
        } catch (error) {
          body = terminal(executionId, 'failed', started, { error: messageOf(error) });
        }
      }
      await deliver(executionId, body);
    });
    track(job);
    pending.set(executionId, () => {
      cancelled = true;
      clearTimeout(timer);
      wake(); // ends the wait, so settled() does not wait for a callback that will never come
      pending.delete(executionId);
      return track(deliver(executionId, terminal(executionId, 'cancelled', started, {})));
    });
  }

  async function execute(req, res, kind, fn) {
    let input;
    try {
      const text = await readBody(req);
      input = text === '' ? {} : JSON.parse(text);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid JSON body"}');
      return;
    }
    const headers = flatHeaders(req.headers);
    const executionId = headers['x-execution-id'];
    const runId = headers['x-run-id'];
    const call = { fn, kind, executionId, runId, headers, input, at: Date.now(), outcome: undefined };
    agent.calls.push(call);
    emit({ event: 'received', execution_id: executionId ?? null, fn, kind, pid: process.pid });

    const table = kind === 'reasoner' ? reasoners : skills;
    const spec = Object.hasOwn(table, fn) ? table[fn] : undefined;
    if (!spec) {
      send(res, call, 404, { error: `${kind} '${fn}' not found` });
      return;
    }
    const ctx = {
      fn,
      kind,
      nodeId: options.nodeId,
      executionId,
      runId,
      workflowId: headers['x-workflow-id'],
      headers,
    };
    // SDK agents answer 202 whenever both ids are present; without them they answer synchronously.
    const asynchronous = ASYNC_KINDS.has(spec.kind) && Boolean(executionId) && Boolean(runId);
    if (asynchronous) {
      acceptAndReport(call, spec, ctx, res);
      return;
    }
    switch (spec.kind) {
      case 'answer':
      case 'accept':
      case 'progress':
        await answerWithResult(res, call, spec, ctx);
        return;
      case 'fail-callback':
      case 'error':
        send(res, call, spec.status ?? 500, {
          error: spec.error ?? (spec.kind === 'error' ? 'agent error' : 'agent failed'),
          ...(spec.details === undefined ? {} : { error_details: spec.details }),
        });
        return;
      case 'slow': {
        held.add(res);
        const timer = later(spec.delayMs, () => void answerWithResult(res, call, spec, ctx));
        // The caller gave up (timeout, cancel, crash): stop waiting instead of answering nobody.
        res.on('close', () => {
          held.delete(res);
          if (!res.writableFinished) {
            clearTimeout(timer);
            call.outcome ??= 'aborted';
          }
        });
        return;
      }
      case 'hang': {
        held.add(res);
        res.on('close', () => {
          held.delete(res);
          if (!res.writableFinished) call.outcome ??= 'aborted';
        });
        if (executionId) {
          pending.set(executionId, () => {
            pending.delete(executionId);
            // Report first, then release the held request, so the callback is what decides.
            return track(
              deliver(executionId, terminal(executionId, 'cancelled', call.at, {})).then(() => {
                if (!res.writableEnded && !res.destroyed) {
                  send(res, call, 409, {
                    error: 'execution cancelled',
                    error_details: { execution_id: executionId },
                  });
                }
                call.outcome = 'cancelled';
              }),
            );
          });
        }
        return;
      }
      case 'crash':
        call.outcome = 'crashed';
        if (hooks.crash) hooks.crash(req, res);
        else req.socket.destroy();
        return;
      default:
        send(res, call, 500, { error: `unknown test behaviour '${spec.kind}'` });
    }
  }

  async function answerWithResult(res, call, spec, ctx) {
    if (res.writableEnded || res.destroyed) return;
    try {
      send(res, call, 200, await resultOf(spec, call.input, ctx));
    } catch (error) {
      send(res, call, 500, { error: messageOf(error) });
    }
  }

  function cancel(res, executionId) {
    agent.cancels.push(executionId);
    const cancelPending = pending.get(executionId);
    emit({ event: 'cancel', execution_id: executionId, pending: Boolean(cancelPending) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ execution_id: executionId, status: cancelPending ? 'cancelled' : 'not_running' }),
    );
    cancelPending?.();
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://agent').pathname;
    const local =
      basePath === '' ? path : path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : null;
    if (local === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', node_id: options.nodeId, version }));
      return;
    }
    const fnMatch = local && /^\/(reasoners|skills)\/([^/]+)$/.exec(local);
    if (fnMatch && req.method === 'POST') {
      const kind = fnMatch[1] === 'reasoners' ? 'reasoner' : 'skill';
      execute(req, res, kind, decodeURIComponent(fnMatch[2])).catch((error) => {
        if (!res.headersSent) send(res, undefined, 500, { error: messageOf(error) });
      });
      return;
    }
    const cancelMatch = local && /^\/_internal\/executions\/([^/]+)\/cancel$/.exec(local);
    if (cancelMatch && req.method === 'POST') {
      // The body (if any) carries nothing the agent needs; drain it before answering.
      readBody(req).then(
        () => cancel(res, decodeURIComponent(cancelMatch[1])),
        () => res.destroy(),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  agent.url = `http://127.0.0.1:${server.address().port}${basePath}`;

  const registrar = createRegistrar(
    { ...options, version, baseUrl: agent.url },
    agent.heartbeats,
    closing.signal,
  );
  agent.register = registrar.register;
  agent.stopHeartbeats = registrar.stopHeartbeats;
  agent.close = async () => {
    if (closing.signal.aborted) return;
    registrar.stopHeartbeats();
    closing.abort();
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    pending.clear();
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...jobs]);
  };
  return agent;
}

/**
 * Registration and heartbeats as an SDK agent does them: register (reasoners, skills, input
 * schemas), first heartbeat `starting`, lifecycle report `ready`, then `ready` heartbeats every
 * `heartbeatMs`. Usable without a server, for a registered agent that never started.
 */
export function createRegistrar(options, heartbeats = [], signal = undefined) {
  const version = options.version ?? '1.0.0';
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const nodePath = `/api/v1/nodes/${encodeURIComponent(options.nodeId)}`;
  let timer;
  let stopped = false;

  const post = async (path, body) => {
    const response = await fetch(`${options.controlPlaneUrl}${path}`, {
      method: 'POST',
      headers: jsonHeaders(options.apiKey),
      body: JSON.stringify(body),
      signal,
    });
    const text = await response.text();
    return { status: response.status, text };
  };
  const mustSucceed = async (what, path, body) => {
    const { status, text } = await post(path, body);
    if (status < 200 || status > 299) throw new Error(`${what} answered ${status}: ${text}`);
  };
  const beat = async (status) => {
    let httpStatus;
    try {
      httpStatus = (
        await post(`${nodePath}/heartbeat`, { status, version, timestamp: new Date().toISOString() })
      ).status;
    } catch {
      httpStatus = 'error';
    }
    heartbeats.push({ status, httpStatus });
    return httpStatus;
  };
  // The next beat is scheduled after the previous one finished, so beats never overlap; a failing
  // heartbeat is ignored and the rhythm continues, as the TypeScript SDK does.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(async () => {
      await beat('ready');
      schedule();
    }, heartbeatMs);
  };

  return {
    async register() {
      await mustSucceed('registration', '/api/v1/nodes/register', registrationBody(options, version));
      const first = await beat('starting');
      if (typeof first !== 'number' || first < 200 || first > 299) {
        throw new Error(`first heartbeat answered ${first}`);
      }
      await mustSucceed('lifecycle report', `${nodePath}/lifecycle/status`, { status: 'ready', version });
      stopped = false;
      clearTimeout(timer);
      schedule();
    },
    stopHeartbeats() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The registration body: the shape of helpers/control-plane.ts registration(), from the options. */
export function registrationBody(options, version = options.version ?? '1.0.0') {
  const entry = (id, spec) => ({
    id,
    ...(spec.description ? { description: spec.description } : {}),
    input_schema: spec.inputSchema ?? { type: 'object' },
    tags: spec.tags ?? [],
  });
  return {
    id: options.nodeId,
    version,
    base_url: options.baseUrl,
    deployment_type: 'long_running',
    tags: options.tags ?? ['test'],
    metadata: options.metadata ?? {},
    reasoners: Object.entries(options.reasoners ?? {}).map(([id, spec]) => ({
      ...entry(id, spec),
      output_schema: spec.outputSchema ?? { type: 'object' },
    })),
    skills: Object.entries(options.skills ?? {}).map(([id, spec]) => entry(id, spec)),
  };
}

async function resultOf(spec, input, ctx) {
  if (typeof spec.result === 'function') return await spec.result(input, ctx);
  if (spec.result !== undefined) return spec.result;
  return { echo: input };
}

function send(res, call, status, body) {
  if (res.headersSent || res.destroyed) return;
  if (call) call.outcome = { status };
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? null));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

/** Lower-case header names with single string values (repeated headers joined by ", "). */
function flatHeaders(headers) {
  const flat = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function jsonHeaders(apiKey) {
  return { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) };
}

function normaliseBasePath(basePath) {
  if (!basePath || basePath === '/') return '';
  return `/${basePath.replace(/^\/+|\/+$/g, '')}`;
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

// ── Child-process entry point ─────────────────────────────────────────────────────────────────────
async function main() {
  const options = JSON.parse(process.argv[2] ?? process.env.EXECUTION_AGENT_OPTIONS ?? '');
  const line = (event) => {
    const text = `${JSON.stringify({ ...event, at: Date.now() })}\n`;
    // Synchronous writes: a receipt line must be out before a `crash` SIGKILLs the process.
    writeSync(1, text);
    if (options.logFile) appendFileSync(options.logFile, text);
  };
  const agent = await startExecutionAgent(options, {
    onEvent: line,
    // A real crash: no answer, no cleanup, the connection is reset by the kernel.
    crash: () => process.kill(process.pid, 'SIGKILL'),
  });
  line({
    event: 'listening',
    url: agent.url,
    node_id: agent.nodeId,
    version: agent.version,
    pid: process.pid,
  });
  process.on('SIGTERM', () => {
    agent.close().then(() => process.exit(0));
  });
  if (options.register === false) return;
  try {
    await agent.register();
    line({ event: 'registered', node_id: agent.nodeId, version: agent.version });
  } catch (error) {
    line({ event: 'register_failed', error: messageOf(error) });
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  });
}
