import type { APIRoute } from 'astro';
import { siteUrl } from '../../../lib/content-dir.ts';
import { mcpServerCard } from '../../../lib/mcp-server-card.ts';

/** The MCP server card of the docs MCP server (`/mcp`), for clients that discover servers by domain. */
export const GET: APIRoute = () => Response.json(mcpServerCard(siteUrl()));
