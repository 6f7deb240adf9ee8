// Real agents for execution tests, written from the agent protocol the SDKs speak
// (content/getting-started/sdk-agents.md; their recorded requests are test/fixtures/sdk-requests.jsonl): each function
// answers the way a scripted SDK agent would (200, 202 + status callback, slow, error, crash, hang).
// The implementation lives in execution-agent-process.mjs so the in-process agent and the
// child-process agent (startExecutionAgentProcess) are the same code; this file adds types.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { deadAgentUrl } from './agents.ts';

/** How one function answers an execute request. */
export type Behaviour =
  /** 200, body = result (default `{ echo: input }`). */
  | { kind: 'answer' }
  /**
   * With both X-Run-ID and X-Execution-ID (as SDKs do): 202 `{status:'processing', execution_id}`,
   * then after `callbackDelayMs` a `succeeded` status callback with result, duration_ms and
   * completed_at. Without them it answers like `answer`.
   */
  | { kind: 'accept'; callbackDelayMs?: number }
  /** 200 after delayMs; stops waiting when the caller goes away. Ignores cancel (a sync handler). */
  | { kind: 'slow'; delayMs: number }
  /** `status` (default 500) `{error, error_details}`. */
  | { kind: 'error'; status?: number; error?: string; details?: object }
  /** Like `accept`, but the callback is `failed` with error and error_details. Without ids: 500. */
  | { kind: 'fail-callback'; error?: string; details?: object; callbackDelayMs?: number }
  /** Like `accept`, with a `running` callback carrying progress 50 before `succeeded`. */
  | { kind: 'progress'; callbackDelayMs?: number }
  /**
   * Reads the request, then dies without answering: in process the socket is destroyed; in the
   * child-process variant the process SIGKILLs itself (after logging the receipt).
   */
  | { kind: 'crash' }
  /**
   * Never answers. A cancel for its execution id sends a `cancelled` status callback and then
   * releases the held request with 409 `{error:'execution cancelled'}`.
   */
  | { kind: 'hang' };

/** What a `result` function receives besides the input. */
export interface CallContext {
  fn: string;
  kind: 'reasoner' | 'skill';
  nodeId: string;
  executionId?: string;
  runId?: string;
  workflowId?: string;
  headers: Record<string, string>;
}

/** A fixed result, as the child-process variant takes it (JSON). */
export type FixedResult = Record<string, unknown> | unknown[] | string | number | boolean | null;

/** What the registration says about a function besides its id. */
export interface FunctionExtras {
  inputSchema?: object;
  outputSchema?: object;
  tags?: string[];
  description?: string;
}

export type FunctionSpec = Behaviour &
  FunctionExtras & {
    /** The result (a function of the input, or a fixed value). A throw becomes a failure answer. */
    result?: ((input: any, ctx: CallContext) => unknown) | FixedResult;
  };

/** A function of the child-process agent: `result` must be JSON (functions do not cross processes). */
export type ProcessFunctionSpec = Behaviour & FunctionExtras & { result?: FixedResult };

export interface CallbackRetry {
  /** Retries after the first attempt (SDKs: 5). */
  retries?: number;
  /** First wait; doubles per retry up to maxBackoffMs. Set both equal for a steady rhythm. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export interface ExecutionAgentOptions {
  controlPlaneUrl: string;
  nodeId: string;
  version?: string;
  /** Sent as X-API-Key on registration, heartbeats and status callbacks. */
  apiKey?: string;
  /** Function id -> behaviour; reasoners served at POST {base}/reasoners/{id}, skills at /skills/{id}. */
  reasoners?: Record<string, FunctionSpec>;
  skills?: Record<string, FunctionSpec>;
  /** Interval of the `ready` heartbeats after register(); default 1000. */
  heartbeatMs?: number;
  /** A path prefix for every route, part of base_url (e.g. '/agents/a1'). */
  basePath?: string;
  /** Default { retries: 5, backoffMs: 100, maxBackoffMs: 2000 }. */
  callbackRetry?: CallbackRetry;
  /** Listen port; default 0 (any). A fixed one lets a restarted agent keep its base_url. */
  port?: number;
  tags?: string[];
  metadata?: Record<string, unknown>;
}

