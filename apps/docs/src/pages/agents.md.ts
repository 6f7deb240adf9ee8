import type { APIRoute } from 'astro';
import { agentsMd } from '../lib/agent-guides.ts';
import { siteUrl } from '../lib/content-dir.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () =>
  new Response(agentsMd(siteUrl(), await docsPages()), {
    headers: { 'Content-Type': 'text/markdown; charset=utf-8' },
  });
