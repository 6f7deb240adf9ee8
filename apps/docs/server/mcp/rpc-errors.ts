import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC and MCP error codes this server answers with. */
export const RPC_ERROR = {
  parseError: -32700,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP's code for a resource URI that names nothing. */
  resourceNotFound: -32002,
  /** What the SDK's transport answers for HTTP-level refusals (method, host, size). */
  serverError: -32000,
} as const;

/**
 * An error the SDK sends as a JSON-RPC error with this code, message and data. Not McpError:
 * its message is prefixed with "MCP error <code>: ", which would go on the wire, and the SDK's
 * client prefixes what it receives again.
 */
export function rpcError(
  code: number,
  message: string,
  data?: unknown,
): Error & { code: number; data?: unknown } {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

/**
 * A result the model reads as a failed call it can recover from (MCP's tool execution error),
 * rather than a protocol error its client would keep from it.
 */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