export interface ReceivedCall {
  fn: string;
  kind: 'reasoner' | 'skill';
  executionId?: string;
  runId?: string;
  /** Every request header, lower-case (x-run-id, x-execution-id, x-workflow-id, x-api-key, …). */
  headers: Record<string, string>;
  input: unknown;
  /** Date.now() when the request arrived. */
  at: number;
  /** How the agent finished the request: answered with a status, or what happened instead. */
  outcome?: { status: number } | 'aborted' | 'crashed' | 'cancelled';
}

export interface CallbackAttempt {
  executionId: string;
  status: string;
  httpStatus: number | 'error';
  /** 1 for the first attempt, 2+ for retries. */
  attempt: number;
}

export interface ExecutionAgent {
  url: string;
  nodeId: string;
  version: string;
  /** Every execute request received, unknown functions included, in arrival order. */
  calls: ReceivedCall[];
  /** How many times each execution id was received (exactly-once checks). */
  receivedCount(executionId: string): number;
  /** Execution ids of every POST {base}/_internal/executions/{id}/cancel received (all answered 200). */
  cancels: string[];
  /** Every status-callback attempt, retries included. */
  callbacks: CallbackAttempt[];
  /** Every heartbeat sent (the first is `starting`) and the answer. */
  heartbeats: Array<{ status: string; httpStatus: number | 'error' }>;
  /**
   * Registers (reasoners, skills, input schemas), sends the first heartbeat `starting`, reports
   * lifecycle `ready`, then heartbeats `ready` every heartbeatMs. Resolves once the control plane
   * answered 2xx to all three; rejects with the answer otherwise.
   */
  register(): Promise<void>;
  stopHeartbeats(): void;
  /** Resolves when every status callback started so far was delivered or gave up. */
  settled(): Promise<void>;
  /** Closes the server, stops heartbeats and timers, drops pending callbacks. */
  close(): Promise<void>;
}

interface Core {
  startExecutionAgent(options: ExecutionAgentOptions): Promise<ExecutionAgent>;
  createRegistrar(
    options: ExecutionAgentOptions & { baseUrl: string },
    heartbeats?: ExecutionAgent['heartbeats'],
  ): Pick<ExecutionAgent, 'register' | 'stopHeartbeats'>;
  registrationBody(options: ExecutionAgentOptions & { baseUrl: string }): Record<string, unknown>;
}

const SCRIPT = fileURLToPath(new URL('./execution-agent-process.mjs', import.meta.url));

// Imported by path at run time: the core is plain JavaScript without type declarations.
let core: Promise<Core> | undefined;
function loadCore(): Promise<Core> {
  core ??= import(SCRIPT) as Promise<Core>;
  return core;
}

/** Starts an agent on 127.0.0.1 (not yet registered: call register()). */
export async function startExecutionAgent(options: ExecutionAgentOptions): Promise<ExecutionAgent> {
  return (await loadCore()).startExecutionAgent(options);
}

/** The registration body the agent sends, for tests that compare what the control plane stored. */
export async function executionAgentRegistration(
  options: ExecutionAgentOptions & { baseUrl: string },
): Promise<Record<string, unknown>> {
  return (await loadCore()).registrationBody(options);
}

/** The agent "never started": registered and heartbeating, but nothing listens at its base_url. */
export interface UnstartedAgent {
  url: string;
  nodeId: string;
  heartbeats: ExecutionAgent['heartbeats'];
  stopHeartbeats(): void;
}

export async function registerUnstartedAgent(options: ExecutionAgentOptions): Promise<UnstartedAgent> {
  const url = await deadAgentUrl();
  const heartbeats: ExecutionAgent['heartbeats'] = [];
  const registrar = (await loadCore()).createRegistrar({ ...options, baseUrl: url }, heartbeats);
  await registrar.register();
  return { url, nodeId: options.nodeId, heartbeats, stopHeartbeats: registrar.stopHeartbeats };
}

