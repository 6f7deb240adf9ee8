import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';
import { llmsTxt } from '../lib/llms-txt.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () =>
  new Response(llmsTxt(siteUrl(), await docsPages()), {
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
