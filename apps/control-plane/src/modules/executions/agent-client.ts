import { jsonTextDepth, MAX_JSON_DEPTH } from '@switchyard/shared';
import { createOutboundClient, OutboundError } from '../../platform/outbound/index.ts';
import { agentUrl } from '../nodes/index.ts';

/** The context headers the control plane sets when it calls an agent (X-Workflow-ID and the rest). */
export interface CallContext {
  executionId: string;
  runId: string;
  workflowId: string;
  parentExecutionId: string | null;
  sessionId: string | null;
  actorId: string | null;
}

/** The context headers of one execution, from its row. */
export function callContextOf(row: {
  execution_id: string;
  run_id: string;
  workflow_id: string;
  parent_execution_id: string | null;
  session_id: string | null;
  actor_id: string | null;
}): CallContext {
  return {
    executionId: row.execution_id,
    runId: row.run_id,
    workflowId: row.workflow_id,
    parentExecutionId: row.parent_execution_id,
    sessionId: row.session_id,
    actorId: row.actor_id,
  };
}

/** What became of one call to an agent's function. */
export type AgentAnswer =
  /** 200 (or another 2xx but 202): the body is the result. */
  | { kind: 'result'; result: unknown }
  /** 202: the agent took the work and reports through the status callback. */
  | { kind: 'accepted' }
  /** 4xx or 5xx: the function failed; `error` is the agent's own message when it sent one. */
  | { kind: 'error'; status: number; error: string; details: unknown }
  /** Nothing reached the agent (refused, unresolvable, connect timeout): safe to try again. */
  | { kind: 'unreachable'; error: string }
  /** The request went out but no answer came back (reset, closed, aborted): it may have run. */
  | { kind: 'lost'; error: string };

/** An agent's answer larger than this is refused: results live in a jsonb column and in memory. */
export const MAX_RESULT_BYTES = 10 * 1024 * 1024;

/** Most of a cancel's answer read: only its status matters. */
const CANCEL_BODY_BYTES = 128 * 1024;

