/**
 * The docs site's MCP server (`POST /mcp`): the documentation's search, pages and page list as
 * tools and resources for MCP clients. The front server reaches it only through this module.
 */
export type { DocsSources } from './docs-tools.ts';
export {
  createMcpEndpoint,
  MCP_MAX_BODY_BYTES,
  type McpEndpoint,
  type McpEndpointDeps,
  rebindingGuardHostnames,
} from './mcp-handler.ts';
