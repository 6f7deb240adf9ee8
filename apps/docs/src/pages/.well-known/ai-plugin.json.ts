import type { APIRoute } from 'astro';
import { siteUrl } from '../../lib/content-dir.ts';
import { aiPlugin } from '../../lib/manifests.ts';
import { docsPages } from '../../lib/site-pages.ts';

export const GET: APIRoute = async () => Response.json(aiPlugin(siteUrl(), await docsPages()));
