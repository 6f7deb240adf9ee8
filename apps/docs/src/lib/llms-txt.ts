import { MCP_PATH } from '../../contract/mcp-contract.ts';
import { withAbsoluteLinks } from './absolute-links.ts';
import { absolute, generatedAt, SITE_NAME, SITE_SUMMARY } from './build-info.ts';
import { markdownVariant } from './markdown-source.ts';
import { type DocPage, navigation } from './site-pages.ts';

function link(site: string, page: DocPage): string {
  return `- [${page.title}](${absolute(site, page.markdownPath)}): ${page.description}`;
}

/**
 * `/llms.txt` in the llmstxt.org shape: `# name`, `> summary`, a paragraph, then `## section` lists
 * of `- [name](url): notes`. Page links point at the `.md` variants so agents get markdown.
 */
export function llmsTxt(site: string, pages: DocPage[]): string {
  const sections = navigation(pages).map(
    (group) => `## ${group.category}\n\n${group.pages.map((page) => link(site, page)).join('\n')}`,
  );
  const api = [
    `- [OpenAPI description](${absolute(site, '/openapi.json')}): OpenAPI 3.1 document of the docs API (search, topics, page, shares) with every parameter, bound and error.`,
    `- [Search the docs](${absolute(site, '/api/v1/search?q=webhooks&limit=5')}): GET /api/v1/search?q=...&limit=1..20 ranks pages (BM25; forgives typos) and returns their urls with the best section's anchor.`,
    `- [List every page](${absolute(site, '/api/v1/topics')}): GET /api/v1/topics (optional category) lists title, description, url, category and keywords of every page.`,
    `- [Read a page as markdown](${absolute(site, `/api/v1/page?path=${pages[0]?.path ?? '/docs/overview'}`)}): GET /api/v1/page?path=/docs/{slug} returns the markdown body with its metadata.`,
    `- [MCP server](${absolute(site, '/docs/api/site-mcp.md')}): POST ${absolute(site, MCP_PATH)} is a Model Context Protocol server (Streamable HTTP, no authentication) with tools search_docs, read_page and list_pages, and every page as a resource; server card at ${absolute(site, '/.well-known/mcp/server-card.json')}.`,
    `- [Guide for agents](${absolute(site, '/agents.md')}): when to use Switchyard and this API, rate limits (120 API requests per 60 s), errors by code, Retry-After.`,
  ];
  const optional = [
    `- [Full corpus](${absolute(site, '/llms-full.txt')}): every page in one markdown file.`,
    `- [Documentation manifest](${absolute(site, '/docs-ai.json')}): JSON list of pages with html and markdown urls.`,
    `- [AI catalog](${absolute(site, '/.well-known/ai-catalog.json')}): discovery catalog of these resources.`,
    `- [MCP server card](${absolute(site, '/.well-known/mcp/server-card.json')}): the MCP server's endpoint, transport and tools as JSON.`,
    `- [Pricing](${absolute(site, '/pricing.md')}): free and open source; there is no paid tier.`,
    `- [Sitemap](${absolute(site, '/sitemap.xml')}): every html page.`,
  ];
  return [
    `# ${SITE_NAME}`,
    `> ${SITE_SUMMARY}`,
    'Every documentation page below is linked as markdown: append `.md` to any `/docs/...` page URL, ' +
      'or request the page with `Accept: text/markdown`. The site API below searches and reads the same pages.',
    ...sections,
    `## API\n\n${api.join('\n')}`,
    `## Optional\n\n${optional.join('\n')}`,
  ]
    .join('\n\n')
    .concat('\n');
}

/**
 * `/llms-full.txt`: the llms.txt header followed by every page's markdown variant in reading
 * order, its links absolute (a path or a bare `#anchor` means nothing once pages are joined).
 */
export function llmsFullTxt(site: string, pages: DocPage[]): string {
  const header = [
    `# ${SITE_NAME} documentation (complete)`,
    `> ${SITE_SUMMARY}`,
    `Generated ${generatedAt} from ${pages.length} pages. Each page starts with a line \`Source: <url>\` ` +
      'followed by its markdown, links made absolute; pages are separated by a line of three dashes.',
  ].join('\n\n');
  const bodies = pages.map(
    (page) =>
      `Source: ${absolute(site, page.path)}\n\n${withAbsoluteLinks(markdownVariant(page), site, page.path).trimEnd()}`,
  );
  return `${[header, ...bodies].join('\n\n---\n\n')}\n`;
}
