import { OutboundError } from '../../platform/outbound/index.ts';
import { nodeAgentCalls } from './agent-calls.ts';
import { agentUrl } from './agent-urls.ts';
import type { NodeRuntime } from './runtime.ts';
import type { NodeInstanceRecord } from './schemas.ts';
import { movePatch } from './transitions.ts';

/** What became of a restart request (see {@link requestRestart}). */
export type RestartOutcome =
  /** The agent answered 2xx: it restarts itself. `record` is the instance as it now is. */
  | { kind: 'accepted'; status: number; record: NodeInstanceRecord }
  /** The agent answered 404, 405 or 501: it does not implement `/_internal/restart`. */
  | { kind: 'unsupported'; status: number }
  /** The agent answered another status, or could not be reached (`status` null). */
  | { kind: 'failed'; status: number | null; error: string }
  /** No answer within the timeout. */
  | { kind: 'timeout'; timeoutMs: number };

/** Answers that mean "no such endpoint here": the agent or its SDK does not support restarts. */
const UNSUPPORTED = new Set([404, 405, 501]);

export interface RestartOptions {
  /** Sent as X-API-Key when the control plane has an API key (agents share it). */
  apiKey?: string;
  /** Why, passed to the agent in the body. */
  reason: string;
  /** How long to wait for the agent's answer; node_health.check_timeout when omitted. */
  timeoutMs?: number;
}

/**
 * Asks one instance's agent to restart: `POST {base_url}/_internal/restart` with
 * `{ node_id, version, reason }`, like the shutdown notice and the cancel call. Only the answer
 * is awaited, not the restart. When the agent accepts (2xx) and the instance is active and not
 * offline, it moves to `starting` (reason `started`), out of routing until its next `ready`
 * heartbeat or healthy probe; an operator's stop or shutdown is kept. Any other answer changes
 * nothing.
 */
export async function requestRestart(
  runtime: NodeRuntime,
  instance: NodeInstanceRecord,
  options: RestartOptions,
): Promise<RestartOutcome> {
  const timeoutMs = options.timeoutMs ?? runtime.healthSettings.checkTimeoutMs;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let status: number;
  try {
    // A redirect is not an answer (the outbound client never follows one): following it could
    // send the API key elsewhere.
    const response = await nodeAgentCalls.request(agentUrl(instance.baseUrl, '_internal', 'restart'), {
      method: 'POST',
      headers,
      body: JSON.stringify({ node_id: instance.nodeId, version: instance.version, reason: options.reason }),
      timeoutMs,
      // Only the status matters: the body is not read.
      maxBodyBytes: 0,
      overLimit: 'truncate',
    });
    status = response.status;
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (error.status !== null) status = error.status;
    else if (error.kind === 'timeout') return { kind: 'timeout', timeoutMs };
    else return { kind: 'failed', status: null, error: error.code ?? error.message };
  }
  if (UNSUPPORTED.has(status)) return { kind: 'unsupported', status };
  if (status < 200 || status > 299) return { kind: 'failed', status, error: `the agent answered ${status}` };
  const applied = await runtime.transitions.apply(instance, (current, at) =>
    current.adminState !== 'active' ||
    current.lifecycleStatus === 'offline' ||
    (current.lifecycleStatus === 'starting' && current.statusReason === 'started')
      ? null
      : movePatch({ status: 'starting', reason: 'started' }, at),
  );
  return { kind: 'accepted', status, record: applied?.record ?? instance };
}
