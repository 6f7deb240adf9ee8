/**
 * MCP: the control plane as a Model Context Protocol server, so AI clients discover the fleet,
 * call its functions (each one a tool of its own) and decide approvals. Every call goes through
 * the same services as the HTTP API.
 */
export { MCP_MAX_SESSIONS, MCP_SESSION_IDLE_MS, mcpEndpoint } from './mcp-endpoint.ts';
export { mcpOpenApi } from './openapi.ts';
