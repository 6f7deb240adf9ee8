import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';
import { llmsFullTxt } from '../lib/llms-txt.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () =>
  new Response(llmsFullTxt(siteUrl(), await docsPages()), {
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
