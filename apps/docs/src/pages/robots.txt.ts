import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';

/**
 * robots.txt (RFC 9309): every crawler may fetch everything, and the sitemap is named by its
 * absolute URL, as the protocol requires. Share permalinks are not disallowed: they carry
 * `noindex`, which a crawler can only see if it may fetch them.
 */
export const GET: APIRoute = () =>
  new Response(`User-agent: *\nAllow: /\n\nSitemap: ${siteUrl()}/sitemap.xml\n`, {
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
