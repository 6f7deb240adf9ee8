import type { APIRoute } from 'astro';
import { siteUrl } from '../../lib/content-dir.ts';
import { mcpServerCard } from '../../lib/mcp-server-card.ts';

/** The MCP server card at the single-file path MCP discovery first proposed; same document as mcp/server-card.json. */
export const GET: APIRoute = () => Response.json(mcpServerCard(siteUrl()));
