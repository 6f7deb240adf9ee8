import { jsonTextDepth, MAX_JSON_DEPTH } from '@switchyard/shared';
import { Agent, request, errors as undiciErrors } from 'undici';
import { agentUrl } from '../nodes/index.ts';

/** The headers of spec §1 the control plane sets when it calls an agent. */
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

// Errors that mean the request never reached the agent's application.
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function codeOf(error: unknown): string {
  const e = error as { code?: string; cause?: { code?: string }; name?: string; message?: string };
  return e.code ?? e.cause?.code ?? e.name ?? String(e.message ?? error);
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
 * Calls agents over HTTP (wire notes, "Control plane → agent"). One undici Agent keeps a pool of
 * keep-alive connections per agent origin; it has no header or body timeout of its own because
 * the async lane has no execution time limit: callers bound a call with an AbortSignal instead
 * (the sync timeout, or a cancel). undici rather than fetch: no WHATWG Request/Response and
 * stream layer per call on the hottest path of the product.
 */
export function createAgentClient(options: { apiKey?: () => string | undefined; connections?: number } = {}) {
  // Read per call: a config reload may change the key (api.auth.api_key is live).
  const apiKey = () => options.apiKey?.() || undefined;
  const dispatcher = new Agent({
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: 10_000,
    keepAliveTimeout: 10_000,
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

  async function readText(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_RESULT_BYTES) {
        body.destroy?.();
        throw new RangeError(`the agent's answer exceeds ${MAX_RESULT_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
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
      const url = agentUrl(baseUrl, type === 'skill' ? 'skills' : 'reasoners', functionName);
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, {
          method: 'POST',
          headers: headersFor(context),
          body: JSON.stringify(input),
          dispatcher,
          signal,
        });
      } catch (error) {
        const code = codeOf(error);
        if (NOT_SENT.has(code))
          return { kind: 'unreachable', error: `cannot reach the agent at ${url}: ${code}` };
        if (error instanceof undiciErrors.RequestAbortedError || signal?.aborted) {
          return { kind: 'lost', error: 'the call was abandoned before the agent answered' };
        }
        return {
          kind: 'lost',
          error: `the agent at ${url} closed the connection without answering (${code})`,
        };
      }
      let text: string;
      try {
        text = await readText(response.body);
      } catch (error) {
        if (error instanceof RangeError)
          return { kind: 'error', status: response.statusCode, error: error.message, details: null };
        return { kind: 'lost', error: `the agent's answer was cut off (${codeOf(error)})` };
      }
      const status = response.statusCode;
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
        const response = await request(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(key ? { 'x-api-key': key } : {}),
          },
          body: JSON.stringify({ execution_id: executionId }),
          dispatcher,
          signal: AbortSignal.timeout(5_000),
        });
        await response.body.dump();
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        return { delivered: ok, error: ok ? null : `the agent answered ${response.statusCode}` };
      } catch (error) {
        return { delivered: false, error: codeOf(error) };
      }
    },

    /** Ends every connection at once, failing the calls still open. */
    destroy(): Promise<void> {
      return dispatcher.destroy().catch(() => {});
    },
  };
}

export type AgentClient = ReturnType<typeof createAgentClient>;
