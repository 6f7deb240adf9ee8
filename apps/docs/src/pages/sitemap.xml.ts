import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';
import { sitemap } from '../lib/manifests.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () =>
  new Response(sitemap(siteUrl(), await docsPages()), { headers: { 'Content-Type': 'application/xml' } });
