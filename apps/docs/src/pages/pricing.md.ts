import type { APIRoute } from 'astro';
import { pricingMd } from '../lib/agent-guides.ts';
import { siteUrl } from '../lib/content-dir.ts';

export const GET: APIRoute = () =>
  new Response(pricingMd(siteUrl()), { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } });
