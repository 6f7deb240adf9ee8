import { MCP_PATH } from '../../contract/mcp-contract.ts';
import { absolute, CONTACT_EMAIL, generatedAt, LICENSE, SITE_NAME, SITE_SUMMARY } from './build-info.ts';
import type { DocPage } from './site-pages.ts';

/**
 * `/docs-ai.json`: the documentation manifest agents read to list pages. Keys are snake_case like
 * the site API's (`markdown_url`); `markdownUrl`, the first spelling, stays as an alias for the
 * readers written against it.
 */
export function docsAiManifest(site: string, pages: DocPage[]) {
  return {
    contractVersion: '1.0',
    generated_at: generatedAt,
    site,
    docs: pages.map((page) => ({
      slug: page.slug,
      url: absolute(site, page.path),
      markdown_url: absolute(site, page.markdownPath),
      markdownUrl: absolute(site, page.markdownPath),
      title: page.title,
      description: page.description,
      category: page.category,
      keywords: page.keywords,
    })),
  };
}

/**
 * `/.well-known/ai-catalog.json`, an AI Catalog (specVersion 1.0) listing what an agent can use
 * here. Entries carry the spec's `type` and, for older readers, the same value as `mediaType`.
 */
export function aiCatalog(site: string, pages: DocPage[]) {
  const host = new URL(site).host;
  const entry = (
    name: string,
    displayName: string,
    type: string,
    path: string,
    description: string,
    tags: string[],
  ) => ({
    identifier: `urn:air:${host}:docs:${name}`,
    displayName,
    description,
    type,
    mediaType: type,
    url: absolute(site, path),
    tags,
    updatedAt: generatedAt,
  });
  return {
    specVersion: '1.0',
    host: {
      name: `${SITE_NAME} documentation`,
      displayName: `${SITE_NAME} documentation`,
      url: site,
      identifier: host,
      documentationUrl: site,
      logoUrl: absolute(site, '/favicon.svg'),
    },
    entries: [
      entry(
        'openapi',
        'Switchyard documentation API',
        'application/openapi+json',
        '/openapi.json',
        'OpenAPI 3.1 description of the docs API: search, topics, page as markdown, run shares.',
        ['openapi', 'search', 'documentation'],
      ),
      entry(
        'llms-txt',
        'llms.txt',
        'text/markdown',
        '/llms.txt',
        `Index of all ${pages.length} documentation pages as markdown links, in llmstxt.org format.`,
        ['llms.txt', 'documentation'],
      ),
      entry(
        'llms-full-txt',
        'llms-full.txt',
        'text/markdown',
        '/llms-full.txt',
        'The complete documentation corpus as one markdown file.',
        ['llms.txt', 'documentation'],
      ),
      entry(
        'docs-manifest',
        'Documentation manifest',
        'application/json',
        '/docs-ai.json',
        'Every page with its URL, markdown URL, title, description, category and keywords.',
        ['manifest', 'documentation'],
      ),
      entry(
        'mcp-server',
        'Switchyard documentation MCP server',
        'application/json',
        '/.well-known/mcp/server-card.json',
        `MCP server card: the Streamable HTTP MCP server at ${absolute(site, MCP_PATH)} (no authentication) with tools to search the docs, read a page as markdown and list pages, and every page as a resource.`,
        ['mcp', 'search', 'documentation'],
      ),
      entry(
        'agents-md',
        'Guide for agents',
        'text/markdown',
        '/agents.md',
        'When and how an agent should use Switchyard and this API, with limits and error handling.',
        ['agents', 'guide'],
      ),
    ],
  };
}

/** `/.well-known/ai-plugin.json`: the plugin manifest pointing tools at the OpenAPI document. */
export function aiPlugin(site: string, pages: DocPage[]) {
  const legal = pages.find((page) => /licen[cs]e|legal/.test(page.slug));
  return {
    schema_version: 'v1',
    name_for_human: `${SITE_NAME} Docs`,
    name_for_model: 'switchyard_docs',
    description_for_human: 'Search and read the Switchyard documentation.',
    description_for_model:
      `${SITE_SUMMARY} Use this API to search the Switchyard documentation (GET /api/v1/search?q=), ` +
      'list every page (GET /api/v1/topics) and read one page as markdown (GET /api/v1/page?path=/docs/...). ' +
      'Cite the returned page url. No authentication; 120 API requests per 60 seconds per client; on 429 wait ' +
      'Retry-After seconds. Errors are problem+json documents: branch on their code field.',
    auth: { type: 'none' },
    api: { type: 'openapi', url: absolute(site, '/openapi.json'), is_user_authenticated: false },
    logo_url: absolute(site, '/favicon.svg'),
    contact_email: CONTACT_EMAIL,
    legal_info_url: legal ? absolute(site, legal.path) : absolute(site, '/pricing.md'),
    license: LICENSE,
  };
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `/sitemap.xml`: the home page and every documentation page. */
export function sitemap(site: string, pages: DocPage[]): string {
  const urls = [absolute(site, '/'), ...pages.map((page) => absolute(site, page.path))];
  const body = urls.map((url) => `  <url><loc>${escapeXml(url)}</loc></url>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${body}\n</urlset>\n`;
}