/** A failed call in a word: its socket code (ECONNREFUSED…), else what went wrong. */
function describe(error: unknown): string {
  if (error instanceof OutboundError) return error.code ?? error.message;
  return (error as Error).message ?? String(error);
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Calls agents over HTTP, as agent SDKs expect to be called (content/getting-started/sdk-agents.md),
 * with one outbound client, which
 * keeps a pool of keep-alive connections per agent origin. A call has no timeout of its own
 * because the async lane has no execution time limit: callers bound a call with an AbortSignal
 * instead (the sync timeout, or a cancel). Agents are trusted and live on private networks: no
 * address filtering.
 */
export function createAgentClient(options: { apiKey?: () => string | undefined; connections?: number } = {}) {
  // Read per call: a config reload may change the key (api.auth.api_key is live).
  const apiKey = () => options.apiKey?.() || undefined;
  const client = createOutboundClient({
    addresses: 'any',
    connectTimeoutMs: 10_000,
    keepAliveMs: 10_000,
    connections: options.connections ?? 256,
  });

  function headersFor(context: CallContext): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-run-id': context.runId,
      'x-execution-id': context.executionId,
      'x-workflow-id': context.workflowId,
    };
    if (context.parentExecutionId) headers['x-parent-execution-id'] = context.parentExecutionId;
    if (context.sessionId) headers['x-session-id'] = context.sessionId;
    if (context.actorId) headers['x-actor-id'] = context.actorId;
    const key = apiKey();
    if (key) headers['x-api-key'] = key;
    return headers;
  }

  // The URL of each function, built once: parsing and re-serialising the base URL on every call
  // is measurable on the sync lane. Bounded, since base URLs change as agents come and go.
  const functionUrls = new Map<string, string>();
  function functionUrl(baseUrl: string, type: 'reasoner' | 'skill', functionName: string): string {
    const key = `${type}\n${functionName}\n${baseUrl}`;
    let url = functionUrls.get(key);
    if (url === undefined) {
      url = agentUrl(baseUrl, type === 'skill' ? 'skills' : 'reasoners', functionName);
      if (functionUrls.size >= 10_000) functionUrls.clear();
      functionUrls.set(key, url);
    }
    return url;
  }

  return {
    /** `POST {base_url}/reasoners/{name}` or `/skills/{name}` with the raw input as the body. */
    async call(
      baseUrl: string,
      type: 'reasoner' | 'skill',
      functionName: string,
      input: unknown,
      context: CallContext,
      signal?: AbortSignal,
    ): Promise<AgentAnswer> {
      const url = functionUrl(baseUrl, type, functionName);
      let response: { status: number; body: Buffer };
      try {
        response = await client.request(url, {
          method: 'POST',
          headers: headersFor(context),
          body: JSON.stringify(input),
          signal,
          maxBodyBytes: MAX_RESULT_BYTES,
          overLimit: 'fail',
        });
      } catch (error) {
        if (!(error instanceof OutboundError)) throw error;
        if (error.kind === 'too_large') {
          return {
            kind: 'error',
            status: error.status as number,
            error: `the agent's answer exceeds ${MAX_RESULT_BYTES} bytes`,
            details: null,
          };
        }
        if (error.status !== null) {
          return { kind: 'lost', error: `the agent's answer was cut off (${describe(error)})` };
        }
        if (error.kind === 'not_sent')
          return { kind: 'unreachable', error: `cannot reach the agent at ${url}: ${describe(error)}` };
        if (error.kind === 'aborted') {
          return { kind: 'lost', error: 'the call was abandoned before the agent answered' };
        }
        return {
          kind: 'lost',
          error: `the agent at ${url} closed the connection without answering (${describe(error)})`,
        };
      }
      const text = response.body.toString('utf8');
      const { status } = response;
      if (status === 202) return { kind: 'accepted' };
      // Deeper JSON parses, but overflows the stack of whatever walks it next (storage checks).
      const depth = jsonTextDepth(text);
      if (depth > MAX_JSON_DEPTH) {
        return {
          kind: 'error',
          status,
          error: `the agent's answer is JSON nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}`,
          details: null,
        };
      }
      if (status >= 200 && status < 300) return { kind: 'result', result: parseBody(text) };
      const body = parseBody(text) as
        | { error?: unknown; error_details?: unknown; detail?: unknown }
        | string
        | null;
      const message =
        body && typeof body === 'object' && typeof body.error === 'string' && body.error !== ''
          ? body.error
          : body && typeof body === 'object' && typeof body.detail === 'string' && body.detail !== ''
            ? body.detail
            : `the agent answered ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 500)}` : ''}`;
      const details = body && typeof body === 'object' ? (body.error_details ?? null) : null;
      return { kind: 'error', status, error: message, details };
    },

    /** `POST {base_url}/_internal/executions/{id}/cancel`; resolves with whether the agent took it. */
    async cancel(
      baseUrl: string,
      executionId: string,
    ): Promise<{ delivered: boolean; error: string | null }> {
      const url = agentUrl(baseUrl, '_internal', 'executions', executionId, 'cancel');
      const key = apiKey();
      try {
        const response = await client.request(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(key ? { 'x-api-key': key } : {}),
          },
          body: JSON.stringify({ execution_id: executionId }),
          timeoutMs: 5_000,
          maxBodyBytes: CANCEL_BODY_BYTES,
          overLimit: 'truncate',
        });
        const ok = response.status >= 200 && response.status < 300;
        return { delivered: ok, error: ok ? null : `the agent answered ${response.status}` };
      } catch (error) {
        return { delivered: false, error: describe(error) };
      }
    },

    /** Ends every connection at once, failing the calls still open. */
    destroy(): Promise<void> {
      return client.destroy();
    },
  };
}

export type AgentClient = ReturnType<typeof createAgentClient>;
