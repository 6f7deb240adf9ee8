import type { APIRoute } from 'astro';
import { siteUrl } from '../lib/content-dir.ts';
import { createOpenApiDocument } from '../lib/openapi.ts';

export const GET: APIRoute = () => Response.json(createOpenApiDocument(siteUrl()));
