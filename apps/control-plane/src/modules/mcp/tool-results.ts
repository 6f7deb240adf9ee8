import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError } from '@switchyard/shared';
import type { Logger } from '../../platform/logger.ts';

/**
 * A JSON-RPC error the SDK sends as it is (it answers a thrown error's `code`, `message` and
 * `data`). The SDK's own McpError writes "MCP error <code>:" into its message, and the client's
 * McpError adds it again, so clients would print it twice.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** A tool's answer: the object as structured content, and the same JSON as text for clients that read only text. */
export function toolAnswer(value: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
    structuredContent: value,
  };
}

/**
 * Turns what a tool threw into MCP's two kinds of failure. The arguments were wrong (a 4xx that
 * recorded nothing: an invalid input, an unknown target or execution) → a JSON-RPC error,
 * InvalidParams, with the problem's code and field errors as its data. The work ran or could not
 * run now (the execution failed or timed out, no instance is ready, the queue is full) → a tool
 * result with `isError`, so the model sees what happened and may retry. Anything unexpected is
 * logged and answered as an internal error without its message, as the HTTP API does.
 */
export function toolFailure(error: unknown, log: Logger, tool: string): CallToolResult {
  if (error instanceof RpcError) throw error;
  if (!(error instanceof ProblemError)) {
    log.error({ err: error, tool }, 'MCP tool call failed');
    throw new RpcError(ErrorCode.InternalError, 'The control plane failed to run this tool; see its log.');
  }
  const extensions = (error.init.extensions ?? {}) as Record<string, unknown>;
  const recorded = typeof extensions.execution_id === 'string';
  const problem = { code: error.code, status: error.status, detail: error.message, ...extensions };
  if (!recorded && error.status < 500 && error.status !== 429) {
    throw new RpcError(ErrorCode.InvalidParams, error.message, problem);
  }
  const retryAfter = error.headers['Retry-After'];
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: retryAfter ? `${error.message} Retry after ${retryAfter} s.` : error.message,
      },
    ],
    structuredContent: retryAfter ? { ...problem, retry_after_seconds: Number(retryAfter) } : problem,
  };
}
