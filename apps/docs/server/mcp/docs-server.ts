import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError } from '@switchyard/shared';
import {
  DOCS_MCP_TOOLS,
  type DocsMcpToolName,
  MCP_INSTRUCTIONS,
  MCP_SERVER_NAME,
  MCP_SERVER_TITLE,
  MCP_SERVER_VERSION,
} from '../../contract/mcp-contract.ts';
import type { Logger } from '../http/logger.ts';
import { registerPageResources } from './docs-resources.ts';
import { type DocsSources, docsToolRunners } from './docs-tools.ts';
import { RPC_ERROR, rpcError, toolError } from './rpc-errors.ts';

const TOOL_NAMES = Object.keys(DOCS_MCP_TOOLS) as DocsMcpToolName[];

function isToolName(name: string): name is DocsMcpToolName {
  return Object.hasOwn(DOCS_MCP_TOOLS, name);
}

/**
 * The MCP server of the docs site: three read-only tools and every page as a resource. One is
 * made per HTTP request (the transport is stateless), so it holds nothing between requests.
 *
 * `tools/call` is answered by a handler of ours instead of McpServer's: McpServer turns an
 * unknown tool and arguments its schema refuses into a successful result with `isError`, and
 * this server answers both with the JSON-RPC error InvalidParams (-32602), as its docs page
 * (content/api/site-mcp.md) says. The tools are still registered with McpServer, which lists
 * them with the JSON Schema of their zod schemas.
 */
export function createDocsMcpServer(sources: DocsSources, logger: Logger): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE, version: MCP_SERVER_VERSION, websiteUrl: sources.site },
    { instructions: MCP_INSTRUCTIONS },
  );
  const runners = docsToolRunners(sources);
  const run = (name: DocsMcpToolName, args: unknown): CallToolResult =>
    (runners[name] as (args: unknown) => CallToolResult)(args);

  for (const name of TOOL_NAMES) {
    const { title, description, inputSchema, outputSchema, annotations } = DOCS_MCP_TOOLS[name];
    server.registerTool(
      name,
      { title, description, inputSchema, outputSchema, annotations },
      (args: unknown) => run(name, args),
    );
  }
  registerPageResources(server, sources);

  server.server.removeRequestHandler('tools/call');
  server.server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: given } = request.params;
    if (!isToolName(name)) {
      throw rpcError(
        RPC_ERROR.invalidParams,
        `Unknown tool "${name.slice(0, 100)}"; this server has ${TOOL_NAMES.join(', ')}.`,
      );
    }
    const parsed = DOCS_MCP_TOOLS[name].inputSchema.safeParse(given ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join('.') || '(arguments)',
        message: issue.message,
      }));
      throw rpcError(
        RPC_ERROR.invalidParams,
        `Invalid arguments for ${name}: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
        { issues },
      );
    }
    try {
      return run(name, parsed.data);
    } catch (error) {
      // A broken or missing build artifact: the model is told, as the API would tell a client.
      if (error instanceof ProblemError) {
        const resolution = error.init.resolution ? ` ${error.init.resolution}` : '';
        return toolError(`${error.message}${resolution}`);
      }
      // Anything else is a fault of this server: logged with its stack, never shown to the client.
      logger.error({ err: error, tool: name }, `MCP tool ${name} failed`);
      throw rpcError(RPC_ERROR.internalError, 'Internal error');
    }
  });
  return server;
}
