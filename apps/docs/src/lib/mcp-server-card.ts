import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  DOCS_MCP_TOOLS,
  MCP_SERVER_DESCRIPTION,
  MCP_SERVER_NAME,
  MCP_SERVER_TITLE,
  MCP_SERVER_VERSION,
  mcpEndpointUrl,
} from '../../contract/mcp-contract.ts';
import { absolute } from './build-info.ts';

/** Where the build writes the card: the server-card path, and the single-file name proposed before it. */
export const MCP_SERVER_CARD_PATHS = ['/.well-known/mcp/server-card.json', '/.well-known/mcp.json'] as const;

/**
 * The card's `name`: MCP server cards and the MCP registry name servers in reverse-DNS form with
 * one slash (namespace/name). `serverInfo.name` of the running server stays the short name.
 */
const CARD_NAME = `dev.switchyard/${MCP_SERVER_NAME}`;

/**
 * The MCP server card of the docs site: who the server is, where to connect (Streamable HTTP at
 * `/mcp`, no authentication) and its tools exactly as `tools/list` lists them, so a client can
 * show and vet them before it connects. The shape is that of the server-card proposal for MCP
 * discovery over `.well-known` (a draft), which builds on the MCP registry's `server.json`.
 */
export function mcpServerCard(site: string) {
  const tools = Object.entries(DOCS_MCP_TOOLS).map(([name, tool]) => ({
    name,
    title: tool.title,
    description: tool.description,
    // The options the SDK's McpServer converts with, so the card and tools/list agree.
    inputSchema: z.toJSONSchema(tool.inputSchema, { target: 'draft-7', io: 'input' }),
    outputSchema: z.toJSONSchema(tool.outputSchema, { target: 'draft-7', io: 'output' }),
    annotations: tool.annotations,
  }));
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    name: CARD_NAME,
    version: MCP_SERVER_VERSION,
    title: MCP_SERVER_TITLE,
    description: MCP_SERVER_DESCRIPTION,
    websiteUrl: absolute(site, '/docs/api/site-mcp'),
    remotes: [
      {
        type: 'streamable-http',
        url: mcpEndpointUrl(site),
        supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        authentication: { required: false, schemes: [] },
      },
    ],
    capabilities: { tools: {}, resources: {} },
    tools,
    _meta: { serverInfo: { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE, version: MCP_SERVER_VERSION } },
  };
}
