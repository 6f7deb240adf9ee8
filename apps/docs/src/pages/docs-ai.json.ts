import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';
import { docsAiManifest } from '../lib/manifests.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () => Response.json(docsAiManifest(siteUrl(), await docsPages()));