// ── Child-process variant ─────────────────────────────────────────────────────────────────────────

/**
 * One stdout line of execution-agent-process.mjs (formats documented at the top of the script);
 * `at` is the agent's clock when it was written.
 */
export type AgentProcessEvent = { at: number } & (
  | { event: 'listening'; url: string; node_id: string; version: string; pid: number }
  | { event: 'registered'; node_id: string; version: string }
  | { event: 'register_failed'; error: string }
  | { event: 'received'; execution_id: string | null; fn: string; kind: 'reasoner' | 'skill'; pid: number }
  | { event: 'cancel'; execution_id: string; pending: boolean }
  | {
      event: 'callback';
      execution_id: string;
      status: string;
      http_status: number | 'error';
      attempt: number;
      /** From sending the attempt to its answer or failure. */
      took_ms: number;
    }
);

export interface ExecutionAgentProcessOptions extends Omit<ExecutionAgentOptions, 'reasoners' | 'skills'> {
  reasoners?: Record<string, ProcessFunctionSpec>;
  skills?: Record<string, ProcessFunctionSpec>;
  /** Register and heartbeat at start (default true); start() then waits for `registered`. */
  register?: boolean;
  /** Also append every stdout line here, to count receipts across several agent processes. */
  logFile?: string;
}

export interface ExecutionAgentProcess {
  process: ChildProcess;
  url: string;
  nodeId: string;
  /** Every stdout line so far, parsed. */
  events: AgentProcessEvent[];
  receivedCount(executionId: string): number;
  /** Resolves with the first event (already seen or still to come) that matches. */
  waitFor(match: (event: AgentProcessEvent) => boolean): Promise<AgentProcessEvent>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL (no goodbye, as when a machine dies), then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM: the agent closes its server and exits 0. */
  stop(): Promise<void>;
}

/** Parses agent log text (stdout or a logFile) into events, skipping anything that is not JSON. */
export function parseAgentLog(text: string): AgentProcessEvent[] {
  const events: AgentProcessEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      // not one of our lines
    }
  }
  return events;
}

/** How many `received` lines name the execution id (e.g. over the logs of several processes). */
export function countReceipts(events: AgentProcessEvent[], executionId: string): number {
  return events.filter((e) => e.event === 'received' && e.execution_id === executionId).length;
}

/**
 * Runs execution-agent-process.mjs as a child process and resolves once it listens (and, unless
 * `register: false`, once it registered). Rejects with its stderr if it exits first.
 */
export async function startExecutionAgentProcess(
  options: ExecutionAgentProcessOptions,
): Promise<ExecutionAgentProcess> {
  const child = spawn(process.execPath, [SCRIPT, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: AgentProcessEvent[] = [];
  const waiters: Array<{
    match: (e: AgentProcessEvent) => boolean;
    resolve: (e: AgentProcessEvent) => void;
  }> = [];
  let partial = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const event of parseAgentLog(lines.join('\n'))) {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (match: (event: AgentProcessEvent) => boolean) => {
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<AgentProcessEvent>((resolve) => waiters.push({ match, resolve }));
  };
  const ready = options.register === false ? 'listening' : 'registered';
  // Whichever comes first: the agent is ready, or it exited (then say why).
  const outcome = await Promise.race([
    waitFor((e) => e.event === ready || e.event === 'register_failed').then((e) => ({ e })),
    exited.then((exit) => ({ exit })),
  ]);
  if (!('e' in outcome) || outcome.e.event === 'register_failed') {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    throw new Error(`agent process failed to start: ${JSON.stringify(events)} ${stderr}`);
  }
  const listening = events.find((e) => e.event === 'listening') as { url: string };
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    process: child,
    url: listening.url,
    nodeId: options.nodeId,
    events,
    receivedCount: (executionId) => countReceipts(events, executionId),
    waitFor,
    exited,
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) child.kill('SIGTERM');
      await exited;
    },
  };
}
