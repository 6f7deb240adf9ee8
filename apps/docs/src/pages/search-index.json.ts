import type { APIRoute } from 'astro';
import { searchIndex } from '../lib/search-index.ts';
import { docsPages } from '../lib/site-pages.ts';

export const GET: APIRoute = async () => Response.json(searchIndex(await docsPages()));
